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
inexact solve); at 1000 iterations they agree, 0.30 against 0.29.) The tree
is always rebuilt from the real public history, so actions the previous tree
did not contain are handled the same way as any other.

`ContinualResolver.search_steps` is a re-solve in coroutine form
(`sog.search.value_function.ValueSteps`: the initial solve's and the search's
value requests, in turn); `search` drives it with the resolver's value function.
"""
from __future__ import annotations

import dataclasses
import time
from typing import Hashable, Sequence

import numpy as np

from sog.games.api import Game
from sog.search.gtcfr import GTCFR, PHASES, Gadget, SearchResult, add_timings
from sog.search.settings import SearchSettings
from sog.search.tree import PublicTree
from sog.search.value_function import ValueFunction, ValueSteps, drive
from sog.seeding import derive_seed


@dataclasses.dataclass
class Summary:
    """A search's re-solving summary: per public state of its tree, the average
    policy's ranges and the averaged counterfactual values (float [2, N] each)."""

    ranges: dict[Hashable, np.ndarray]
    values: dict[Hashable, np.ndarray]


class ContinualResolver:
    """Runs re-solving searches for one game and value function (see module doc; `value_fn` None:
    the searches run as coroutines, answered by their driver)."""

    def __init__(self, game: Game, value_fn: ValueFunction | None, settings: SearchSettings = SearchSettings()):
        self.game, self.value_fn, self.settings = game, value_fn, settings

    def initial_solve(self, root: Hashable, seed: int) -> Summary:
        """The summary of a GT-CFR search at the game's first public state `root`, with the
        initial ranges and expansion anywhere: what a seat that does not act there re-solves
        its first decision from."""
        return summarize(drive(self._initial_search(root, seed), self.value_fn))

    def _initial_search(self, root: Hashable, seed: int) -> ValueSteps[GTCFR]:
        search = self._gtcfr(PublicTree(self.game, [root]), self.game.initial_ranges(), None, None, seed)
        yield from search.steps()
        return search

    def search(self, history: Sequence[Hashable], player: int, prev: Summary | None, seed: int
               ) -> tuple[SearchResult, Summary, GTCFR]:
        """`search_steps` with its requests answered by the resolver's value function."""
        return drive(self.search_steps(history, player, prev, seed), self.value_fn)

    def search_steps(self, history: Sequence[Hashable], player: int, prev: Summary | None, seed: int
                     ) -> ValueSteps[tuple[SearchResult, Summary, GTCFR]]:
        """Search at history[-1] for `player`, conditioned on its previous search's summary
        (None at the seat's first decision: below the game's first public state, the search
        then re-solves from `initial_solve`, seeded from `seed`, and the result's queries
        and timings include the initial solve's; building the branch and the summaries count
        as `tree` time)."""
        t0 = time.perf_counter()
        game = self.game
        initial_queries = []
        timings = dict.fromkeys(PHASES, 0.0)
        if prev is None and len(history) > 1:
            first = yield from self._initial_search(history[0], derive_seed(seed, 1))
            add_timings(timings, first.timings)
            t = time.perf_counter()
            prev, initial_queries = summarize(first), first.recorder.queries
            timings["tree"] += time.perf_counter() - t
        t1 = time.perf_counter()
        gadget = None
        if prev is None:
            k, root_ranges = 0, game.initial_ranges()
        else:
            k = max(j for j, pub in enumerate(history) if pub in prev.ranges)
            s_prev = history[k]
            root_ranges = prev.ranges[s_prev].copy()
            possible = game.cached("possible_mask", s_prev)[1 - player]
            gadget = Gadget(1 - player, prev.values[s_prev][1 - player], prev.ranges[s_prev][1 - player],
                            possible, self.settings.gadget_alpha)
        tree = PublicTree(game, [history[k]])
        node = tree.roots[0]
        for pub in history[k + 1:]:
            kids = tree.expand(node)
            node = next((c for c in kids if tree.pubs[c] == pub), -1)
            if node < 0:
                raise ValueError(f"{pub!r} is not a child of {tree.pubs[kids[0]] if kids else None!r}: "
                                 "the history is not a path of the game")
        search = self._gtcfr(tree, root_ranges, node, gadget, seed)
        t2 = time.perf_counter()
        result = yield from search.steps()
        t3 = time.perf_counter()
        summary = summarize(search)
        t4 = time.perf_counter()
        add_timings(timings, search.timings)
        timings["tree"] += (t2 - t1) + (t4 - t3)
        queries = initial_queries + result.queries if initial_queries else result.queries
        result = dataclasses.replace(result, queries=queries, timings={**timings, "total": t4 - t0})
        return result, summary, search

    def _gtcfr(self, tree: PublicTree, root_ranges: np.ndarray, node: int | None, gadget: Gadget | None,
               seed: int) -> GTCFR:
        return GTCFR(self.game, self.value_fn, tree, root_ranges, search_node=node, gadget=gadget,
                     settings=self.settings, seed=seed)


def summarize(search: GTCFR) -> Summary:
    """The summary of a finished search (every node of its tree)."""
    tree = search.tree
    ranges = search.average_ranges()
    out = Summary({}, {})
    for node in range(tree.size):
        pub = tree.pubs[node]
        if pub not in out.ranges:
            out.ranges[pub] = ranges[node]
            out.values[pub] = search.average_values(node)
    return out
