"""Extensive-form UCT and Smooth UCT (full-game self-play MCTS).

Heinrich and Silver, "Smooth UCT Search in Computer Poker", IJCAI 2015
(`papers/smooth-uct.txt`). Algorithm 1 of the paper, "self-play MCTS in
extensive-form games": one search tree per player over that player's own
information states; every simulation starts from a world state sampled at
the root (the private deal) and is simulated with the game's transition
function; at a decision of player i:

* if player i has already left its tree in this simulation: roll out
  (uniformly random legal action);
* if i's information state u = (pub, slot) is not in i's tree: add it,
  choose the action by the rollout policy and mark i out-of-tree;
* otherwise SELECT(u);

and after the rest of the simulation returns, UPDATE(u, a, r_i):
`N(u) += 1; N(u, a) += 1; Q(u, a) += (r_i - Q(u, a)) / N(u, a)` (also for the
node just added). Chance is sampled.

* UCT (`UCT`): SELECT = UCB1, `argmax_a Q(u, a) + c sqrt(log N(u) / N(u, a))`,
  untried actions first, ties broken uniformly at random.
* Smooth UCT (`SmoothUCT`): Smooth UCB; with probability
  `eta_k = max(gamma, eta / (1 + d sqrt(N(u))))` select by UCB, otherwise
  sample from the average policy `N(u, a) / N(u)`. UPDATE is unchanged.

Defaults are the paper's: Kuhn poker gamma = 0.1, eta = 0.9, d = 0.001,
c = 2 (UCT) and c = 1.75 (Smooth UCT); Leduc d = 0.002, c = 20 (UCT) and
c = 18 (Smooth UCT). For other games c is the Kuhn value scaled by
`spec.max_utility / 2` (Kuhn's max utility) and d = 0.001.

The policy (`policy(kind)`): "average" (default) is the normalised visit
counts N(u, a) / N(u), the average policy the paper evaluates in Kuhn and
Leduc for both methods; "greedy" takes argmax_a Q(u, a) (how the paper
extracted its Limit Hold'em profiles). Information states never added to a
tree are played uniformly.

Tables are stored per public state as float [N, A] arrays (visits, Q) plus a
bool [N] "in tree" mask, keyed by pub; since every decision public state has
one actor, the two players' trees share the dict without colliding.
`MCTSEngine` is also the engine of `sog.agents.ismcts` (there the simulation
starts from a determinised world state under the searched information state).
"""
from __future__ import annotations

import math

import numpy as np

from sog.agents.common import CHANCE, TERMINAL, Budget, World, WorldStepper, sample_index
from sog.eval.policy import TabularPolicy
from sog.games.api import Game

__all__ = ["MCTSEngine", "UCT", "SmoothUCT", "paper_defaults"]

# game name -> (c for UCT, c for Smooth UCT, d) from the paper's section 4.
_PAPER = {"kuhn_poker": (2.0, 1.75, 0.001), "leduc_poker": (20.0, 18.0, 0.002)}


def paper_defaults(game: Game) -> tuple[float, float, float]:
    """(c_uct, c_smooth, d): the paper's values for Kuhn / Leduc, scaled Kuhn values otherwise."""
    if game.spec.name in _PAPER:
        return _PAPER[game.spec.name]
    scale = float(game.spec.max_utility) / 2.0
    return 2.0 * scale, 1.75 * scale, 0.001


class _Node:
    """Statistics of all information states (pub, slot) of one public state's actor."""

    __slots__ = ("visits", "q", "total", "in_tree")

    def __init__(self, n: int, a: int):
        self.visits = np.zeros((n, a))
        self.q = np.zeros((n, a))
        self.total = np.zeros(n)
        self.in_tree = np.zeros(n, dtype=bool)


