"""Learner core: schedule and optimizers, batches from game-unit targets, learning exact Kuhn
values, and orbax checkpoints (round trip, keep-last-N, wrong game, corruption, kill mid-save)."""
import asyncio
import dataclasses
import gc
import json
import os
import shutil
import subprocess
import sys
import textwrap
from unittest import mock

import jax
import numpy as np
import pytest
from orbax.checkpoint._src.path import atomicity

from learners.checkpoint import (
    CheckpointError,
    CheckpointStore,
    latest_step,
    load_value_function,
    read_metadata,
    restore_params,
    restore_train_state,
)
from learners.train_state import (
    init_train_state,
    learning_rate_schedule,
    make_optimizer,
    make_train_step,
    served_params,
)
from networks.batch import make_batch
from networks.cvpn import make_model
from networks.mlp import build_mlp
from networks.registry import BUILDERS
from networks.value_function import NetworkValueFunction
from sog.config import LearnerConfig, NetworkConfig
from sog.games import load_game
from sog.games.api import DECISION
from sog.search.oracle import ExactValueFunction
from sog.search.tree import PublicTree

NET = NetworkConfig(hidden=64, layers=2)
LEARN = LearnerConfig(learning_rate=3e-3, lr_decay_steps=10_000, policy_weight=0.1, keep_checkpoints=2)


@pytest.fixture(scope="module")
def state(kuhn):
    return init_train_state(kuhn, NET, LEARN, seed=0)


@pytest.fixture(scope="module")
def train_step(kuhn):
    return make_train_step(make_model(kuhn.spec, NET), LEARN)


def test_learning_rate_schedule_and_optimizers():
    cfg = LearnerConfig(learning_rate=0.1, lr_decay_rate=0.5, lr_decay_steps=100)
    schedule = learning_rate_schedule(cfg)
    for t, expected in ((0, 0.1), (50, 0.1 * 0.5 ** 0.5), (100, 0.05), (250, 0.1 * 0.5 ** 2.5)):
        assert float(schedule(t)) == pytest.approx(expected, rel=1e-6)
    make_optimizer(LearnerConfig(optimizer="sgd"))
    with pytest.raises(ValueError, match="optimizer"):
        make_optimizer(LearnerConfig(optimizer="rmsprop"))


def kuhn_examples(game, per_state=12, seed=0):
    """Exact (oracle) values and root policies at Kuhn's 4 decision public states, random ranges."""
    tree = PublicTree.full(game)
    pubs = [p for p in tree.pubs if game.kind(p) == DECISION for _ in range(per_state)]
    ranges = np.random.default_rng(seed).random((len(pubs), 2, 3)) ** 2 + 0.02
    values, solver = ExactValueFunction(game, iterations=300).solve(pubs, ranges)
    avg, dec = solver.average_policy(), solver.levels.dec
    policies = np.zeros((len(pubs), 2, 3, 2))
    for b, pos in enumerate(solver.ct.roots):
        policies[b, game.actor(pubs[b])] = avg[np.searchsorted(dec, pos)]
    return pubs, ranges, values, policies


def test_make_batch_inverts_the_adapter(kuhn, state):
    """Values the adapter produced, stored in game units, become exactly the network's outputs."""
    pubs, ranges, _, _ = kuhn_examples(kuhn, per_state=2)
    ranges[0, 1] = 0.0
    cfv = NetworkValueFunction(kuhn, NET, state.params).evaluate(pubs, ranges)[0]
    batch = make_batch(kuhn, pubs, ranges, values=cfv)
    v, _ = make_model(kuhn.spec, NET).apply(state.params, batch["inputs"], batch["possible"])
    mask = batch["value_mask"]
    np.testing.assert_allclose(batch["value_target"][mask], np.asarray(v)[mask], rtol=1e-5, atol=1e-7)
    assert not mask[0, 0].any() and mask[1:].all()
    legal = batch["legal"]
    assert legal[0, 0].all() and not legal[0, 1].any()   # root: player 0 acts
    assert not batch["policy_mask"].any()


