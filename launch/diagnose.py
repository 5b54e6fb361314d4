"""`sog diagnose --run RUN_DIR [--checkpoint STEP] [--samples N] [--seed S] [--search S,C]`: where a
checkpoint's gap to exact values is.

Compares the CVPN of one checkpoint of a training run (the newest by default)
with exact values on the run's persisted replay buffer (RUN_DIR/replay.npz):
a uniform sample of N examples and the N newest ones (`learners.diagnostics`,
the diagnostics training logs at every evaluation): the query solvers' value
targets against exact values, the network's values against exact values on
both sets, the policy head's KL to the stored search-policy targets, and the
age of the sampled examples in weight versions relative to the checkpoint's.
It also plays the evaluation: SoG(S, C) (`--search`, default the run's first
`run.eval_search` setting) with the checkpoint, composed over every information
state for seed S, whose exploitability it reports (`eval_mbb`, mbb/h), and
compares the network with exact values on N of that evaluation's own queries.
Per set, the public states that hold most of the network's error are listed
(`by_state`). With `--swap`, the same evaluation twice more, with the network's
values and the exact oracle's prior logits and the other way round, once with
the network's values but the oracle's best-response values at the slots off each
belief's support (hands their owner does not reach), and once with the oracle
alone (`swap`: mbb/h each): which head, and which slots, hold the gap (Leduc at step
19,457: 555 with the network, 556 with its values and the oracle's policy, 422 with
the oracle's values and its policy, 425 with the oracle; eight seeds on another run's network: 565 with it, 404 with
the oracle's best responses off the support alone). Prints one JSON object (None where a set has nothing to measure).
Needs a game whose full public tree the exact oracle can solve.

`add_parser(subparsers)` adds the command with `run` as its func; user errors
(no run directory, no such checkpoint, no or unreadable replay) raise
`launch.console.UserError` (one line, exit status 2).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from launch.console import UserError, say
from launch.evaluate import run_checkpoint_steps, run_config
from sog.config import parse_eval_search
from sog.eval.search_policy import search_exploitability
from sog.games import UnknownGameError, load_game
from sog.search.resolve import ContinualResolver
from sog.search.settings import SearchSettings

REPLAY_FILE = "replay.npz"
DEFAULT_CAPACITY = 1 << 20     # the replay window read without the run's config.yaml


def add_parser(subparsers):
    d = subparsers.add_parser("diagnose", help="a checkpoint's value/policy errors vs exact values")
    d.add_argument("--run", required=True, help="run directory (numbered checkpoints, replay.npz)")
    d.add_argument("--checkpoint", type=int, help="learner step of the checkpoint (default: the newest)")
    d.add_argument("--samples", type=int, default=256,
                   help="replay examples drawn uniformly, and as many newest (default 256)")
    d.add_argument("--seed", type=int, default=0, help="seed of the uniform samples and of the evaluation")
    d.add_argument("--search", help="S,C of the evaluated SoG search (default: the run's first run.eval_search)")
    d.add_argument("--swap", action="store_true",
                   help="also evaluate the network's values with the oracle's policy, the oracle's values "
                        "with the network's policy, and the oracle (which head holds the gap)")
    d.set_defaults(func=run)
    return d


def run(args) -> dict:
    from actors.examples import example_schema
    from actors.replay import ReplayBuffer
    from learners.checkpoint import CheckpointError, load_value_function, read_metadata
    from learners.diagnostics import QueryRecorder, diagnose

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
    config = run_config(run_dir)
    replay = ReplayBuffer(example_schema(game), config.replay.capacity if config else DEFAULT_CAPACITY)
    try:
        replay.load(path)
    except ValueError as e:
        raise UserError(str(e)) from None
    if not len(replay):
        raise UserError(f"the replay buffer at {path} is empty")
    settings = _search(args.search, config)
    version = int(meta.get("version", 0))
    say(f"diagnosing checkpoint {step} (v{version}) of {run_dir} on {args.samples} of {len(replay)} "
        f"replay examples, the {min(args.samples, len(replay))} newest and the queries of SoG({settings.label})")
    recorder = QueryRecorder(vf)
    played = search_exploitability(game, ContinualResolver(game, recorder, settings), 1)
    rng = np.random.default_rng(args.seed)
    out = diagnose(game, vf, version, replay.peek(args.samples, rng), replay.newest(args.samples),
                   recorder.sample(args.samples, rng), by_state=True)
    say(f"SoG({settings.label}) exploitability {1000 * played['mean']:.2f} mbb/h (seed {args.seed})")
    say(", ".join(f"{k} {v:.4g}" for k, v in out.items() if v is not None and k != "by_state"))
    for name, rows in out["by_state"].items():
        for r in rows:
            say(f"  {name}: {100 * r['share']:5.1f}% of the error at {r['state']} "
                f"({r['beliefs']} beliefs, mean {r['net_error']:.4f})")
    result = {"run": str(run_dir), "game": game.spec.name, "checkpoint": step, "version": version,
              "replay_size": len(replay), "search": settings.label, "eval_mbb": 1000 * played["mean"], **out}
    if args.swap:
        result["swap"] = _swap(game, vf, settings)
    return result


def _swap(game, vf, settings: SearchSettings) -> dict:
    """SoG(settings) exploitability (mbb/h, seed 0) with the network's values and the oracle's
    logits, the oracle's values and the network's logits, the network with the oracle's
    best-response values at the slots off each belief's support (`OffSupportValueFunction`), and
    the oracle alone."""
    from learners.oracle_reference import ORACLE_ITERATIONS
    from sog.search.oracle import ExactValueFunction
    from sog.search.value_function import OffSupportValueFunction, SplitValueFunction

    def oracle(values="average"):   # a fresh one each time: the oracle warm-starts from its earlier answers
        return ExactValueFunction(game, iterations=ORACLE_ITERATIONS, max_iterations=10_000, values=values)
    out = {}
    for name, fn in (("net_values_oracle_policy", SplitValueFunction(vf, oracle())),
                     ("oracle_values_net_policy", SplitValueFunction(oracle(), vf)),
                     ("net_with_oracle_best_responses_off_support", OffSupportValueFunction(vf, oracle("best_response"))),
                     ("oracle", oracle())):
        out[name] = 1000 * search_exploitability(game, ContinualResolver(game, fn, settings), 1)["mean"]
        say(f"SoG({settings.label}) with {name.replace('_', ' ')}: {out[name]:.2f} mbb/h")
    return out


def _search(text: str | None, config):
    """The SoG settings `--search` names (over the run's search settings), else the run's first
    `run.eval_search` setting (SoG(10, 1) without the run's config)."""
    base = config.search if config else SearchSettings()
    try:
        return parse_eval_search(text or (config.run.eval_search if config else "10,1"), base)[0]
    except ValueError as e:
        raise UserError(f"--search {text!r}: {e}") from None
