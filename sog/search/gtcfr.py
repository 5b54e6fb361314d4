"""GT-CFR: growing-tree CFR (Student of Games, Materials and Methods).

    for i in range(s // ceil(c)):
        CFR(L, ceil(1/c) iterations)      # regret update phase
        Grow(L)                           # expansion phase: ceil(c) simulations

**Regret update phase.** Public-tree CFR+ with simultaneous updates (the
paper's choice; alternating updates are an option) and linear averaging on
the current tree. Every frontier leaf is evaluated by the value function at
the ranges the current policy induces, all of them in one batched call per
pass; terminals are exact. The passes run on the tree's node-indexed arrays
as it grows (`sog.search.node_cfr`: numba loops, no recompilation; the same
arithmetic as `sog.search.cfr`'s CFR+, bit for bit); regrets, average policy,
action values and iteration-averaged values live in node-indexed arrays. New
nodes start with zero regret (a uniform policy). A phase on a tree without
frontier leaves asks for nothing, so its iterations run in one numba call
(`_closed_iterations`, the same arithmetic pass by pass).

**Expansion phase.** Each simulation samples a world state from the ranges at
the search node (the beliefs of the latest iteration, with the deal's
correlation) and walks down: chance is sampled; at a decision the actor's
action is drawn from `1/2 pi_PUCT + 1/2 pi_CFR` where pi_PUCT is the one-hot
argmax of

    Q(s_i, a) + puct_c * prior(s_i, a) * sqrt(sum_b n(s_i, b)) / (1 + n(s_i, a))

with Q the latest counterfactual action value divided by the opponent's total
reach at the node and by the game's utility bound (the opponent reach ignores
card removal), the prior `softmax(logits / T_prior)` from the value function's
latest evaluation of that public state (uniform if it was never evaluated),
and pi_CFR the average policy. A walk ends at a leaf, where the top-k children
by prior are added (k = 0, the default, is the paper's: all children for
imperfect-information games, 1 for perfect information), or, below a
partially expanded node, where the selected action's missing child is added.
A chance node with more outcomes than `settings.chance_limit` (or the game's
`search_chance_limit`) is never expanded: it stays a value-function leaf and a walk reaching it adds
nothing (`wide_chance`; re-solving steps over it, `sog.search.resolve`).
Visit counts n are incremented along the path; within one phase a virtual
loss of 1 (in units of the utility bound) per pending visit keeps
simulations apart. The walks are numba loops over the tree's arrays
(`sog.search.expansion`, the same draws as numpy's `Generator.choice`); the
priors live in a node-indexed table, set for every frontier leaf from its
evaluation, and the tree grows in Python (`PublicTree.expand`).

**Off-support smoothing.** With `settings.off_support_smoothing` eps > 0, a frontier leaf
where a player reaches none of some possible hands (range 0: a hand the current policy never
plays this way) also asks for the belief with that player's normalised range mixed with eps
uniform (`smoothed_beliefs`), in the same request, and reads that player's values at those hands
from it: the value of holding the hand while the other player allows for it, instead of the
value at a belief that excludes it, whose equilibrium value is not unique and which a trained
network gets worst (Leduc: its error there was 3.5x that on the support, biased low).
Every row is a recorded query. Leduc, SoG(10,1), 8 seeds: a trained network 571.6 -> 401.5
mbb/h at eps 0.5, against the exact oracle's 390.2 without smoothing (README).

**Evaluation cache.** With `settings.value_cache` (by default in perfect-information games) a
frontier leaf whose public state was evaluated at the same normalised ranges earlier in the
search is answered from that evaluation, rescaled by the opponent's reach, without a value
request (`sog.search.value_cache`): a tic-tac-toe SoG(400,1) search asks ~1,100 rows instead
of ~35,000. The answers differ from asking again by rounding only (the float32 network's
rows depend slightly on their batch); every frontier row is still recorded as a query and
sets the prior, so only the value requests shrink. The cache lives and dies with the search.

The search returns the search node's iteration-averaged counterfactual values
for both players, its average policy, every network query it made, and where
its time went (`GTCFR.timings`: one `time.perf_counter` pair per phase, not per
node).

**Coroutine form.** `GTCFR.steps` is the search as a coroutine
(`sog.search.value_function.ValueSteps`): each pass yields its frontier's value
request and is sent the answer, so a driver can run many searches in lockstep
with one network call for all their frontiers (`actors.lockstep`); `run` drives
it with the search's own value function, one call per request.

**Batch axis.** `GTCFR.batch` runs B searches of the same settings as one: their trees
are one forest (`PublicTree(..., separate=True)`), so the node-indexed arrays carry every
search's nodes and each CFR pass is one down and one up numba pass over all of them, with
one value request for all their frontiers (`batch_steps`, `results`); only the expansion
walks go search by search, each from its own generator. Each search's result is the one it
has alone, bit for bit (`tests/test_gtcfr_batch.py`). The query solvers solve a step's
queries as one batch, and self-play runs the searches its games start in the same round as
one (`sog.search.resolve.SearchJob`). Leduc, 32 query solves at SoG(64, 0.5) with a fresh
CVPN on 2 cores: the CFR share of a solve step fell from ~40% to ~20% of its time (README).

Re-solving (`sog.search.resolve`) roots the tree above the current public
state and adds the opponent's Terminate / Follow gadget through `Gadget`.
"""
from __future__ import annotations

import bisect
import dataclasses
import math
import time
from collections.abc import Iterable, Sequence

import numba
import numpy as np

from sog.games.api import CHANCE, DECISION, Game
from sog.limits import SEARCH_LIMITS
from sog.search import expansion, node_cfr, value_cache
from sog.search.node_cfr import TreeView
from sog.search.settings import SearchSettings
from sog.search.tree import PublicTree
from sog.search.value_function import ValueFunction, ValueSteps, drive
from sog.seeding import generator