class MCTSEngine:
    """Per-player-tree self-play MCTS (Algorithm 1) with UCB or Smooth UCB selection.

    c: UCB exploration constant. smooth: use Smooth UCB with (gamma, eta, d).
    """

    def __init__(self, game: Game, c: float, rng: np.random.Generator, smooth: bool = False,
                 gamma: float = 0.1, eta: float = 0.9, d: float = 0.001,
                 stepper: WorldStepper | None = None):
        self.game = game
        self.c = float(c)
        self.rng = rng
        self.smooth = bool(smooth)
        self.gamma, self.eta, self.d = float(gamma), float(eta), float(d)
        self.stepper = stepper or WorldStepper(game)
        self.nodes: dict = {}
        self._shape = (game.spec.num_states, game.spec.num_actions)

    def node(self, pub) -> _Node:
        nd = self.nodes.get(pub)
        if nd is None:
            nd = self.nodes[pub] = _Node(*self._shape)
        return nd

    # ---- selection ------------------------------------------------------
    def ucb(self, nd: _Node, slot: int, legal: np.ndarray) -> int:
        visits = nd.visits[slot, legal]
        untried = np.flatnonzero(visits == 0)
        if len(untried):
            return int(legal[untried[int(self.rng.integers(len(untried)))]])
        score = nd.q[slot, legal] + self.c * np.sqrt(math.log(nd.total[slot]) / visits)
        best = np.flatnonzero(score >= score.max() - 1e-12)
        return int(legal[best[int(self.rng.integers(len(best)))]] if len(best) > 1 else legal[best[0]])

    def select(self, nd: _Node, slot: int, legal: np.ndarray) -> int:
        if not self.smooth:
            return self.ucb(nd, slot, legal)
        eta_k = max(self.gamma, self.eta / (1.0 + self.d * math.sqrt(nd.total[slot])))
        if self.rng.random() < eta_k:
            return self.ucb(nd, slot, legal)
        return int(legal[sample_index(self.rng, nd.visits[slot, legal])])

    # ---- simulation -----------------------------------------------------
    def simulate(self, world: World) -> float:
        """One simulation from `world`; returns player 0's return."""
        return self._simulate(world, [False, False])

    def _simulate(self, w: World, out_of_tree: list) -> float:
        st = self.stepper
        kind = st.kind(w.pub)
        if kind == TERMINAL:
            return st.returns(w, 0)
        if kind == CHANCE:
            return self._simulate(st.sample_chance(w, self.rng), out_of_tree)
        actor = st.actor(w.pub)
        slot = w.slots[actor]
        legal = st.legal(w.pub, slot)
        if out_of_tree[actor]:  # rollout
            a = int(legal[int(self.rng.integers(len(legal)))])
            return self._simulate(st.child(w, a), out_of_tree)
        nd = self.node(w.pub)
        if not nd.in_tree[slot]:  # expand, then play the rollout policy
            nd.in_tree[slot] = True
            out_of_tree[actor] = True
            a = int(legal[int(self.rng.integers(len(legal)))])
        else:
            a = self.select(nd, slot, legal)
        r0 = self._simulate(st.child(w, a), out_of_tree)
        r = r0 if actor == 0 else -r0
        nd.total[slot] += 1
        nd.visits[slot, a] += 1
        nd.q[slot, a] += (r - nd.q[slot, a]) / nd.visits[slot, a]
        return r0

    # ---- policies -------------------------------------------------------
    def row_policy(self, pub, slot: int, kind: str = "average") -> np.ndarray | None:
        """float [A] at information state (pub, slot), or None if it was never visited.

        kind: "average"/"visits" (N(u, a) / N(u)), "max_visits" (one-hot argmax visits),
        "greedy"/"max_value" (one-hot argmax Q over visited legal actions).
        Ties in the one-hot kinds go to the lowest action index (deterministic).
        """
        nd = self.nodes.get(pub)
        if nd is None or nd.total[slot] <= 0:
            return None
        legal = self.stepper.legal(pub, slot)
        out = np.zeros(self._shape[1])
        visits = nd.visits[slot, legal]
        if kind in ("average", "visits"):
            out[legal] = visits / visits.sum()
        elif kind == "max_visits":
            out[legal[int(np.argmax(visits))]] = 1.0
        elif kind in ("greedy", "max_value"):
            q = np.where(visits > 0, nd.q[slot, legal], -np.inf)
            out[legal[int(np.argmax(q))]] = 1.0
        else:
            raise ValueError(f"unknown policy kind {kind!r}")
        return out

    def tabular_policy(self, kind: str = "average") -> TabularPolicy:
        table = {}
        for pub, nd in self.nodes.items():
            legal = self.game.cached("legal_mask", pub)
            arr = legal / np.maximum(legal.sum(axis=1, keepdims=True), 1)
            for slot in np.flatnonzero(nd.total > 0):
                arr[slot] = self.row_policy(pub, int(slot), kind)
            table[pub] = arr
        return TabularPolicy(self.game, table)


class _FullGameSearch:
    """Full-game self-play search: deal at the root, simulate, repeat."""

    _smooth = False

    def __init__(self, game: Game, c: float, seed: int, **smooth_kw):
        self.game = game
        self.rng = np.random.default_rng(seed)
        self.engine = MCTSEngine(game, c, self.rng, smooth=self._smooth, **smooth_kw)
        self.iterations = 0

    @property
    def c(self) -> float:
        return self.engine.c

    def run(self, iterations: int | None = None, seconds: float | None = None) -> int:
        """Run `iterations` more simulated episodes and/or for `seconds`; returns episodes done now."""
        budget = Budget(iterations, seconds)
        st, eng = self.engine.stepper, self.engine
        for _ in budget:
            eng.simulate(st.deal(self.rng))
            self.iterations += 1
        return budget.done

    def policy(self, kind: str = "average") -> TabularPolicy:
        """'average' (normalised visit counts, default) or 'greedy' (argmax Q)."""
        return self.engine.tabular_policy(kind)


class UCT(_FullGameSearch):
    """Extensive-form UCT (Heinrich and Silver 2015, section 3.1).

    UCT(game, c=None, seed=0); c defaults to the paper's value (Kuhn 2, Leduc 20).
    """

    def __init__(self, game: Game, c: float | None = None, seed: int = 0):
        super().__init__(game, paper_defaults(game)[0] if c is None else c, seed)


class SmoothUCT(_FullGameSearch):
    """Extensive-form Smooth UCT (Heinrich and Silver 2015, section 3.2, Algorithm 2).

    SmoothUCT(game, c=None, gamma=0.1, eta=0.9, d=None, seed=0); c and d default to the
    paper's values (Kuhn 1.75 / 0.001, Leduc 18 / 0.002).
    """

    _smooth = True

    def __init__(self, game: Game, c: float | None = None, gamma: float = 0.1, eta: float = 0.9,
                 d: float | None = None, seed: int = 0):
        _, c_s, d_s = paper_defaults(game)
        super().__init__(game, c_s if c is None else c, seed, gamma=gamma, eta=eta,
                         d=d_s if d is None else d)
