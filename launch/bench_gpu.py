"""`sog bench gpu`: the accelerator figures of this machine in one JSON file.

On the device JAX picks here (`auto`: a GPU when JAX sees one, else the CPU, where the same
code runs), in this order (the training run before the sweeps, so it has the GPU to itself;
no process preallocates GPU memory):

    doctor     `launch.doctor.doctor` for the training config (devices, CUDA / cuDNN
               versions, Ray's resources, where each role lands)
    train      `sog train --config leduc` for `--train-minutes` in a fresh process with
               inference (one server) and learner on `auto`, its summary line (steps, rates,
               `compiles`), or its exit status and last stderr lines
    inference  the inference server's batch sweep (`launch.bench_network.bench_network`: one
               padded, jitted network call per batch, host arrays in and out) for the MLP of
               hunl.yaml (6 x 2048) and the ResNet of go9.yaml (19 x 256): per batch size
               ms_per_call (latency) and rows_per_s (queries per second)
    learner    learner steps per second for hunl.yaml's network and batch (`learners.Learner`'s
               donating train step on random batches of the right shapes): `steps` timed after
               one compiling step, and the process's XLA compilations across them (0: no
               step recompiled)

    sog bench gpu [--out gpu_bench.json] [--batches 1,4,...,4096] [--seconds 1]
                  [--learner-steps 50] [--train-minutes 5] [--small]

`--small` shrinks the networks (MLP 2 x 64, ResNet 1 x 8, learner batch 32) so the whole
bench takes seconds on a CPU: the test of this path. The defaults fit in 8 minutes on one
GPU (`launch/gpu_check.sh` runs them after installing jax's CUDA extra).
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from launch.console import UserError, say
from sog.config import apply_overrides, load_config

SWEEP_BATCHES = (1, 4, 16, 64, 256, 1024, 4096)
SMALL = {"mlp": ["network.hidden=64", "network.layers=2"],
         "resnet": ["network.blocks=1", "network.channels=8"],
         "learner": ["network.hidden=64", "network.layers=2", "learner.batch_size=32", "replay.min_size=32"]}
DRIVER_MEMORY_FRACTION = 0.9     # of the GPU, the most this process's JAX takes (the sweeps and the learner)
TRAIN_SETTINGS = ["inference.servers=1", "inference.device=auto", "learner.device=auto", "run.eval_grace=10"]


def learner_steps(config, steps: int) -> dict:
    """Learner steps per second of `config`'s network and batch on `learner.device` (module doc)."""
    from learners.learner import Learner
    from networks.devices import compiles
    from sog.games import load_game

    game = load_game(config.game)
    spec = game.spec
    b, n, a = config.learner.batch_size, spec.num_states, spec.num_actions
    rng = np.random.default_rng(0)
    batch = {"inputs": rng.random((b, 2 * n + spec.feature_size), dtype=np.float32),
             "possible": np.ones((b, 2, n), bool), "value_target": rng.standard_normal((b, 2, n)).astype(np.float32),
             "value_mask": np.ones((b, 2, n), bool),
             "policy_target": np.full((b, 2, n, a), 1.0 / a, np.float32), "policy_mask": np.ones((b, 2, n), bool),
             "legal": np.ones((b, 2, n, a), bool)}
    with tempfile.TemporaryDirectory() as run_dir:
        learner = Learner(game, config, run_dir)
        learner.step(batch)                                  # compiles
        before = compiles()
        start = time.perf_counter()
        for _ in range(steps):
            metrics = learner.step(batch)                    # float metrics: waits for the step
        seconds = time.perf_counter() - start
        learner.close()
    return {"game": spec.name, "network": f"{config.network.kind} {config.network.layers}x{config.network.hidden}",
            "batch": b, "device": str(learner.device), "steps": steps, "seconds": seconds,
            "steps_per_s": steps / seconds, "compiles_while_timed": compiles() - before,
            "loss": metrics["loss"]}


