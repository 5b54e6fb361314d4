"""`sog diagnose --run RUN_DIR [--checkpoint STEP] [--samples N] [--seed S]`: where a checkpoint's gap
to exact values is.

Compares the CVPN of one checkpoint of a training run (the newest by default)
with exact values on the run's persisted replay buffer (RUN_DIR/replay.npz):
a uniform sample of N examples and the N newest ones (`learners.diagnostics`,
the diagnostics training logs at every evaluation): the query solvers' value
targets against exact values, the network's values against exact values on
both sets, the policy head's KL to the stored search-policy targets, and the
age of the sampled examples in weight versions relative to the checkpoint's.
Prints them as one JSON object (None where a set has nothing to measure).
Needs a game whose full public tree the exact oracle can solve.

`add_parser(subparsers)` adds the command with `run` as its func; user errors
(no run directory, no such checkpoint, no or unreadable replay) raise
`launch.console.UserError` (one line, exit status 2).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from launch.console import UserError, say
from launch.evaluate import _run_config, run_checkpoint_steps
from sog.games import UnknownGameError, load_game

REPLAY_FILE = "replay.npz"
DEFAULT_CAPACITY = 1 << 20     # the replay window read without the run's config.yaml


def add_parser(subparsers):
    d = subparsers.add_parser("diagnose", help="a checkpoint's value and policy errors against exact values "
                                               "on the run's replay (JSON)")
    d.add_argument("--run", required=True, help="run directory (numbered checkpoints, replay.npz)")
    d.add_argument("--checkpoint", type=int, help="learner step of the checkpoint (default: the newest)")
    d.add_argument("--samples", type=int, default=256,
                   help="replay examples drawn uniformly, and as many newest (default 256)")
    d.add_argument("--seed", type=int, default=0, help="seed of the uniform sample")
    d.set_defaults(func=run)
    return d


def run(args) -> dict:
    from actors.examples import example_schema
    from actors.replay import ReplayBuffer
    from learners.checkpoint import CheckpointError, load_value_function, read_metadata
    from learners.diagnostics import diagnose

    run_dir = Path(args.run)
    if args.samples < 1:
        raise UserError("--samples must be at least 1")
    steps = run_checkpoint_steps(run_dir)
    step = steps[-1] if args.checkpoint is None else args.checkpoint
    if step not in steps:
        raise UserError(f"no checkpoint {step} in {run_dir} (there are {', '.join(map(str, steps))})")
    try:
        meta = read_metadata(run_dir / str(step))
        game = load_game(meta["game"])
        vf = load_value_function(run_dir / str(step), game)
    except (CheckpointError, UnknownGameError) as e:
        raise UserError(str(e)) from None
    path = run_dir / REPLAY_FILE
    if not path.is_file():
        raise UserError(f"no replay buffer at {path} (a run saves it at its checkpoints)")
    config = _run_config(run_dir)
    replay = ReplayBuffer(example_schema(game), config.replay.capacity if config else DEFAULT_CAPACITY)
    try:
        replay.load(path)
    except ValueError as e:
        raise UserError(str(e)) from None
    if not len(replay):
        raise UserError(f"the replay buffer at {path} is empty")
    version = int(meta.get("version", 0))
    say(f"diagnosing checkpoint {step} (v{version}) of {run_dir} on {args.samples} of {len(replay)} "
        f"replay examples and the {min(args.samples, len(replay))} newest")
    out = diagnose(game, vf, version, replay.peek(args.samples, np.random.default_rng(args.seed)),
                   replay.newest(args.samples))
    say(", ".join(f"{k} {v:.4g}" for k, v in out.items() if v is not None))
    return {"run": str(run_dir), "game": game.spec.name, "checkpoint": step, "version": version,
            "replay_size": len(replay), **out}
