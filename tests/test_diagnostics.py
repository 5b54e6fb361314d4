"""Diagnostics against exact values (`learners.diagnostics`, `sog diagnose`) and the exact-oracle
reference line of the evaluation (`learners.oracle_reference`), on Kuhn: exact targets have zero
error, ages count weight versions, a tiny sync run logs every field, caches the reference (a resume
does not recompute it) and `sog diagnose` reads the run; the reference equals `sog exploitability
--agent sog --value oracle` for the same settings."""
import json

import numpy as np
import pytest

from actors.examples import Produced
from launch.cli import main as cli_main
from launch.train import train
from learners import oracle_reference
from learners.diagnostics import (
    FIELDS,
    QueryRecorder,
    diagnose,
    exact_network_values,
    policy_kl,
    worst_states,
)
from learners.metrics import EvaluationAbandoned, Metrics, read_scalars
from networks.cvpn import init_params
from networks.encoding import to_game_units
from networks.value_function import NetworkValueFunction
from sog.config import NetworkConfig, apply_overrides, load_config, parse_eval_search, shipped_configs
from sog.games import load_game
from sog.search.full_tree import full_tree
from sog.search.settings import SearchSettings


@pytest.fixture(scope="module")
def kuhn():
    return load_game("kuhn_poker")


def exact_examples(game, rng):
    """Produced examples at every decision public state of `game`, random ranges, whose value
    targets are the exact values and whose policy targets are uniform."""
    pubs = list(full_tree(game).decision_pubs)
    possible = np.stack([game.possible_mask(p) for p in pubs])
    ranges = np.where(possible, rng.uniform(0.1, 1.0, possible.shape), 0.0)
    ranges /= ranges.sum(-1, keepdims=True)
    exact, _, _ = exact_network_values(game, pubs, ranges, possible)
    values = to_game_units(exact, ranges, possible, game.spec.max_utility)
    policies = np.full((len(pubs), 2, game.spec.num_states, game.spec.num_actions), 1 / game.spec.num_actions)
    masks = [np.ones((2, game.spec.num_states), bool)] * len(pubs)
    return Produced.build(game, rng, pubs, list(ranges), list(values), list(policies), masks, [], {})


def test_exact_targets_have_zero_error_and_ages_count_versions(kuhn):
    produced = exact_examples(kuhn, np.random.default_rng(0))
    produced.stamp(3)
    vf = NetworkValueFunction(kuhn, NetworkConfig(hidden=8, layers=1), init_params(kuhn, NetworkConfig(hidden=8, layers=1), 0))
    out = diagnose(kuhn, vf, 5, produced.examples, produced.examples)
    assert set(out) == set(FIELDS) and out["net_error_eval"] is None and out["eval_queries"] == 0
    n = len(produced.ids)
    assert out["samples"] == out["fresh"] == out["value_examples"] == out["policy_examples"] == n
    assert out["target_error"] < 1e-5 and out["exact_gap"] < 1e-4
    assert out["net_error_replay"] == pytest.approx(out["net_error_fresh"]) and out["net_error_replay"] > 0.01
    # every example has a value target on every trained slot: the like-for-like error is the same
    assert out["net_error_targets"] == pytest.approx(out["net_error_replay"])
    assert out["replay_age_mean"] == 2 and out["replay_age_max"] == 2
    assert out["policy_kl"] > 0
    # a target that is off by d network units on every entry has error d
    shifted = dict(produced.examples, value_target=produced.examples["value_target"] + 0.25)
    assert diagnose(kuhn, vf, 3, shifted, None)["target_error"] == pytest.approx(0.25, abs=1e-5)
    # net_error_targets averages only the entries with a value target
    half = dict(produced.examples, value_mask=produced.examples["value_mask"].copy())
    half["value_mask"][::2] = False
    got = diagnose(kuhn, vf, 3, half, None)
    kept = {k: v[1::2] for k, v in produced.examples.items()}
    assert got["net_error_targets"] == pytest.approx(diagnose(kuhn, vf, 3, kept, None)["net_error_replay"], abs=1e-3)