_SIMULTANEOUS = (np.array([True, True]),)                             # the players of an iteration's passes
_ALTERNATING = (np.array([True, False]), np.array([False, True]))

PHASES = ("tree", "cfr", "value")
"""The phases a search's time is split into (seconds): `tree` growing, compiling and reading the
tree (expansion phases, recompiles, the result, the re-solving summaries), `cfr` the CFR passes
outside the value function, `value` waiting for the answers to its value requests (driven alone:
inside the value function's `evaluate`; in lockstep, also while the batch's other searches run)."""


def wide_chance(game: Game, settings: SearchSettings, pub) -> bool:
    """Whether public state `pub` is a chance node with more outcomes than `settings.chance_limit`
    (0: the game's `search_chance_limit`, if any): a search leaves it a frontier leaf, evaluated
    by the value function like any other (the network's features say chance acts there), and
    never expands it (HUNL's flop has 22,100 deals, each child ~0.3 MB of search arrays and a
    query every pass)."""
    limit = settings.chance_limit or game.search_chance_limit
    return bool(limit) and game.cached("kind", pub) == CHANCE and game.cached("chance_width", pub) > limit


def add_timings(total: dict, part: dict) -> None:
    """Add `part`'s seconds per phase of `PHASES` into `total`."""
    for k in PHASES:
        total[k] = total.get(k, 0.0) + part.get(k, 0.0)


@dataclasses.dataclass
class Gadget:
    """The re-solving gadget above the tree root, for the opponent `player`.

    values: float [N] the opponent's Terminate values (counterfactual values
      from the previous search's summary, our reach included).
    prev_range: float [N] the opponent's range at the root in the previous search.
    alpha: the opponent range used is alpha * r_follow + (1 - alpha) * r_prev,
      both normalised to sum 1 over possible slots (the scale of the
      opponent's range does not change our policy); r_prev's part is fixed at construction.
    """

    player: int
    values: np.ndarray
    prev_range: np.ndarray
    possible: np.ndarray
    alpha: float = 0.5

    def __post_init__(self):
        self.regrets = np.zeros((len(self.values), 2))   # [N, (terminate, follow)]
        prev = self.prev_range * self.possible
        prev_part = (1 - self.alpha) * (prev / prev.sum() if prev.sum() > 0 else prev)
        # float64 copies for the numba loops (`_gadget_range`, `_gadget_update`)
        self._prev_part = np.ascontiguousarray(prev_part, dtype=np.float64)
        self._values = np.ascontiguousarray(self.values, dtype=np.float64)
        self._possible = np.ascontiguousarray(self.possible, dtype=bool)
        self._follow = np.empty(len(self.values))     # `follow` of the current regrets
        self._f = np.empty(len(self.values))          # scratch of `opponent_range`
        _gadget_follow(self.regrets, self._possible, self._follow)

    def follow(self) -> np.ndarray:
        """float [N]: the current Follow probability of each opponent slot (regret matching+ over
        (terminate, follow), uniform where neither regret is positive, 0 at impossible slots);
        read only, overwritten by `update`."""
        return self._follow

    def opponent_range(self) -> np.ndarray:
        """float [N]: the opponent's root range for this iteration (a new array)."""
        out = np.empty(len(self._follow))
        _gadget_range(self._follow, self._possible, self.alpha, self._prev_part, self._f, out)
        return out

    def kernel_args(self) -> tuple:
        """(player, follow, values, alpha, prev_part, f, possible, regrets): what
        `_closed_iterations` reads and updates in place (`_NO_GADGET`: none)."""
        return (self.player, self._follow, self._values, float(self.alpha), self._prev_part, self._f,
                self._possible, self.regrets)

    def update(self, follow_values: np.ndarray) -> None:
        """Regret-matching+ step given the opponent's Follow counterfactual values [N]."""
        _gadget_update(self._follow, self._values, np.ascontiguousarray(follow_values, dtype=np.float64),
                       self._possible, self.regrets)
        _gadget_follow(self.regrets, self._possible, self._follow)


@numba.njit(cache=True)
def _gadget_follow(regrets, possible, follow):
    """follow[s]: regret matching+ over the (terminate, follow) regrets [N, 2] at the possible slots
    (bool [N]), 1/2 where neither is positive, 0 at impossible slots; numpy's elementwise
    arithmetic (`sog.search.cfr.regret_matching`), so the bits agree."""
    for s in range(len(possible)):
        p0 = _max0(regrets[s, 0]) * possible[s]
        p1 = _max0(regrets[s, 1]) * possible[s]
        total = p0 + p1
        follow[s] = p1 / total if total > 0 else possible[s] / 2.0


@numba.njit(cache=True)
def _gadget_range(follow, possible, alpha, prev_part, f, out):
    """out [N] = alpha * r_follow + prev_part: r_follow the Follow probabilities [N] at the
    possible slots normalised to sum 1 (as numpy sums: `expansion.pairwise_sum`), f [N] scratch."""
    for s in range(len(f)):
        f[s] = follow[s] * possible[s]
    total = expansion.pairwise_sum(f, 0, len(f))
    for s in range(len(f)):
        out[s] = alpha * (f[s] / total if total > 0 else f[s]) + prev_part[s]


@numba.njit(cache=True)
def _gadget_update(follow, values, follow_values, possible, regrets):
    """Regret matching+ at the possible slots, in place on regrets [N, 2]: the Follow and
    Terminate values against their mix by the Follow probabilities follow [N]."""
    for s in range(len(follow)):
        ev = (1 - follow[s]) * values[s] + follow[s] * follow_values[s]
        r0 = regrets[s, 0] + (values[s] - ev) * possible[s]
        r1 = regrets[s, 1] + (follow_values[s] - ev) * possible[s]
        regrets[s, 0] = _max0(r0)
        regrets[s, 1] = _max0(r1)


