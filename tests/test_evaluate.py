"""`sog eval --run RUN_DIR`: exploitability of SoG(s, c) and of the raw network policy for a
run's checkpoints, appended to eval.csv, logged to tensorboard, drawn in eval.png; re-running
skips what is done; bad run directories and CSV files fail clearly without being touched."""
import csv
import json

import numpy as np
import pytest
from fresh_runs import fresh_run, run_eval

from learners.metrics import EVAL_FIELDS, read_scalars


@pytest.fixture(scope="module")
def kuhn_run(tmp_path_factory):
    """A tiny Kuhn run: fresh CVPNs saved at steps 0, 5 and 10."""
    return fresh_run(tmp_path_factory.mktemp("run"), "kuhn_poker")


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_eval_appends_logs_draws_and_skips_what_is_done(kuhn_run, tmp_path):
    import shutil
    run = tmp_path / "run"
    shutil.copytree(kuhn_run, run)
    out = run_eval("--run", run, "--every", 2, "--search", "2,1", "--seeds", 2)
    json.dumps(out)
    assert out["game"] == "kuhn_poker" and out["checkpoints"] == [0, 5, 10] and out["selected"] == [0, 10]
    table = rows(run / "eval.csv")
    assert list(table[0]) == EVAL_FIELDS
    assert [(r["step"], r["search"], r["seeds"]) for r in table] == [
        ("0", "2,1", "2"), ("0", "policy", "1"), ("10", "2,1", "2"), ("10", "policy", "1")]
    for r in table:
        assert 0 < float(r["min_mbb"]) <= float(r["mean_mbb"]) <= float(r["max_mbb"]) < 2000
    assert (run / "eval.png").stat().st_size > 0
    scalars = read_scalars(run / "tb")
    assert [s for s, _ in scalars["eval/SoG_2_1__mean_mbb"]] == [0, 10]     # tensorboardX's "SoG(2,1)"
    assert [s for s, _ in scalars["eval/policy_mbb"]] == [0, 10]

    again = run_eval("--run", run, "--every", 2, "--search", "2,1", "--seeds", 2)
    assert again["evaluated"] == [] and again["skipped"] == 4 and rows(run / "eval.csv") == table
    more = run_eval("--run", run, "--search", "2,1", "3,1", "--seeds", 2, "--no-policy")
    assert sorted((r["step"], r["search"]) for r in more["evaluated"]) == [
        (0, "3,1"), (5, "2,1"), (5, "3,1"), (10, "3,1")]
    assert rows(run / "eval.csv")[:4] == table
    only = run_eval("--run", run, "--step", 10, 5, "--search", "1,1", "--seeds", 1, "--no-policy")
    assert only["selected"] == [5, 10] and [r["step"] for r in only["evaluated"]] == [5, 10]
    repeated = run_eval("--run", run, "--step", 10, "--search", "1,1", "--search", "4,1", "--seeds", 1, "--no-policy")
    assert sorted(r["search"] for r in repeated["evaluated"]) == ["4,1"]          # 1,1 at step 10 was there
    assert repeated["searches"] == ["1,1", "4,1"]                                # a repeated flag adds settings


def test_raw_policy_figure_is_the_exact_exploitability_of_the_network_policy(kuhn_run, tmp_path):
    import shutil

    from learners.checkpoint import load_value_function
    from sog.eval.aivat import network_policy
    from sog.games import load_game
    from sog.search.full_tree import exploitability

    run = tmp_path / "run"
    shutil.copytree(kuhn_run, run)
    out = run_eval("--run", run, "--search", "1,1", "--seeds", 1)
    kuhn = load_game("kuhn_poker")
    for step in (0, 5, 10):
        expected = 1000 * exploitability(kuhn, network_policy(kuhn, load_value_function(run / str(step), kuhn)))
        got = [r["mean_mbb"] for r in out["evaluated"] if r["step"] == step and r["search"] == "policy"]
        assert got == [pytest.approx(expected)]
    assert len({r["mean_mbb"] for r in out["evaluated"] if r["search"] == "policy"}) == 3   # different nets


def test_bad_runs_and_files_fail_clearly(kuhn_run, tmp_path):
    import shutil

    from launch.cli import UserError

    with pytest.raises(UserError, match="no run directory"):
        run_eval("--run", tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match="no checkpoints"):
        run_eval("--run", tmp_path / "empty")
    run = tmp_path / "run"
    shutil.copytree(kuhn_run, run)
    (run / "eval.csv").write_text("a,b\n1,2\n")
    with pytest.raises(UserError, match="not the evaluation columns"):
        run_eval("--run", run, "--search", "2,1")
    assert (run / "eval.csv").read_text() == "a,b\n1,2\n" and not (run / "eval.png").exists()
    (run / "eval.csv").unlink()
    with pytest.raises(UserError, match="bad search"):
        run_eval("--run", run, "--search", "2")
    with pytest.raises(UserError, match="--seeds"):
        run_eval("--run", run, "--seeds", 0)
    with pytest.raises(UserError, match=r"no checkpoint of step 7 in .* \(steps: 0, 5, 10\)"):
        run_eval("--run", run, "--step", 5, 7)
    assert not (run / "eval.csv").exists()


def test_network_policy_of_a_checkpoint_is_a_valid_policy(kuhn_run):
    from learners.checkpoint import load_value_function
    from sog.eval.aivat import network_policy
    from sog.games import load_game

    kuhn = load_game("kuhn_poker")
    policy = network_policy(kuhn, load_value_function(kuhn_run, kuhn))
    for probs in policy.table.values():
        assert np.allclose(probs.sum(axis=1), 1.0) and (probs > 0).all()