def test_train_step_fits_exact_kuhn_values(kuhn, state, train_step):
    pubs, ranges, values, policies = kuhn_examples(kuhn)
    batch = make_batch(kuhn, pubs, ranges, values=values, policies=policies)
    s, first = train_step(state, batch)
    for _ in range(400):
        s, metrics = train_step(s, batch)
    assert int(s.step) == 401
    assert float(metrics["loss"]) < float(first["loss"]) / 20
    assert float(metrics["value_loss"]) < float(first["value_loss"]) / 50
    assert float(metrics["policy_loss"]) < float(first["policy_loss"])
    assert float(metrics["learning_rate"]) == pytest.approx(3e-3 * 0.5 ** (400 / 10_000), rel=1e-5)
    # through the adapter, in game units: the untrained network is far off, the trained one close
    scale = np.abs(values).mean()
    before = NetworkValueFunction(kuhn, NET, state.params).evaluate(pubs, ranges)[0]
    after = NetworkValueFunction(kuhn, NET, s.params).evaluate(pubs, ranges)[0]
    assert np.abs(before - values).mean() > 0.3 * scale
    assert np.abs(after - values).mean() < 0.05 * scale


def trees_equal(a, b):
    return all(np.array_equal(x, y) for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b))) and (
        jax.tree.structure(a) == jax.tree.structure(b))


def test_checkpoint_round_trip_and_value_function(kuhn, state, train_step, tmp_path):
    pubs, ranges, values, policies = kuhn_examples(kuhn)   # the batch shape the fit test compiled
    s = state
    for _ in range(2):
        s, _ = train_step(s, make_batch(kuhn, pubs, ranges, values=values, policies=policies))
    with CheckpointStore(tmp_path / "run", kuhn, NET, LEARN) as store:
        assert store.save(s, version=5, extra={"replay_inserted": 123})
        assert not store.save(s, version=6)          # same step: kept as it is
    assert latest_step(tmp_path / "run") == 2
    restored, meta = restore_train_state(tmp_path / "run", kuhn, NET, LEARN)
    assert int(restored.step) == 2 and meta["version"] == 5 and meta["extra"] == {"replay_inserted": 123}
    assert meta["game"] == "kuhn_poker" and meta["network"]["hidden"] == 64
    assert trees_equal(restored.params, s.params)
    assert trees_equal(restored.opt_state, s.opt_state)
    np.testing.assert_array_equal(restored.rng, s.rng)
    pubs, ranges = [(), (0,), (0, 1)], np.random.default_rng(0).random((3, 2, 3))
    expected = NetworkValueFunction(kuhn, NET, s.params).evaluate(pubs, ranges)[0]
    for path in (tmp_path / "run", tmp_path / "run" / "2"):
        vf = load_value_function(path, kuhn)
        assert vf.version == 5
        np.testing.assert_array_equal(vf.evaluate(pubs, ranges)[0], expected)
    assert latest_step(tmp_path / "nothing") is None


def test_keep_last_n_checkpoints(kuhn, state, tmp_path):
    with CheckpointStore(tmp_path, kuhn, NET, LEARN) as store:
        for step in (1, 2, 3, 4):
            store.save(state.replace(step=state.step + step), version=step)
    assert sorted(os.listdir(tmp_path)) == ["3", "4"]
    assert read_metadata(tmp_path / "3")["version"] == 3
    assert read_metadata(tmp_path)["version"] == 4
    periodic = dataclasses.replace(LEARN, keep_period=3)
    with CheckpointStore(tmp_path / "periodic", kuhn, NET, periodic) as store:
        for step in range(1, 9):
            store.save(state.replace(step=state.step + step), version=step)
    assert sorted(os.listdir(tmp_path / "periodic"), key=int) == ["3", "6", "7", "8"]


def test_restore_errors_name_the_problem(kuhn, state, tmp_path):
    leduc = load_game("leduc_poker")
    with CheckpointStore(tmp_path / "run", kuhn, NET, LEARN) as store:
        store.save(state.replace(step=state.step + 1), version=1)
    with pytest.raises(CheckpointError, match="checkpoint is for game kuhn_poker, not leduc_poker"):
        load_value_function(tmp_path / "run", leduc)
    with pytest.raises(CheckpointError, match="checkpoint is for game kuhn_poker, not leduc_poker"):
        restore_train_state(tmp_path / "run", leduc, NET, LEARN)
    with pytest.raises(CheckpointError, match="network"):
        restore_train_state(tmp_path / "run", kuhn, NetworkConfig(hidden=32, layers=2), LEARN)
    with pytest.raises(CheckpointError, match="optimizer sgd|optimizer adam"):
        restore_train_state(tmp_path / "run", kuhn, NET, LearnerConfig(optimizer="sgd"))
    with pytest.raises(CheckpointError, match="no checkpoint at"):
        load_value_function(tmp_path / "missing", kuhn)
    (tmp_path / "empty").mkdir()
    with pytest.raises(CheckpointError, match="no checkpoint in"):
        load_value_function(tmp_path / "empty", kuhn)
    with CheckpointStore(tmp_path / "run", kuhn, NET, LEARN) as store, pytest.raises(ValueError, match="JSON"):
        store.save(state.replace(step=state.step + 2), version=2, extra={"x": object()})


