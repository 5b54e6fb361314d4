"""Depth-limited solving with multi-valued states, and a nested-solving agent.

Brown, Sandholm and Amos, "Depth-Limited Solving for Imperfect-Information
Games" (NeurIPS 2018; `papers/depth-limited-solving.txt`). In an
imperfect-information game a single value per leaf state of a depth-limited
subgame is not enough: the searcher must be robust to the opponent *adapting*
below the depth limit. The paper lets the opponent make one last choice at each
leaf information set, between k continuation strategies for the rest of the
game, while the searcher is fixed to its blueprint there; a leaf's value is the
value of (searcher's blueprint, the chosen continuation).

What is implemented here, on the vectorised public tree (`sog.search`):

* **Blueprint**: a full-game policy, from one of our MCCFR variants
  (`sog.agents.mccfr`: outcome, external, Pluribus), from public-tree CFR+
  ("cfr"), or any `TabularPolicy` (`make_blueprint`, `as_array`).
* **Depth limit**: public chance nodes (in poker the board card), i.e. the
  subgame is the rest of the current betting round. On Leduc from the root
  the trunk is round 1 and the leaves are the 5 chance nodes dealing the board.
* **Continuation strategies** (for the opponent of the searcher, `Continuations`):
  - *bias approach* (`bias_continuations`): the blueprint itself, then the
    blueprint biased toward each action id in turn (multiply that action's
    probability by `factor`, default 5, and renormalise over the legal
    actions); in Leduc the ids are fold = 0, call = 1, raise = 2, so k = 4 is
    the paper's {blueprint, fold-, call-, raise-biased}. For k > 1 + A the
    biases repeat with factor**2, factor**3, ...
  - *self-generative approach* (`self_generative`): start from {blueprint};
    solve the depth-limited subgame at the root; take the opponent's exact
    best response to the composed policy (the searcher's depth-limited
    solution in the trunk, its blueprint below), computed by one vectorised
    best-response pass over the public tree; add it to the set; repeat until
    there are k. (The paper's optional "weakening" of generated strategies is
    not applied.)
* **Leaf values: exact, a table, not rollouts.** For every leaf public state
  L and continuation c the leaf is summarised by its payoff matrix
  `U_c[s0, s1]` (player 0's expected utility for the slot pair, chance
  weights included) of the fixed policy pair (searcher: blueprint,
  opponent: continuation c) below L, computed by `N` vectorised policy
  evaluations of the subtree forest below the leaves (`evaluate_policy` with
  the opponent's range set to each unit vector). Counterfactual values at the
  leaf are then exact for any ranges: `v0 = U r1`, `v1 = -U^T r0`. This is
  what the paper calls storing the values in a table, which is feasible for
  the small games; rollouts would estimate the same quantities.
* **The leaf choice is a real opponent decision of the solved game.** The
  trunk is solved by the existing vectorised CFR (`sog.search.cfr.CFRSolver`,
  alternating CFR+ by default) with a `FrontierValues` callable at the frontier that
  owns, per (leaf, opponent slot), regrets and an average over the k
  continuations (`_LeafChoice`): each pass it plays the current
  regret-matching mixture, returns the searcher's values under that mixture
  and the opponent's values of the mixture, and after the pass updates the
  choice regrets (`q_c - v`) and averages with the same CFR variant and
  iteration weights as the trunk nodes, in the opponent's pass. This is
  exactly CFR on the trunk extended with a k-action opponent node at each
  leaf followed by terminals with payoff matrices `U_c` (the choice is made
  per opponent information set: per leaf public state and opponent slot).
* **Composed policy** (`compose`): the searcher's depth-limited solution in
  the trunk and its blueprint below the depth limit; solving once per seat
  gives a full-game policy whose exploitability is measured exactly
  (`exploitability_by_k`, the paper's Figure 1 effect: it falls as k grows),
  with `frozen_limit` (the best trunk against every opponent strategy, i.e.
  k = all pure strategies) as the floor.
* **Nested solving** (`DepthLimitedAgent`): an agent for the poker games. At
  each decision it uses the depth-limited subgame rooted at the start of the
  current round (`resolve="round"`; or re-solved at the current public state,
  `resolve="decision"`), whose root ranges come from its own previous solve:
  the average-policy reach at the leaf this round started from, passed
  through the board card's card removal. The last round is solved to the end
  of the game (no leaves). Two ways to treat the opponent's beliefs:
  - `safety="unsafe"`: *unsafe* nested solving as in the paper's HUNL agent
    (its appendix): beliefs Bayes-updated assuming the opponent played the
    previous solution, no gadget (a zero belief falls back to uniform over
    the possible slots). In Leduc this is very exploitable: even re-solving
    round 2 at the *equilibrium's* ranges is exploitable by ~107 mbb/h, and
    with the depth-limited solution's beliefs by 250 to 1050 mbb/h.
  - `safety="gadget"` (default): safe re-solving with DeepStack's
    Terminate / Follow gadget (`sog.search.gtcfr.Gadget`) for the opponent at
    the new root, whose Terminate values are the opponent's exact
    best-response counterfactual values against our previous solution in
    its trunk and our blueprint below (one vectorised best-response pass of
    the subtree); with `gadget_alpha = 1` (the default) the re-solved
    strategy then does not let any opponent slot gain over what that
    composition concedes (up to convergence).
  The agent's solves depend only on the public history and its seat, so they
  are cached, and its full-game policy can be assembled and measured exactly
  (`nested_policy`).

Only the searcher's part of a depth-limited solution is used: each seat's
solve has that seat as the searcher.
"""
from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Hashable, Sequence