def test_off_support_errors_are_the_errors_at_unreached_slots(kuhn):
    """net_error_eval_off_support averages the network's error over the slots a belief's owner does
    not reach (own range 0) and nowhere else; eval_off_support_share counts them."""
    from networks.encoding import encode

    config = NetworkConfig(hidden=8, layers=1)
    vf = NetworkValueFunction(kuhn, config, init_params(kuhn, config, 0))
    pubs = list(full_tree(kuhn).decision_pubs)
    ranges = np.random.default_rng(0).random((len(pubs), 2, kuhn.spec.num_states))
    ranges[:, 0, 0] = 0.0                           # player 0 never holds slot 0
    out = diagnose(kuhn, vf, 0, None, None, (pubs, ranges))
    inputs, possible = encode(kuhn, pubs, ranges)
    values, _ = vf.apply_padded(inputs, possible)
    exact, mask, _ = exact_network_values(kuhn, pubs, ranges, possible)
    off = np.zeros_like(mask)
    off[:, 0, 0] = True
    off &= mask
    assert off.any() and (mask & ~off).any()
    assert out["net_error_eval_off_support"] == pytest.approx(np.abs(values - exact)[off].mean(), rel=1e-6)
    assert out["eval_off_support_share"] == pytest.approx(off.sum() / mask.sum())
    assert out["net_error_replay_off_support"] is None       # no replay examples given


def test_eval_queries_error_is_the_replay_error_of_the_same_beliefs(kuhn):
    """The evaluation's queries, recorded through `QueryRecorder`, are diagnosed like replay
    examples: the same beliefs give the same network error; `by_state` ranks the states."""
    produced = exact_examples(kuhn, np.random.default_rng(3))
    config = NetworkConfig(hidden=8, layers=1)
    vf = NetworkValueFunction(kuhn, config, init_params(kuhn, config, 0))
    pubs = list(full_tree(kuhn).decision_pubs)
    n = kuhn.spec.num_states
    ranges = produced.examples["inputs"][:, :2 * n].reshape(-1, 2, n).astype(np.float64)
    recorder = QueryRecorder(vf)
    values, _ = recorder.evaluate(pubs, ranges)
    np.testing.assert_array_equal(values, vf.evaluate(pubs, ranges)[0])
    got_pubs, got_ranges = recorder.sample(100, np.random.default_rng(0))   # all of them, in order
    assert got_pubs == pubs and np.array_equal(got_ranges, ranges)
    out = diagnose(kuhn, vf, 0, produced.examples, None, (got_pubs, got_ranges), by_state=True)
    assert out["eval_queries"] == len(pubs)
    assert out["net_error_eval"] == pytest.approx(out["net_error_replay"], rel=1e-5)
    for rows in out["by_state"].values():
        assert 0 < len(rows) <= 5 and sum(r["share"] for r in rows) <= 1 + 1e-9
        assert [r["share"] for r in rows] == sorted((r["share"] for r in rows), reverse=True)
    assert out["by_state"]["eval"] == out["by_state"]["replay"]
    sub_pubs, sub_ranges = recorder.sample(3, np.random.default_rng(0))
    assert len(sub_pubs) == 3 and sub_ranges.shape == (3, 2, n)


def test_diagnostics_give_up_when_interrupted(kuhn):
    """The training run's evaluation deadline: `interrupt` runs after every chunk of the exact
    solves' iterations, and what it raises ends the call."""
    produced = exact_examples(kuhn, np.random.default_rng(0))
    vf = NetworkValueFunction(kuhn, NetworkConfig(hidden=8, layers=1), init_params(kuhn, NetworkConfig(hidden=8, layers=1), 0))
    calls = []

    def interrupt():
        calls.append(1)
        raise EvaluationAbandoned("past the deadline")
    with pytest.raises(EvaluationAbandoned):
        diagnose(kuhn, vf, 0, produced.examples, None, interrupt=interrupt)
    assert calls == [1]


def test_worst_states_groups_errors_by_public_state():
    error = np.zeros((3, 2, 2))
    error[0, 0, 0], error[1, 1, 1], error[2, 0, 1] = 1.0, 3.0, 4.0
    mask = np.ones((3, 2, 2), bool)
    mask[2, 0, 1] = False                      # not counted
    rows = worst_states(["a", "b", "a"], error, mask)
    assert rows == [{"state": "'b'", "beliefs": 1, "net_error": 3.0 / 4, "share": 0.75},
                    {"state": "'a'", "beliefs": 2, "net_error": 1.0 / 7, "share": 0.25}]


