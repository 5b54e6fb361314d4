"""`sog bench-mccfr --game GAME --seconds S [--variants outcome,external] [--seed N] [--checkpoints K]`.

Our MCCFR samplers (`sog.agents.sampling.mccfr`: outcome sampling, external sampling,
optionally Pluribus) against OpenSpiel's C++ samplers exposed in pyspiel
(`pyspiel.OutcomeSamplingMCCFRSolver`, `pyspiel.ExternalSamplingMCCFRSolver`;
not the pure-Python `open_spiel.python.algorithms.*_mccfr`), each given the
same wall-clock budget on the same game, on this machine, in this run.

Each solver runs in `--checkpoints` equal time slices (default 4: S/4, S/2,
3S/4, S), ours and OpenSpiel's interleaved slice by slice so that load from
other processes on the machine hits both alike (the 1-minute load average is
recorded, and each solver's CPU seconds beside its wall-clock seconds); after
each slice its average policy's exact exploitability is measured outside the
clock: ours with `sog.search.full_tree` on our public
tree, OpenSpiel's with `pyspiel.exploitability` on OpenSpiel's game (both
NashConv / 2, in chips; mbb/h = 1000 x chips). Both solvers' clocks cover only
their iterations (OpenSpiel's are driven from Python, one `run_iteration()`
call each, checking the clock every 64 calls); one iteration is one traversal
per player for every solver here. The ratios are ours / OpenSpiel's
(exploitability: below 1 means ours is less exploitable for the same time;
iterations: how many more iterations ours ran).

`add_parser(subparsers)` adds the command to an argparse subparsers object with
`run` as its `func`; `run(args)` returns a JSON-able dict and prints a table to
stderr; `bench_mccfr(game, seconds, ...)` is the function behind both.
"""
from __future__ import annotations

import time

from launch.console import UserError, say
from sog.agents.policy_agents import MCCFR_VARIANTS
from sog.games import UnknownGameError, load_game
from sog.search.full_tree import exploitability, refuse_too_large

VARIANTS = ("outcome", "external", "pluribus")
OPENSPIEL = {"outcome": "OutcomeSamplingMCCFRSolver", "external": "ExternalSamplingMCCFRSolver"}


def add_parser(subparsers):
    p = subparsers.add_parser("bench-mccfr", help="our MCCFR samplers vs OpenSpiel's at equal wall time")
    p.add_argument("--game", default="leduc_poker", help="a two-player game OpenSpiel also has (default leduc_poker)")
    p.add_argument("--seconds", type=float, required=True, help="wall-clock seconds per solver")
    p.add_argument("--variants", default="outcome,external",
                   help=f"comma-separated subset of: {', '.join(VARIANTS)} (pluribus has no "
                        "OpenSpiel counterpart)")
    p.add_argument("--checkpoints", type=int, default=4, help="exploitability measurements per run")
    p.add_argument("--seed", type=int, default=0, help="both samplers' seed (default 0)")
    p.set_defaults(func=run)
    return p


class OurSolver:
    """One of our solvers in `race`: `solver` has `iterations` and `run(seconds=)`;
    `exploitability()` is the exact exploitability of `policy()` in `game`."""

    label = "sog"

    def __init__(self, name: str, solver, game, policy):
        self.name, self.solver, self.game, self.policy = name, solver, game, policy

    @property
    def iterations(self) -> int:
        return self.solver.iterations

    def step(self, seconds: float) -> None:
        self.solver.run(seconds=seconds)

    def exploitability(self) -> float:
        return exploitability(self.game, self.policy())


class OpenSpielSolver:
    label = "openspiel"

    def __init__(self, pyspiel, os_game, variant: str, seed: int):
        cls = getattr(pyspiel, OPENSPIEL[variant])
        self.name = f"{OPENSPIEL[variant]} (C++)"
        self.solver = cls(os_game, seed=seed) if variant == "external" else cls(os_game, 0.6, seed)
        self.pyspiel, self.os_game, self.iterations = pyspiel, os_game, 0

    def step(self, seconds: float) -> None:
        deadline = time.perf_counter() + seconds
        run = self.solver.run_iteration
        while True:
            for _ in range(64):
                run()
            self.iterations += 64
            if time.perf_counter() >= deadline:
                break

    def exploitability(self) -> float:
        return self.pyspiel.exploitability(self.os_game, self.solver.average_policy())


