"""`sog bench selfplay` on tiny Kuhn: a real Ray-free run of ~3 s gives every figure with sane
values (rates, shares in [0, 1], a search split that adds up to the searches' clock, batch
statistics that agree with the query counter), writes bench.json and bench.png with --out; the
same on Ray; the command's user errors."""
import json

import pytest

from launch.bench_selfplay import SPLIT, bench_selfplay
from launch.cli import main as cli_main
from sog.config import load_config

RATES = ("searches_per_s", "moves_per_s", "games_per_s", "solves_per_s", "network_queries_per_s",
         "selfplay_examples_per_s", "solver_examples_per_s", "learner_steps_per_s")


def quiet(*args, **kwargs) -> None:
    """A log that drops its lines."""


def check_figures(r: dict, seconds: float) -> None:
    assert r["benchmark"] == "selfplay" and r["game"] == "kuhn_poker"
    assert seconds <= r["seconds"] < seconds + 5 and r["warmup_seconds"] > 0
    assert all(r[k] > 0 for k in RATES), {k: r[k] for k in RATES}
    assert r["moves_per_s"] == r["searches_per_s"] == r["selfplay_examples_per_s"]   # Kuhn: one search a move
    assert r["solver_examples_per_s"] == r["solves_per_s"]
    assert {"learner", "selfplay", "solver"} <= set(r["wait_share"])
    assert all(0 <= v <= 1 for v in r["wait_share"].values())
    assert r["learner_wait_share"] == r["wait_share"]["learner"]
    inf = r["inference"]
    assert inf["batches"] > 0 and 1 <= inf["p50_batch"] <= inf["p95_batch"] <= inf["max_batch"]
    assert 1 <= inf["mean_batch"] <= inf["max_batch"] and 0 < inf["busy_share"] <= 1
    assert inf["queries"] == pytest.approx(inf["mean_batch"] * inf["batches"])
    assert set(r["search_split"]) == {"selfplay", "solver"}
    for role, s in r["search_split"].items():
        assert s["searches"] > 0 and s["search_seconds"] > 0, role
        assert s["ms_per_search"] == pytest.approx(1000 * s["search_seconds"] / s["searches"])
        assert set(s["shares"]) == {name for name, _, _ in SPLIT}
        assert all(0 < v <= 1 for v in s["shares"].values()), (role, s["shares"])
        assert sum(s["seconds"].values()) == pytest.approx(s["search_seconds"], rel=0.1), (role, s)
        assert abs(s["unaccounted_share"]) < 0.1
    before, after = r["load_average"]["before"], r["load_average"]["after"]
    assert len(before) == len(after) == 3


def test_sync_bench_gives_every_figure(tmp_path):
    out = tmp_path / "bench"
    r = bench_selfplay(load_config("tiny_kuhn"), seconds=3.0, sync=True, out_dir=str(out), log=quiet,
                       tick_seconds=0.25)
    check_figures(r, 3.0)
    assert r["mode"] == "sync" and r["inference"]["idle_share"] is None
    # the in-process network's batches are the clients' calls: every query counted is in one
    assert r["inference"]["queries"] == round(r["network_queries_per_s"] * r["seconds"])
    assert json.loads((out / "bench.json").read_text()) == r
    assert (out / "bench.png").stat().st_size > 0 and (out / "config.yaml").is_file()


def test_ray_bench_gives_every_figure():
    r = bench_selfplay(load_config("tiny_kuhn"), seconds=2.0, log=quiet, tick_seconds=0.25, num_cpus=2)
    check_figures(r, 2.0)
    inf = r["inference"]
    assert r["mode"] == "ray" and 0 < inf["idle_share"] < 1 and inf["busy_share"] + inf["idle_share"] <= 1
    assert not inf["server_restarted"]


def test_user_errors(tmp_path, capsys):
    assert cli_main(["bench", "selfplay", "--seconds", "3"]) == 2
    assert "needs --config" in capsys.readouterr().err
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "config.yaml").write_text("game: kuhn_poker\n")
    assert cli_main(["bench", "selfplay", "--config", "tiny_kuhn", "--out", str(tmp_path / "taken")]) == 2
    assert "not empty" in capsys.readouterr().err
    assert cli_main(["bench", "selfplay", "--config", "tiny_kuhn", "--set", "run.nope=1"]) == 2
