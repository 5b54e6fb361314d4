"""Benchmarks that print figures and ratios against a reference measured in the same run.

`bench_cfr`: wall-clock time to reach a target exploitability for our public-tree
CFR+ (simultaneous, as GT-CFR uses it, and alternating) and for OpenSpiel's C++
`CFRPlusSolver` and, where it is installed, LiteEFG's C++ CFR+ (`launch.bench_liteefg`;
optional) on the same game, on this machine, in this run. All solvers'
clocks include building their trees and exclude the exploitability checks,
which are made at the same geometric schedule of iteration counts (every ~10%)
for all, so none is favoured by where the checks fall. Each leg also reports its process
CPU seconds (all threads), which a loaded machine disturbs less than wall time.
"""
from __future__ import annotations

import time

from sog.limits import SEARCH_LIMITS
from sog.search.cfr import CFRConfig, CFRSolver
from sog.search.full_tree import exploitability, full_tree
from sog.search.gtcfr import GTCFR
from sog.search.tree import PublicTree, TreeTooLarge

CFR_MAX_SECONDS = 120.0       # `bench_cfr` gives a solver up after this many seconds
SEARCH_ROW_SECONDS = 30.0     # `sog bench search`: a row's searches end after this many seconds

# the oracle leg of `bench_search` runs on games whose full public tree has at most this many
# states: the oracle solves the full subtree below every frontier leaf of every CFR pass (Leduc
# 465, Liar's Dice 8,191; tic-tac-toe's 549,946 keep a default bench busy for over half an hour)
ORACLE_BENCH_STATES = 10_000


def _checkpoints(limit: int = 10**7):
    it = 1
    while it < limit:
        yield it
        it = max(it + 1, int(it * 1.1))


def _time_to_target(make, step_to, exploitability_mbb, target_mbb, max_seconds, log, label):
    """Run `step_to(n)` along the checkpoints until exploitability <= target or time runs out."""
    t0, c0 = time.perf_counter(), time.process_time()
    state = make()
    solve_time, cpu_time = time.perf_counter() - t0, time.process_time() - c0
    expl = float("inf")
    it = 0
    for it in _checkpoints():
        t, c = time.perf_counter(), time.process_time()
        step_to(state, it)
        solve_time += time.perf_counter() - t
        cpu_time += time.process_time() - c
        expl = exploitability_mbb(state)
        log(f"\r{label}: {it} iterations, {expl:.3f} mbb/h, {solve_time:.2f} s   ", end="")
        if expl <= target_mbb or solve_time > max_seconds:
            break
    log()
    return dict(iterations=it, seconds=solve_time, cpu_seconds=cpu_time, exploitability_mbb=expl,
                reached=expl <= target_mbb)


def bench_cfr(game, target_mbb: float = 1.0, max_seconds: float = CFR_MAX_SECONDS, log=print) -> dict:

    result = dict(benchmark="cfr", game=game.spec.name, target_mbb=target_mbb)

    def ours(alternating):
        def make():
            game.clear_memo()
            return CFRSolver(full_tree(game).ct, config=CFRConfig("cfr+", alternating=alternating))
        return _time_to_target(
            make, lambda s, n: s.iterate(n - s.iterations),
            lambda s: 1000 * exploitability(game, s.average_policy()),
            target_mbb, max_seconds, log, f"sog cfr+ {'alternating' if alternating else 'simultaneous'}")

    result["sog_simultaneous"] = ours(False)
    result["sog_alternating"] = ours(True)
    result["openspiel"] = result["liteefg"] = None
    name = game.openspiel_name()
    if name is None:
        return result
    try:
        import pyspiel
    except ImportError:
        pyspiel = None
    if pyspiel is not None:
        os_game = pyspiel.load_game(name)

        class OS:
            def __init__(self):
                self.solver, self.n = pyspiel.CFRPlusSolver(os_game), 0

        def os_step(s, n):
            while s.n < n:
                s.solver.evaluate_and_update_policy()
                s.n += 1

        result["openspiel"] = _time_to_target(
            OS, os_step, lambda s: 1000 * pyspiel.exploitability(os_game, s.solver.average_policy()),
            target_mbb, max_seconds, log, "openspiel CFRPlusSolver (C++)")
    from launch.bench_liteefg import liteefg_leg
    result["liteefg"] = liteefg_leg(name, _time_to_target, target_mbb, max_seconds, log=log)

    sog = {key: result[key] for key in ("sog_simultaneous", "sog_alternating")}
    refs = [(key, label) for key, label in (("openspiel", "openspiel"), ("liteefg", "LiteEFG"))
            if result[key] is not None]
    parts = []
    for key, label in refs:
        ref = result[key]
        for mine in sog.values():
            if mine["reached"] and ref["reached"]:
                mine[f"speedup_vs_{key}"] = ref["seconds"] / mine["seconds"]
                mine[f"cpu_speedup_vs_{key}"] = ref["cpu_seconds"] / mine["cpu_seconds"]
        parts.append(f"{label} {_seconds(ref)}")
    if refs:
        def ratios(mine):
            return _shown([f"x{mine[f'speedup_vs_{key}']:.3g} vs {label}" for key, label in refs
                           if f"speedup_vs_{key}" in mine])
        log(f"time to {target_mbb} mbb/h: {'; '.join(parts)}; "
            f"sog simultaneous {_seconds(sog['sog_simultaneous'])}{ratios(sog['sog_simultaneous'])}; "
            f"sog alternating {_seconds(sog['sog_alternating'])}{ratios(sog['sog_alternating'])}")
        cpu = [f"{label} {result[key]['cpu_seconds']:.3g}" for key, label in refs]
        cpu += [f"sog {kind} {mine['cpu_seconds']:.3g}" + _shown(
                    [f"x{mine[f'cpu_speedup_vs_{key}']:.3g} vs {label}" for key, label in refs
                     if f"cpu_speedup_vs_{key}" in mine])
                for kind, mine in (("simultaneous", sog["sog_simultaneous"]),
                                   ("alternating", sog["sog_alternating"]))]
        log(f"process CPU seconds (all threads; steadier than wall time on a loaded machine): {'; '.join(cpu)}")
    return result


