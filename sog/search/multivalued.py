"""Depth-limited solving with multi-valued states (the solver).

Brown, Sandholm and Amos, "Depth-Limited Solving for Imperfect-Information
Games" (NeurIPS 2018; `papers/depth-limited-solving.txt`). In an
imperfect-information game a single value per leaf state of a depth-limited
subgame is not enough: the searcher must be robust to the opponent *adapting*
below the depth limit. The paper lets the opponent make one last choice at each
leaf information set, between k continuation strategies for the rest of the
game, while the searcher is fixed to its blueprint there; a leaf's value is the
value of (searcher's blueprint, the chosen continuation).

What is implemented here, on the vectorised public tree (`sog.search`):
* **Blueprint**: a full-game policy as an array over the full tree's decision
  nodes (`as_array` of any `TabularPolicy`; `sog.agents.depth_limited.make_blueprint`
  trains one with MCCFR or CFR+).
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
  (`sog.eval.depth_limited_k`: the paper's Figure 1 effect, it falls as k grows).

Only the searcher's part of a depth-limited solution is used: each seat's
solve has that seat as the searcher. The nested-solving agent built on this is
`sog.agents.depth_limited`.
"""
from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Hashable, Sequence

import numpy as np

from sog.games.api import CHANCE, DECISION, Game
from sog.policy import TabularPolicy
from sog.search.cfr import (
    CFRConfig,
    CFRSolver,
    Levels,
    evaluate_policy,
    full_policy,
    leaf_values,
    propagate_ranges,
    propagate_values,
)
from sog.search.full_tree import (
    full_tree,
    policy_array,
)
from sog.search.gtcfr import Gadget
from sog.search.row_cfr import match_groups
from sog.search.tree import CompiledTree, PublicTree, compile_tree

APPROACHES = ("bias", "self_generative")
DEFAULT_CONFIG = CFRConfig("cfr+", alternating=True)


# ---- full-game policies as arrays over the full tree's decision nodes -------------------
def normalised(game: Game, sigma: np.ndarray) -> np.ndarray:
    """float [m, N, A]: rows restricted to the legal actions and normalised (uniform where empty)."""
    legal = full_tree(game).levels.legal_dec
    p = np.where(legal, np.maximum(np.asarray(sigma, dtype=np.float64), 0.0), 0.0)
    tot = p.sum(-1, keepdims=True)
    unif = legal / np.maximum(legal.sum(-1, keepdims=True), 1)
    return np.where(tot > 0, p / np.where(tot > 0, tot, 1.0), unif)


def as_array(game: Game, policy: TabularPolicy | np.ndarray) -> np.ndarray:
    """float [m, N, A] over the full tree's decision nodes (legal, normalised)."""
    return normalised(game, policy_array(game, policy))


# ---- continuation strategies and their exact leaf values -------------------------------
def at_chance(game: Game, root) -> Callable[[Hashable], bool]:
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
            row_of = full_tree(self.game).row_of
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
        cont.add(normalised(game, blueprint * scale), f"{name.lower()}-biased x{factor ** power:g}")
    return cont


# ---- the depth-limited subgame solve -----------------------------------------------------
def choice_values(U, ranges: np.ndarray, p: np.ndarray, opponent: int, players: tuple[int, ...] = (0, 1)
                   ) -> tuple[np.ndarray, np.ndarray | None]:
    """(values [F, 2, N], the opponent's per-continuation values q [F, N, k]) at the leaves
    for ranges [F, 2, N] when the opponent mixes its continuations with p [F, N, k]; only
    `players`' values are computed (the others' rows are 0, and q is None where the opponent
    is not among them). U: the payoff matrices float [F, k, N, N], or an object that applies
    them without holding them (`shape` (F, k, N, N), `pair_sums(y, transpose, summed)`: float
    [F, k, N], sum_b U[f, c, a, b] y[f, c, b] for y float [F, k or 1, N], or with `transpose`
    sum_a U[f, c, a, b] y[f, c, a], with `summed` its sum over c, float [F, N];
    `sog.agents.holdem.table.range_search.PairLeaves`)."""
    r0, r1 = ranges[:, 0], ranges[:, 1]
    out = np.zeros_like(ranges)
    q = None
    if not isinstance(U, np.ndarray):
        mine, other = (r0, r1) if opponent == 1 else (r1, r0)
        if opponent in players:
            q = U.pair_sums(mine[:, None], transpose=opponent == 1)                        # [F, k, N]
            q = np.transpose(-q if opponent == 1 else q, (0, 2, 1))                         # [F, N, k]
            out[:, opponent] = (p * q).sum(-1)
        if 1 - opponent in players:
            mixed = U.pair_sums(other[:, None] * np.transpose(p, (0, 2, 1)), transpose=opponent == 0, summed=True)
            out[:, 1 - opponent] = mixed if opponent == 1 else -mixed
        return out, q
    if opponent in players:
        q = -np.einsum("fcab,fa->fbc", U, r0) if opponent == 1 else np.einsum("fcab,fb->fac", U, r1)
        out[:, opponent] = (p * q).sum(-1)
    if 1 - opponent in players:
        if opponent == 1:
            out[:, 0] = np.einsum("fcab,fb,fbc->fa", U, r1, p)
        else:
            out[:, 1] = -np.einsum("fcab,fa,fac->fb", U, r0, p)
    return out, q


