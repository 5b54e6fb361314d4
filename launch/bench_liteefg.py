"""The LiteEFG leg of `sog bench cfr`: LiteEFG's C++ CFR+ (`LiteEFG.baselines.CFRplus`,
alternating updates, linearly weighted average) on the OpenSpiel version of the game.

LiteEFG is optional (`pip install liteefg`; it is not a dependency of sog): without it the
leg prints `SKIP_LINE` and the rest of the bench runs.

Units: LiteEFG's `Environment.exploitability` returns each player's best-response gain
(best-response value minus the player's value), whose sum is the NashConv; sog and OpenSpiel
report exploitability as NashConv / 2, so the leg reports 1000 * sum / 2 mbb/h (uniform
random on Kuhn: LiteEFG [0.375, 0.5417], 458.33 mbb/h, as `sog exploitability --game
kuhn_poker --agent random` gives).

The clock includes loading LiteEFG's game file and building its computation graph, not
the one-off conversion of the OpenSpiel game into that file (a Python walk of the tree
that LiteEFG caches between runs).
"""
from __future__ import annotations

import contextlib
import io
import os
import tempfile

SKIP_LINE = "bench cfr: LiteEFG leg skipped: LiteEFG is not installed (pip install liteefg)"
LABEL = "LiteEFG CFR+ (C++)"


def import_liteefg():
    """The LiteEFG module, or None where it (or the pyspiel it needs) does not import."""
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            import LiteEFG
            import LiteEFG.baselines.CFRplus
    except (ImportError, OSError):     # not installed, or a broken install (a missing C++ symbol)
        return None
    return LiteEFG


def exploitability_mbb(env, strategy, kind: str = "linear-avg-iterate") -> float:
    """`strategy`'s exploitability in mbb/h: 1000 * NashConv / 2 (see the module docstring)."""
    return 1000.0 * sum(env.exploitability(strategy, kind)) / 2


class _GameFile:
    """The OpenSpiel game converted once into LiteEFG's game-file format, in a temporary folder."""

    def __init__(self, leg, os_game):
        self.leg, self.os_game, self.dir, self.path = leg, os_game, None, None
        writer = getattr(leg.OpenSpielEnv, "_write_game", None)
        if writer is None:                  # another LiteEFG layout: time its own OpenSpielEnv
            return
        self.dir = tempfile.TemporaryDirectory(prefix="sog-liteefg-")
        self.path = os.path.join(self.dir.name, "game.openspiel")
        with open(self.path, "w", encoding="utf-8") as f:
            writer(_Holder(os_game), f)

    def env(self):
        with contextlib.redirect_stdout(io.StringIO()):
            if self.path is None:
                return self.leg.OpenSpielEnv(self.os_game, traverse_type="Enumerate")
            return self.leg.FileEnv(self.path, traverse_type="Enumerate")

    def close(self):
        if self.dir is not None:
            self.dir.cleanup()


class _Holder:
    def __init__(self, game):
        self.game = game


class _State:
    def __init__(self, game_file):
        from LiteEFG.baselines.CFRplus import graph as CFRPlusGraph
        self.env = game_file.env()
        with contextlib.redirect_stdout(io.StringIO()):     # the graph prints a banner
            self.graph = CFRPlusGraph()
            self.env.set_graph(self.graph)
        self.n = 0


def _step_to(s: _State, n: int) -> None:
    while s.n < n:
        s.graph.update_graph(s.env)
        s.env.update_strategy(s.graph.current_strategy())
        s.n += 1


def uniform_exploitability_mbb(openspiel_name: str) -> float:
    """Uniform random's exploitability as the leg measures it (a check of the units)."""
    leg = import_liteefg()
    import pyspiel
    from LiteEFG.baselines.baseline import _baseline

    class Uniform(_baseline):
        def __init__(self):
            super().__init__()
            with leg.backward(is_static=True):
                self.strategy = leg.const(self.action_set_size, 1.0 / self.action_set_size)

        def update_graph(self, env):
            env.update(self.strategy)

        def current_strategy(self):
            return self.strategy

    game_file = _GameFile(leg, pyspiel.load_game(openspiel_name))
    try:
        env = game_file.env()
        with contextlib.redirect_stdout(io.StringIO()):
            graph = Uniform()
            env.set_graph(graph)
        graph.update_graph(env)
        env.update_strategy(graph.current_strategy())      # registers the strategy to evaluate
        return exploitability_mbb(env, graph.current_strategy(), "last-iterate")
    finally:
        game_file.close()


def liteefg_leg(openspiel_name: str, time_to_target, target_mbb: float, max_seconds: float, log=print):
    """`time_to_target`'s dict for LiteEFG's CFR+ on `openspiel_name`, or None (one line to
    `log`) where LiteEFG is not importable."""
    leg = import_liteefg()
    if leg is None:
        log(SKIP_LINE)
        return None
    import pyspiel

    game_file = _GameFile(leg, pyspiel.load_game(openspiel_name))
    try:
        result = time_to_target(lambda: _State(game_file), _step_to,
                                lambda s: exploitability_mbb(s.env, s.graph.current_strategy()),
                                target_mbb, max_seconds, log, LABEL)
    finally:
        game_file.close()
    result["threads"] = leg.get_threads()
    return result
