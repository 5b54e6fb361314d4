"""The query solver: turns sampled beliefs into bootstrapped value targets.

For each query `beta = (pub, r0, r1)` GT-CFR runs rooted at `pub` with both
ranges fixed (no gadget) and the solvers' search settings (`solver.search`:
SoG(S, C) of its own, by default self-play's; `sog.config.solver_search`); the target is the
search's final (iteration-averaged) counterfactual values at the root for
both players. On average `q_recursive` of each solve's own network queries
are sent back to the queue (recursive queries). Queries at terminal public
states need no solve and are dropped. With `solver.q_random` > 0, on average that many
random situations (`actors.random_situations`: a random walk's public state with beliefs
from random strategies, DeepStack's coverage of rarely played lines) are solved per popped
query alongside them, drawn from their own stream (`RANDOM_SEED_TAG`), and their targets
and recursive queries go out as the popped queries' do; the stats count them
(`random_solves`). A query at a chance node too wide to expand
(`sog.search.gtcfr.wide_chance`: HUNL's flop) is solved on `search.chance_samples`
outcomes drawn from the solve's seed, weighted so the target is an unbiased estimate
(`PublicTree.expand_sample`). The solves of one step (`solver.batch`) run as one batched
search (`GTCFR.batch`: their trees one forest, one CFR pass and one network call a pass for all
of them; each solve's result is the one it would have alone, its own seed included); the stats
add where the solves' time went (`actors.search_time`). With `solver.off_support:
best_response`, the targets at the slots a query's owner does not reach (range 0) are instead
each hand's best-deviation value against the other player's average policy in the solved tree
(`GTCFR.batch_best_response_values`): the values a search must read there to see a deviation's
worth. Leduc, 600 replay queries against exact values
(network units): it cut those targets' low bias from -0.018 to -0.006 with a SoG(10,1) solver and
from -0.011 to -0.007 with SoG(16,1); with SoG(64,0.5), whose averages have converged, no change.
"""
from __future__ import annotations

import dataclasses
import time

import numpy as np

from actors.examples import Produced
from actors.lockstep import run_lockstep
from actors.random_situations import random_situation
from actors.search_time import search_time_stats
from actors.selfplay import sample_count
from sog.config import Config, solver_search
from sog.games.api import TERMINAL, Game
from sog.search.gtcfr import GTCFR, SearchResult, wide_chance
from sog.search.tree import PublicTree
from sog.search.value_function import ValueSteps
from sog.seeding import derive_seed

RANDOM_SEED_TAG = 1   # the random situations' stream: derive_seed(seed, RANDOM_SEED_TAG)


class QuerySolver:
    """Solves queries with GT-CFR and `value_fn` (see module doc)."""

    def __init__(self, game: Game, config: Config, value_fn, seed: int):
        self.game, self.config, self.value_fn = game, config, value_fn
        self.rng = np.random.default_rng(seed)
        self.random_rng = np.random.default_rng(derive_seed(seed, RANDOM_SEED_TAG))
        self.settings = solver_search(config)

    def solve(self, queries: list) -> Produced:
        t0 = time.perf_counter()
        queries = [(pub, r) for pub, r in queries if self.game.cached("kind", pub) != TERMINAL]
        extra = self._random_situations(len(queries))
        queries += extra
        seeds = self.rng.integers(2**62, size=len(queries)).tolist()
        (results,), driver = (run_lockstep([self._solve(queries, seeds)], self.value_fn) if queries
                              else ([[]], {"network": 0.0, "merge": 0.0}))
        recursive = []
        for res in results:
            k = min(sample_count(self.rng, self.config.solver.q_recursive), len(res.queries))
            recursive.extend(res.queries[i] for i in self.rng.choice(len(res.queries), size=k, replace=False))
        stats = dict(solves=len(results), random_solves=len(extra), seconds=time.perf_counter() - t0,
                     **search_time_stats((r.timings for r in results), driver))
        return Produced.build(
            self.game, self.rng, pubs=[q[0] for q in queries], ranges=[q[1] for q in queries],
            values=[r.values for r in results], policies=[None] * len(results),
            policy_masks=[None] * len(results), queries=recursive, stats=stats)

    def _random_situations(self, popped: int) -> list:
        """On average `solver.q_random` random situations (pub, ranges [2, N]) per popped query."""
        q = self.config.solver.q_random
        if not q:
            return []
        rng = self.random_rng
        count = sum(sample_count(rng, q) for _ in range(popped))
        return [random_situation(self.game, rng, self.settings) for _ in range(count)]

    def _solve(self, queries: list, seeds: list[int]) -> ValueSteps[list[SearchResult]]:
        """The solves of `queries` ((pub, ranges [2, N]) each; seeds one each) as one batched search
        (`GTCFR.batch_steps`, a coroutine); with `solver.off_support` "best_response", a solve's
        values at the slots off its query's support are the best-response ones
        (`GTCFR.batch_best_response_values`)."""
        tree = PublicTree(self.game, [pub for pub, _ in queries], separate=True)
        for root, (pub, _), seed in zip(tree.roots, queries, seeds):
            if wide_chance(self.game, self.settings, pub):
                tree.expand_sample(root, self.settings.chance_samples, np.random.default_rng(derive_seed(seed, 1)))
        ranges = np.stack([np.asarray(r, dtype=np.float64) for _, r in queries])
        search = GTCFR.batch(self.game, None, tree, ranges, seeds, self.settings)
        results = yield from search.batch_steps()
        if self.config.solver.off_support == "best_response":
            best = search.batch_best_response_values()
            results = [dataclasses.replace(r, values=np.where(ranges[b] > 0, r.values, best[b]))
                       for b, r in enumerate(results)]
        return results