def smoothed_beliefs(ranges: np.ndarray, possible: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray,
                                                                                  np.ndarray]:
    """The second queries of `SearchSettings.off_support_smoothing` for F frontier beliefs (ranges
    float [F, 2, N], possible bool [F, 2, N]): one (k, i) for every leaf k where player i has a
    possible slot of range 0, a copy of the belief with i's range replaced by (1 - eps) r_i / |r_i|
    + eps u_i (u_i uniform over i's possible slots; u_i alone where |r_i| = 0), so that every one
    of i's hands is held; the other player's range, which i's values scale with, stays.
    Returns (beliefs float [K, 2, N], rows int [K]: k, players int [K]: i, off bool [K, N]: the
    hands of i that leaf k's belief excludes, whose values the second query gives)."""
    off = (ranges <= 0) & possible
    rows, players = np.nonzero(off.any(axis=2))
    r = ranges[rows].copy()
    own = r[np.arange(len(rows)), players]
    total = own.sum(axis=1, keepdims=True)
    u = possible[rows, players].astype(np.float64)
    u /= u.sum(axis=1, keepdims=True)
    r[np.arange(len(rows)), players] = np.where(total > 0, (1 - eps) * own / np.where(total > 0, total, 1.0)
                                                + eps * u, u)
    return r, rows, players, off[rows, players]


_NO_GADGET = (-1, np.zeros(0), np.zeros(0), 0.0, np.zeros(0), np.zeros(0), np.zeros(0, dtype=bool), np.zeros((0, 2)))
"""`Gadget.kernel_args` of a search without a gadget (player -1; empty arrays never read)."""


@numba.njit(cache=True)
def _closed_iterations(iterations, t, passes, roots, g_player, g_follow, g_values, g_alpha, g_prev_part, g_f,
                       g_possible, g_regrets, root_ranges, kind, actor, possible, parent, first_child,
                       next_sibling, edge_start, e_player, e_src, e_dst, e_action, prob, legal, present,
                       terminals, payoffs, regrets, sigma, ranges, values, q, avg, own, value_sum,
                       value_weight):
    """`GTCFR._closed_iterations`: `iterations` CFR iterations from iteration t, each a
    `node_cfr.down_pass` and `node_cfr.up_pass` per row of passes (bool [P, 2]: the players each
    pass updates) with no frontier, from roots int [R] at root_ranges float [R, 2, N]; with a gadget
    (g_player >= 0: `Gadget`'s arrays) at the first root, its opponent range there before each
    pass and its update after each pass of its player, as `GTCFR._pass`. Returns the new t."""
    frontier = np.zeros(0, dtype=np.int64)
    leaf_values = np.zeros((0, 2, possible.shape[2]))
    for _ in range(iterations):
        t += 1
        for k in range(len(passes)):
            if g_player >= 0:
                _gadget_range(g_follow, g_possible, g_alpha, g_prev_part, g_f, root_ranges[0, g_player])
            node_cfr.down_pass(roots, root_ranges, kind, possible, parent, edge_start, e_player, e_src, e_dst,
                               e_action, legal, present, regrets, sigma, ranges, terminals, payoffs, values)
            node_cfr.up_pass(frontier, leaf_values, kind, actor, first_child, next_sibling, edge_start, e_player,
                             e_src, e_dst, e_action, prob, possible, legal, present, sigma, passes[k], t,
                             k == len(passes) - 1, ranges, values, q, regrets, avg, own, value_sum, value_weight)
            if g_player >= 0 and passes[k][g_player]:
                _gadget_update(g_follow, g_values, values[roots[0], g_player], g_possible, g_regrets)
                _gadget_follow(g_regrets, g_possible, g_follow)
    return t


@numba.njit(cache=True)
def _max0(x):
    """np.maximum(x, 0.0) of a float (NaN stays NaN)."""
    return x if x > 0.0 or np.isnan(x) else 0.0


@dataclasses.dataclass
class SearchResult:
    """What one GT-CFR search returns.

    values: float [2, N] iteration-averaged counterfactual values at the search node.
    policy: float [N, A] average policy of the actor at the search node (None
      if the search node is not a decision).
    queries: (pub, ranges float [2, N]) for every frontier evaluation, a `Queries` (a re-solve
      that first ran an initial solve carries its queries too: `sog.search.resolve`).
    timings: seconds per phase of `PHASES` and `total`, the whole search measured on its own
      (a re-solve's include its initial solve and summaries).
    """

    values: np.ndarray
    policy: np.ndarray | None
    queries: Sequence
    nodes: int
    iterations: int
    timings: dict = dataclasses.field(default_factory=dict, compare=False)


