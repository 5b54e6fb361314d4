"""`sog eval --run RUN_DIR --pool POOL.yaml`: every N-th checkpoint plays a gauntlet against a
fixed pool, one anchored Elo fit over all of it, elo.csv and elo.png; re-running plays nothing
again; bad pools fail clearly."""
import csv
import json

import pytest
import yaml
from fresh_runs import fresh_run, run_eval

from launch.console import UserError

POOL = {"game": "tic_tac_toe", "agents": {"rnd": "random", "other": "random"}, "mode": "gauntlet",
        "opponents": ["rnd"], "games_per_pair": 4, "seed": 0, "anchor": "rnd", "anchor_rating": 1000,
        "random_opening_moves": 1, "workers": 1}


@pytest.fixture(scope="module")
def ttt_run(tmp_path_factory):
    """A tiny tic-tac-toe run: fresh CVPNs saved at steps 0, 5 and 10."""
    return fresh_run(tmp_path_factory.mktemp("run"), "tic_tac_toe")


def write_pool(tmp_path, pool):
    path = tmp_path / "pool.yaml"
    path.write_text(yaml.safe_dump(pool))
    return path


def test_elo_over_checkpoints_against_a_pool(ttt_run, tmp_path):
    pool = write_pool(tmp_path, POOL)
    out = run_eval("--run", ttt_run, "--pool", pool, "--every", 2, "--search", "2,1")
    assert out["selected"] == [0, 10] and out["pool"] == ["rnd"] and out["anchor"] == "rnd"
    with open(ttt_run / "elo.csv", newline="") as f:
        rows = {r["agent"]: r for r in csv.DictReader(f)}
    assert set(rows) == {"rnd", "step0", "step10"}
    assert float(rows["rnd"]["rating"]) == 1000 and float(rows["rnd"]["stderr"]) == 0
    assert rows["step10"]["step"] == "10" and float(rows["step10"]["games"]) == 4
    lo, r, hi = (float(rows["step0"][k]) for k in ("ci_low", "rating", "ci_high"))
    assert lo < r < hi
    assert (ttt_run / "elo.png").stat().st_size > 0
    spec = json.loads((ttt_run / "elo" / "step10" / "tournament.json").read_text())["agents"]["step10"]
    assert spec == f"sog:{ttt_run / '10'}?s=2&c=1&t=1"                 # T_prior: the run's (no config: 1)
    games = (ttt_run / "elo" / "step10" / "games.jsonl").read_text()
    assert len(games.splitlines()) == 4
    again = run_eval("--run", ttt_run, "--pool", pool, "--every", 2, "--search", "2,1")
    assert (ttt_run / "elo" / "step10" / "games.jsonl").read_text() == games      # nothing played again
    assert again["elo"] == out["elo"]


@pytest.mark.parametrize("change,words", [
    ({"anchor": "other"}, ["anchor", "pool"]),
    ({"game": "go"}, ["pool for go", "tic_tac_toe"]),
    ({"agents": {"step0": "random", "rnd": "random"}, "opponents": ["step0"], "anchor": "step0"},
     ["rename", "step0"]),
])
def test_bad_pools_fail_clearly(ttt_run, tmp_path, change, words):
    with pytest.raises(UserError) as info:
        run_eval("--run", ttt_run, "--pool", write_pool(tmp_path, {**POOL, **change}), "--search", "2,1")
    assert all(w in str(info.value) for w in words), str(info.value)


def test_a_missing_or_broken_pool_file_fails_clearly(ttt_run, tmp_path):
    with pytest.raises(UserError, match="pool: no tournament config at"):
        run_eval("--run", ttt_run, "--pool", tmp_path / "missing.yaml")
    (tmp_path / "bad.yaml").write_text("game: [unclosed\n")
    with pytest.raises(UserError, match="pool: .*not valid YAML"):
        run_eval("--run", ttt_run, "--pool", tmp_path / "bad.yaml")
