"""The roles of a training run: one table that both runs drive.

| role | plain class (does the work) | step | how many | seed tag |
|---|---|---|---|---|
| inference | `networks.value_function.NetworkValueFunction` | - | `inference.servers` (Ray-free: 1; 0: in the producers) | - |
| replay | `actors.replay.ReplayBuffer` | - | 1 | - |
| queue | `actors.queue.QueryQueue` | - | 1 with solvers, else 0 | - |
| selfplay | `actors.producers.SelfPlayWorker` | step | `selfplay.workers` | 1 |
| solver | `actors.producers.QuerySolverWorker` | step | `solver.solvers` | 2 |
| evaluator | `learners.metrics.Evaluator` | - | 1 with `run.eval_every`, else 0 | - |

Producers (the roles with a step method) make the training data; both runs
drive them from this table alone. The Ray run (`launch.ray_run`) starts
`count` actors of each (`actors.ray_actors.ProducerActor` around the plain
class, seeded from run.seed, the seed tag, the index and the clock) and
keeps one `step` call in flight on each; the Ray-free run (`launch.sync_run`)
calls the same method on one in-process instance per production round, in
table order, seeded from run.seed, the seed tag and the round. Either way a
step's stats are folded into the run's counters as `stats` maps them, and
its seconds and seconds waiting into the role's wait share, and its seconds
of `TIME_STATS` into the role's sums (`TrainingRun.totals`).

Services (no step method) answer the producers and the learner: each run
builds `count` of each (the Ray-free run `sync_count` where a role has one),
the Ray run as actors with the role's options (the inference servers are
`actors.inference.InferenceServer`, batching around the network; producer i,
counted over the producer roles in table order, asks server i % servers, and
with no server each producer runs the network in its own process; the
replay and the queue actors are placed on the driver's node, where their
`snapshot` files live in the run directory), the Ray-free run in its own
process (one network: its queries are answered in-process, one call at a
time, so a second one would do nothing). A role with a `snapshot` is
restored from that file when the run starts and saved to it at checkpoints.
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping

from actors.producers import QuerySolverWorker, SelfPlayWorker
from actors.queue import QueryQueue
from actors.replay import ReplayBuffer
from actors.search_time import SEARCH_TIME_STATS
from actors.selfplay import END_STATS
from learners.metrics import Evaluator
from networks.devices import xla_env
from networks.value_function import NetworkValueFunction
from sog.config import Config, device_kind, parse_device, solve_batch

MAX_SOLVE_BATCH = 64             # queries one Ray-free solver step solves at once (in lockstep)
WAIT_STATS = ("wait_inference", "wait_push", "wait_queue")   # a producer's seconds spent waiting
TIME_STATS = ("seconds", *WAIT_STATS, *SEARCH_TIME_STATS)    # a producer's step seconds, summed per role

NOSET_CUDA_VISIBLE_DEVICES = "RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES"   # Ray leaves every GPU visible
SERVICE = {"max_restarts": -1, "max_task_retries": -1}   # restarted; calls in flight retried there
PRODUCER = {"max_restarts": -1, "max_task_retries": 0}   # restarted; the driver calls `step` again


def _split(share: float, count: int) -> float:
    """One of `count` equal parts of `share`, rounded down to 0.0001 (Ray's resource unit)."""
    return math.floor(share / max(count, 1) * 10_000 + 1e-9) / 10_000


def _no_step_args(config: Config, pushed: int) -> tuple:
    return ()


def _sync_solve_batch(config: Config, pushed: int) -> tuple:
    """The Ray-free round's solver step solves as many queries as the round pushed, at least
    `sog.config.solve_batch` (a Ray solver's batch), at most `MAX_SOLVE_BATCH`."""
    return (min(MAX_SOLVE_BATCH, max(solve_batch(config), pushed)),)


@dataclasses.dataclass(frozen=True)
class Role:
    """One kind of process in a training run (see module doc).

    name: its name in counters, wait shares and log lines; title: its name for people.
    plain: the Ray-free class that does the work. count: how many a run has, from the config.
    step: producers: the method a run calls over and over (returns the stats dict of
    `actors.producers`); None for a service. seed_tag: producers: the seed-sequence word
    that keeps their random streams apart. stats: producers: step stat -> the run counter it
    adds to. extra_waits: producers: further wait shares, name -> the stat that measures the
    waiting (over the step's seconds). sync_step_args: the Ray-free run's arguments to `step`,
    given the config and the queries pushed so far in the round (a Ray step takes none).
    snapshot: the file in the run directory it is saved to and restored from.
    sync_count: the Ray-free run's count, where it differs from `count` (None: `count`).
    ray_options: its Ray actor options; jax: it runs JAX; serves: given the config, whether its
    actors run the network that answers the producers' queries (`inference_users`), on
    `inference.device`; every other JAX role runs JAX on the CPU.
    """

    name: str
    title: str
    plain: type
    count: Callable[[Config], int]
    step: str | None = None
    seed_tag: int | None = None
    stats: Mapping[str, str] = dataclasses.field(default_factory=dict)
    extra_waits: Mapping[str, str] = dataclasses.field(default_factory=dict)
    sync_step_args: Callable[[Config, int], tuple] = _no_step_args
    snapshot: str | None = None
    sync_count: Callable[[Config], int] | None = None
    ray_options: Mapping = dataclasses.field(default_factory=dict)
    jax: bool = False
    serves: Callable[[Config], bool] = lambda config: False

    def actor_options(self, config: Config, gpus: int) -> dict:
        """The Ray actor options of each of its actors on a cluster whose nodes have `gpus` GPUs.

        An actor that serves (`serves`) where `inference.device` lands on a GPU
        (`sog.config.device_kind`) asks Ray for `inference.gpus` split over the run's
        `inference_users`, and its JAX takes at most `inference.memory_fraction` split the same
        way, without preallocation (`networks.devices.xla_env`; both rounded down to Ray's 0.0001
        resource unit, so they never add up to more); with gpu:K Ray leaves every GPU visible, so
        K names the same GPU in the actor. Any other JAX role runs JAX on the CPU
        (`JAX_PLATFORMS=cpu`). `sog.config.device_kind`'s ValueError for a gpu:K the nodes lack.
        """
        out = dict(self.ray_options)
        if not self.jax:
            return out
        if self.serves(config) and device_kind(config.inference.device, gpus)[0] == "gpu":
            users = inference_users(config)
            out["num_gpus"] = _split(config.inference.gpus, users)
            env = xla_env(_split(config.inference.memory_fraction, users))
            if parse_device(config.inference.device)[0] == "gpu":
                env[NOSET_CUDA_VISIBLE_DEVICES] = "1"
        else:
            env = {"JAX_PLATFORMS": "cpu"}
        out["runtime_env"] = {"env_vars": env}
        return out


def inference_users(config: Config) -> int:
    """The processes that run the network answering queries: the inference servers, or with
    none (`inference.servers` 0) the producers (self-play workers and query solvers)."""
    return config.inference.servers or (config.selfplay.workers + config.solver.solvers)


def _own_network(config: Config) -> bool:
    return config.inference.servers == 0


ROLES = (
    Role("inference", "inference server", NetworkValueFunction, lambda c: c.inference.servers,
         sync_count=lambda c: 1, ray_options={"num_cpus": 0, **SERVICE, "max_concurrency": 1000},
         jax=True, serves=lambda c: True),
    Role("replay", "replay buffer", ReplayBuffer, lambda c: 1, snapshot="replay.npz",
         ray_options={"num_cpus": 0, **SERVICE}),
    Role("queue", "query queue", QueryQueue, lambda c: 1 if c.solver.solvers else 0, snapshot="queue.pkl",
         ray_options={"num_cpus": 0, **SERVICE}),
    Role("selfplay", "self-play worker", SelfPlayWorker, lambda c: c.selfplay.workers, step="step",
         seed_tag=1,
         stats={"games": "games", "searches": "searches", "moves": "moves",
                "examples": "selfplay_examples", "queries_pushed": "queries_pushed",
                "queries_dropped": "queries_dropped", "network_queries": "network_queries",
                **{k: k for k in END_STATS}},
         ray_options={"num_cpus": 1, **PRODUCER}, jax=True, serves=_own_network),
    Role("solver", "query solver", QuerySolverWorker, lambda c: c.solver.solvers, step="step",
         seed_tag=2,
         stats={"solves": "solves", "random_solves": "random_solves", "examples": "solver_examples", "recursive_pushed": "recursive_pushed",
                "queries_dropped": "queries_dropped", "network_queries": "network_queries"},
         extra_waits={"solver_queue_empty": "wait_queue"}, sync_step_args=_sync_solve_batch,
         ray_options={"num_cpus": 1, **PRODUCER}, jax=True, serves=_own_network),
    Role("evaluator", "evaluator", Evaluator, lambda c: 1 if c.run.eval_every else 0,
         ray_options={"num_cpus": 0, **SERVICE}, jax=True),
)
PRODUCERS = tuple(role for role in ROLES if role.step is not None)