def test_policy_kl_is_zero_for_the_network_policy_itself(kuhn):
    produced = exact_examples(kuhn, np.random.default_rng(1))
    ex = produced.examples
    logits = np.random.default_rng(2).normal(size=ex["policy_target"].shape)
    z = np.where(ex["legal"], np.exp(logits), 0.0)
    own = dict(ex, policy_target=(z / np.maximum(z.sum(-1, keepdims=True), 1e-300)).astype(np.float32))
    kl = policy_kl(logits, own)
    assert np.nanmax(np.abs(kl)) < 1e-6 and np.isfinite(kl).sum() > 0
    assert np.nanmin(policy_kl(logits, ex)) > 0


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """A tiny Kuhn sync run of 20 steps evaluated (and diagnosed) at steps 0, 10 and 20."""
    run_dir = tmp_path_factory.mktemp("diag") / "run"
    cfg = apply_overrides(load_config("tiny_kuhn"), ["run.minutes=2", "run.max_steps=20", "run.eval_every=10",
                                                       "run.diagnose_samples=64"])
    out = train(cfg, run_dir, sync=True, log=lambda *a, **k: None, tick_seconds=0.0)
    return run_dir, cfg, out


def test_training_logs_the_diagnostics_the_age_and_the_reference(tiny_run):
    run_dir, _, out = tiny_run
    lines = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    diag = [d for d in lines if "diag/net_error_replay" in d]
    assert [d["step"] for d in diag] == [10, 20]          # step 0 has an empty replay: nothing to diagnose
    for d in diag:
        assert 0 <= d["diag/target_error"] < 2 and 0 <= d["diag/net_error_replay"] < 2
        assert 0 <= d["diag/net_error_fresh"] < 2 and d["diag/policy_kl"] >= 0
        assert 0 <= d["diag/net_error_eval"] < 2 and 0 < d["diag/eval_queries"] <= 64   # SoG(4,1): 14 queries
        assert d["diag/replay_age_max"] >= d["diag/replay_age_mean"] >= 0 and d["diag/samples"] == 64
    scalars = read_scalars(run_dir / "tb")
    assert all(v >= 0 for _, v in scalars["replay/age_mean"]) and "replay/age_max" in scalars
    # the reference, computed in the background: logged when it arrived and with each evaluation after
    oracle = [v for _, v in scalars["eval/S4_C1/oracle_mbb"]]
    assert 1 <= len(oracle) <= 4 and len(set(oracle)) == 1 and oracle[0] > 0
    known = [r["oracle_mbb"] for r in out["last_eval"] if r["oracle_mbb"] is not None]
    assert known == [pytest.approx(oracle[0])] * len(known)                                # tb: float32
    assert out["references_unfinished"] == [] and out["evals_unfinished"] == []
    cache = oracle_reference.load(run_dir)
    assert [row["mean_mbb"] for row in cache.values()] == [pytest.approx(oracle[0])]
    assert (run_dir / "eval.png").stat().st_size > 0


def test_eval_png_names_the_seeds_of_the_curve_and_of_its_reference(tmp_path, monkeypatch):
    """The curve and its dashed exact-oracle line (computed over the same seeds) each say how many
    seeds they are over: a reference over 2 seeds and one over 8 differ by more than the gap."""
    import matplotlib.axes

    from launch.evaluate import plot
    labels = []

    def recording(method):
        def record(self, *args, **kwargs):
            labels.append(kwargs.get("label"))
            return method(self, *args, **kwargs)
        return record
    for name in ("plot", "axhline"):
        monkeypatch.setattr(matplotlib.axes.Axes, name, recording(getattr(matplotlib.axes.Axes, name)))
    rows = [{"step": s, "search": "4,1", "seeds": 2, "min_mbb": 90, "mean_mbb": 100, "max_mbb": 110} for s in (0, 10)]
    plot(rows, tmp_path / "labels.png", "labels", {("4,1", 2): 80.2})
    assert labels == ["SoG(4,1), 2 seeds", "SoG(4,1) with the exact oracle, 2 seeds: 80.2"]


