"""`sog bench selfplay` on tiny Kuhn: a real Ray-free run of ~3 s gives every figure with sane
values (rates, shares in [0, 1], a search split that adds up to the searches' clock, batch
statistics that agree with the query counter), writes bench.json and bench.png with --out; the
same on Ray; the inference figures of two servers (summed batches, mean shares, each server's);
the command's user errors."""
import json

import pytest
from fork_check import no_fork_after_jax

from launch.bench_selfplay import SPLIT, bench_selfplay, inference_shares, log_report
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
        # within 10%, or 25 ms where the run's searches took ~0.1 s in all (one GC pause or
        # scheduling gap of a loaded CI runner outside every phase broke the 10% alone)
        gap = abs(sum(s["seconds"].values()) - s["search_seconds"])
        assert gap <= max(0.1 * s["search_seconds"], 0.025), (role, s)
        assert abs(s["unaccounted_share"]) * s["search_seconds"] <= max(0.1 * s["search_seconds"], 0.025)
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


@pytest.mark.slow          # a local Ray instance and its actors' start (~30 s); the sync bench checks the figures
def test_ray_bench_gives_every_figure():
    with no_fork_after_jax():              # the local Ray instance starts in a process of its own
        r = bench_selfplay(load_config("tiny_kuhn"), seconds=2.0, log=quiet, tick_seconds=0.25, num_cpus=2)
    check_figures(r, 2.0)
    inf = r["inference"]
    assert r["mode"] == "ray" and 0 < inf["idle_share"] < 1 and inf["busy_share"] + inf["idle_share"] <= 1
    assert not inf["server_restarted"] and len(inf["servers"]) == 1
    assert inf["servers"][0]["batches"] == inf["batches"]


def test_inference_figures_of_two_servers():
    """The window's inference figures from `RayRun.inference_totals()` of two servers: batches and
    sizes summed, busy / idle shares the servers' means, each server's own, a restart seen."""
    from launch.ray_run import sum_servers

    def server(batches, sizes, busy, idle, seconds, restarts=0):
        return {"version": 3, "batches": batches, "requests": batches, "queries": sum(k * v for k, v in sizes.items()),
                "batch_sizes": sizes, "busy_seconds": busy, "idle_seconds": idle, "weight_updates": 3,
                "seconds": seconds, "pid": 1, "restarts": restarts}

    first = sum_servers([server(10, {2: 10}, 1.0, 1.0, 10.0), server(5, {4: 5}, 2.0, 1.0, 10.0)])
    last = sum_servers([server(30, {2: 20, 8: 10}, 6.0, 2.0, 20.0),
                        server(15, {4: 15}, 3.0, 5.0, 20.0, restarts=1)])
    inf = inference_shares(first, last, 10.0)
    assert inf["batches"] == 30 and inf["queries"] == 20 + 80 + 40 and inf["mean_batch"] == 140 / 30
    assert inf["p50_batch"] == 4 and inf["max_batch"] == 8
    a, b = inf["servers"]
    assert (a["batches"], a["queries"], b["batches"], b["queries"]) == (20, 100, 10, 40)
    assert a["busy_share"] == pytest.approx(0.5) and b["busy_share"] == pytest.approx(0.1)
    assert a["idle_share"] == pytest.approx(0.1) and b["idle_share"] == pytest.approx(0.4)
    assert inf["busy_share"] == pytest.approx(0.3) and inf["idle_share"] == pytest.approx(0.25)
    assert not a["restarted"] and b["restarted"] and inf["server_restarted"]
    lines = []
    log_report({"game": "kuhn_poker", "mode": "ray", "seconds": 10.0, "warmup_seconds": 1.0, "searches_per_s": 1.0,
             "moves_per_s": 1.0, "selfplay_examples_per_s": 1.0, "solver_examples_per_s": 1.0,
             "learner_steps_per_s": 1.0, "learner_wait_share": 0.5, "inference": inf, "search_split": {}},
            lambda text: lines.append(text))
    assert "2 servers" in lines[1] and "busy 30%" in lines[1] and "20 of 5.0, busy 50%" in lines[1]


def test_user_errors(tmp_path, capsys):
    assert cli_main(["bench", "selfplay", "--seconds", "3"]) == 2
    assert "needs --config" in capsys.readouterr().err
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "config.yaml").write_text("game: kuhn_poker\n")
    assert cli_main(["bench", "selfplay", "--config", "tiny_kuhn", "--out", str(tmp_path / "taken")]) == 2
    assert "not empty" in capsys.readouterr().err
    assert cli_main(["bench", "selfplay", "--config", "tiny_kuhn", "--set", "run.nope=1"]) == 2
