"""`sog bench multiplayer`: our n-player MCCFR against OpenSpiel's C++ solver, briefly."""
from __future__ import annotations

import json

import pytest

from launch.bench_multiplayer import bench_multiplayer
from launch.cli import main
from sog.multiplayer import KuhnPoker, load_game

pytest.importorskip("pyspiel")


def test_bench_reports_every_solver():
    out = bench_multiplayer(KuhnPoker(3), seconds=0.6, checkpoints=2, log=lambda *a, **k: None)
    assert set(out["solvers"]) == {"sog compiled", "sog pluribus", "sog python", "openspiel"}
    for rec in out["solvers"].values():
        assert rec["iterations"] > 0 and len(rec["curve"]) == 2 and 0 <= rec["nash_conv"] < 3
    for label in ("sog compiled", "sog pluribus", "sog python"):
        assert out["solvers"][label]["iterations_ratio"] > 0 and out["solvers"][label]["nash_conv_ratio"] > 0
    assert len(out["load_average"]) == 2 and out["compile_seconds"] > 0


def test_bench_races_only_the_world_state_solver_on_holdem():
    game = load_game("holdem(betting=limit,numRanks=3,numSuits=1,numRounds=1,numHoleCards=1,numBoardCards=0,"
                     "blind=1 1 1,raiseSize=2,maxRaises=1,firstPlayer=1,stack=10 10 10)", 3)
    out = bench_multiplayer(game, seconds=0.4, checkpoints=1, log=lambda *a, **k: None)
    assert set(out["solvers"]) == {"sog python", "openspiel"}


def test_bench_command_refuses_bad_players(capsys):
    assert main(["bench", "multiplayer", "--game", "kuhn_poker", "--players", "7", "--seconds", "1"]) == 2
    assert "players must be between 2 and 6" in capsys.readouterr().err


def test_bench_command_prints_json(capsys):
    assert main(["bench", "multiplayer", "--game", "kuhn_poker", "--players", "2", "--seconds", "0.3",
                 "--checkpoints", "1"]) == 0
    assert json.loads(capsys.readouterr().out)["players"] == 2