def test_params_only_loading_gives_the_values_of_a_full_restore(kuhn, state, train_step, tmp_path):
    pubs, ranges, values, policies = kuhn_examples(kuhn)
    s, _ = train_step(state, make_batch(kuhn, pubs, ranges, values=values, policies=policies))
    with CheckpointStore(tmp_path, kuhn, NET, LEARN) as store:
        store.save(s, version=3)
    params, network, meta = restore_params(tmp_path, kuhn)
    full, _ = restore_train_state(tmp_path, kuhn, NET, LEARN)
    assert network == NET and meta["version"] == 3 and trees_equal(params, full.params)
    np.testing.assert_array_equal(load_value_function(tmp_path, kuhn).evaluate(pubs, ranges)[0],
                                  NetworkValueFunction(kuhn, NET, full.params).evaluate(pubs, ranges)[0])


EMA = dataclasses.replace(LEARN, ema_decay=0.9)


def test_the_moving_average_follows_the_trained_weights_with_its_warm_up(kuhn, train_step):
    pubs, ranges, values, policies = kuhn_examples(kuhn)
    batch = make_batch(kuhn, pubs, ranges, values=values, policies=policies)
    s = init_train_state(kuhn, NET, EMA, seed=0)
    assert trees_equal(s.ema, s.params) and trees_equal(served_params(s), s.ema)
    ema_step = make_train_step(make_model(kuhn.spec, NET), EMA)
    plain, expected = init_train_state(kuhn, NET, LEARN, seed=0), s.params
    for t in range(30):
        s, _ = ema_step(s, batch)
        plain, _ = train_step(plain, batch)
        decay = min(0.9, (1 + t) / (10 + t))
        expected = jax.tree.map(lambda e, p: decay * e + (1 - decay) * p, expected, s.params)
    # the average does not change the training itself, and is the formula's
    assert plain.ema is None and trees_equal(served_params(plain), plain.params)
    for got, want in zip(jax.tree.leaves(s.params), jax.tree.leaves(plain.params)):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    for got, want in zip(jax.tree.leaves(s.ema), jax.tree.leaves(expected)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert not trees_equal(s.ema, s.params)


def test_a_checkpoint_with_a_moving_average_plays_it_and_resumes_it(kuhn, tmp_path):
    pubs, ranges, values, policies = kuhn_examples(kuhn)
    batch = make_batch(kuhn, pubs, ranges, values=values, policies=policies)
    s = init_train_state(kuhn, NET, EMA, seed=0)
    ema_step = make_train_step(make_model(kuhn.spec, NET), EMA)
    for _ in range(3):
        s, _ = ema_step(s, batch)
    with CheckpointStore(tmp_path, kuhn, NET, EMA) as store:
        store.save(s, version=1)
    restored, _ = restore_train_state(tmp_path, kuhn, NET, EMA)
    assert trees_equal(restored.ema, s.ema) and trees_equal(restored.params, s.params)
    params, _, _ = restore_params(tmp_path, kuhn)            # play and evaluation: the average
    assert trees_equal(params, s.ema)
    np.testing.assert_array_equal(load_value_function(tmp_path, kuhn).evaluate(pubs, ranges)[0],
                                  NetworkValueFunction(kuhn, NET, s.ema).evaluate(pubs, ranges)[0])
    # a resume without the average drops it; one of a run without it starts it at the weights
    dropped, _ = restore_train_state(tmp_path, kuhn, NET, LEARN)
    assert dropped.ema is None and trees_equal(dropped.params, s.params)
    with CheckpointStore(tmp_path / "plain", kuhn, NET, LEARN) as store:
        store.save(dropped, version=1)
    assert trees_equal(restore_params(tmp_path / "plain", kuhn)[0], s.params)
    started, _ = restore_train_state(tmp_path / "plain", kuhn, NET, EMA)
    assert trees_equal(started.ema, s.params)


def test_a_checkpoint_without_a_network_kind_is_an_mlp(kuhn, state, tmp_path):
    """Checkpoints saved before `network.kind` existed have none in their metadata."""
    with CheckpointStore(tmp_path, kuhn, NET, LEARN) as store:
        store.save(state.replace(step=state.step + 1), version=1)
    meta_file = tmp_path / "1" / "meta" / "metadata"
    meta = json.loads(meta_file.read_text())
    del meta["network"]["kind"]
    meta_file.write_text(json.dumps(meta))
    assert "kind" not in read_metadata(tmp_path)["network"]
    restored, _ = restore_train_state(tmp_path, kuhn, NET, LEARN)
    assert trees_equal(restored.params, state.params)
    assert restore_params(tmp_path, kuhn)[1] == NET and load_value_function(tmp_path, kuhn).version == 1


def test_a_checkpoint_of_another_network_kind_is_refused(kuhn, state, tmp_path, monkeypatch):
    monkeypatch.setitem(BUILDERS, "mlp_b", build_mlp)      # a second architecture
    other = dataclasses.replace(NET, kind="mlp_b")
    with CheckpointStore(tmp_path, kuhn, other, LEARN) as store:
        store.save(init_train_state(kuhn, other, LEARN, seed=0), version=1)
    assert restore_params(tmp_path, kuhn)[1] == other       # for play: built as the kind it holds
    with pytest.raises(CheckpointError, match="holds a network of kind mlp_b, not the configured mlp"):
        restore_train_state(tmp_path, kuhn, NET, LEARN)
    monkeypatch.delitem(BUILDERS, "mlp_b")                 # a kind this version cannot build
    with pytest.raises(CheckpointError, match=r"kind 'mlp_b', which this version cannot build "
                                              r"\(known kinds: mlp, resnet\)"):
        load_value_function(tmp_path, kuhn)


@pytest.mark.parametrize("damage", ["garbage_state", "no_state", "garbage_meta"])
def test_corrupt_checkpoint_gives_checkpoint_error(kuhn, state, tmp_path, damage):
    with CheckpointStore(tmp_path, kuhn, NET, LEARN) as store:
        store.save(state.replace(step=state.step + 1), version=1)
    step_dir = tmp_path / "1"
    if damage == "no_state":
        shutil.rmtree(step_dir / "state")
    else:
        for root, _, files in os.walk(step_dir / damage.split("_")[1]):
            for name in files:
                with open(os.path.join(root, name), "wb") as f:
                    f.write(b"\x00garbage")
    with pytest.raises(CheckpointError, match="corrupt or incomplete"):
        load_value_function(tmp_path, kuhn)


def test_reads_failing_after_a_failed_restore_stay_quiet(kuhn, state, tmp_path, caplog):
    """A read a failed restore left in flight, failing once the restore has raised, is not
    reported a second time on stderr: neither as "Event loop is closed" (loop already closed)
    nor as asyncio's "Future exception was never retrieved" (loop still open), the two ways
    tensorstore's late reads surface depending on thread timing (a CI run printed the second)."""
    with CheckpointStore(tmp_path, kuhn, NET, LEARN) as store:
        store.save(state.replace(step=state.step + 1), version=1)
    for path in (tmp_path / "1" / "state").rglob("*"):
        if path.is_file():
            path.write_bytes(b"\x00garbage")
    with pytest.raises(CheckpointError, match="corrupt or incomplete"):
        load_value_function(tmp_path, kuhn)
    caplog.clear()
    loop = asyncio.new_event_loop()
    late_read = loop.create_future()       # what a read failing after the restore leaves
    late_read.set_exception(ValueError("OUT_OF_RANGE: Error reading \"step/.zarray\""))
    del late_read
    gc.collect()
    loop.close()
    assert [r.getMessage() for r in caplog.records if r.name == "asyncio"] == []


class Killed(BaseException):
    """Stands for the process dying: nothing in orbax catches a BaseException subclass."""


async def die_before_rename(self):   # orbax's last act of a save: rename the temporary directory
    raise Killed


def test_a_save_interrupted_before_its_rename_leaves_the_previous_checkpoint(kuhn, state, tmp_path):
    """Orbax writes into `<step>.orbax-checkpoint-tmp` and renames: an interrupted save leaves
    no partial step, and the next writer clears the leftover."""
    with CheckpointStore(tmp_path, kuhn, NET, LEARN) as store:
        store.save(state.replace(step=state.step + 1), version=1)
        with (mock.patch.object(atomicity.AtomicRenameTemporaryPath, "finalize", die_before_rename),
              pytest.raises(Killed)):
            store.save(state.replace(step=state.step + 2), version=2)
    assert sorted(os.listdir(tmp_path)) == ["1", "2.orbax-checkpoint-tmp"]
    assert latest_step(tmp_path) == 1 and load_value_function(tmp_path, kuhn).version == 1
    with CheckpointStore(tmp_path, kuhn, NET, LEARN) as store:
        assert store.save(state.replace(step=state.step + 2), version=2)
    assert sorted(os.listdir(tmp_path)) == ["1", "2"]
    assert latest_step(tmp_path) == 2 and load_value_function(tmp_path, kuhn).version == 2


KILL_DURING_SAVE = """
import os, signal, sys
from orbax.checkpoint._src.path import atomicity
from learners.checkpoint import CheckpointStore
from learners.train_state import init_train_state
from sog.config import LearnerConfig, NetworkConfig
from sog.games import load_game

game, net, learn = load_game("kuhn_poker"), NetworkConfig(hidden=8, layers=1), LearnerConfig()
state = init_train_state(game, net, learn, seed=0)
store = CheckpointStore(sys.argv[1], game, net, learn)
store.save(state.replace(step=state.step + 1), version=1)

async def killed(self):
    print(sorted(os.listdir(sys.argv[1])), flush=True)
    os.kill(os.getpid(), signal.SIGKILL)

atomicity.AtomicRenameTemporaryPath.finalize = killed
store.save(state.replace(step=state.step + 2), version=2)
"""


@pytest.mark.slow
def test_a_process_killed_inside_a_save_leaves_the_previous_checkpoint(kuhn, tmp_path):
    """The same with a real SIGKILL of a separate process (slow: a fresh JAX process)."""
    run = tmp_path / "run"
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(KILL_DURING_SAVE), str(run)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == -9, proc.stderr[-2000:]
    assert json.loads(proc.stdout.strip().replace("'", '"')) == ["1", "2.orbax-checkpoint-tmp"]
    assert sorted(os.listdir(run)) == ["1", "2.orbax-checkpoint-tmp"]
    assert latest_step(run) == 1 and load_value_function(run, kuhn).version == 1


def test_a_network_trained_with_drawn_stacks_plays_the_fixed_stack_game(tmp_path):
    """Hold'em's `sog` abstraction: a checkpoint of the game whose stacks and bet fraction are drawn
    per hand loads for the fixed-stack game of its `network_family` (evaluation at 200 big blinds),
    not for another deck, and training resumes only into the same game."""
    base = ("holdem(betting=nolimit,bettingAbstraction=sog,numRanks=4,numSuits=2,numHoleCards=1,numRounds=2,"
            "numBoardCards=0 1,blind=2 1,firstPlayer=2 1,stack=20 20{})")
    train_game, play_game = load_game(base.format(",stackSteps=4")), load_game(base.format(",betFraction=0.75"))
    other = load_game(base.format(",stackSteps=4").replace("stack=20 20", "stack=30 30"))
    assert train_game.network_family == play_game.network_family != other.network_family
    assert load_game("hunl(stackSteps=10)").network_family == load_game("hunl").network_family
    with CheckpointStore(tmp_path, train_game, NET, LEARN) as store:
        store.save(init_train_state(train_game, NET, LEARN, seed=0).replace(step=1), version=1)
    pubs, ranges = [play_game.root()], play_game.initial_ranges()[None]
    values, _ = load_value_function(tmp_path, play_game).evaluate(pubs, ranges)
    assert np.isfinite(values).all()
    with pytest.raises(CheckpointError, match="checkpoint is for game"):
        load_value_function(tmp_path, other)
    with pytest.raises(CheckpointError, match="checkpoint is for game"):
        restore_train_state(tmp_path, play_game, NET, LEARN)
