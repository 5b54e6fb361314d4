"""Device placement as configuration, on a machine without a GPU (CI's): `auto` lands on the
CPU and the same code runs; gpu:K is refused at start; `sog doctor` and `sog bench gpu`."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

from launch.cli import main
from launch.roles import ROLES, inference_users
from sog.config import ConfigError, device_kind, load_config, parse_device


def test_device_keys_parse_and_resolve():
    assert parse_device("auto") == ("auto", None) and parse_device("gpu:3") == ("gpu", 3)
    for bad in ("tpu", "gpu", "gpu:x", "GPU:0", "cuda:0", "gpu:-1"):
        with pytest.raises(ValueError):
            parse_device(bad)
    assert device_kind("auto", 0) == ("cpu", 0) and device_kind("auto", 2) == ("gpu", 0)
    assert device_kind("cpu", 2) == ("cpu", 0) and device_kind("gpu:1", 2) == ("gpu", 1)
    with pytest.raises(ValueError, match="gpu:2 names a GPU this machine does not have"):
        device_kind("gpu:2", 2)


def test_auto_is_the_cpu_here_and_gpu_k_is_a_config_error(tmp_path):
    from learners.learner import Learner
    from networks.devices import gpus, resolve
    from sog.games import load_game

    assert not gpus()
    assert resolve("auto").platform == "cpu"
    with pytest.raises(ConfigError, match="learner.device: gpu:0 names a GPU"):
        resolve("gpu:0", "learner.device")
    config = load_config("tiny_kuhn", ["learner.device=gpu:0"])
    with pytest.raises(ConfigError, match="learner.device"):
        Learner(load_game(config.game), config, tmp_path / "run")
    assert not (tmp_path / "run").exists()


def test_sync_train_with_a_missing_gpu_is_one_line_and_exit_2(tmp_path, capfd):
    rc = main(["train", "--config", "tiny_kuhn", "--sync", "--run-dir", str(tmp_path / "run"),
               "--set", "learner.device=gpu:0"])
    err = capfd.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "learner.device: gpu:0 names a GPU" in err[0]


def test_actor_options_follow_the_config():
    """On GPUs the serving actors split inference.gpus and inference.memory_fraction; elsewhere
    and for the other JAX roles, JAX on the CPU; gpu:K keeps every GPU visible."""
    by_name = {role.name: role for role in ROLES}
    for servers in (1, 2, 3):
        config = load_config("hunl", [f"inference.servers={servers}", "inference.gpus=1",
                                      "inference.memory_fraction=0.4"])
        options = by_name["inference"].actor_options(config, 1)
        env = options["runtime_env"]["env_vars"]
        assert 1 - 1e-4 * servers <= servers * options["num_gpus"] <= 1
        assert 0.4 - 1e-4 * servers <= servers * float(env["XLA_CLIENT_MEM_FRACTION"]) <= 0.4
        assert env["XLA_PYTHON_CLIENT_PREALLOCATE"] == "false" and env["XLA_PYTHON_CLIENT_MEM_FRACTION"] == ""
        assert "RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES" not in env
        assert "num_gpus" not in by_name["selfplay"].actor_options(config, 1)
        assert by_name["inference"].actor_options(config, 0)["runtime_env"] == {"env_vars": {"JAX_PLATFORMS": "cpu"}}
    own = load_config("kuhn", ["inference.device=gpu:1"])          # no server: the producers serve
    assert inference_users(own) == 2
    options = by_name["solver"].actor_options(own, 2)
    assert options["num_gpus"] == 0.25 and options["runtime_env"]["env_vars"][
        "RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES"] == "1"
    assert "num_gpus" not in by_name["evaluator"].actor_options(own, 2)
    with pytest.raises(ValueError, match="gpu:1 names a GPU"):
        by_name["solver"].actor_options(own, 1)
    assert "num_gpus" not in by_name["solver"].actor_options(load_config("kuhn", ["inference.device=cpu"]), 2)


def test_xla_env_leaves_a_users_settings():
    from networks.devices import set_process_env, xla_env

    env = xla_env(0.123456)
    assert env == {"XLA_PYTHON_CLIENT_PREALLOCATE": "false", "XLA_CLIENT_MEM_FRACTION": "0.1235",
                   "XLA_PYTHON_CLIENT_MEM_FRACTION": ""}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XLA_PYTHON_CLIENT_MEM_FRACTION", "0.2")
        mp.delenv("XLA_CLIENT_MEM_FRACTION", raising=False)
        mp.delenv("XLA_PYTHON_CLIENT_PREALLOCATE", raising=False)
        set_process_env(0.45)
        assert os.environ["XLA_PYTHON_CLIENT_PREALLOCATE"] == "false"
        assert "XLA_CLIENT_MEM_FRACTION" not in os.environ          # jax refuses both names


def test_weight_swaps_and_learner_steps_do_not_recompile(tmp_path):
    """A published version has the shapes of the first: neither the served network nor the
    learner's donating step compiles again."""
    from learners.learner import Learner
    from networks.batch import make_batch
    from networks.devices import compiles
    from networks.value_function import NetworkValueFunction
    from sog.games import load_game

    config = load_config("tiny_kuhn", ["learner.publish_every=1", "learner.batch_size=8"])
    game = load_game(config.game)
    learner = Learner(game, config, tmp_path / "run")
    version, params = learner.current()
    vf = NetworkValueFunction.serving(game, config, params, version)
    pubs = [game.root()] * 8
    ranges = np.full((8, 2, game.spec.num_states), 1.0 / game.spec.num_states)
    batch = make_batch(game, pubs, ranges, values=np.zeros((8, 2, game.spec.num_states)))
    learner.step(batch)
    vf.evaluate(pubs, ranges)
    before = compiles()
    for _ in range(3):
        learner.step(batch)
        vf.set_params(*reversed(learner.publish()))
        vf.evaluate(pubs, ranges)
    assert compiles() == before and vf.version == learner.version
    learner.close()


def test_doctor_on_this_machine(capfd):
    assert main(["doctor", "--config", "kuhn"]) == 0
    out = json.loads(capfd.readouterr().out)
    assert out["jax"]["backend"] == "cpu" and out["cuda"] == {}
    assert out["ray"]["CPU"] >= 1 and "GPU" not in out["ray"]
    assert {r: out["roles"][r]["lands_on"] for r in out["roles"]} == dict.fromkeys(
        ("learner", "inference", "selfplay", "solver", "evaluator"), "cpu")


def test_bench_gpu_runs_on_the_cpu(tmp_path, capfd):
    """The GPU check's own code with tiny settings on a machine without a GPU (`auto` resolves to
    the CPU and the same code runs): every section comes back."""
    out = tmp_path / "gpu.json"
    assert main(["bench", "gpu", "--small", "--batches", "1,4", "--seconds", "0.01", "--learner-steps", "2",
                 "--train-minutes", "0.05", "--out", str(out)]) == 0
    result = json.loads(out.read_text())
    assert [r["batch"] for r in result["inference"]["mlp"]["rows"]] == [1, 4]
    assert result["inference"]["resnet"]["network"] == "resnet"
    assert result["learner"]["steps_per_s"] > 0 and result["learner"]["compiles_while_timed"] == 0
    assert result["train"]["returncode"] == 0, result["train"]
    assert result["train"]["steps"] >= 0 and result["train"]["compiles"]["driver"] > 0
