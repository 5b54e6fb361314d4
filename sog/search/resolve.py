"""Modified continual re-solving: how a GT-CFR agent acts soundly, one decision at a time.

At each of its decisions the agent re-solves from the previous search's
summary (Student of Games, "Modified continual re-solving"):

1. `s_prev` is the deepest public state of the current history that the
   previous search's tree holds. Its summary gives our range there (reach
   under the previous search's average policy: our action at the previous
   decision, then chance's card removal, is carried by construction) and the
   opponent's counterfactual values there, averaged over the iterations with
   the average policy's linear weights (so after our own action they are the
   values of that child, and after chance they are iteration-averaged).
2. The new tree is a single branch from `s_prev` to the current public state,
   every off-branch child a frontier leaf; the re-solving gadget sits above
   `s_prev`: each opponent slot chooses Terminate (receive the summary value)
   or Follow, and the opponent's root range is
   `alpha * r_follow + (1 - alpha) * r_prev` (`sog.search.gtcfr.Gadget`).
3. GT-CFR grows the tree below the current public state only, and the agent
   acts with the average policy there.

Continual re-solving is one initial solve followed by re-solving steps
(Theorem 2 bounds exactly that). The seat that acts at the game's first public
state searches there with the initial ranges and no gadget: that search is its
initial solve. The other seat has no previous search at its first decision, so
it first runs its own initial solve, a GT-CFR search from the game's first
public state with the initial ranges that grows the tree anywhere
(`initial_solve`), and re-solves from that summary like from any other. (The
alternative, a single branch from the game's start with the opponent's other
first actions left as value-function leaves, makes the opponent's choice above
the current state rest on those leaves' values for the whole search. Leduc,
SoG(1000, 1), 10-iteration oracle, alternating updates, seeds 0 / 1: 1.34 /
1.44 mbb/h that way (player 1's part 2.11 / 2.07), 0.73 / 0.95 with the
initial solve (0.91 / 0.88); SoG(100, 1), seeds 0-3: mean 37.6 against 24.2.
With full-tree searches of only 100 CFR iterations and no value function it is
the other way (player 1 9.3 against 40.8 mbb/h: one more re-solve of an
inexact solve); at 1000 iterations they agree, 0.30 against 0.29.) Where the
game opens with public chance (hold'em's `sog` abstraction draws the hand's bet
fraction and stacks), "the game's first public state" is the first one after
those outcomes: once they are known the hand is that game. The tree
is always rebuilt from the real public history, so actions the previous tree
did not contain are handled the same way as any other.

A public chance node too wide to expand (`sog.search.gtcfr.wide_chance`: HUNL's
flop) is a value-function leaf of every search, so no summary holds its
outcomes. Re-solving steps over it: the summary at the chance node (after a
re-solve down to it if the previous search stopped above it) is carried through
the observed outcome, with the value function's values there as the gadget's
(`ContinualResolver._step_over_wide_chance`), as DeepStack's re-solving does
after a deal from its network's values at the next round.

`ContinualResolver.search_steps` is a re-solve in coroutine form
(`sog.search.value_function.ValueSteps`): it yields each GT-CFR search it needs (the
initial solve, the re-solve) as a `SearchJob` and the value requests of stepping over a
wide chance node; `search` drives it with the resolver's value function, each job run
alone. Self-play's driver (`actors.lockstep`) runs the jobs its games yield in the same
round as one batch of searches (`GTCFR.batch`), each with the result it has alone.
"""
from __future__ import annotations

import dataclasses
import time
from collections.abc import Hashable, Sequence

import numpy as np

from sog.games.api import CHANCE, Game
from sog.search.gtcfr import GTCFR, PHASES, Gadget, Queries, SearchResult, add_timings, wide_chance
from sog.search.settings import SearchSettings
from sog.search.tree import PublicTree
from sog.search.value_function import Job, ValueFunction, ValueSteps, drive
from sog.seeding import derive_seed


@dataclasses.dataclass
class Summary:
    """A search's re-solving summary: per public state of its tree, the average
    policy's ranges and the averaged counterfactual values (float [2, N] each)."""

    ranges: dict[Hashable, np.ndarray]
    values: dict[Hashable, np.ndarray]


