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


def test_a_stopped_reference_keeps_its_finished_seeds(tmp_path, monkeypatch):
    """Each seed of an exact-oracle reference is saved as it finishes (RUN_DIR/oracle_seeds.json);
    a computation stopped in its third seed (Ctrl-C, or SIGTERM, which `sog` turns into it) leaves
    two, and the next one searches the third alone and gives the uninterrupted figure."""
    from learners import oracle_reference
    from sog.search.settings import SearchSettings
    kuhn, settings = load_game("kuhn_poker"), SearchSettings(simulations=4)
    whole = oracle_reference.oracle_exploitability(kuhn, settings, 3)
    searched = []
    real = oracle_reference.search_policy

    def stop_in_seed_2(game, resolver, seed, progress):
        searched.append(seed)
        if seed == 2 and len(searched) == 3:
            raise KeyboardInterrupt
        return real(game, resolver, seed, progress)
    monkeypatch.setattr(oracle_reference, "search_policy", stop_in_seed_2)
    with pytest.raises(KeyboardInterrupt):
        oracle_reference.reference(kuhn, settings, 3, {}, run_dir=tmp_path)
    saved = json.loads((tmp_path / oracle_reference.SEEDS_FILE).read_text())
    assert sorted(json.loads(k)["seed"] for k in saved) == [0, 1]
    row = oracle_reference.reference(kuhn, settings, 3, {}, run_dir=tmp_path)
    assert searched == [0, 1, 2, 2]
    assert row["mean_mbb"] == pytest.approx(whole["mean_mbb"], rel=1e-12)
    assert row["max_mbb"] == pytest.approx(whole["max_mbb"], rel=1e-12)


def test_sog_eval_shows_the_references_progress_and_estimate(tmp_path, monkeypatch, capsys):
    from fresh_runs import fresh_run, run_eval

    from launch import console
    monkeypatch.setenv("SOG_CACHE_DIR", "")
    monkeypatch.setattr(console, "PROGRESS_SECONDS", 0.0)           # every progress line, not one a while
    run = fresh_run(tmp_path / "run", "kuhn_poker", steps=(0,))
    run_eval("--run", run, "--search", "2,1", "--seeds", 2, "--no-policy")
    err = capsys.readouterr().err
    assert "SoG(2,1) with the exact oracle: seed 2/2, search " in err and ", ETA " in err
    assert (run / "oracle_seeds.json").is_file()
