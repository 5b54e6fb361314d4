"""A run directory of fresh CVPNs for the evaluation tests, and `sog eval` called in-process."""
import argparse


def fresh_run(path, game_name: str, steps=(0, 5, 10)):
    """`path` holding checkpoints of fresh (untrained) 1 x 8 CVPNs of `game_name` at `steps`."""
    from learners.checkpoint import CheckpointStore
    from learners.train_state import init_train_state
    from sog.config import LearnerConfig, NetworkConfig
    from sog.games import load_game

    game = load_game(game_name)
    net, learner = NetworkConfig(hidden=8, layers=1), LearnerConfig(keep_checkpoints=5)
    with CheckpointStore(path, game, net, learner) as store:
        for step in steps:
            state = init_train_state(game, net, learner, seed=step)
            store.save(state.replace(step=state.step + step), version=step)
    return path


def run_eval(*argv):
    """`sog eval ARGV...`'s result (launch.evaluate), without a subprocess."""
    from launch import evaluate
    parser = argparse.ArgumentParser()
    evaluate.add_parser(parser.add_subparsers())
    args = parser.parse_args(["eval", *map(str, argv)])
    return args.func(args)