@dataclasses.dataclass(eq=False)
class SearchJob(Job):
    """A GT-CFR search for the driver to run (`Job`), answered (SearchResult, Summary).

    Its tree is the branch `path` (public states from the tree's root to the search node, each a
    child of the one before), searched from root_ranges float [2, N] at the root with `gadget`
    (None: none), `settings` and `seed`; value_fn: the resolver's, whose `cacheable` decides the
    evaluation cache (`GTCFR`; its requests are the driver's). Jobs of the same game, settings
    and value function run together as one batch (`GTCFR.batch`), each with the result it has
    alone; their timings are the batch's divided among them, building the trees and the
    summaries as `tree`."""

    game: Game
    value_fn: ValueFunction | None
    path: Sequence[Hashable]
    root_ranges: np.ndarray
    gadget: Gadget | None
    settings: SearchSettings
    seed: int

    @property
    def key(self) -> tuple:
        return id(self.game), id(self.value_fn), self.settings

    @classmethod
    def together(cls, jobs: Sequence[SearchJob]) -> ValueSteps[list[tuple[SearchResult, Summary]]]:
        t0 = time.perf_counter()
        first = jobs[0]
        tree = PublicTree(first.game, [job.path[0] for job in jobs], separate=True)
        nodes = [_branch(tree, root, job.path[1:]) for root, job in zip(tree.roots, jobs)]
        search = GTCFR.batch(first.game, first.value_fn, tree, np.stack([job.root_ranges for job in jobs]),
                             [job.seed for job in jobs], first.settings, nodes, [job.gadget for job in jobs])
        t1 = time.perf_counter()
        results = yield from search.batch_steps()
        t2 = time.perf_counter()
        out = summaries(search)
        extra = (t1 - t0 + time.perf_counter() - t2) / len(jobs)
        timings = {**results[0].timings}
        timings["tree"] += extra
        timings["total"] += extra
        return [(dataclasses.replace(r, timings=dict(timings)), summary) for r, summary in zip(results, out)]


def _branch(tree: PublicTree, node: int, path: Sequence[Hashable]) -> int:
    """Expand `tree` from `node` down `path` (public states, each a child of the one before);
    the last one's node (ValueError if the path leaves the game)."""
    for pub in path:
        kids = tree.expand(node)
        node = next((c for c in kids if tree.pubs[c] == pub), -1)
        if node < 0:
            raise ValueError(f"{pub!r} is not a child of {tree.pubs[kids[0]] if kids else None!r}: "
                             "the history is not a path of the game")
    return node


def _run(job: SearchJob, timings: dict | None, excess: list | None) -> ValueSteps[tuple[SearchResult, Summary]]:
    """Yield `job`, return its answer; its result's timings added into `timings`, and into
    excess[0] the seconds suspended at it beyond its own share of the batch that ran it."""
    t = time.perf_counter()
    result, summary = yield job
    if timings is not None:
        add_timings(timings, result.timings)
    if excess is not None:
        excess[0] += time.perf_counter() - t - result.timings["total"]
    return result, summary


