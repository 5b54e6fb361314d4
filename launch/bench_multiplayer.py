"""`sog bench multiplayer --game G --players N --seconds S [--checkpoints K] [--seed N]`.

Our n-player MCCFR against OpenSpiel's C++ `pyspiel.ExternalSamplingMCCFRSolver` (simple
averaging) on the same n-player game, each given S wall-clock seconds, on this machine, in this
run. Ours, on Kuhn and Leduc poker (`sog.multiplayer.compiled`, numba on the betting skeleton):
"sog compiled", external sampling with simple averaging, OpenSpiel's algorithm (the same
samples and tables as the world-state solver, bit for bit), and "sog pluribus", the same with
linear weighting for the first half of the expected iterations; on every game "sog python",
the world-state `sog.multiplayer.mccfr.ExternalSamplingMCCFR` (plain settings: the same
algorithm in Python).

The solvers run in K equal time slices, interleaved slice by slice so that load
from other processes hits all alike (the 1-minute load average is recorded
before and after); after each slice the average policy's NashConv (chips) is
measured outside the clock with our exact n-player evaluator
(`sog.multiplayer.best_response`, which agrees with `pyspiel.nash_conv`; the
tests check it) on the same full tree for every solver; OpenSpiel's policy is
read through `get_state_policy` at every information state. Iterations are
one traversal per player for every solver. `iterations_ratio` is ours / OpenSpiel's for the
same seconds (`cpu_iterations_ratio`: per CPU second of this process, less sensitive to the
machine's load); `nash_conv_ratio` ours / OpenSpiel's at the end (below 1: ours is closer to
equilibrium for the same wall time). `compile_seconds`: numba's first call (compiling the
kernels, or loading them from its cache), made before the race as OpenSpiel's C++ is
compiled before it.

`add_arguments(parser)` adds the options to `sog bench`; `run(args)` returns a
JSON-able dict and prints a table to stderr; `bench_multiplayer(...)` is the
function behind both.
"""
from __future__ import annotations

import contextlib
import os
import sys
import time

from launch.bench_mccfr import race
from launch.console import UserError, say
from sog.multiplayer import PlayersError, UnknownGameError, load_game
from sog.multiplayer.best_response import Evaluator
from sog.multiplayer.compiled import CompiledExternalSampling
from sog.multiplayer.dealt import DealtGame, supports
from sog.multiplayer.mccfr import ExternalSamplingMCCFR
from sog.multiplayer.policy import completed


def add_arguments(parser) -> None:
    parser.add_argument("--players", type=int, default=3, help="multiplayer: number of players (2..6)")
    parser.add_argument("--checkpoints", type=int, default=4, help="multiplayer: NashConv measurements")
    parser.add_argument("--seed", type=int, default=0, help="multiplayer: solver seed; modicum: the deals' seed")


class _Ours:
    """One of our solvers, `batch` iterations between clock checks (a few milliseconds' worth)."""

    def __init__(self, label: str, solver, batch: int = 16):
        self.label, self.solver, self.batch = label, solver, batch

    @property
    def iterations(self) -> int:
        return self.solver.iterations

    def step(self, seconds: float) -> None:
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            self.solver.run(self.batch)

    def policy(self, tree) -> dict:
        return completed(tree, self.solver.average_policy())


class _OpenSpiel:
    label = "openspiel"

    def __init__(self, pyspiel, game, seed: int):
        self.solver = pyspiel.ExternalSamplingMCCFRSolver(
            pyspiel.load_game(game.name, game.openspiel_params()), seed=seed)
        self.unmet = pyspiel.SpielError    # what its default policy answers a key it never met with
        self.iterations = 0

    def step(self, seconds: float) -> None:
        deadline = time.perf_counter() + seconds
        run = self.solver.run_iteration
        while time.perf_counter() < deadline:
            for _ in range(16):
                run()
            self.iterations += 16

    def policy(self, tree) -> dict:
        """The average policy at the information states the solver has met; the others (where
        OpenSpiel's uniform default policy answers only for a State, and prints a line for
        each key it is asked) are left to the evaluator, which plays them uniformly too."""
        avg, out = self.solver.average_policy(), {}
        with _quiet_stderr():
            for key in tree.row_key:
                try:
                    out[key] = avg.get_state_policy(key)
                except self.unmet:
                    continue
        return out