class Queries(Sequence):
    """A search's network queries, (pub, ranges float [2, N]) each, kept as the blocks they were
    asked in (one list of public states and one ranges array [B, 2, N] per request) instead of a
    tuple and an array view per query: recording a Leduc self-play step's ~10^4 queries one by one
    cost ~8% of its time, and the consumers read a few of them (`actors.selfplay`
    samples ~1 a search). An item is a new copy of its row (a kept query does not hold its
    block); the order is the order asked, as a list's."""

    def __init__(self, items: Iterable = ()):
        self._pubs: list = []
        self._blocks: list[np.ndarray] = []
        self._ends: list[int] = []              # len(self._pubs) after each block
        self.extend(items)

    def add_block(self, pubs: Sequence, ranges: np.ndarray) -> None:
        """Append the queries of one request: pubs (B) at ranges float [B, 2, N] (kept, not copied)."""
        if len(pubs):
            self._pubs.extend(pubs)
            self._blocks.append(ranges)
            self._ends.append(len(self._pubs))

    def append(self, query) -> None:
        pub, ranges = query
        self.add_block([pub], np.array(ranges)[None])

    def extend(self, items: Iterable) -> None:
        if isinstance(items, Queries):
            start = 0
            for block, end in zip(items._blocks, items._ends):
                self.add_block(items._pubs[start:end], block)
                start = end
        else:
            for q in items:
                self.append(q)

    def __len__(self) -> int:
        return len(self._pubs)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        n = len(self._pubs)
        i = int(i)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("query index out of range")
        k = bisect.bisect_right(self._ends, i)
        return self._pubs[i], self._blocks[k][i - (self._ends[k - 1] if k else 0)].copy()

    def __iter__(self):
        start = 0
        for block, end in zip(self._blocks, self._ends):
            for pub, row in zip(self._pubs[start:end], block):
                yield pub, row.copy()
            start = end

    def __add__(self, other: Iterable) -> Queries:
        out = Queries(self)
        out.extend(other)
        return out

    def __radd__(self, other: Iterable) -> Queries:
        out = Queries(other)
        out.extend(self)
        return out

    def split(self, owners: np.ndarray, count: int) -> list[Queries]:
        """The queries of each of `count` owners (owners int [len(self)]: each query's), each in
        the order asked, one block apiece."""
        if not len(self):
            return [Queries() for _ in range(count)]
        order = np.argsort(owners, kind="stable")
        ends = np.cumsum(np.bincount(owners, minlength=count)).tolist()
        ranges = np.concatenate(self._blocks)[order]
        pubs = list(map(self._pubs.__getitem__, order.tolist()))
        out = []
        for start, end in zip([0] + ends, ends):
            q = Queries()
            q.add_block(pubs[start:end], ranges[start:end])
            out.append(q)
        return out


class _Recorder:
    """Asks for values (a coroutine step) and records every query (`Queries`), the search of a
    batch's that asked it, and the time waited for it."""

    def __init__(self):
        self.queries = Queries()
        self.owners: list[np.ndarray] = []              # per recorded block: int [rows], each row's search
        self.calls = 0
        self.seconds = 0.0                              # suspended at the requests

    def ask(self, pubs: Sequence, ranges: np.ndarray, owners: np.ndarray | None
            ) -> ValueSteps[tuple[np.ndarray, np.ndarray]]:
        """Yields the request (pubs, ranges [B, 2, N]); returns the answer (values float [B, 2, N],
        logits float [B, 2, N, A]). owners: int [B], the search of the batch each row is for, to
        record it; None: not recorded (the evaluation cache records the whole frontier itself)."""
        self.calls += 1
        t0 = time.perf_counter()
        values, logits = yield pubs, ranges
        self.seconds += time.perf_counter() - t0
        if owners is not None:
            self.record(pubs, np.array(ranges, copy=True), owners)
        return values, logits

    def record(self, pubs: Sequence, ranges: np.ndarray, owners: np.ndarray) -> None:
        """Record queries (pubs at ranges [B, 2, N], kept) of the batch's searches owners int [B]."""
        if len(pubs):
            self.queries.add_block(pubs, ranges)
            self.owners.append(owners)

    def split(self, count: int) -> list[Queries]:
        """Each of a batch's `count` searches' queries (`Queries.split`); a single search's own."""
        if count == 1:
            return [self.queries]
        owners = np.concatenate(self.owners) if self.owners else np.zeros(0, dtype=np.int64)
        return self.queries.split(owners, count)


