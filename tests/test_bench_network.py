"""`sog bench network`: one row per batch size, sorted, with figures that agree with each
other (rows/s = batch / ms per call); the command prints its JSON."""
import json

import numpy as np
import pytest

from launch.bench_network import bench_network
from launch.cli import main as cli_main
from sog.config import load_config
from sog.games import load_game


def test_bench_network_rows_agree():
    config = load_config("tiny_kuhn")
    r = bench_network(config, batches=(1, 3, 16), seconds=0.01)
    assert r["benchmark"] == "network" and r["game"] == "kuhn_poker" and r["network"] == "mlp"
    spec = load_game("kuhn_poker").spec
    assert r["device"].startswith("cpu") and r["input_width"] == 2 * spec.num_states + spec.feature_size
    assert [row["batch"] for row in r["rows"]] == [1, 3, 16]
    for row in r["rows"]:
        assert row["calls"] >= 3 and row["ms_per_call"] > 0
        assert row["rows_per_s"] == pytest.approx(row["batch"] / row["ms_per_call"] * 1e3)


def test_bench_network_cli_prints_json(capsys):
    assert cli_main(["bench", "network", "--config", "tiny_kuhn", "--batches", "2,1", "--seconds", "0.01"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [row["batch"] for row in out["rows"]] == [1, 2]
    assert np.isfinite([row["rows_per_s"] for row in out["rows"]]).all()