def race(runners: list, seconds: float, checkpoints: int, measure, metric: str, log) -> dict:
    """Run the solvers (`.label`, `.iterations`, `.step(seconds)`) in interleaved slices of
    seconds / checkpoints, so that load from other processes hits them alike; after each slice,
    off the clock, `measure(runner)`, recorded under `metric`. Returns {label: {iterations,
    seconds, cpu_seconds, metric, curve: [{seconds, iterations, metric}]}}."""
    out = {r.label: {"iterations": 0, "seconds": 0.0, "cpu_seconds": 0.0, "curve": []} for r in runners}
    for _ in range(checkpoints):
        for r in runners:
            rec = out[r.label]
            t, c = time.perf_counter(), time.process_time()
            r.step(seconds / checkpoints)
            rec["seconds"] += time.perf_counter() - t
            rec["cpu_seconds"] += time.process_time() - c
            value = measure(r)
            rec["iterations"], rec[metric] = r.iterations, value
            rec["curve"].append({"seconds": rec["seconds"], "iterations": r.iterations, metric: value})
            log(f"  {r.label}: {r.iterations} iterations, {metric} {value:.5g}, {rec['seconds']:.1f} s")
    return out


def bench_mccfr(game, seconds: float, variants=("outcome", "external"), checkpoints: int = 4,
                seed: int = 0, log=say) -> dict:
    """Rows per variant: ours and OpenSpiel's (None where it has no counterpart or no pyspiel)."""
    import os

    try:
        import pyspiel
    except ImportError:   # pragma: no cover - open_spiel is a test dependency
        pyspiel = None
    name = game.openspiel_name()
    os_game = pyspiel.load_game(name) if pyspiel is not None and name is not None else None
    load = [os.getloadavg()[0]]
    rows = []
    for variant in variants:
        log(f"{game.spec.name}: {variant} sampling, {seconds:g} s each")
        cls = MCCFR_VARIANTS[variant]
        solver = cls(game, seed=seed)
        runners = [OurSolver(cls.__name__, solver, game, solver.policy)]
        if os_game is not None and variant in OPENSPIEL:
            runners.append(OpenSpielSolver(pyspiel, os_game, variant, seed))
        res = race(runners, seconds, checkpoints, lambda r: 1000 * r.exploitability(), "exploitability_mbb", log)
        row = {"variant": variant, "sog": res["sog"], "openspiel": res.get("openspiel")}
        if row["openspiel"] is not None:
            mine, ref = row["sog"], row["openspiel"]
            row["exploitability_ratio"] = mine["exploitability_mbb"] / max(ref["exploitability_mbb"], 1e-12)
            row["iterations_ratio"] = mine["iterations"] / max(ref["iterations"], 1)
        rows.append(row)
        load.append(os.getloadavg()[0])
    result = {"benchmark": "mccfr", "game": game.spec.name, "openspiel_game": name,
              "seconds": float(seconds), "checkpoints": checkpoints, "seed": seed,
              "load_average": load, "rows": rows}
    log(table(result))
    return result


def table(result: dict) -> str:
    lines = [f"{result['game']}, {result['seconds']:g} s per solver (exploitability in mbb/h):",
             (f"{'variant':<9} {'sog':>10} {'iters':>10} {'openspiel':>10} {'iters':>10} "
              f"{'expl ratio':>10} {'iter ratio':>10}")]
    for r in result["rows"]:
        mine, ref = r["sog"], r["openspiel"]
        if ref is None:
            lines.append(f"{r['variant']:<9} {mine['exploitability_mbb']:>10.2f} {mine['iterations']:>10} "
                         f"{'-':>10} {'-':>10} {'-':>10} {'-':>10}")
        else:
            lines.append(f"{r['variant']:<9} {mine['exploitability_mbb']:>10.2f} {mine['iterations']:>10} "
                         f"{ref['exploitability_mbb']:>10.2f} {ref['iterations']:>10} "
                         f"{r['exploitability_ratio']:>10.2f} {r['iterations_ratio']:>10.3f}")
    return "\n".join(lines)


def run(args) -> dict:

    if not args.seconds > 0:
        raise UserError(f"--seconds must be positive, got {args.seconds}")
    if args.checkpoints < 1:
        raise UserError(f"--checkpoints must be at least 1, got {args.checkpoints}")
    variants = [v.strip() for v in (args.variants or "").split(",") if v.strip()]
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown or not variants:
        raise UserError(f"unknown MCCFR variant(s) {', '.join(unknown) or repr(args.variants)}; "
                      f"choose from {', '.join(VARIANTS)}")
    try:
        game = load_game(args.game)
    except UnknownGameError as e:
        raise UserError(str(e)) from None
    refuse_too_large(game)      # exploitability is measured on the full tree
    return bench_mccfr(game, args.seconds, list(dict.fromkeys(variants)), args.checkpoints,
                       int(args.seed), log=say)
