"""Exploitability of a search-based agent, measured as the paper does.

The agent's full-game policy is built by running its search at every public
state where a player acts, in breadth-first order, each search conditioned on
the same player's search at its nearest ancestor decision (continual
re-solving's summary; a seat that does not act at the root starts from one
initial solve there, `ContinualResolver.initial_solve`), and composing the
searched policies at those states.
Exact exploitability of the composed policy is then computed on the full
public tree. With several seeds the searches differ in their random
simulations; min / mean / max over seeds is reported. The searches of
disjoint subtrees can run in parallel processes (`workers`).
"""
from __future__ import annotations

import collections
import time
from collections.abc import Callable

import numpy as np

from sog.games.api import DECISION, TERMINAL, Game
from sog.policy import TabularPolicy
from sog.search.full_tree import exploitability, full_tree
from sog.search.resolve import ContinualResolver
from sog.seeding import derive_seed

INITIAL_SOLVE_TAG, SEARCH_TAG = 2, 3     # derive_seed tags: the seats' initial solves, the searches


def decision_state_count(game: Game) -> int:
    """Number of public states where a player acts (= searches per composed policy)."""
    return len(full_tree(game).levels.dec)


def search_policy(game: Game, resolver: ContinualResolver, seed: int,
                  progress: Callable[[int], None] | None = None, workers: int = 1) -> TabularPolicy:
    """The composed policy of `resolver`'s searches at every decision public state.

    Each search's seed is `derive_seed(seed, SEARCH_TAG, its breadth-first index)`. With
    `workers` > 1 the searches near the root run here until the breadth-first queue holds at least
    `workers` subtrees, which are then searched by that many processes (balanced by
    decision states), each with a copy of the resolver: searches in different subtrees
    depend only on their common ancestors' searches, and the exact oracle's warm start is
    kept per public state, so the policy is the one a single process builds (a value
    function with state shared across subtrees would differ). The game and resolver are
    pickled to the workers (spawned processes).
    """
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    index = full_tree(game).row_of    # breadth-first order: the search seeds' counter
    root = game.root()
    first = game.cached("actor", root) if game.cached("kind", root) == DECISION else None
    # a seat that does not act at the root re-solves its first decisions from one initial solve
    # there, shared by all of them (a predecessor of every search)
    prev0 = tuple(None if p == first else
                  resolver.initial_solve(root, derive_seed(seed, INITIAL_SOLVE_TAG, p)) for p in (0, 1))
    table = {}
    queue = collections.deque([([root], prev0)])
    done = _search_breadth_first(game, resolver, seed, index, queue, table, progress,
                                 split=workers if workers > 1 else None)
    if queue:
        table.update(_search_in_workers(game, resolver, seed, index, list(queue), workers, done, progress))
    return TabularPolicy(game, table)


def _search_breadth_first(game: Game, resolver: ContinualResolver, seed: int, index: dict,
                          queue: collections.deque, table: dict, progress, split: int | None = None,
                          done: int = 0) -> int:
    """Search the queue's (history, previous summaries) items and their descendants, breadth
    first, into `table`; with `split`, stop (leaving the rest queued) once the queue holds at
    least that many non-terminal items, all at one depth. Returns the searches done so far."""
    while queue:
        if split is not None and len(queue) >= split and len(queue[0][0]) == len(queue[-1][0]) and \
                sum(game.cached("kind", h[-1]) != TERMINAL for h, _ in queue) >= split:
            break   # (breadth first: the first and last items' depths bound all the others')
        history, prev = queue.popleft()
        pub = history[-1]
        kind = game.cached("kind", pub)
        if kind == TERMINAL:
            continue
        if kind == DECISION:
            p = game.cached("actor", pub)
            seed_here = derive_seed(seed, SEARCH_TAG, index[pub])
            result, summary = resolver.search(history, p, prev[p], seed_here)
            table[pub] = result.policy
            prev = (summary, prev[1]) if p == 0 else (prev[0], summary)
            done += 1
            if progress is not None:
                progress(done)
        for child in game.cached("children", pub):
            queue.append((history + [child.pub], prev))
    return done


COUNTERS = ("calls", "queries", "iterations_run", "gap_total")   # a value function's, summed over workers


def _search_in_workers(game: Game, resolver: ContinualResolver, seed: int, index: dict, items: list,
                       workers: int, done: int, progress) -> dict:
    """The searches below `items`, split between `workers` processes; their tables merged
    (and the value function's counters, if it has them, summed into this process's)."""
    import multiprocessing as mp

    sizes = [_subtree_decisions(game, h[-1]) for h, _ in items]
    groups, loads = [[] for _ in range(workers)], [0] * workers
    for k in np.argsort(sizes, kind="stable")[::-1]:
        w = int(np.argmin(loads))
        groups[w].append(items[k])
        loads[w] += sizes[k]
    ctx = mp.get_context("spawn")   # (a forked child of a process running JAX can deadlock)
    counter = ctx.Value("l", 0)
    pipes, procs = [], []
    for group in groups:
        recv, send = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_worker, args=(game, resolver, seed, index, group, counter, send),
                           daemon=True)
        proc.start()
        pipes.append(recv)
        procs.append(proc)
    table, pending = {}, list(range(workers))
    while pending:
        for w in list(pending):
            if pipes[w].poll(0.5):
                part, counters = pipes[w].recv()
                table.update(part)
                for c, v in counters.items():
                    setattr(resolver.value_fn, c, getattr(resolver.value_fn, c) + v)
                pending.remove(w)
            elif not procs[w].is_alive() and not pipes[w].poll(0):
                raise RuntimeError(f"search worker {w} died (exit code {procs[w].exitcode})")
        if progress is not None:
            progress(done + counter.value)
    for proc in procs:
        proc.join()
    return table


def _worker(game: Game, resolver: ContinualResolver, seed: int, index: dict, group: list, counter,
            conn) -> None:
    """A worker process: search `group`'s subtrees; send (table, the value function's counters)."""
    def bump(_):
        with counter.get_lock():
            counter.value += 1

    vf = resolver.value_fn
    base = {c: getattr(vf, c) for c in COUNTERS if hasattr(vf, c)}
    table = {}
    _search_breadth_first(game, resolver, seed, index, collections.deque(group), table, bump)
    conn.send((table, {c: getattr(vf, c) - v for c, v in base.items()}))
    conn.close()


def _subtree_decisions(game: Game, pub) -> int:
    """Decision public states in the subtree below `pub` (inclusive)."""
    n, stack = 0, [pub]
    while stack:
        x = stack.pop()
        n += game.cached("kind", x) == DECISION
        stack.extend(c.pub for c in game.cached("children", x))
    return n


def search_exploitability(game: Game, resolver: ContinualResolver, seeds: int,
                          progress: Callable[[int, int], None] | None = None, workers: int = 1,
                          on_policy: Callable[[int, TabularPolicy], None] | None = None) -> dict:
    """min / mean / max exploitability (game units) over `seeds` composed policies, and seconds
    (`workers`: see `search_policy`). `on_policy(seed, policy)` is called with each seed's
    composed policy as soon as it is built (e.g. to save it)."""
    start = time.perf_counter()
    values = []
    for seed in range(seeds):
        cb = None if progress is None else (lambda k, seed=seed: progress(seed, k))
        policy = search_policy(game, resolver, seed, cb, workers)
        if on_policy is not None:
            on_policy(seed, policy)
        values.append(exploitability(game, policy))
    v = np.array(values)
    return dict(min=float(v.min()), mean=float(v.mean()), max=float(v.max()), values=v.tolist(),
                seconds=time.perf_counter() - start)