import numpy as np

from sog.agents.api import AgentError
from sog.agents.policy_agents import BaseAgent
from sog.eval.exploitability import (
    best_response_values,
    full_tree,
    policy_array,
    tabular_from_array,
)
from sog.eval.policy import TabularPolicy
from sog.games.api import CHANCE, DECISION, Game
from sog.search.cfr import (
    CFRConfig,
    CFRSolver,
    Levels,
    evaluate_policy,
    full_policy,
    leaf_values,
    propagate_ranges,
    propagate_values,
    regret_matching,
)
from sog.search.gtcfr import Gadget
from sog.search.tree import CompiledTree, PublicTree, compile_tree

__all__ = [
    "APPROACHES",
    "BLUEPRINTS",
    "Continuations",
    "DepthLimitedAgent",
    "DepthLimitedSolution",
    "agent_from_spec",
    "as_array",
    "best_response_policy",
    "bias_continuations",
    "compose",
    "exploitability_by_k",
    "frozen_limit",
    "make_blueprint",
    "nested_policy",
    "self_generative",
    "solve_depth_limited",
]

APPROACHES = ("bias", "self_generative")
SAFETY = ("unsafe", "gadget")
BLUEPRINTS = ("external", "outcome", "pluribus", "cfr")
DEFAULT_CONFIG = CFRConfig("cfr+", alternating=True)


# ---- full-game policies as arrays over the full tree's decision nodes -------------------
def _row_of(game: Game) -> dict:
    """{decision pub: row of the full-tree policy array}."""
    key = ("depth_limited_rows", None)
    if key not in game._cache:
        game._cache[key] = {pub: i for i, pub in enumerate(full_tree(game).decision_pubs)}
    return game._cache[key]


def _normalised(game: Game, sigma: np.ndarray) -> np.ndarray:
    """Rows restricted to the legal actions and normalised (uniform where empty)."""
    legal = full_tree(game).levels.legal_dec
    p = np.where(legal, np.maximum(np.asarray(sigma, dtype=np.float64), 0.0), 0.0)
    tot = p.sum(-1, keepdims=True)
    unif = legal / np.maximum(legal.sum(-1, keepdims=True), 1)
    return np.where(tot > 0, p / np.where(tot > 0, tot, 1.0), unif)


def as_array(game: Game, policy: TabularPolicy | np.ndarray) -> np.ndarray:
    """float [m, N, A] over the full tree's decision nodes (legal, normalised)."""
    return _normalised(game, policy_array(game, policy))


def make_blueprint(game: Game, kind: str = "external", iterations: int | None = 20000,
                   seconds: float | None = None, seed: int = 0) -> np.ndarray:
    """A full-game blueprint [m, N, A]: MCCFR ("external", "outcome", "pluribus") or
    public-tree alternating CFR+ ("cfr"), for `iterations` and/or `seconds`."""
    if kind not in BLUEPRINTS:
        raise ValueError(f"unknown blueprint {kind!r}; choose one of {', '.join(BLUEPRINTS)}")
    if iterations is None and seconds is None:
        raise ValueError("a blueprint needs iterations and/or seconds")
    if kind == "cfr":
        solver = CFRSolver(full_tree(game).ct, config=DEFAULT_CONFIG)
        deadline = None if seconds is None else time.perf_counter() + seconds
        while (iterations is None or solver.iterations < iterations) and (
                deadline is None or time.perf_counter() < deadline):
            solver.iterate(1)
        return _normalised(game, solver.average_policy())
    from sog.agents.policy_agents import MCCFR_VARIANTS
    solver = MCCFR_VARIANTS[kind](game, seed=seed)
    solver.run(iterations, seconds)
    return as_array(game, solver.policy())


# ---- continuation strategies and their exact leaf values -------------------------------
def _at_chance(game: Game, root) -> Callable[[Hashable], bool]:
    """The depth limit: public chance nodes below `root` (the next betting round in poker)."""
    return lambda pub: pub != root and game.cached("kind", pub) == CHANCE


@dataclasses.dataclass
class _Forest:
    ct: CompiledTree
    levels: Levels
    rows: np.ndarray          # full-tree row of each forest decision node
    searcher_rows: np.ndarray  # bool [m_sub]: the searcher acts there


