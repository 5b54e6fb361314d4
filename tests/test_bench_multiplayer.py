"""`sog bench multiplayer`: our n-player MCCFR against OpenSpiel's C++ solver, briefly."""
from __future__ import annotations

import json

import pytest

from launch.bench_multiplayer import bench_multiplayer
from launch.cli import main
from sog.multiplayer import KuhnPoker

pytest.importorskip("pyspiel")


def test_bench_reports_every_solver():
    out = bench_multiplayer(KuhnPoker(3), seconds=0.6, checkpoints=2, log=lambda *a, **k: None)
    assert set(out["solvers"]) == {"sog plain", "sog pluribus", "openspiel"}
    for rec in out["solvers"].values():
        assert rec["iterations"] > 0 and len(rec["curve"]) == 2 and 0 <= rec["nash_conv"] < 3
    assert out["solvers"]["sog plain"]["iterations_ratio"] > 0 and len(out["load_average"]) == 2


def test_bench_command_refuses_bad_players(capsys):
    assert main(["bench", "multiplayer", "--game", "kuhn_poker", "--players", "7", "--seconds", "1"]) == 2
    assert "players must be between 2 and 6" in capsys.readouterr().err


def test_bench_command_prints_json(capsys):
    assert main(["bench", "multiplayer", "--game", "kuhn_poker", "--players", "2", "--seconds", "0.3",
                 "--checkpoints", "1"]) == 0
    assert json.loads(capsys.readouterr().out)["players"] == 2
