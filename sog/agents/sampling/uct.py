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

The trees are one dict keyed by information state (pub, slot): every
decision public state has one actor, so the two players' trees share it
without colliding.
`MCTSEngine` is also the engine of `sog.agents.sampling.ismcts` (there the simulation
starts from a determinised world state under the searched information state).
"""
from __future__ import annotations

import math

import numpy as np

from sog.agents.sampling.common import CHANCE, SEARCH_LIMITS, TERMINAL, Budget, World, WorldStepper
from sog.games.api import Game
from sog.policy import TabularPolicy

__all__ = ["MCTSEngine", "UCT", "SmoothUCT", "paper_defaults"]

# game name -> (c for UCT, c for Smooth UCT, d) from the paper's section 4.
_PAPER = {"kuhn_poker": (2.0, 1.75, 0.001), "leduc_poker": (20.0, 18.0, 0.002)}


def paper_defaults(game: Game) -> tuple[float, float, float]:
    """(c_uct, c_smooth, d): the paper's values for Kuhn / Leduc, scaled Kuhn values otherwise."""
    if game.spec.name in _PAPER:
        return _PAPER[game.spec.name]
    scale = float(game.spec.max_utility) / 2.0
    return 2.0 * scale, 1.75 * scale, 0.001


class InfoStats:
    """Statistics of one information state u = (pub, slot): per legal action (index j)."""

    __slots__ = ("legal", "visits", "q", "total")

    def __init__(self, legal: list):
        self.legal = legal
        self.visits = [0] * len(legal)
        self.q = [0.0] * len(legal)
        self.total = 0


class MCTSEngine:
    """Per-player-tree self-play MCTS (Algorithm 1) with UCB or Smooth UCB selection.

    c: UCB exploration constant. smooth: use Smooth UCB with (gamma, eta, d).
    `infos` maps (pub, slot) -> statistics of every information state in a tree
    (the actor of pub owns it). The per-node work is on short Python lists,
    which is faster than numpy for the handful of actions these games have.
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
        self.infos: dict = {}
        self._num_actions = game.spec.num_actions
        self.limits = SEARCH_LIMITS.current()       # a host's stop / deadline cut a rollout short
        self._timed = self.limits.timed()

    # ---- selection ------------------------------------------------------
    def ucb(self, info: InfoStats) -> int:
        """Index j into info.legal: untried first, else argmax Q + c sqrt(log N / N_j)."""
        visits, q = info.visits, info.q
        rng = self.rng
        untried = [j for j, n in enumerate(visits) if n == 0]
        if untried:
            return untried[int(rng.integers(len(untried)))] if len(untried) > 1 else untried[0]
        cl = self.c * math.sqrt(math.log(info.total))
        scores = [qj + cl / math.sqrt(n) for qj, n in zip(q, visits)]
        top = max(scores)
        best = [j for j, s in enumerate(scores) if s >= top - 1e-12]
        return best[int(rng.integers(len(best)))] if len(best) > 1 else best[0]

    def select(self, info: InfoStats) -> int:
        if not self.smooth:
            return self.ucb(info)
        eta_k = max(self.gamma, self.eta / (1.0 + self.d * math.sqrt(info.total)))
        if self.rng.random() < eta_k:
            return self.ucb(info)
        # average policy N(u, a) / N(u)
        x = self.rng.random() * info.total
        acc = 0.0
        for j, n in enumerate(info.visits):
            acc += n
            if x < acc:
                return j
        return len(info.visits) - 1

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
        if out_of_tree[actor]:  # rollout (cut at a host's stop or deadline: scored 0)
            if self._timed and self.limits.expired():
                return 0.0
            legal = st.legal(w.pub, slot)
            a = int(legal[int(self.rng.integers(len(legal)))])
            return self._simulate(st.child(w, a), out_of_tree)
        key = (w.pub, slot)
        info = self.infos.get(key)
        if info is None:  # expand, then play the rollout policy
            info = self.infos[key] = InfoStats(st.legal(w.pub, slot).tolist())
            out_of_tree[actor] = True
            j = int(self.rng.integers(len(info.legal)))
        else:
            j = self.select(info)
        r0 = self._simulate(st.child(w, info.legal[j]), out_of_tree)
        r = r0 if actor == 0 else -r0
        info.total += 1
        n = info.visits[j] = info.visits[j] + 1
        info.q[j] += (r - info.q[j]) / n
        return r0

    # ---- policies -------------------------------------------------------
    def row_policy(self, pub, slot: int, kind: str = "average") -> np.ndarray | None:
        """float [A] at information state (pub, slot), or None if it was never visited.

        kind: "average"/"visits" (N(u, a) / N(u)), "max_visits" (one-hot argmax visits),
        "greedy"/"max_value" (one-hot argmax Q over visited legal actions).
        Ties in the one-hot kinds go to the lowest action index (deterministic).
        """
        info = self.infos.get((pub, slot))
        if info is None or info.total <= 0:
            return None
        legal = np.asarray(info.legal)
        visits = np.asarray(info.visits, dtype=np.float64)
        out = np.zeros(self._num_actions)
        if kind in ("average", "visits"):
            out[legal] = visits / visits.sum()
        elif kind == "max_visits":
            out[legal[int(np.argmax(visits))]] = 1.0
        elif kind in ("greedy", "max_value"):
            q = np.where(visits > 0, np.asarray(info.q), -np.inf)
            out[legal[int(np.argmax(q))]] = 1.0
        else:
            raise ValueError(f"unknown policy kind {kind!r}")
        return out

    def tabular_policy(self, kind: str = "average") -> TabularPolicy:
        table = {}
        for pub, slot in self.infos:
            row = self.row_policy(pub, slot, kind)
            if row is None:
                continue
            if pub not in table:
                legal = self.game.cached("legal_mask", pub)
                table[pub] = legal / np.maximum(legal.sum(axis=1, keepdims=True), 1)
            table[pub][slot] = row
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