class Continuations:
    """The opponent's continuation strategies for one searcher, with exact leaf payoffs.

    blueprint: float [m, N, A] full-game blueprint (the searcher plays it below
    the depth limit). strategies: full-game arrays of the opponent's
    continuations (the opponent's rows are used, below the leaves).
    `matrices(pubs)` gives float [F, k, N, N]: per leaf and continuation, player
    0's expected payoff per slot pair (chance weights included) of the
    blueprint / continuation pair below the leaf; cached per (leaf, strategy).
    """

    def __init__(self, game: Game, blueprint: np.ndarray, searcher: int,
                 strategies: Sequence[np.ndarray] = ()):
        self.game, self.searcher, self.opponent = game, int(searcher), 1 - int(searcher)
        self.blueprint = np.asarray(blueprint, dtype=np.float64)
        self.strategies: list[np.ndarray] = []
        self.labels: list[str] = []
        self._forests: dict[tuple, _Forest] = {}
        self._matrix: dict[tuple[int, Hashable], np.ndarray] = {}
        for s in strategies:
            self.add(s)

    @property
    def k(self) -> int:
        return len(self.strategies)

    def add(self, strategy: np.ndarray, label: str = "") -> None:
        self.strategies.append(np.asarray(strategy, dtype=np.float64))
        self.labels.append(label or f"strategy {len(self.strategies) - 1}")

    def truncated(self, k: int) -> Continuations:
        """The first k strategies (sharing the cached leaf matrices)."""
        out = Continuations(self.game, self.blueprint, self.searcher)
        out.strategies, out.labels = self.strategies[:k], self.labels[:k]
        out._forests, out._matrix = self._forests, self._matrix
        return out

    def _forest(self, pubs: tuple) -> _Forest:
        if pubs not in self._forests:
            ct = compile_tree(PublicTree(self.game, list(pubs)).expand_all())
            lv = Levels(ct)
            row_of = _row_of(self.game)
            rows = np.array([row_of[ct.pub(p)] for p in lv.dec], dtype=np.int64)
            self._forests[pubs] = _Forest(ct, lv, rows, lv.dec_actor == self.searcher)
        return self._forests[pubs]

    def matrices(self, pubs: Sequence[Hashable]) -> np.ndarray:
        """float [F, k, N, N] (see class doc)."""
        pubs = tuple(pubs)
        N = self.game.spec.num_states
        for c in range(self.k):
            missing = tuple(p for p in pubs if (c, p) not in self._matrix)
            if not missing:
                continue
            f = self._forest(missing)
            ct, lv = f.ct, f.levels
            sigma = np.where(f.searcher_rows[:, None, None], self.blueprint[f.rows],
                             self.strategies[c][f.rows])
            out = np.zeros((len(ct.roots), N, N))
            for s in range(N):   # column s: player 1's range is the unit vector e_s
                rr = np.zeros((len(ct.roots), 2, N))
                rr[:, 0] = 1.0
                rr[:, 1, s] = 1.0
                _, values = evaluate_policy(lv, sigma, rr)
                out[:, :, s] = values[ct.roots, 0]
            for b, pos in enumerate(ct.roots):
                self._matrix[(c, ct.pub(pos))] = out[b]
        return np.stack([np.stack([self._matrix[(c, p)] for c in range(self.k)]) for p in pubs]) \
            if pubs else np.zeros((0, self.k, N, N))


