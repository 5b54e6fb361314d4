"""Exploitability of a search-based agent, measured as the paper does.

The agent's full-game policy is built by running its search at every public
state where a player acts, in breadth-first order, each search conditioned on
the same player's search at its nearest ancestor decision (continual
re-solving's summary; a seat that does not act at the root starts from one
initial solve there, `ContinualResolver.initial_solve`), and composing the
searched policies at those states.
Exact exploitability of the composed policy is then computed on the full
public tree. With several seeds the searches differ in their random
simulations; min / mean / max over seeds is reported.
"""
from __future__ import annotations

import collections
import time
from typing import Callable

import numpy as np

from sog.eval.exploitability import exploitability
from sog.eval.policy import TabularPolicy
from sog.games.api import DECISION, TERMINAL, Game
from sog.search.resolve import ContinualResolver, derived_seed


def decision_state_count(game: Game) -> int:
    """Number of public states where a player acts (= searches per composed policy)."""
    from sog.eval.exploitability import full_tree
    return len(full_tree(game).levels.dec)


def search_policy(game: Game, resolver: ContinualResolver, seed: int,
                  progress: Callable[[int], None] | None = None) -> TabularPolicy:
    """The composed policy of `resolver`'s searches at every decision public state."""
    table = {}
    root = game.root()
    first = game.cached("actor", root) if game.cached("kind", root) == DECISION else None
    # a seat that does not act at the root re-solves its first decisions from one initial solve
    # there, shared by all of them (a predecessor of every search)
    prev0 = tuple(None if p == first else resolver.initial_solve(root, derived_seed(seed, 2, p))
                  for p in (0, 1))
    queue = collections.deque([([root], prev0)])
    count = 0
    while queue:
        history, prev = queue.popleft()
        pub = history[-1]
        kind = game.cached("kind", pub)
        if kind == TERMINAL:
            continue
        if kind == DECISION:
            p = game.cached("actor", pub)
            result, summary, _ = resolver.search(history, p, prev[p], seed=seed * 1_000_003 + count)
            table[pub] = result.policy
            prev = (summary, prev[1]) if p == 0 else (prev[0], summary)
            count += 1
            if progress is not None:
                progress(count)
        for child in game.cached("children", pub):
            queue.append((history + [child.pub], prev))
    return TabularPolicy(game, table)


def search_exploitability(game: Game, resolver: ContinualResolver, seeds: int,
                          progress: Callable[[int, int], None] | None = None) -> dict:
    """min / mean / max exploitability (game units) over `seeds` composed policies, and seconds."""
    start = time.perf_counter()
    values = []
    for seed in range(seeds):
        cb = None if progress is None else (lambda k, seed=seed: progress(seed, k))
        values.append(exploitability(game, search_policy(game, resolver, seed, cb)))
    v = np.array(values)
    return dict(min=float(v.min()), mean=float(v.mean()), max=float(v.max()), values=v.tolist(),
                seconds=time.perf_counter() - start)