def _uniform_rm(x: np.ndarray) -> np.ndarray:
    """Regret matching over an all-legal last axis (`sog.search.cfr.regret_matching`'s values, in one compiled pass:
    a range search's leaf choice has [F, 1326, 4] regrets)."""
    k = x.shape[-1]
    out = np.empty(x.size)
    match_groups(np.ascontiguousarray(x, dtype=np.float64).reshape(-1), np.arange(0, x.size, k), out)
    return out.reshape(x.shape)


class _LeafChoice:
    """The opponent's choice among k continuations at each (leaf, opponent slot), as a
    `FrontierValues` of the trunk's frontier with its own regrets (see module doc)."""

    def __init__(self, pubs: Sequence[Hashable], U: np.ndarray, opponent: int):
        self.pubs, self.U, self.opponent = tuple(pubs), U, opponent
        F, k, N, _ = U.shape
        self.regrets = np.zeros((F, N, k))
        self.avg = np.zeros((F, N, k))
        self._last = None
        self.players = (0, 1)       # the players whose values the next pass needs (`_TrunkSolver._update`)

    def current(self) -> np.ndarray:
        return _uniform_rm(self.regrets)

    def average(self) -> np.ndarray:
        return _uniform_rm(self.avg)

    def __call__(self, pubs: Sequence, ranges: np.ndarray) -> np.ndarray:
        if tuple(pubs) != self.pubs:
            raise ValueError("the leaf choice was built for other frontier public states")
        p = self.current()
        out, q = choice_values(self.U, ranges, p, self.opponent, self.players)
        if q is not None:
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
        out, q = choice_values(self.U, ranges, self.p, self.opponent)
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
        """The pass of `players` (the frontier's values of theirs only: a pass updates them alone, and
        the other player's values of the latest pass are stale, as `CFRSolver.last_pass` says), then the
        leaf choice's update in the opponent's passes."""
        if self.choice is not None:
            self.choice.players = players
        super()._update(t, players)
        if self.choice is not None and self.choice.opponent in players:
            self.choice.update(t, self.config)


class _FrozenTrunkSolver(_TrunkSolver):
    """`_TrunkSolver` whose decisions in `fixed` {decision pub: float [N, A]} play those rows
    throughout (a searcher's own earlier actions, frozen)."""

    def __init__(self, ct, root_ranges, choice: _LeafChoice | None, config: CFRConfig, gadget: Gadget | None,
                 fixed: dict):
        super().__init__(ct, root_ranges, choice, config, gadget)
        lv = self.levels
        dense = np.full((len(lv.dec), ct.num_states, ct.num_actions), -1.0)
        for i, pos in enumerate(lv.dec.tolist()):
            rows = fixed.get(ct.pub(pos))
            if rows is not None:
                dense[i, :, :rows.shape[1]] = rows
        entries = lv.to_entries(dense)
        self._fixed, self._rows = entries >= 0, np.maximum(entries, 0.0)

    def current_entries(self) -> np.ndarray:
        return np.where(self._fixed, self._rows, super().current_entries())


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
    leaf_matrices: object | None     # [F, k, N, N] player 0's payoff per leaf, continuation, slots
                                     # (or an operator applying them: `choice_values`)
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
                        gadget: Gadget | None = None, fixed: dict | None = None,
                        seconds: float = 0.0) -> DepthLimitedSolution:
    """Solve the subgame rooted at `root` (ranges [2, N]) down to the depth limit (public
    chance nodes by default, `stop` otherwise) with the opponent's k-way choice at its leaves,
    for `iterations` iterations (stopping after `seconds` where > 0).

    `continuations` may be None only when the subgame has no leaves (the last round).
    With `gadget` (safe re-solving) the gadget's player's root range is the gadget's; `fixed`
    {decision pub: float [N, A]}: rows those decisions play throughout (`_FrozenTrunkSolver`)."""
    t0 = time.perf_counter()
    tree = PublicTree(game, [root]).expand_all(stop=stop or at_chance(game, root))
    ct = compile_tree(tree)
    leaf_pubs = tuple(ct.pub(p) for p in ct.frontier)
    choice = None
    if leaf_pubs:
        if continuations is None or continuations.k == 0:
            raise ValueError("the subgame has depth-limit leaves but no continuation strategies")
        choice = _LeafChoice(leaf_pubs, continuations.matrices(leaf_pubs), continuations.opponent)
    rr = np.asarray(root_ranges, dtype=np.float64).reshape(1, 2, game.spec.num_states)
    solver = _FrozenTrunkSolver(ct, rr.copy(), choice, config, gadget, fixed) if fixed else \
        _TrunkSolver(ct, rr.copy(), choice, config, gadget)
    if seconds > 0:
        while solver.iterations < iterations and time.perf_counter() - t0 < seconds:
            solver.iterate(1)
    else:
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
    row_of = full_tree(game).row_of
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
    return np.where(mine, normalised(game, br), sigma)


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