def bias_continuations(game: Game, blueprint: np.ndarray, searcher: int, k: int,
                       factor: float = 5.0) -> Continuations:
    """The bias approach: {blueprint, blueprint biased toward action 0, 1, ..., A-1, then
    the same with factor**2, ...}, the first k; in Leduc 0/1/2 = fold/call/raise."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    if not factor > 0:
        raise ValueError(f"the bias factor must be positive, got {factor}")
    blueprint = np.asarray(blueprint, dtype=np.float64)
    cont = Continuations(game, blueprint, searcher)
    cont.add(blueprint, "blueprint")
    A = game.spec.num_actions
    root = game.root()
    for j in range(k - 1):
        action, power = j % A, j // A + 1
        scale = np.ones(A)
        scale[action] = factor ** power
        name = game.action_name(root, action) if game.cached("kind", root) == DECISION else str(action)
        cont.add(_normalised(game, blueprint * scale), f"{name.lower()}-biased x{factor ** power:g}")
    return cont


# ---- the depth-limited subgame solve -----------------------------------------------------
def _choice_values(U: np.ndarray, ranges: np.ndarray, p: np.ndarray, opponent: int
                   ) -> tuple[np.ndarray, np.ndarray]:
    """(values [F, 2, N], the opponent's per-continuation values q [F, N, k]) at the leaves
    for ranges [F, 2, N] when the opponent mixes its continuations with p [F, N, k]."""
    r0, r1 = ranges[:, 0], ranges[:, 1]
    out = np.zeros_like(ranges)
    if opponent == 1:
        q = -np.einsum("fcab,fa->fbc", U, r0)
        out[:, 1] = (p * q).sum(-1)
        out[:, 0] = np.einsum("fcab,fb,fbc->fa", U, r1, p)
    else:
        q = np.einsum("fcab,fb->fac", U, r1)
        out[:, 0] = (p * q).sum(-1)
        out[:, 1] = -np.einsum("fcab,fa,fac->fb", U, r0, p)
    return out, q


def _uniform_rm(x: np.ndarray) -> np.ndarray:
    """Regret matching over an all-legal last axis."""
    shape = x.shape
    return regret_matching(x, np.ones(shape, dtype=bool), np.full(shape[:-1] + (1,), shape[-1]))


class _LeafChoice:
    """The opponent's choice among k continuations at each (leaf, opponent slot), as a
    `FrontierValues` of the trunk's frontier with its own regrets (see module doc)."""

    def __init__(self, pubs: Sequence[Hashable], U: np.ndarray, opponent: int):
        self.pubs, self.U, self.opponent = tuple(pubs), U, opponent
        F, k, N, _ = U.shape
        self.regrets = np.zeros((F, N, k))
        self.avg = np.zeros((F, N, k))
        self._last = None

    def current(self) -> np.ndarray:
        return _uniform_rm(self.regrets)

    def average(self) -> np.ndarray:
        return _uniform_rm(self.avg)

    def __call__(self, pubs: Sequence, ranges: np.ndarray) -> np.ndarray:
        if tuple(pubs) != self.pubs:
            raise ValueError("the leaf choice was built for other frontier public states")
        p = self.current()
        out, q = _choice_values(self.U, ranges, p, self.opponent)
        self._last = (p, q, out[:, self.opponent], ranges[:, self.opponent])
        return out

    def update(self, t: int, cfg: CFRConfig) -> None:
        """The regret and average update of the last pass, as CFRSolver does for its nodes."""
        p, q, v, own = self._last
        inst = q - v[:, :, None]
        own = own[:, :, None]
        r, avg = self.regrets, self.avg
        if cfg.algorithm == "cfr+":
            self.regrets = np.maximum(r + inst, 0.0)
            self.avg = avg + t * own * p
        elif cfg.algorithm == "cfr":
            self.regrets = r + inst
            self.avg = avg + own * p
        else:
            ta, tb = t ** cfg.alpha, t ** cfg.beta
            self.regrets = np.where(r > 0, r * (ta / (ta + 1)), r * (tb / (tb + 1))) + inst
            self.avg = avg * ((t - 1) / t) ** cfg.gamma + own * p


class _FixedChoice:
    """Leaf values for a fixed choice p [F, N, k]; with `best`, the opponent's values are
    those of its best continuation per (leaf, slot) (its best response in the subgame)."""

    def __init__(self, U: np.ndarray, p: np.ndarray, opponent: int, best: bool = False):
        self.U, self.p, self.opponent, self.best = U, p, opponent, best

    def __call__(self, pubs: Sequence, ranges: np.ndarray) -> np.ndarray:
        out, q = _choice_values(self.U, ranges, self.p, self.opponent)
        if self.best:
            out[:, self.opponent] = q.max(-1)
        return out


class _TrunkSolver(CFRSolver):
    """CFRSolver whose frontier is a `_LeafChoice`, updated in the opponent's passes; with a
    `Gadget`, the opponent's root range is the gadget's (re-solving, `sog.search.gtcfr`)."""

    def __init__(self, ct, root_ranges, choice: _LeafChoice | None, config: CFRConfig,
                 gadget: Gadget | None = None):
        super().__init__(ct, root_ranges=root_ranges, value_fn=choice, config=config, gadget=gadget)
        self.choice = choice

    def _update(self, t: int, players: tuple[int, ...]) -> None:
        super()._update(t, players)
        if self.choice is not None and self.choice.opponent in players:
            self.choice.update(t, self.config)


@dataclasses.dataclass
class DepthLimitedSolution:
    """A solved depth-limited subgame: the trunk, its average policy (both players; the
    searcher's part is the one to play), the opponent's average leaf choice and ranges."""

    game: Game
    searcher: int
    ct: CompiledTree
    levels: Levels
    root_ranges: np.ndarray          # [1, 2, N]
    policy: np.ndarray               # [m_trunk, N, A] average policy at the trunk's decisions
    leaf_pubs: tuple                 # the frontier public states (depth-limit leaves)
    leaf_choice: np.ndarray | None   # [F, N, k] the opponent's average choice per leaf and slot
    leaf_matrices: np.ndarray | None  # [F, k, N, N] player 0's payoff per leaf, continuation, slots
    opponent: int
    labels: tuple                    # the continuations' labels
    iterations: int
    seconds: float

    def __post_init__(self):
        self._pos = {}
        for p in range(self.ct.num_nodes):
            self._pos.setdefault(self.ct.pub(p), p)
        self._row = {int(p): i for i, p in enumerate(self.levels.dec)}
        self._ranges = propagate_ranges(self.levels, full_policy(self.levels, self.policy),
                                        self.root_ranges)

    def __contains__(self, pub) -> bool:
        return pub in self._pos

    def ranges_at(self, pub) -> np.ndarray:
        """float [2, N]: both players' reach at `pub` under the average policy."""
        return self._ranges[self._pos[pub]].copy()

    def rows_at(self, pub) -> np.ndarray:
        """float [N, A]: the average policy of the actor at decision `pub`."""
        return self.policy[self._row[self._pos[pub]]]

    def root_values(self, best_response: bool = False) -> np.ndarray:
        """float [2]: each player's expected value in the depth-limited subgame under the
        average policy and average leaf choice; with `best_response`, each player's
        best-response value there (the opponent also picks its best continuation)."""
        fn = None if self.leaf_matrices is None else _FixedChoice(
            self.leaf_matrices, self.leaf_choice, self.opponent, best_response)
        _, values = evaluate_policy(self.levels, self.policy, self.root_ranges, fn, best_response)
        root = self.ct.roots[0]
        return np.array([self.root_ranges[0, 0] @ values[root, 0], self.root_ranges[0, 1] @ values[root, 1]])

    def table(self, player: int | None = None) -> dict:
        """{trunk decision pub: [N, A]} for `player`'s decisions (all if None)."""
        lv = self.levels
        return {self.ct.pub(p): self.policy[i] for i, p in enumerate(lv.dec)
                if player is None or lv.dec_actor[i] == player}


def solve_depth_limited(game: Game, root, root_ranges: np.ndarray, continuations: Continuations | None,
                        iterations: int = 500, config: CFRConfig = DEFAULT_CONFIG,
                        stop: Callable[[Hashable], bool] | None = None,
                        gadget: Gadget | None = None) -> DepthLimitedSolution:
    """Solve the subgame rooted at `root` (ranges [2, N]) down to the depth limit (public
    chance nodes by default, `stop` otherwise) with the opponent's k-way choice at its leaves.

    `continuations` may be None only when the subgame has no leaves (the last round).
    With `gadget` (safe re-solving) the gadget's player's root range is the gadget's."""
    t0 = time.perf_counter()
    tree = PublicTree(game, [root]).expand_all(stop=stop or _at_chance(game, root))
    ct = compile_tree(tree)
    leaf_pubs = tuple(ct.pub(p) for p in ct.frontier)
    choice = None
    if leaf_pubs:
        if continuations is None or continuations.k == 0:
            raise ValueError("the subgame has depth-limit leaves but no continuation strategies")
        choice = _LeafChoice(leaf_pubs, continuations.matrices(leaf_pubs), continuations.opponent)
    rr = np.asarray(root_ranges, dtype=np.float64).reshape(1, 2, game.spec.num_states)
    solver = _TrunkSolver(ct, rr.copy(), choice, config, gadget)
    solver.iterate(iterations)
    return DepthLimitedSolution(
        game=game, searcher=-1 if continuations is None else continuations.searcher, ct=ct,
        levels=solver.levels, root_ranges=solver.root_ranges, policy=solver.average_policy(),
        leaf_pubs=leaf_pubs,
        leaf_choice=None if choice is None else choice.average(),
        leaf_matrices=None if choice is None else choice.U,
        opponent=-1 if continuations is None else continuations.opponent,
        labels=() if continuations is None else tuple(continuations.labels),
        iterations=solver.iterations, seconds=time.perf_counter() - t0)


def compose(game: Game, blueprint: np.ndarray, solutions: dict[int, DepthLimitedSolution]) -> np.ndarray:
    """The full-game policy [m, N, A]: for each player in `solutions`, its part of that
    solution in the solution's trunk; the blueprint everywhere else."""
    out = np.array(blueprint, dtype=np.float64, copy=True)
    row_of = _row_of(game)
    for player, sol in solutions.items():
        for pub, rows in sol.table(player).items():
            out[row_of[pub]] = rows
    return out


def best_response_policy(game: Game, sigma: np.ndarray, player: int) -> np.ndarray:
    """`sigma` with `player`'s rows replaced by its exact (pure, counterfactual) best
    response to the other player's part of `sigma`, from one vectorised pass."""
    ft = full_tree(game)
    lv = ft.levels
    ranges = propagate_ranges(lv, full_policy(lv, sigma), game.initial_ranges()[None])
    values = leaf_values(lv, ranges, None)
    _, q = propagate_values(lv, sigma, values, best_response=True)
    masked = np.where(lv.legal_dec, q, -np.inf)
    best = np.argmax(masked, axis=-1)
    br = np.zeros_like(sigma)
    np.put_along_axis(br, best[..., None], 1.0, axis=-1)
    mine = (lv.dec_actor == player)[:, None, None]
    return np.where(mine, _normalised(game, br), sigma)


def self_generative(game: Game, blueprint: np.ndarray, searcher: int, k: int, iterations: int = 500,
                    config: CFRConfig = DEFAULT_CONFIG, on_solve=None) -> Continuations:
    """The self-generative approach: k continuations for `searcher`'s opponent, each new
    one its best response to the composed policy of the current depth-limited solution at
    the root. `on_solve(solution)` is called after each root solve (k - 1 solves)."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    cont = Continuations(game, blueprint, searcher)
    cont.add(blueprint, "blueprint")
    root, init = game.root(), game.initial_ranges()
    while cont.k < k:
        sol = solve_depth_limited(game, root, init, cont, iterations, config)
        if on_solve is not None:
            on_solve(sol)
        br = best_response_policy(game, compose(game, blueprint, {searcher: sol}), cont.opponent)
        cont.add(br, f"best response {cont.k}")
    return cont


def make_continuations(game: Game, blueprint: np.ndarray, searcher: int, k: int, approach: str,
                       bias_factor: float = 5.0, iterations: int = 500,
                       config: CFRConfig = DEFAULT_CONFIG) -> Continuations:
    if approach == "bias":
        return bias_continuations(game, blueprint, searcher, k, bias_factor)
    if approach == "self_generative":
        return self_generative(game, blueprint, searcher, k, iterations, config)
    raise ValueError(f"unknown approach {approach!r}; choose one of {', '.join(APPROACHES)}")


# ---- measurement ------------------------------------------------------------------------
def _trunk_pubs(game: Game) -> set:
    tree = PublicTree(game, [game.root()]).expand_all(stop=_at_chance(game, game.root()))
    return {tree.pubs[i] for i in range(tree.size) if tree.kind[i] == DECISION}


class _FrozenSolver(CFRSolver):
    """CFR on the full tree with some rows of the current policy fixed."""

    def __init__(self, ct, frozen: np.ndarray, fixed: np.ndarray, config: CFRConfig):
        super().__init__(ct, config=config)
        self.frozen, self.fixed = frozen, fixed

    def current_entries(self) -> np.ndarray:
        lv = self.levels
        sigma = super().current_entries()
        frozen = self.frozen[lv.ent_row]
        sigma[frozen] = lv.to_entries(self.fixed)[frozen]
        return sigma


def frozen_limit(game: Game, blueprint: np.ndarray, iterations: int = 2000,
                 config: CFRConfig = DEFAULT_CONFIG) -> np.ndarray:
    """The k -> "every strategy" limit: per seat, the trunk that is best against an opponent
    free everywhere when the seat plays its blueprint below the depth limit (full-tree CFR
    with those rows frozen); composed like `compose`. The floor of `exploitability_by_k`."""
    ft = full_tree(game)
    lv = ft.levels
    trunk = _trunk_pubs(game)
    below = np.array([pub not in trunk for pub in ft.decision_pubs])
    out = np.array(blueprint, dtype=np.float64, copy=True)
    for seat in (0, 1):
        frozen = below & (lv.dec_actor == seat)
        solver = _FrozenSolver(ft.ct, frozen, blueprint, config)
        solver.iterate(iterations)
        mine = ~below & (lv.dec_actor == seat)
        out[mine] = solver.average_policy()[mine]
    return out


def exploitability_by_k(game: Game, blueprint: np.ndarray, approach: str, ks: Sequence[int],
                        iterations: int = 500, bias_factor: float = 5.0,
                        config: CFRConfig = DEFAULT_CONFIG, log=None) -> list[dict]:
    """Exploitability of the composed policy (each seat's depth-limited solution at the root
    in the trunk, blueprint below) for each k in `ks`; rows of dicts, game units and mbb."""
    kmax = max(ks)
    conts = {seat: make_continuations(game, blueprint, seat, kmax, approach, bias_factor, iterations,
                                      config) for seat in (0, 1)}
    root, init = game.root(), game.initial_ranges()
    rows = []
    for k in ks:
        t0 = time.perf_counter()
        sols = {seat: solve_depth_limited(game, root, init, conts[seat].truncated(k), iterations, config)
                for seat in (0, 1)}
        br = best_response_values(game, compose(game, blueprint, sols))
        expl = float(br.sum() / 2)
        row = {"approach": approach, "k": int(k), "exploitability": expl,
               "exploitability_mbb": 1000 * expl, "best_response_values": [float(x) for x in br],
               "seconds": time.perf_counter() - t0, "continuations": list(conts[0].labels[:k])}
        rows.append(row)
        if log is not None:
            log(f"{approach:>15} k={k:<2} {1000 * expl:9.2f} mbb/h")
    return rows


# ---- the nested-solving agent -----------------------------------------------------------
class DepthLimitedAgent(BaseAgent):
    """Nested unsafe depth-limited solving with multi-valued leaves (see module doc).

    DepthLimitedAgent(game, k=4, approach="bias", blueprint="external",
    blueprint_iterations=20000, blueprint_seconds=None, blueprint_policy=None,
    bias_factor=5.0, iterations=300, resolve="round", safety="gadget", gadget_alpha=1.0,
    seed=0):
      k, approach: the continuation set ("bias" or "self_generative"), built once per
        seat at first use (self-generative: from solves at the game's root).
      blueprint: MCCFR variant or "cfr", trained once at first use for
        blueprint_iterations / blueprint_seconds with `seed`; or give
        `blueprint_policy` (a TabularPolicy or full-tree array) instead.
      iterations: CFR+ iterations per subgame solve.
      resolve: "round" (subgame rooted at the current round's start) or "decision"
        (additionally re-solved at the current public state).
      safety: "gadget" (default; safe re-solving: the opponent's root range comes from DeepStack's
        Terminate / Follow gadget, `sog.search.gtcfr.Gadget`, with Terminate values its
        exact best-response counterfactual values against our previous solution in its
        trunk and our blueprint below; the range is gadget_alpha * follow +
        (1 - gadget_alpha) * Bayes belief) or "unsafe" (the paper's unsafe nested solving:
        Bayes-updated beliefs only; very exploitable in Leduc, see the module doc).
    """

    name = "depth_limited"

    def __init__(self, game: Game, k: int = 4, approach: str = "bias", blueprint: str = "external",
                 blueprint_iterations: int | None = 20000, blueprint_seconds: float | None = None,
                 blueprint_policy: TabularPolicy | np.ndarray | None = None, bias_factor: float = 5.0,
                 iterations: int = 300, resolve: str = "round", safety: str = "gadget",
                 gadget_alpha: float = 1.0, seed: int = 0, config: CFRConfig = DEFAULT_CONFIG):
        super().__init__(game)
        if approach not in APPROACHES:
            raise AgentError(f"unknown approach {approach!r}; choose one of {', '.join(APPROACHES)}")
        if blueprint_policy is None and blueprint not in BLUEPRINTS:
            raise AgentError(f"unknown blueprint {blueprint!r}; choose one of {', '.join(BLUEPRINTS)}")
        if blueprint_policy is None and blueprint_iterations is None and blueprint_seconds is None:
            raise AgentError("the blueprint needs blueprint_iterations and/or blueprint_seconds")
        if resolve not in ("round", "decision"):
            raise AgentError(f"resolve must be 'round' or 'decision', got {resolve!r}")
        if safety not in SAFETY:
            raise AgentError(f"safety must be one of {', '.join(SAFETY)}, got {safety!r}")
        if not 0 <= gadget_alpha <= 1:
            raise AgentError(f"gadget_alpha must be in [0, 1], got {gadget_alpha}")
        if k < 1 or iterations < 1 or not bias_factor > 0:
            raise AgentError("k and iterations must be at least 1 and bias_factor positive")
        self.k, self.approach, self.bias_factor = int(k), approach, float(bias_factor)
        self.blueprint_kind = "tabular" if blueprint_policy is not None else blueprint
        self.blueprint_iterations, self.blueprint_seconds = blueprint_iterations, blueprint_seconds
        self.iterations, self.resolve, self.seed, self.config = int(iterations), resolve, int(seed), config
        self.safety, self.gadget_alpha = safety, float(gadget_alpha)
        self._below: dict[Hashable, tuple[CompiledTree, Levels, np.ndarray]] = {}
        self._blueprint = None if blueprint_policy is None else as_array(game, blueprint_policy)
        self._continuations: dict[int, Continuations] = {}
        self._solves: dict[tuple, DepthLimitedSolution] = {}
        self._last: tuple | None = None

    def __repr__(self) -> str:
        return (f"DepthLimitedAgent({self.game.spec.name}, k={self.k}, approach={self.approach}, "
                f"blueprint={self.blueprint_kind})")

    # ---- preparation (once per agent) ---------------------------------------------------
    @property
    def blueprint(self) -> np.ndarray:
        if self._blueprint is None:
            self._blueprint = make_blueprint(self.game, self.blueprint_kind, self.blueprint_iterations,
                                             self.blueprint_seconds, self.seed)
        return self._blueprint

    def blueprint_policy(self) -> TabularPolicy:
        return tabular_from_array(self.game, self.blueprint)

    def continuations(self, seat: int) -> Continuations:
        if seat not in self._continuations:
            self._continuations[seat] = make_continuations(
                self.game, self.blueprint, seat, self.k, self.approach, self.bias_factor,
                self.iterations, self.config)
        return self._continuations[seat]

    def reset(self, player: int, seed: int) -> None:
        super().reset(player, seed)
        self.continuations(player)
        self._last = None

    # ---- nested solving -------------------------------------------------------------------
    def _round_start(self, history: Sequence[Hashable], t: int) -> int:
        """The index of the first public state of the round holding history[t]."""
        game = self.game
        while t > 0 and game.cached("kind", history[t - 1]) != CHANCE:
            t -= 1
        return t

    def _ranges_from(self, prev: DepthLimitedSolution, history: Sequence[Hashable], start: int,
                     stop: int) -> np.ndarray:
        """Ranges at history[stop]: prev's ranges at the deepest of history[start..stop] in its
        tree, carried through chance edges (card removal) below it."""
        game = self.game
        j = max(i for i in range(start, stop + 1) if history[i] in prev)
        ranges = prev.ranges_at(history[j])
        for i in range(j + 1, stop + 1):
            parent, pub = history[i - 1], history[i]
            if game.cached("kind", parent) != CHANCE:
                raise AgentError(f"{self!r}: {pub!r} is beyond the previous subgame")
            child = next((c for c in game.cached("children", parent) if c.pub == pub), None)
            if child is None:
                raise AgentError(f"{self!r}: {pub!r} is not a child of {parent!r}")
            new = np.zeros_like(ranges)
            for p in (0, 1):
                ok = child.state_maps[p] >= 0
                np.add.at(new[p], child.state_maps[p][ok], ranges[p][ok] * child.prob)
            ranges = new
        possible = game.cached("possible_mask", history[stop])
        ranges = ranges * possible
        for p in (0, 1):   # unsafe beliefs: a zero range (a never-played action) falls back to uniform
            if ranges[p].sum() <= 1e-12:
                ranges[p] = possible[p] / max(possible[p].sum(), 1)
        return ranges

    def _terminate_values(self, prev: DepthLimitedSolution, seat: int, pub, own_range: np.ndarray
                          ) -> np.ndarray:
        """float [N]: the opponent's best-response counterfactual values at `pub` against our
        previous solution in its trunk and our blueprint elsewhere, for our range there."""
        game = self.game
        if pub not in self._below:
            ct = compile_tree(PublicTree(game, [pub]).expand_all())
            lv = Levels(ct)
            row_of = _row_of(game)
            self._below[pub] = (ct, lv, np.array([row_of[ct.pub(p)] for p in lv.dec], dtype=np.int64))
        ct, lv, rows = self._below[pub]
        ours = compose(game, self.blueprint, {seat: prev})
        rr = np.ones((1, 2, game.spec.num_states))
        rr[0, seat] = own_range
        _, values = evaluate_policy(lv, ours[rows], rr, best_response=True)
        return values[ct.roots[0], 1 - seat]

    def _solve(self, seat: int, history: tuple, root_index: int, prev: DepthLimitedSolution | None,
               prev_start: int) -> DepthLimitedSolution:
        key = (seat, history[: root_index + 1])
        sol = self._solves.get(key)
        if sol is None:
            game, root, gadget = self.game, history[root_index], None
            if prev is None:
                ranges = game.initial_ranges()
            else:
                ranges = self._ranges_from(prev, history, prev_start, root_index)
                if self.safety == "gadget":
                    gadget = Gadget(1 - seat, self._terminate_values(prev, seat, root, ranges[seat]),
                                    ranges[1 - seat], game.cached("possible_mask", root)[1 - seat],
                                    self.gadget_alpha)
            sol = solve_depth_limited(game, root, ranges, self.continuations(seat), self.iterations,
                                      self.config, gadget=gadget)
            if len(self._solves) > 100_000:
                self._solves.clear()
            self._solves[key] = sol
        return sol

    def solution(self, history: Sequence[Hashable], seat: int | None = None) -> DepthLimitedSolution:
        """The depth-limited solution this agent uses at history[-1] (as `seat`, default the actor)."""
        history = tuple(history)
        seat = int(self.game.cached("actor", history[-1])) if seat is None else seat
        # the chain of round solves: round 1 from the game's root, each next round from the
        # previous round's solve (ranges at the leaf it ended in)
        starts = []
        t = len(history) - 1
        while True:
            r = self._round_start(history, t)
            starts.append(r)
            if r == 0:
                break
            t = r - 1
        sol, prev_start = None, 0
        for r in reversed(starts):
            sol = self._solve(seat, history, r, sol, prev_start)
            prev_start = r
        if self.resolve == "decision" and prev_start != len(history) - 1:
            sol = self._solve(seat, history, len(history) - 1, sol, prev_start)
        return sol

    def policy_rows(self, history: Sequence[Hashable]) -> np.ndarray:
        """float [N, A]: the actor's strategy per slot at decision history[-1]."""
        return self.solution(history).rows_at(history[-1])

    def _distribution(self, history, slot, legal) -> np.ndarray:
        key = (tuple(history), slot)
        if self._last is None or self._last[0] != key:
            self._last = (key, self.policy_rows(history)[slot])
        return self._last[1]


def nested_policy(agent: DepthLimitedAgent) -> TabularPolicy:
    """The agent's full-game policy (both seats): its nested solves at every decision
    public state, assembled into a table (its solves depend only on the public history)."""
    game = agent.game
    ft = full_tree(game)
    ct = ft.ct
    table = {}
    for pos in ft.levels.dec:
        path = []
        p = int(pos)
        while p >= 0:
            path.append(ct.pub(p))
            p = int(ct.parent[p])
        table[ct.pub(int(pos))] = agent.policy_rows(path[::-1])
    return TabularPolicy(game, table)


# ---- the registry factory -----------------------------------------------------------------
_SCHEMA = {"k": int, "approach": APPROACHES, "blueprint": BLUEPRINTS, "blueprint_iterations": int,
           "blueprint_seconds": float, "bias_factor": float, "iterations": int,
           "resolve": ("round", "decision"), "safety": SAFETY, "gadget_alpha": float, "seed": int}


def agent_from_spec(game: Game, arg: str | None, params: dict) -> DepthLimitedAgent:
    """`depth_limited[:BLUEPRINT.json]?k=4&approach=bias&blueprint=external&blueprint_iterations=20000
    &bias_factor=5&iterations=300&resolve=round&safety=gadget&gadget_alpha=1&seed=0`; a policy
    file as the ':' argument replaces the MCCFR blueprint."""
    from sog.agents.registry import take_params
    kw = take_params("depth_limited", params, _SCHEMA,
                     minimum={"k": 1, "iterations": 1, "blueprint_iterations": 0,
                              "blueprint_seconds": 0, "bias_factor": 1e-9})
    if arg is not None:
        from sog.eval.policy import PolicyError
        from sog.eval.policy_io import load_policy
        try:
            kw["blueprint_policy"] = load_policy(arg, game)
        except (PolicyError, OSError) as e:
            raise AgentError(f"agent 'depth_limited': {e}") from None
    return DepthLimitedAgent(game, **kw)