def train_run(minutes: float, small: bool) -> dict:
    """`sog train --config leduc` for `minutes` in a fresh process (module doc)."""
    settings = [*TRAIN_SETTINGS, f"run.minutes={minutes}", *(SMALL["learner"] if small else [])]
    with tempfile.TemporaryDirectory() as run_dir:
        cmd = [sys.executable, "-m", "launch.cli", "train", "--config", "leduc", "--run-dir", run_dir]
        for s in settings:
            cmd += ["--set", s]
        start = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=60 * minutes + 240, check=False)
        out = {"settings": settings, "returncode": done.returncode, "seconds": time.perf_counter() - start}
        if done.returncode == 0 and done.stdout.strip():
            summary = json.loads(done.stdout.strip().splitlines()[-1])
            out.update({k: summary.get(k) for k in ("steps", "learner_steps_per_s", "searches_per_s",
                                                    "queries_per_s", "solves_per_s", "compiles", "inference")})
        else:
            out["stderr_tail"] = done.stderr.splitlines()[-10:]
    return out


def bench_gpu(batches=SWEEP_BATCHES, seconds: float = 1.0, steps: int = 50, train_minutes: float = 5.0,
              small: bool = False, log=say) -> dict:
    """The figures of the module doc."""
    from launch.bench_network import bench_network
    from launch.doctor import doctor

    started = time.perf_counter()
    out = {"benchmark": "gpu", "doctor": doctor(load_config("leduc", TRAIN_SETTINGS))}
    log(f"devices: {out['doctor']['jax']['devices']}")
    out["train"] = train_run(train_minutes, small)
    log(f"train leduc: exit {out['train']['returncode']}, {out['train'].get('steps')} steps")
    out["inference"] = {}
    for kind, name in (("mlp", "hunl"), ("resnet", "go9")):
        config = load_config(name, SMALL[kind] if small else [])
        out["inference"][kind] = bench_network(config, batches, seconds)
        best = max(out["inference"][kind]["rows"], key=lambda r: r["rows_per_s"])
        log(f"inference {kind} ({name}): best {best['rows_per_s']:.0f} queries/s at batch {best['batch']}")
    config = apply_overrides(load_config("hunl"), SMALL["learner"] if small else [])
    out["learner"] = learner_steps(config, steps)
    log(f"learner ({out['learner']['network']}, batch {out['learner']['batch']}): "
        f"{out['learner']['steps_per_s']:.1f} steps/s")
    out["seconds"] = time.perf_counter() - started
    return out


def add_arguments(parser) -> None:
    parser.add_argument("--learner-steps", type=int, default=50, help="gpu: timed learner steps")
    parser.add_argument("--train-minutes", type=float, default=5.0, help="gpu: minutes of the leduc training run")
    parser.add_argument("--small", action="store_true", help="gpu: small networks (a test of the path on a CPU)")


def run_command(args) -> dict:
    """`sog bench gpu` from parsed arguments; writes `--out` (default gpu_bench.json)."""
    from launch.bench_network import parse_batch_sizes

    batches = parse_batch_sizes(args.batches) if args.batches else SWEEP_BATCHES
    seconds = 1.0 if args.seconds is None else args.seconds
    if seconds <= 0 or args.learner_steps < 1 or args.train_minutes <= 0:
        raise UserError("--seconds and --train-minutes must be positive, --learner-steps at least 1")
    path = Path(args.out or "gpu_bench.json")
    if path.is_dir() or not path.absolute().parent.is_dir():
        raise UserError(f"cannot write {path}: give a file in an existing folder")
    from networks.devices import set_process_env

    set_process_env(DRIVER_MEMORY_FRACTION)       # before JAX starts: no preallocation
    result = bench_gpu(batches, seconds, args.learner_steps, args.train_minutes, args.small)
    path.write_text(json.dumps(result, indent=1) + "\n")
    return {**result, "out": str(path)}
