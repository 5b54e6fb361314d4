"""The training-run configuration: one frozen dataclass per section.

A YAML file in `configs/` fills these (see `load_config`); every field has the
unit or meaning in its comment. Defaults are the paper's (Table S2, HUNL
column) where it gives them.
"""
from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class NetworkConfig:
    hidden: int = 256            # width of every hidden layer of the CVPN MLP
    layers: int = 3              # number of hidden layers
    activation: str = "relu"     # relu | gelu


@dataclasses.dataclass(frozen=True)
class LearnerConfig:
    batch_size: int = 1024
    optimizer: str = "adam"          # adam | sgd (sgd uses momentum 0.9)
    learning_rate: float = 1e-4      # alpha_init
    lr_decay_rate: float = 0.5       # d: alpha_t = alpha_init * d ** (t / lr_decay_steps)
    lr_decay_steps: int = 2_000_000  # T_decay, learner steps
    value_weight: float = 1.0        # w_v
    policy_weight: float = 0.01      # w_p
    huber_delta: float = 1.0         # Huber transition point, in units of max_utility
    publish_every: int = 10          # learner steps between weight publications
    checkpoint_every: int = 1000     # learner steps between checkpoints
    keep_checkpoints: int = 3        # the last N checkpoints are kept


@dataclasses.dataclass(frozen=True)
class SearchConfig:
    simulations: int = 100           # s: expansion simulations per search
    per_phase: float = 1.0           # c: simulations per regret update phase (may be < 1)
    prior_temperature: float = 1.0   # T_prior: prior = softmax(logits / T_prior)
    puct_c: float = 1.0              # PUCT exploration constant
    top_k: int = 0                   # children added per expansion by prior; 0 = all
    gadget_alpha: float = 0.5        # re-solving: opponent range alpha*r + (1-alpha)*r_prev


@dataclasses.dataclass(frozen=True)
class SelfPlayConfig:
    workers: int = 1                 # SelfPlayWorker actors
    games_per_worker: int = 4        # K concurrent games per worker
    epsilon: float = 0.1             # uniform mix of the self-play policy
    p_td1: float = 0.0               # probability a visited belief gets a TD(1) target
    q_search: float = 0.9            # mean network queries per search sent to the query queue
    greedy_after: int = -1           # moves after which play is argmax; -1 = never


@dataclasses.dataclass(frozen=True)
class SolverConfig:
    solvers: int = 1                 # QuerySolver actors
    q_recursive: float = 0.1         # mean recursive queries pushed back per solve
    queue_size: int = 10_000         # bounded query queue; the oldest queries are dropped when full


@dataclasses.dataclass(frozen=True)
class ReplayConfig:
    capacity: int = 1_000_000        # sliding window, examples
    min_size: int = 1000             # examples before the learner starts
    max_updates_per_example: float = 10.0  # sample-to-insert limit (grad updates per example)
    persist_every: int = 600         # seconds between replay snapshots in the run directory


@dataclasses.dataclass(frozen=True)
class InferenceConfig:
    max_batch: int = 1024            # largest batch the inference server forms
    max_wait_ms: float = 2.0         # how long it waits to fill a batch


@dataclasses.dataclass(frozen=True)
class RunConfig:
    seed: int = 0
    minutes: float = 60.0            # wall-clock budget of `sog train`
    max_steps: int = 0               # learner steps budget; 0 = unlimited
    eval_every: int = 0              # learner steps between exploitability evaluations; 0 = never
    eval_search: str = "10,1"        # S,C of the evaluated SoG agent
    eval_seeds: int = 2


@dataclasses.dataclass(frozen=True)
class Config:
    game: str
    network: NetworkConfig = NetworkConfig()
    learner: LearnerConfig = LearnerConfig()
    search: SearchConfig = SearchConfig()
    selfplay: SelfPlayConfig = SelfPlayConfig()
    solver: SolverConfig = SolverConfig()
    replay: ReplayConfig = ReplayConfig()
    inference: InferenceConfig = InferenceConfig()
    run: RunConfig = RunConfig()
