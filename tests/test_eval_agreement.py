"""Commands and the library that measure the same thing give the same figure: `sog.equilibrium_policy`
and `sog solve` run one update rule by default and name it; `sog exploitability --value RUN` and
`sog eval --run RUN` search with the run's settings (its config.yaml) and say which they used."""
import json

import pytest

from launch.cli import main as cli_main
from sog.games import load_game
from sog.search.full_tree import equilibrium_policy, exploitability


def test_equilibrium_policy_is_sog_solves_policy(capsys):
    """One default (alternating updates) for the library's equilibrium and `sog solve`, named in
    the command's JSON and its stderr line; simultaneous updates are asked for by name."""
    kuhn = load_game("kuhn_poker")
    assert cli_main(["solve", "--game", "kuhn_poker", "--iterations", "200"]) == 0
    captured = capsys.readouterr()
    solved = json.loads(captured.out)
    assert solved["alternating"] is True and "alternating updates" in captured.err
    assert 1000 * exploitability(kuhn, equilibrium_policy(kuhn, 200)) == pytest.approx(solved["exploitability_mbb"])
    assert cli_main(["solve", "--game", "kuhn_poker", "--iterations", "200", "--simultaneous"]) == 0
    captured = capsys.readouterr()
    simultaneous = json.loads(captured.out)
    assert simultaneous["alternating"] is False and "simultaneous updates" in captured.err
    assert 1000 * exploitability(kuhn, equilibrium_policy(kuhn, 200, alternating=False)) == pytest.approx(
        simultaneous["exploitability_mbb"])
    assert simultaneous["exploitability_mbb"] != pytest.approx(solved["exploitability_mbb"])


@pytest.fixture(scope="module")
def alternating_run(tmp_path_factory):
    """A 10-step tiny Kuhn sync run whose config searches with alternating updates (as Leduc's does)."""
    from launch.train import train
    from sog.config import apply_overrides, load_config
    run_dir = tmp_path_factory.mktemp("agree") / "run"
    cfg = apply_overrides(load_config("tiny_kuhn"), ["run.max_steps=10", "search.alternating=true",
                                                       "search.gadget_alpha=0.25"])
    train(cfg, run_dir, sync=True, log=lambda *a, **k: None, tick_seconds=0.0)
    return run_dir


def test_sog_exploitability_of_a_run_is_sog_evals_figure(alternating_run, tmp_path, monkeypatch, capsys):
    """`sog exploitability --value RUN` searches with the run's settings (alternating updates, its
    gadget alpha) as `sog eval` does: the same figure on one checkpoint; each names the settings it
    used (JSON and a stderr line); `--simultaneous` overrides the run's rule and says so."""
    monkeypatch.setenv("SOG_CACHE_DIR", str(tmp_path / "cache"))
    assert cli_main(["eval", "--run", str(alternating_run), "--step", "10", "--search", "4,1", "--seeds", "2",
                     "--no-policy"]) == 0
    captured = capsys.readouterr()
    evaluated = json.loads(captured.out)
    (row,) = evaluated["evaluated"]
    assert evaluated["search_settings"]["4,1"]["alternating"] is True, evaluated["evaluated"]
    assert evaluated["search_settings"]["4,1"]["gadget_alpha"] == 0.25
    assert "config.yaml" in evaluated["search_settings_from"]
    assert "SoG(4,1) search settings (the run's" in captured.err and "alternating updates" in captured.err

    argv = ["exploitability", "--game", "kuhn_poker", "--agent", "sog", "--search", "4,1", "--seeds", "2"]
    for value in (alternating_run, alternating_run / "10"):
        assert cli_main([*argv, "--value", str(value)]) == 0
        captured = capsys.readouterr()
        out = json.loads(captured.out)
        # float32 network rows in other padded batch sizes (`evaluate.BUCKETS`): equal to rounding
        assert out["mean_mbb"] == pytest.approx(row["mean_mbb"], rel=1e-6)
        assert out["min_mbb"] == pytest.approx(row["min_mbb"], rel=1e-6)
        assert out["search_settings"] == evaluated["search_settings"]["4,1"]
        assert out["search_settings_from"] == evaluated["search_settings_from"]
        assert "alternating updates" in captured.err
    assert cli_main([*argv, "--value", str(alternating_run), "--simultaneous"]) == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert out["search_settings"]["alternating"] is False and out["search_settings_from"].endswith("--simultaneous")
    assert "simultaneous updates" in captured.err and out["mean_mbb"] != pytest.approx(row["mean_mbb"])