def _seconds(leg: dict) -> str:
    return f"{leg['seconds']:.3g} s" if leg["reached"] else f"not reached in {leg['seconds']:.3g} s"


def _shown(ratios: list) -> str:
    return f" ({', '.join(ratios)})" if ratios else ""


class _Timed:
    """A value function wrapper measuring time inside the network and batch sizes."""

    def __init__(self, value_fn):
        self.value_fn, self.seconds, self.calls, self.queries = value_fn, 0.0, 0, 0
        self.cacheable = getattr(value_fn, "cacheable", True)     # what the search's cache asks

    def evaluate(self, pubs, ranges):
        t = time.perf_counter()
        out = self.value_fn.evaluate(pubs, ranges)
        self.seconds += time.perf_counter() - t
        self.calls += 1
        self.queries += len(pubs)
        return out


def oracle_fits(game, log=print) -> bool:
    """Whether `bench_search` takes the exact oracle for `game`: its full public tree has at most
    `ORACLE_BENCH_STATES` public states (counted up to that many: about a second); if not, one
    line to `log` saying so."""
    size = game.public_tree_size()            # the count, or a lower bound of it
    if size is not None and size > ORACLE_BENCH_STATES:
        count = f"at least {size:,}"
    else:
        try:
            PublicTree.full(game, max_nodes=ORACLE_BENCH_STATES)
            return True
        except TreeTooLarge:
            count = f"more than {ORACLE_BENCH_STATES:,}"
    log(f"bench search: no oracle leg for {game.spec.name}: its public tree has {count} public states, "
        f"beyond the oracle's {ORACLE_BENCH_STATES:,} here")
    return False


def bench_search(game, value_fns: dict, settings: list, searches: int, log=print,
                 max_seconds: float | None = None) -> dict:
    """Searches/s, CFR iterations/s, queries/s, mean batch, the share of time outside the
    network, the search's size (mean tree nodes, the most MB its arrays held: `GTCFR.nbytes`),
    the rows a search sent to the value function and those its evaluation cache answered
    (`sog.search.value_cache`), and the process CPU seconds a search took (all threads; on a shared machine the wall-clock
    figures depend on the other jobs), for SoG(s, c) searches from the root with each value
    function.

    `settings`: SearchSettings. Every setting runs `searches` full searches from the
    game's root (seeds 0..), or fewer where `max_seconds` (wall seconds a row) runs out
    first: at least one, and the row's `searches` says how many;
    one warm-up search per (value function, setting) is not timed (jit compilation) and
    ends between phases once `max_seconds` have passed (`sog.limits`); timed searches run whole.
    """
    rows = []
    for vname, vf in value_fns.items():
        for p in settings:
            t0 = time.perf_counter()
            with SEARCH_LIMITS.limited(deadline=None if max_seconds is None else t0 + max_seconds):
                warm_up = GTCFR(game, vf, settings=p, seed=-1 % 2**31).run()
            if warm_up.iterations < p.iterations:      # cut short: say what one whole search will take
                took = time.perf_counter() - t0
                log(f"{game.spec.name} SoG({p.label}) {vname:>7}: one search takes about "
                    f"{took * p.iterations / warm_up.iterations:,.0f} s (the warm-up ran {warm_up.iterations:,} of "
                    f"its {p.iterations:,} CFR iterations in {took:.0f} s); timing one")
            timed = _Timed(vf)
            iterations, nodes, nbytes, wall, cpu, hits = 0, 0, 0, 0.0, 0.0, 0
            done = 0
            while done < searches and not (done and max_seconds is not None and wall >= max_seconds):
                t0, c0 = time.perf_counter(), time.process_time()
                search = GTCFR(game, timed, settings=p, seed=done)
                result = search.run()
                wall += time.perf_counter() - t0
                cpu += time.process_time() - c0
                iterations, nodes = iterations + result.iterations, nodes + result.nodes
                nbytes = max(nbytes, search.nbytes())
                hits += search.cache_hits
                done += 1
            row = dict(value=vname, search=p.label, searches=done,
                       seconds=wall, searches_per_s=done / wall, iterations_per_s=iterations / wall,
                       queries_per_s=timed.queries / wall,
                       mean_batch=timed.queries / max(timed.calls, 1),
                       share_outside_network=1 - timed.seconds / wall,
                       mean_nodes=nodes / done, search_mb=nbytes / 2**20,
                       cpu_seconds_per_search=cpu / done, value_cache=search.caches_values,
                       rows_per_search=timed.queries / done, cache_hits_per_search=hits / done)
            rows.append(row)
            log(f"{game.spec.name} SoG({row['search']}) {vname:>7}: {done} search{'es' * (done != 1)} in {wall:.1f} s, "
                f"{row['searches_per_s']:.4g} searches/s {row['iterations_per_s']:8.1f} it/s "
                f"{row['queries_per_s']:9.1f} queries/s "
                f"batch {row['mean_batch']:6.1f}  outside network {100 * row['share_outside_network']:.0f}%  "
                f"{row['mean_nodes']:.0f} nodes, {row['search_mb']:.0f} MB, "
                f"{row['cpu_seconds_per_search']:.3f} CPU s, {row['rows_per_search']:.0f} rows a search"
                + (f" ({row['cache_hits_per_search']:.0f} cached)" if search.caches_values else ""))
    return dict(game=game.spec.name, rows=rows)