def test_evaluation_rows_name_the_reference_of_the_runs_oracle_tolerance():
    """Each evaluated row is logged with the reference the run computes (`Background`: the key with
    `run.oracle_tolerance`); a key without it named the 50-iteration reference, which a run with a
    tolerance never computes, so its rows said "still being computed" to the end."""
    from learners.metrics import Evaluator
    cfg = apply_overrides(load_config("tiny_kuhn"), ["run.oracle_tolerance=0.01", "run.diagnose_samples=0"])
    ev = Evaluator(cfg)
    rows = ev.exploitability(ev.vf.params)
    game = load_game(cfg.game)
    searches = parse_eval_search(cfg.run.eval_search, cfg.search)
    seeds = cfg.run.eval_seeds
    assert [r["oracle_key"] for r in rows] == [oracle_reference.key(game, s, seeds, 0.01) for s in searches]
    assert rows[0]["oracle_key"] != oracle_reference.key(game, searches[0], seeds)


def test_resume_reuses_the_cached_reference(tiny_run, tmp_path, monkeypatch):
    import shutil
    run_dir, cfg, _ = tiny_run
    resumed = tmp_path / "run"
    shutil.copytree(run_dir, resumed)

    def refuse(*args):
        raise AssertionError("a process was started to compute the reference again")
    monkeypatch.setattr(oracle_reference.multiprocessing, "get_context", refuse)
    out = train(apply_overrides(cfg, ["run.max_steps=30"]), resumed, sync=True, log=lambda *a, **k: None)
    assert out["evals_this_run"] == 1 and [r["step"] for r in out["last_eval"]] == [30]
    assert out["last_eval"][0]["oracle_mbb"] is not None


def test_a_reference_is_computed_once_per_machine_and_version_of_the_code(tiny_run, tmp_path, monkeypatch):
    """`save` adds a run's references to the machine's shared file; another run of the game reads
    them from it (a new run of the config starts no process for them), another game does not,
    nor does another version of the code, and a row that does not say its version (cached before
    rows did) is not shared; a damaged file is none; `SOG_CACHE_DIR=` shares none."""
    run_dir, cfg, _ = tiny_run
    game = load_game(cfg.game)
    monkeypatch.setenv("SOG_CACHE_DIR", str(tmp_path / "cache"))
    rows = oracle_reference.load(run_dir)
    assert len(rows) == 1 and oracle_reference.load(run_dir, game) == rows      # nothing shared yet
    oracle_reference.save(run_dir, rows)
    assert oracle_reference.shared_path() == tmp_path / "cache" / oracle_reference.SHARED_FILE
    other = tmp_path / "other"
    other.mkdir()
    assert oracle_reference.load(other) == {} and oracle_reference.load(other, game) == rows
    assert oracle_reference.load(other, load_game("leduc_poker")) == {}

    def refuse(*args):
        raise AssertionError("a process was started to compute a shared reference again")
    with monkeypatch.context() as m:
        m.setattr(oracle_reference.multiprocessing, "get_context", refuse)
        out = train(apply_overrides(cfg, ["run.max_steps=10"]), tmp_path / "run", sync=True, log=lambda *a, **k: None)
    (row,) = rows.values()
    assert out["evals_this_run"] == 2 and [r["oracle_mbb"] for r in out["last_eval"]] == [row["mean_mbb"]]
    oracle = read_scalars(tmp_path / "run" / "tb")["eval/S4_C1/oracle_mbb"]
    assert [s for s, _ in oracle] == [0, 10] and all(v == pytest.approx(row["mean_mbb"]) for _, v in oracle)
    assert oracle_reference.load(tmp_path / "run") == rows

    with monkeypatch.context() as m:
        m.setattr(oracle_reference, "code_digest", lambda: "another version")
        assert oracle_reference.load(other, game) == {}
    older = tmp_path / "older"
    older.mkdir()
    unversioned = {k.replace('"seeds": 1', '"seeds": 3'): {**row, "code": None} for k, row in rows.items()}
    assert unversioned.keys().isdisjoint(rows)
    oracle_reference.save(older, unversioned)
    assert oracle_reference.load(other, game) == rows and oracle_reference.load(older, game) == {**rows, **unversioned}
    oracle_reference.shared_path().write_text("{not json")
    assert oracle_reference.load(other, game) == {}
    oracle_reference.save(run_dir, rows)                                        # rewritten whole
    assert oracle_reference.load(other, game) == rows
    monkeypatch.setenv("SOG_CACHE_DIR", "")
    assert oracle_reference.shared_path() is None and oracle_reference.load(other, game) == {}
    monkeypatch.setenv("SOG_CACHE_DIR", str(tmp_path / "cache" / oracle_reference.SHARED_FILE))   # a file
    oracle_reference.save(run_dir, rows)                                        # passed over
    assert oracle_reference.load(run_dir) == rows