@contextlib.contextmanager
def _quiet_stderr():
    """File descriptor 2 sent to /dev/null (C++ writes there directly) for the block."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def bench_multiplayer(game, seconds: float, checkpoints: int = 4, seed: int = 0, log=say) -> dict:
    """Race our two settings and OpenSpiel's solver for `seconds` each; rows per solver."""
    import pyspiel

    log(f"{game.name}, {game.num_players} players: building the full tree for NashConv")
    ev = Evaluator(game)
    runners, compile_seconds = [], 0.0
    if supports(game):
        dealt = DealtGame(game)
        # numba compiles the kernels once per installation (then loads them from its cache): the
        # first call, on a throwaway solver, is made before the clocks start and reported
        t = time.perf_counter()
        CompiledExternalSampling(game, seed, dealt=dealt, averaging="pluribus", prune_after=0).run(1)
        compile_seconds = time.perf_counter() - t
        # a first guess at the compiled iteration count (for the linear-weighting phase): 20,000 per second
        runners += [_Ours("sog compiled", CompiledExternalSampling(game, seed, dealt=dealt), 256),
                    _Ours("sog pluribus", CompiledExternalSampling(game, seed, dealt=dealt,
                                                                   linear_until=int(10_000 * seconds),
                                                                   discount_interval=max(1, int(1000 * seconds))),
                          256)]
    runners += [_Ours("sog python", ExternalSamplingMCCFR(game, seed)), _OpenSpiel(pyspiel, game, seed)]
    load = [os.getloadavg()[0]]
    out = race(runners, seconds, checkpoints, lambda r: ev.nash_conv(r.policy(ev.tree)), "nash_conv", log)
    load.append(os.getloadavg()[0])
    ref = out["openspiel"]
    for label in [r.label for r in runners[:-1]]:
        mine = out[label]
        mine["iterations_ratio"] = mine["iterations"] / max(ref["iterations"], 1)
        mine["nash_conv_ratio"] = mine["nash_conv"] / max(ref["nash_conv"], 1e-12)
        mine["cpu_iterations_ratio"] = ((mine["iterations"] / max(mine["cpu_seconds"], 1e-9))
                                        / max(ref["iterations"] / max(ref["cpu_seconds"], 1e-9), 1e-9))
    result = {"benchmark": "multiplayer_mccfr", "game": game.name, "players": game.num_players,
              "seconds": float(seconds), "checkpoints": checkpoints, "seed": seed,
              "load_average": load, "compile_seconds": compile_seconds, "solvers": out}
    log(table(result))
    return result


def table(result: dict) -> str:
    lines = [(f"{result['game']}, {result['players']} players, {result['seconds']:g} s per solver, "
              f"load {result['load_average'][0]:.1f} -> {result['load_average'][-1]:.1f}, "
              f"numba's first call {result['compile_seconds']:.1f} s before the race:"),
             f"{'solver':<14} {'iterations':>10} {'it/s':>9} {'NashConv':>10} {'iter ratio':>10} {'NC ratio':>9}"]
    for label, r in result["solvers"].items():
        ratios = (f"{r['iterations_ratio']:>10.3f} {r['nash_conv_ratio']:>9.2f}" if "iterations_ratio" in r
                  else f"{'-':>10} {'-':>9}")
        lines.append(f"{label:<14} {r['iterations']:>10} {r['iterations'] / r['seconds']:>9.0f} "
                     f"{r['nash_conv']:>10.5f} {ratios}")
    return "\n".join(lines)


def run(args) -> dict:
    if not (args.seconds or 0) > 0:
        raise UserError(f"--seconds must be positive, got {args.seconds}")
    if args.checkpoints < 1:
        raise UserError(f"--checkpoints must be at least 1, got {args.checkpoints}")
    try:
        game = load_game(args.game, args.players)
    except (UnknownGameError, PlayersError) as e:
        raise UserError(str(e)) from None
    return bench_multiplayer(game, args.seconds, args.checkpoints, int(args.seed), log=say)