class ContinualResolver:
    """Runs re-solving searches for one game and value function (see module doc; `value_fn` None:
    the searches run as coroutines, answered by their driver)."""

    def __init__(self, game: Game, value_fn: ValueFunction | None, settings: SearchSettings = SearchSettings()):
        self.game, self.value_fn, self.settings = game, value_fn, settings

    def initial_solve(self, root: Hashable, seed: int) -> Summary:
        """The summary of a GT-CFR search at the game's first public state `root`, with the
        initial ranges and expansion anywhere: what a seat that does not act there re-solves
        its first decision from."""
        return drive(self._initial_search(root, self.game.initial_ranges(), seed), self.value_fn)[1]

    def _initial_search(self, root: Hashable, ranges: np.ndarray, seed: int, timings: dict | None = None,
                        excess: list | None = None) -> ValueSteps[tuple[SearchResult, Summary]]:
        return (yield from _run(self._job([root], ranges, None, seed), timings, excess))

    def _job(self, path: Sequence[Hashable], root_ranges: np.ndarray, gadget: Gadget | None, seed: int) -> SearchJob:
        return SearchJob(self.game, self.value_fn, path, root_ranges, gadget, self.settings, seed)

    def is_initial(self, history: Sequence[Hashable], prev: Summary | None) -> bool:
        """Whether `search_steps(history, player, prev, seed)` is an initial solve: a search at the
        game's first public state that is not a chance node (`_opening`) with no previous summary,
        whose summary is what the other seat's first re-solve starts from (`initial_solve`)."""
        return prev is None and self._opening(history)[0] == len(history) - 1

    def _opening(self, history: Sequence[Hashable]) -> tuple[int, np.ndarray]:
        """(j, ranges [2, N]): the first public state of `history` that is not a chance node, and
        the initial ranges carried to it through the public chance events before it (hold'em's
        `sog` abstraction draws the hand's bet fraction and stacks there: 510 outcomes for
        HUNL's training game). An outcome known before anyone acts starts the game the seats
        solve; the searches start there."""
        game, ranges, j = self.game, self.game.initial_ranges(), 0
        while j < len(history) - 1 and game.cached("kind", history[j]) == CHANCE:
            ranges = carry(ranges, game.chance_child(history[j], history[j + 1]).state_maps)
            j += 1
        return j, ranges

    def search(self, history: Sequence[Hashable], player: int, prev: Summary | None, seed: int
               ) -> tuple[SearchResult, Summary]:
        """`search_steps` with its requests answered by the resolver's value function."""
        return drive(self.search_steps(history, player, prev, seed), self.value_fn)

    def search_steps(self, history: Sequence[Hashable], player: int, prev: Summary | None, seed: int
                     ) -> ValueSteps[tuple[SearchResult, Summary]]:
        """Search at history[-1] for `player`, conditioned on its previous search's summary
        (None at the seat's first decision: below the game's first public state that is not a
        chance node (`_opening`), the search then re-solves from an initial solve there, seeded
        from `seed`, and the result's queries and timings include the initial solve's; building
        the branch and the summaries count as `tree` time); returns its result and summary."""
        return (yield from self._search_steps(history, player, prev, seed, [0.0]))

    def _search_steps(self, history: Sequence[Hashable], player: int, prev: Summary | None, seed: int,
                      excess: list) -> ValueSteps[tuple[SearchResult, Summary]]:
        """`search_steps`; excess[0] gathers the seconds suspended at jobs beyond their shares of
        the batches that ran them (`_run`), which the result's `total` leaves out."""
        t0, e0 = time.perf_counter(), excess[0]
        game = self.game
        earlier_queries = Queries()
        timings = dict.fromkeys(PHASES, 0.0)
        start, opening = self._opening(history)
        if prev is None and len(history) > start + 1:
            first, prev = yield from self._initial_search(history[start], opening, derive_seed(seed, 1), timings,
                                                          excess)
            earlier_queries = Queries(first.queries)
        if prev is not None:
            prev = yield from self._step_over_wide_chance(history, player, prev, seed, earlier_queries, timings,
                                                          excess)
        t1 = time.perf_counter()
        gadget = None
        if prev is None:
            k, root_ranges = start, opening
        else:
            k = max(j for j, pub in enumerate(history) if pub in prev.ranges)
            s_prev = history[k]
            root_ranges = prev.ranges[s_prev].copy()
            possible = game.cached("possible_mask", s_prev)[1 - player]
            gadget = Gadget(1 - player, prev.values[s_prev][1 - player], prev.ranges[s_prev][1 - player],
                            possible, self.settings.gadget_alpha)
        job = self._job(history[k:], root_ranges, gadget, seed)
        timings["tree"] += time.perf_counter() - t1
        result, summary = yield from _run(job, timings, excess)
        queries = earlier_queries + result.queries if earlier_queries else result.queries
        total = time.perf_counter() - t0 - (excess[0] - e0)
        return dataclasses.replace(result, queries=queries, timings={**timings, "total": total}), summary

    def _step_over_wide_chance(self, history: Sequence[Hashable], player: int, prev: Summary, seed: int,
                               queries: Queries, timings: dict, excess: list) -> ValueSteps[Summary]:
        """`prev`, or where the history goes through a chance node too wide to expand
        (`sog.search.gtcfr.wide_chance`) below the deepest public state `prev` holds, the
        summary to re-solve from at the observed outcome: first, if `prev` stops above the
        chance node, a re-solve down to it (a search whose search node is the chance node,
        which it does not expand: its summary holds the node); then the outcome's entry: the
        ranges at the chance node carried through the outcome's maps (card removal), the
        values the value function gives them there (one request, counted as a query: a
        search that had expanded the node would have had them from the same network at that
        leaf). Appends the queries made to `queries`, their time to `timings`."""
        game, settings = self.game, self.settings
        while True:
            k = max(j for j, pub in enumerate(history) if pub in prev.ranges)
            wide = next((j for j in range(k, len(history) - 1) if wide_chance(game, settings, history[j])), None)
            if wide is None:
                return prev
            if wide > k:
                res, prev = yield from self._search_steps(history[:wide + 1], player, prev,
                                                          derive_seed(seed, 2, wide), excess)
                add_timings(timings, res.timings)
                queries.extend(res.queries)
            pub, child = history[wide], history[wide + 1]
            ranges = carry(prev.ranges[pub], game.chance_child(pub, child).state_maps)
            t = time.perf_counter()
            values, _ = yield [child], ranges[None]
            timings["value"] += time.perf_counter() - t
            queries.append((child, ranges.copy()))
            values = np.asarray(values, dtype=np.float64)[0] * game.cached("possible_mask", child)
            prev = Summary({child: ranges}, {child: values})


def carry(ranges: np.ndarray, state_maps: np.ndarray) -> np.ndarray:
    """float [2, N]: ranges [2, N] at a chance node carried to one of its children by the
    child's `state_maps` (int [2, N]; -1: the slot is impossible there, e.g. a blocked card)."""
    out = np.zeros_like(ranges)
    for i in (0, 1):
        ok = state_maps[i] >= 0
        np.add.at(out[i], state_maps[i][ok], ranges[i][ok])
    return out


def summaries(search: GTCFR) -> list[Summary]:
    """The summary of each finished search of a batch (every public state of its tree, at its
    first node there); a single search's is the only one."""
    tree = search.tree
    firsts = np.flatnonzero(tree.first[:tree.size] == np.arange(tree.size))
    ranges, values = search.average_ranges()[firsts], search.average_values(firsts)
    out = [Summary({}, {}) for _ in range(search.lanes)]
    for k, (v, b) in enumerate(zip(firsts.tolist(), tree.tree_of[firsts].tolist())):
        out[b].ranges[tree.pubs[v]] = ranges[k]
        out[b].values[tree.pubs[v]] = values[k]
    return out