def test_reference_equals_sog_exploitability_with_the_oracle(tiny_run, capsys):
    run_dir, _, _ = tiny_run
    (row,) = oracle_reference.load(run_dir).values()
    assert cli_main(["exploitability", "--game", "kuhn_poker", "--agent", "sog", "--search", "4,1",
                     "--value", "oracle", "--seeds", "1"]) == 0
    assert json.loads(capsys.readouterr().out)["mean_mbb"] == pytest.approx(row["mean_mbb"], rel=1e-12)


def test_sog_diagnose_prints_json_and_refuses_bad_runs(tiny_run, tmp_path, capsys):
    run_dir, _, run = tiny_run
    assert cli_main(["diagnose", "--run", str(run_dir), "--samples", "32"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["checkpoint"] == 20 and out["version"] == 10 and set(FIELDS) <= set(out)
    assert out["samples"] == 32 and out["target_error"] >= 0 and out["replay_age_mean"] >= 0
    # the evaluation it plays is the run's own (eval_seeds 1, seed 0): the same figure
    (last,) = run["last_eval"]
    assert last["step"] == 20
    assert out["search"] == "4,1" and out["eval_mbb"] == pytest.approx(last["mean_mbb"], rel=1e-9)
    assert 0 < out["eval_queries"] <= 32 and out["net_error_eval"] >= 0 and set(out["by_state"]) == {"replay", "eval"}
    assert cli_main(["diagnose", "--run", str(run_dir), "--checkpoint", "10", "--samples", "8"]) == 0
    assert json.loads(capsys.readouterr().out)["version"] == 5
    for argv, message in ((["--run", str(tmp_path / "missing")], "no run directory"),
                          (["--run", str(tmp_path)], "no checkpoints"),
                          (["--run", str(run_dir), "--checkpoint", "7"], "no checkpoint 7"),
                          (["--run", str(run_dir), "--search", "4"], "--search '4'")):
        assert cli_main(["diagnose", *argv]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("sog diagnose: error: ") and message in err[0]


def test_sog_diagnose_swap_says_which_head_holds_the_gap(tiny_run, capsys):
    """`--swap`: the oracle alone gives the run's cached oracle reference; the split value
    function takes each head from the function named for it; the off-support one takes values
    at unreached slots (range 0) from the second, the rest and the logits from the first."""
    from sog.search.value_function import OffSupportValueFunction, SplitValueFunction
    run_dir, _, _ = tiny_run
    (row,) = oracle_reference.load(run_dir).values()
    assert cli_main(["diagnose", "--run", str(run_dir), "--samples", "8", "--swap"]) == 0
    swap = json.loads(capsys.readouterr().out)["swap"]
    assert set(swap) == {"net_values_oracle_policy", "oracle_values_net_policy",
                         "net_with_oracle_best_responses_off_support", "oracle"}
    assert swap["oracle"] == pytest.approx(row["mean_mbb"], rel=1e-9)

    class Const:
        def __init__(self, v):
            self.v = v

        def evaluate(self, pubs, ranges):
            return np.full((len(pubs), 2, 3), self.v), np.full((len(pubs), 2, 3, 2), -self.v)
    values, logits = SplitValueFunction(Const(1.0), Const(2.0)).evaluate([(), ()], np.ones((2, 2, 3)))
    assert (values == 1.0).all() and (logits == -2.0).all()
    ranges = np.ones((2, 2, 3))
    ranges[0, 1, 2] = 0.0
    values, logits = OffSupportValueFunction(Const(1.0), Const(2.0)).evaluate([(), ()], ranges)
    assert values[0, 1, 2] == 2.0 and (np.delete(values.reshape(-1), 5) == 1.0).all() and (logits == -1.0).all()


def test_reference_key_is_the_same_without_the_value_cache_setting():
    """References cached before `search.value_cache` existed still match under "auto"."""
    import dataclasses
    game = load_game("kuhn_poker")
    settings = SearchSettings(simulations=4)
    old = dict(dataclasses.asdict(settings))
    del old["value_cache"]
    old_key = json.dumps({"game": game.spec.name, "search": old, "seeds": 2,
                           "oracle_iterations": oracle_reference.ORACLE_ITERATIONS}, sort_keys=True)
    assert oracle_reference.key(game, settings, 2) == old_key
    assert oracle_reference.key(game, dataclasses.replace(settings, value_cache=True), 2) != old_key
    assert oracle_reference.key(game, settings, 2, tolerance=0.0) == old_key        # no tolerance: as before
    assert oracle_reference.key(game, settings, 2, tolerance=0.01) != old_key


def test_a_reference_with_an_oracle_tolerance_is_sog_exploitabilitys_with_it(capsys):
    """`run.oracle_tolerance` / `sog eval --oracle-tolerance`: the reference's oracle iterates each call
    until its gap is at most the tolerance, as `sog exploitability --oracle-tolerance` does."""
    game = load_game("kuhn_poker")
    settings = SearchSettings(simulations=4)
    cache: dict = {}
    row = oracle_reference.reference(game, settings, 1, cache, tolerance=0.001)
    assert list(cache) == [oracle_reference.key(game, settings, 1, 0.001)]
    assert cli_main(["exploitability", "--game", "kuhn_poker", "--agent", "sog", "--search", "4,1",
                     "--value", "oracle", "--seeds", "1", "--oracle-tolerance", "0.001"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["mean_mbb"] == pytest.approx(row["mean_mbb"], rel=1e-12) and out["oracle"]["mean_gap_mbb"] <= 1.0
    assert oracle_reference.reference(game, settings, 1, {})["mean_mbb"] != pytest.approx(row["mean_mbb"], rel=1e-6)


def test_sog_eval_refuses_a_negative_oracle_tolerance(tiny_run, capsys):
    run_dir, _, _ = tiny_run
    before = sorted(p.name for p in run_dir.iterdir())
    assert cli_main(["eval", "--run", str(run_dir), "--oracle-tolerance", "-1"]) == 2
    assert "--oracle-tolerance must be >= 0" in capsys.readouterr().err
    assert sorted(p.name for p in run_dir.iterdir()) == before


@pytest.mark.parametrize("name", [n for n in shipped_configs() if load_config(n).run.eval_every])
def test_every_shipped_evaluation_setting_logs_its_scalars(name, tmp_path):
    """Each evaluated setting of a shipped config (with off-support smoothing too: 'S,C,EPS') has its
    tensorboard tags: the run logs its rows and the reference line without failing."""
    cfg = load_config(name)
    labels = [s.label for s in parse_eval_search(cfg.run.eval_search, cfg.search)]
    metrics = Metrics(tmp_path)
    rows = [dict(search=label, seeds=2, min_mbb=1.0 + i, mean_mbb=2.0 + i, max_mbb=3.0 + i, seconds=0.1,
                 oracle={"mean_mbb": 0.5 + i}) for i, label in enumerate(labels)]
    metrics.eval_rows(7, 1, rows)
    metrics.close()
    scalars = read_scalars(tmp_path / "tb")
    tags = {scalar.rsplit("/", 1)[0] for scalar in scalars if scalar.startswith("eval/")}
    assert len(tags) == len(set(labels))
    for i, label in enumerate(labels):
        tag = next(t for t in tags if t == "eval/S" + label.replace(",", "_C", 1).replace(",", "_E"))
        assert scalars[f"{tag}/mean_mbb"] == [(7, pytest.approx(2.0 + i))]
        assert scalars[f"{tag}/oracle_mbb"] == [(7, pytest.approx(0.5 + i))]