class GTCFR:
    """One GT-CFR search over `tree` (see module doc).

    value_fn: what `run` (and `regret_update`) asks; None if the tree never has frontier leaves
      or the search runs as a coroutine (`steps`), answered by its driver.
    tree: the public tree to grow (rooted where the search's ranges are given;
      already holding the branch to `search_node` when re-solving).
    root_ranges: float [2, N] reach at the root (the gadget replaces the
      opponent's part each iteration).
    search_node: node id below which expansion happens (default the root).
    settings: SoG(s, c) and the knobs (`sog.search.settings`); with
      `settings.alternating` the players' regret updates alternate (two value
      calls per iteration) instead of the paper's simultaneous updates, which
      converges much faster on poker (full-tree Leduc after 1000 iterations:
      0.25 vs 6.9 mbb/h). `gadget_alpha` is the gadget's (`Gadget.alpha`).
    top_k (attribute): children an expansion adds at a decision leaf, None for all.
    caches_values (attribute): whether the evaluation cache is on (`settings.value_cache`; "auto"
      also asks the value function's `cacheable`, True if absent or None: the warm-started oracle
      is not); cache_hits: the frontier rows it has answered so far.
    timings (attribute): seconds spent so far per phase of `PHASES`.

    **A batch** (`GTCFR.batch`): B searches with the same settings, one per tree of a forest
    (`PublicTree(..., separate=True)`), run as one: each pass is one `node_cfr.down_pass` and one
    `node_cfr.up_pass` over the whole forest, and one value request for all the trees' frontiers;
    the expansion phases walk each tree in turn from its own generator. Each search's results
    (`results`) are those of the same search run alone: every node's arithmetic reads its own
    tree only, each tree's frontier keeps its own order inside the merged one, and a search's
    walks draw its own stream. The per-search attributes are the lanes' (`roots`, `search_nodes`,
    `lane_ranges` float [B, 2, N], `rngs`); `root`, `search_node`, `root_ranges`,
    `gadget` and `rng` are the first's (a single search's own).
    """

    def __init__(self, game: Game, value_fn: ValueFunction | None, tree: PublicTree | None = None,
                 root_ranges: np.ndarray | None = None, search_node: int | None = None,
                 gadget: Gadget | None = None, settings: SearchSettings = SearchSettings(), seed: int = 0):
        tree = tree if tree is not None else PublicTree(game, [game.root()])
        ranges = np.asarray(game.initial_ranges() if root_ranges is None else root_ranges)
        self._setup(game, value_fn, tree, ranges[None], [tree.roots[0] if search_node is None else search_node],
                    [gadget], settings, [seed])

    @classmethod
    def batch(cls, game: Game, value_fn: ValueFunction | None, tree: PublicTree, root_ranges: np.ndarray,
              seeds: Sequence[int], settings: SearchSettings = SearchSettings(),
              search_nodes: Sequence[int] | None = None, gadgets: Sequence[Gadget | None] | None = None) -> GTCFR:
        """B searches as one (class doc): search b in the tree of `tree.roots[b]` (a forest of B
        trees kept apart, `PublicTree(..., separate=True)`), from root_ranges[b] (float [B, 2, N]),
        expanding below search_nodes[b] (default its root), with gadgets[b] (default none) and
        seeds[b]."""
        B = len(tree.roots)
        if not tree.separate and B > 1:
            raise ValueError("a batch of searches needs a forest whose trees are kept apart (separate=True)")
        search = cls.__new__(cls)
        search._setup(game, value_fn, tree, np.asarray(root_ranges), list(tree.roots if search_nodes is None
                                                                            else search_nodes),
                      [None] * B if gadgets is None else list(gadgets), settings, list(seeds))
        return search

    def _setup(self, game: Game, value_fn: ValueFunction | None, tree: PublicTree, root_ranges: np.ndarray,
               search_nodes: list, gadgets: list, settings: SearchSettings, seeds: list) -> None:
        B = len(tree.roots)
        if not (len(root_ranges) == len(search_nodes) == len(gadgets) == len(seeds) == B):
            raise ValueError(f"a batch of {B} trees needs {B} root ranges, search nodes, gadgets and seeds")
        self.game, self.tree, self.lanes = game, tree, B
        self.roots, self.search_nodes = np.array(tree.roots, dtype=np.int64), np.array(search_nodes, dtype=np.int64)
        self.lane_ranges = np.array(root_ranges, dtype=np.float64)
        self._gadget_lanes = [(b, g) for b, g in enumerate(gadgets) if g is not None]
        self.rngs = [generator(seed) for seed in seeds]
        self.root, self.search_node = int(self.roots[0]), int(self.search_nodes[0])
        self.root_ranges, self.gadget, self.rng = self.lane_ranges[0], gadgets[0], self.rngs[0]
        self.value_fn = value_fn
        self.recorder = _Recorder()
        self.settings = settings
        self.top_k = settings.children_per_expansion(game.spec.perfect_information)
        self.t = 0
        N, A = game.spec.num_states, game.spec.num_actions
        self._node_arrays = dict(   # (sigma, values, own: scratch of the passes)
            regrets=(N, A), avg=(N, A), visits=(N, A), q=(N, A), value_sum=(2, N), value_weight=(),
            ranges=(2, N), sigma=(N, A), values=(2, N), own=(2, N), pending=(N, A), prior=(N, A))
        self.caches_values = settings.caches_values(game.spec.perfect_information) and (
            settings.value_cache is True or getattr(value_fn, "cacheable", True))
        if self.caches_values:    # the evaluation cache, by public state (`sog.search.value_cache`;
                                  # its logits in float32, the CVPN's own precision)
            W = value_cache.WAYS
            self._node_arrays.update(cache_keys=(W, 2, N), cache_filled=(W,), cache_next=(), cache_source=(W,),
                                     cache_values=(W, 2, N), cache_logits=(W, N, A))
        self.cache_hits = 0        # frontier rows answered by the cache
        self._cache_scratch = (np.empty((0, 2, N)),)
        self._alloc(self.tree.size)
        self._prior_filled = 0      # prior rows of nodes below this are set (see `_fill_priors`)
        self._path = np.zeros((64, 3), dtype=np.int64)   # a phase's (node, slot, action) records
        self._actions = np.zeros(A, dtype=np.int64)      # the actions an expansion adds
        self._uniforms = [np.zeros(0)] * B               # per search, its rng's uniforms drawn ahead, for the walks
        self._cursors = [np.zeros(1, dtype=np.int64) for _ in range(B)]  # the next one to use (`expansion` doc)
        self._chance_weights = [np.asarray(game.cached("chance_weights", tree.pubs[v]), dtype=np.float64)
                                for v in self.search_nodes.tolist()]
        self._view: TreeView | None = None
        self._payoffs = np.zeros((0, N, N))   # the view's terminals' payoff matrices
        self._no_leaves = np.zeros((0, 2, N))  # the leaf values of a tree without frontier
        self.timings = dict.fromkeys(PHASES, 0.0)

    # ---- node-indexed state -------------------------------------------------
    def _alloc(self, size: int) -> None:
        for name, shape in self._node_arrays.items():
            old = getattr(self, name, None)
            new = np.zeros((max(size, 16),) + shape, dtype=np.float32 if name == "cache_logits" else np.float64)
            if old is not None:
                new[: len(old)] = old
            setattr(self, name, new)

    def nbytes(self) -> int:
        """Bytes held by the search's arrays: its node-indexed state (at its capacity) and its
        tree's (`PublicTree.nbytes`)."""
        return self.tree.nbytes() + sum(getattr(self, k).nbytes for k in self._node_arrays)

    def _ensure_capacity(self) -> None:
        if self.tree.size > len(self.regrets):
            self._alloc(2 * self.tree.size)

    # ---- the search ---------------------------------------------------------
    def run(self) -> SearchResult:
        """The search (`steps`) with its requests answered by `value_fn`."""
        return drive(self.steps(), self.value_fn)

    def steps(self) -> ValueSteps[SearchResult]:
        """The search as a coroutine: `settings.simulations` (s) expansion simulations,
        `settings.per_phase` (c) of them per regret update phase; yields each pass's frontier
        request (`regret_update_steps`), returns the result (a batch's first search's:
        `batch_steps`)."""
        return (yield from self.batch_steps())[0]

    def batch_steps(self) -> ValueSteps[list[SearchResult]]:
        """`steps` of every search of the batch (one value request a pass for all of them); returns
        their results (`results`), each with the batch's timings divided by B (so that they add
        up to the batch's). The host's `SEARCH_LIMITS` (stop, deadline, simulations) end it
        between phases, after the first, with the average policy so far."""
        t0 = time.perf_counter()
        limits = SEARCH_LIMITS.current()
        per_phase = self.settings.per_phase
        sims, its = math.ceil(per_phase), math.ceil(1 / per_phase)
        for phase in range(self.settings.simulations // sims):
            if phase and not limits.more(phase * sims, t0, sims):
                break
            yield from self.regret_update_steps(its)
            self.grow(sims)
        t1 = time.perf_counter()
        results = self.results()
        t2 = time.perf_counter()
        self.timings["tree"] += t2 - t1
        timings = {k: v / self.lanes for k, v in {**self.timings, "total": t2 - t0}.items()}
        return [dataclasses.replace(r, timings=timings) for r in results]

    def regret_update(self, iterations: int) -> None:
        """`regret_update_steps` with its requests answered by `value_fn`."""
        drive(self.regret_update_steps(iterations), self.value_fn)

    def regret_update_steps(self, iterations: int) -> ValueSteps[None]:
        """CFR+ iterations on the current tree; each pass yields one request for its frontier
        leaves (none without frontier leaves)."""
        t0, v0 = time.perf_counter(), self.recorder.seconds
        self._ensure_capacity()
        view = self._current_view()
        t1 = time.perf_counter()
        passes = _ALTERNATING if self.settings.alternating else _SIMULTANEOUS
        if (not len(view.frontier) and (self.game.dense_payoffs or not len(view.terminals))
                and all(b == 0 for b, _ in self._gadget_lanes)):
            self._closed_iterations(view, iterations, passes)
        else:
            for _ in range(iterations):
                self.t += 1
                for k, players in enumerate(passes):
                    yield from self._pass(view, players, k == len(passes) - 1)
        t2, value = time.perf_counter(), self.recorder.seconds - v0
        self.timings["tree"] += t1 - t0
        self.timings["cfr"] += t2 - t1 - value
        self.timings["value"] += value

    def _current_view(self) -> TreeView:
        """The `TreeView` of the tree as it is now (made again, with the new terminals' payoffs,
        when the tree has changed)."""
        if self._view is None or self._view.version != self.tree.version:
            self._view = TreeView(self.tree)
            self._extend_payoffs()
        return self._view

    def _extend_payoffs(self) -> None:
        """The dense payoff matrices [T, N, N] of the view's terminals (new terminals appended:
        node ids only grow); none ([0, N, N]) for a game without dense payoffs."""
        if not self.game.dense_payoffs:
            return
        terminals = self._view.terminals
        new = [self.game.cached("payoff_matrix", self.tree.pubs[t]) for t in terminals[len(self._payoffs):]]
        if new:
            self._payoffs = np.concatenate([self._payoffs, np.stack(new)])

    def _pass(self, view: TreeView, players: np.ndarray, last: bool) -> ValueSteps[None]:
        """One CFR+ pass of the current policy with regret and average updates for `players`
        (bool [2]), the last of its iteration or not: sets `ranges`, `values` (scratch), `q`,
        the players' rows of `own`, and on the last pass adds the iteration to the averaged
        values' sums (`node_cfr.down_pass`, the leaf values, `node_cfr.up_pass`)."""
        values = self.values
        for b, g in self._gadget_lanes:
            self.lane_ranges[b, g.player] = g.opponent_range()
        node_cfr.down_pass(self.roots, self.lane_ranges, view.kind, view.possible, view.parent, view.edge_start,
                           view.e_player, view.e_src, view.e_dst, view.e_action, view.legal, view.present,
                           self.regrets, self.sigma, self.ranges, view.terminals, self._payoffs, values)
        leaf_values = yield from self._leaf_values(view, values)
        node_cfr.up_pass(view.frontier, leaf_values, view.kind, view.actor, view.first_child, view.next_sibling,
                         view.edge_start, view.e_player, view.e_src, view.e_dst, view.e_action, view.prob,
                         view.possible, view.legal, view.present, self.sigma, players, self.t, last, self.ranges,
                         values, self.q, self.regrets, self.avg, self.own, self.value_sum, self.value_weight)
        for b, g in self._gadget_lanes:
            if players[g.player]:
                g.update(values[self.roots[b], g.player])

    def _closed_iterations(self, view: TreeView, iterations: int, passes: tuple) -> None:
        """`iterations` iterations of `_pass`es on a tree without frontier leaves whose terminal
        values come from dense payoffs (or that has no terminals): no value request, so all of
        them run in one numba call (`_closed_iterations`), the same arithmetic in the same order
        as pass by pass (Kuhn's query solves: three quarters of their passes); a gadget only
        at the first search of a batch."""
        g = self.gadget
        self.t = _closed_iterations(
            iterations, self.t, np.array(passes), self.roots, *(_NO_GADGET if g is None else g.kernel_args()),
            self.lane_ranges, view.kind,
            view.actor, view.possible, view.parent, view.first_child, view.next_sibling, view.edge_start,
            view.e_player, view.e_src, view.e_dst, view.e_action, view.prob, view.legal, view.present,
            view.terminals, self._payoffs, self.regrets, self.sigma, self.ranges, self.values, self.q, self.avg,
            self.own, self.value_sum, self.value_weight)

    def _leaf_values(self, view: TreeView, values: np.ndarray) -> ValueSteps[np.ndarray]:
        """The terminals' values from `Game.terminal_values` into values, for a game without dense
        payoffs (`node_cfr.down_pass` sets them otherwise); the frontier's values (one value
        request, the priors set from its logits), float64 [F, 2, N]."""
        terminals, ranges = view.terminals, self.ranges
        if not self.game.dense_payoffs and len(terminals):
            values[terminals] = self.game.terminal_values([self.tree.pubs[t] for t in terminals],
                                                          ranges[terminals])
        f = view.frontier
        if not len(f):
            return self._no_leaves
        pubs = self.tree.pubs
        leaf_pubs = list(map(pubs.__getitem__, f.tolist()))
        if self.caches_values:
            return (yield from self._cached_leaf_values(f, leaf_pubs, view.tree_of[f]))
        asked, eps, owners = ranges[f], self.settings.off_support_smoothing, view.tree_of[f]
        if eps:
            extra, rows, players, off = smoothed_beliefs(asked, self.tree.possible[f], eps)
            asked = np.concatenate([asked, extra])
            leaf_pubs += [leaf_pubs[j] for j in rows.tolist()]
            owners = np.concatenate([owners, owners[rows]])
        leaf_values, logits = yield from self.recorder.ask(leaf_pubs, asked, owners)
        F = len(f)
        self._set_priors(f, logits[:F])
        if not (eps and len(rows)):
            return leaf_values[:F]                      # (the answer's rows: the pass only reads them)
        values = np.array(leaf_values[:F], dtype=np.float64)
        values[rows, players] = np.where(off, leaf_values[F:][np.arange(len(rows)), players], values[rows, players])
        return values

    def _cached_leaf_values(self, f: np.ndarray, leaf_pubs: list, owners: np.ndarray) -> ValueSteps[np.ndarray]:
        """`_leaf_values`' frontier values through the evaluation cache (`sog.search.value_cache`):
        one value request for the rows it misses (none if it misses none); every row is recorded
        as a query of its search (owners int [F]) and sets its public state's prior, in order, as
        without the cache."""
        tree, ranges = self.tree, self.ranges
        F, (N, A) = len(f), self.prior.shape[1:]
        if len(self._cache_scratch[0]) < F:       # per-row scratch, grown by doubling
            size = max(2 * F, 64)
            self._cache_scratch = (np.empty((size, 2, N)), np.empty((size, 2)), np.empty((4, size), dtype=np.int64),
                                   np.empty((size, 2, N)), np.empty((size, 2, N, A)))
        norm, total, rows, values, logits = self._cache_scratch
        norm, total, values, logits = norm[:F], total[:F], values[:F], logits[:F]
        way, source, store_way, miss_index = rows[:, :F]      # (the values returned are scratch too:
                                                              # the pass reads them before the next one)
        misses = value_cache.lookup(f, tree.first, ranges, tree.possible, self.cache_keys, self.cache_filled,
                                    self.cache_next, self.cache_source, norm, total, way, source, store_way, miss_index)
        asked = ranges[f]
        if misses:
            miss = np.flatnonzero(miss_index >= 0)
            miss_values, miss_logits = yield from self.recorder.ask(
                [leaf_pubs[k] for k in miss.tolist()], asked[miss], None)
            miss_values = np.ascontiguousarray(miss_values, dtype=np.float64)
            miss_logits = np.ascontiguousarray(miss_logits, dtype=np.float64)
        else:
            miss_values, miss_logits = np.zeros((0, 2, N)), np.zeros((0, 2, N, A))
        self.recorder.record(leaf_pubs, asked, owners)
        self.cache_hits += F - misses
        value_cache.answer(f, tree.first, tree.actor, way, source, store_way, miss_index, total, miss_values,
                           miss_logits, self.cache_filled, self.cache_values, self.cache_logits, values, logits)
        self._set_priors(f, logits)
        return values

    def average_policy(self, node: int) -> np.ndarray:
        """float [N, A]: the average policy at a decision node (uniform over legal if unreached)."""
        tree, out = self.tree, np.empty((1,) + self.avg.shape[1:])
        node_cfr.matched_policies(np.array([node]), np.array([tree.first_child[node] < 0]), self.avg, tree.legal,
                                  tree.present, out)
        return out[0]

    def average_values(self, nodes: int | np.ndarray) -> np.ndarray:
        """float [2, N] at a node (or [k, 2, N] at node ids int [k]): counterfactual values averaged
        over the iterations since the node joined the tree (linear weights, as the average
        policy), each player's from the passes that updated it: with alternating updates, the
        values the gadget of a later re-solve compares these with are of the same kind."""
        return self.value_sum[nodes] / np.maximum(self.value_weight[nodes], 1e-300)[..., None, None]

    def average_ranges(self) -> np.ndarray:
        """float [size, 2, N]: every node's ranges under the average policy (node-indexed): one
        down pass (`node_cfr.propagate_ranges`) with the average policy at every node's entries.

        The opponent's root range is the gadget's latest one when re-solving (each search's of a
        batch)."""
        self._ensure_capacity()
        view, n = self._current_view(), self.tree.size
        sigma = np.empty((n,) + self.avg.shape[1:])
        node_cfr.matched_policies(np.arange(n), np.zeros(n, dtype=np.bool_), self.avg, view.legal, view.present, sigma)
        root = self.lane_ranges.copy()
        for b, g in self._gadget_lanes:
            root[b, g.player] = g.opponent_range()
        ranges = np.empty((n, 2, self.game.spec.num_states))
        node_cfr.propagate_ranges(view.roots, root, view.possible, view.parent, view.edge_start, view.e_player,
                                  view.e_src, view.e_dst, view.e_action, sigma, ranges)
        return ranges

    def best_response_values(self) -> np.ndarray:
        """float [2, N]: `batch_best_response_values` of a single search (a batch's first)."""
        return self.batch_best_response_values()[0]

    def batch_best_response_values(self) -> np.ndarray:
        """float [B, 2, N] at each search's search node: each player's best-response counterfactual values
        against the other's average policy on the tree as the passes last saw it
        (`average_ranges`), with the terminals' exact values at those ranges and the
        iteration-averaged values (`average_values`) at the frontier leaves and at every node
        whose children joined after the last pass (not asked again). At a slot its owner
        reaches, the averaged values are the search's; at one it does not reach (own range 0),
        whose averaged values follow a policy no pass ever weighted, these are the value of its
        best deviation (`solver.off_support`)."""
        view, n = self._current_view(), self.tree.size
        ranges = self.average_ranges()
        values, q = np.zeros((n, 2, self.game.spec.num_states)), np.zeros((n,) + self.prior.shape[1:])
        terminals = view.terminals
        if self.game.dense_payoffs:
            node_cfr.terminal_values(terminals, self._payoffs, view.possible, ranges, values)
        elif len(terminals):
            values[terminals] = self.game.terminal_values([self.tree.pubs[t] for t in terminals], ranges[terminals])
        weight = self.value_weight[:n]
        parents = view.parent[np.flatnonzero(weight == 0)]
        cut = np.unique(parents[(parents >= 0) & (weight[np.maximum(parents, 0)] > 0)])
        first_child = view.first_child.copy()
        first_child[cut] = -1
        leaves = np.concatenate([view.frontier[weight[view.frontier] > 0], cut])
        values[leaves] = self.average_values(leaves) * view.possible[leaves]
        node_cfr.propagate_values(view.actor, first_child, view.next_sibling, view.edge_start, view.e_player,
                                  view.e_src, view.e_dst, view.e_action, view.prob, view.legal, view.present,
                                  self.sigma, values, q, True)
        return values[self.search_nodes]

    def result(self) -> SearchResult:
        """The search's result as it stands (a batch's first search's); timings empty."""
        return self.results()[0]

    def results(self) -> list[SearchResult]:
        """Each search's result as it stands (in the batch's order); timings empty."""
        tree, nodes = self.tree, self.search_nodes
        decision = tree.kind[nodes] == DECISION
        policies = np.empty((len(nodes),) + self.avg.shape[1:])
        node_cfr.matched_policies(nodes, tree.first_child[nodes] < 0, self.avg, tree.legal, tree.present, policies)
        values = self.average_values(nodes)
        sizes = np.bincount(tree.tree_of[:tree.size], minlength=self.lanes)
        return [SearchResult(values[b], policies[b] if decision[b] else None, queries, int(sizes[b]), self.t)
                for b, queries in enumerate(self.recorder.split(self.lanes))]

    # ---- expansion ----------------------------------------------------------
    def _fill_priors(self) -> None:
        """The uniform prior (over legal actions) in the `prior` rows of the nodes added since the
        last call that are the first with their public state (`PublicTree.first`)."""
        size = self.tree.size
        if self._prior_filled < size:
            expansion.fill_uniform_priors(self._prior_filled, size, self.tree.first, self.tree.legal, self.prior)
            self._prior_filled = size

    def _set_priors(self, nodes: np.ndarray, logits: np.ndarray) -> None:
        """prior[first[v], s] = softmax(logits[actor, s] / T_prior) over the legal actions (zero if
        none) for the evaluated nodes (int [B]; logits float64 [B, 2, N, A], as `ValueFunction`
        returns them): the prior of a public state is that of its latest evaluation."""
        self._fill_priors()
        tree = self.tree
        z = expansion.centred_logits(nodes, tree.actor, tree.legal, np.asarray(logits, dtype=np.float64),
                                     float(self.settings.prior_temperature))
        expansion.normalise_priors(nodes, tree.first, np.exp(z), self.prior)

    def grow(self, simulations: int) -> None:
        """Run `simulations` expansion simulations with virtual losses between them (their visits
        pending until the phase ends), in each search of a batch in turn."""
        t0 = time.perf_counter()
        count = 0
        self._tree_sizes = np.bincount(self.tree.tree_of[:self.tree.size], minlength=self.lanes)  # nodes a tree
        for b in range(self.lanes):
            for _ in range(simulations):
                count = self._simulate(b, count)
        expansion.commit_visits(self._path, count, self.pending, self.visits)
        self._ensure_capacity()
        self.timings["tree"] += time.perf_counter() - t0

    def _draw_ahead(self, b: int, need: int) -> None:
        """At least `need` unused uniforms in search b's `_uniforms` (the unused ones kept first, in
        order: the stream is the same however far ahead it is drawn)."""
        cursor = self._cursors[b]
        left = self._uniforms[b][cursor[0]:]
        if len(left) < need:
            self._uniforms[b] = np.concatenate([left, self.rngs[b].random(2 * need)])
            cursor[0] = 0

    def _simulate(self, b: int, count: int) -> int:
        """One simulation of search b (`expansion.simulate`) and the expansion it ends with; the
        phase's path records go from row `count` of `_path` on; returns the new count."""
        self._ensure_capacity()
        self._fill_priors()
        tree, node = self.tree, int(self.search_nodes[b])
        if len(self._path) < count + tree.size + 1:
            self._path = np.concatenate([self._path, np.zeros((count + tree.size + 1, 3), dtype=np.int64)])
        self._draw_ahead(b, 2 * int(self._tree_sizes[b]) + 1)
        world = (self.ranges[node] if self.t else self.lane_ranges[b], tree.possible[node], self._chance_weights[b])
        arrays = (tree.kind, tree.actor, tree.first_child, tree.next_sibling, tree.prob, tree.in_state_maps,
                  tree.in_actor_map, tree.legal, tree.present, tree.first)
        search = (self.ranges, self.q, self.visits, self.avg, self.pending, self.prior)
        size = tree.size
        what, node, k, count = expansion.simulate(
            self._uniforms[b], self._cursors[b], node, world, arrays, search, float(self.settings.puct_c),
            float(self.game.spec.max_utility), -1 if self.top_k is None else self.top_k, self._path, count,
            self._actions)
        if what == expansion.EXPAND_ALL:
            if not wide_chance(self.game, self.settings, tree.pubs[node]):
                tree.expand(node)
        elif what == expansion.EXPAND_ACTIONS:
            tree.expand(node, self._actions[:k].tolist())
        self._tree_sizes[b] += tree.size - size
        return count
