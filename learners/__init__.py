"""The JAX learner: train state and step, checkpoints (orbax), metrics and the evaluator.

    from learners import load_value_function
    vf = load_value_function("runs/leduc", game)      # the newest checkpoint's CVPN, for play
"""
from learners.checkpoint import (
                                 CheckpointError,
                                 CheckpointStore,
                                 latest_step,
                                 load_value_function,
                                 restore_params,
                                 restore_train_state,
)
from learners.learner import Learner, ResumeError
from learners.metrics import Evaluator, Metrics
from learners.train_state import TrainState, init_train_state, make_train_step

__all__ = ["CheckpointError", "CheckpointStore", "Evaluator", "Learner", "Metrics", "ResumeError",
           "TrainState", "init_train_state", "latest_step", "load_value_function", "make_train_step",
           "restore_params", "restore_train_state"]
