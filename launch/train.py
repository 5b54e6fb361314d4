"""`sog train`: sound self-play training, on Ray (default) or in one process (`--sync`).

Ray mode (the default; `ray.init()` embedded and local, or the cluster named
by `RAY_ADDRESS`, e.g. inside `ray job submit`):

    InferenceServer (async actor, GPU when the cluster has one)
    ReplayActor, QueryQueueActor (reload their files in the run directory)
    SelfPlayWorker x selfplay.workers, QuerySolverActor x solver.solvers
    Evaluator actor (when run.eval_every > 0)

The learner runs in the driver process. It is the one place that needs the
replay's batches at a high rate and writes the checkpoints and metrics, so
keeping it there costs no extra copy of the weights or the batches, keeps
`--sync` and Ray on the same code, and makes "the learner crashed" the same
event as "the driver crashed": the run directory then holds the last
checkpoint and the last replay/queue snapshots, and re-running `sog train`
resumes from them. (On a cluster the driver runs where `ray job submit`
starts the entrypoint, the head node: give it the GPU the learner should use.)

The driver loop keeps one `step()` call in flight per worker and solver,
prefetches the next replay sample while the learner steps, and on every
learner step may publish weights (one `ray.put` per version, handed to every
inference server and the evaluator; the driver keeps only the newest
reference, so older versions are freed), checkpoint (replay and queue saved
first, then the orbax checkpoint), and start an evaluation. A worker, solver
or server that dies is restarted by Ray; the driver counts the failed call
(`actor_failures`) and calls again, and re-publishes the newest weights to a
server whose version went back (a restarted server starts from its initial
weights). The sample-to-insert limiter lives in the replay buffer
(`replay.max_updates_per_example`), so the learner waits when it would reuse
data too much.

Sync mode runs the same loop in one process with an in-process
`NetworkValueFunction`: while the limiter allows, learner steps; otherwise a
production round (one `SelfPlay.play`, then one `QuerySolver.solve` of as
many queries as the round pushed, at least `selfplay.games_per_worker`). The
round's seeds derive from `run.seed` and the round counter, and the replay
sample seed from the learner's RNG key and step, so a sync run stopped by
`run.max_steps` and resumed matches an uninterrupted one (when the stop step is
a multiple of `learner.publish_every`, so the resumed run serves the same
weights).

Stops at `run.minutes` of this invocation or at `run.max_steps` learner steps
(in total, across resumes), then saves replay, queue and a checkpoint. Ctrl-C
stops the same way. Memory: the driver's JAX takes at most
`LEARNER_MEM_FRACTION` of a GPU and the inference server
`INFERENCE_MEM_FRACTION`, so they share one; workers, solvers and the
evaluator run JAX on the CPU.
"""
from __future__ import annotations

import abc
import collections
import math
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from sog.config import Config, config_to_dict, dump_config
from sog.seeding import derive_seed

LEARNER_MEM_FRACTION = "0.45"
INFERENCE_MEM_FRACTION = "0.35"
SELFPLAY_SEED, SOLVER_SEED = 1, 2
MAX_SOLVE_BATCH = 64             # queries solved at once in sync mode (each is a thread)
REPUBLISH_AFTER = 30.0           # seconds a server may lag behind the newest version before a re-send
APP_ERROR_LIMIT = 5              # consecutive exceptions of one actor's step before the run fails

# counters carried across resumes (in the checkpoint's extra)
COUNTERS = ("games", "searches", "moves", "selfplay_examples", "solves", "solver_examples",
            "queries_pushed", "recursive_pushed", "queries_dropped", "network_queries",
            "actor_failures", "rounds", "evals", "published")


class TrainError(RuntimeError):
    """The run cannot go on (a producer keeps raising, an actor cannot start)."""


def _stderr(text: str, end: str = "\n") -> None:
    print(text, file=sys.stderr, end=end, flush=True)


def _fmt_time(seconds: float) -> str:
    m, s = divmod(int(seconds), 60)
    return f"{m // 60}:{m % 60:02d}:{s:02d}" if m >= 60 else f"{m:02d}:{s:02d}"


class _Run(abc.ABC):
    """What both modes share: learner, counters, metrics, stop rule, checkpoints, progress."""

    mode = "?"

    def __init__(self, config: Config, run_dir: str | Path, log: Callable = _stderr,
                 tick_seconds: float = 5.0, hooks: dict | None = None):
        from learners.learner import Learner
        from learners.metrics import Metrics
        from sog.games import load_game

        self.config, self.log = config, log
        self.run_dir = Path(run_dir).absolute()
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.game = load_game(config.game)
        self.learner = Learner(self.game, config, self.run_dir)
        self.start_step = self.learner.step_count
        self.counters = {k: int(self.learner.counters.get(k, 0)) for k in COUNTERS}
        dump_config(config, self.run_dir / "config.yaml")
        self.metrics = Metrics(self.run_dir)
        self.replay_path = self.run_dir / "replay.npz"
        self.queue_path = self.run_dir / "queue.pkl"
        self.tick_seconds, self.hooks = tick_seconds, dict(hooks or {})
        self.started = time.monotonic()
        self.deadline = self.started + 60.0 * config.run.minutes
        self.stop_reason = None
        self.last_losses: dict = {}
        self.eval_results: list[dict] = []
        self.last_eval_step = -1
        self.checkpoints: list[int] = []
        # per-tick accumulators
        self._loss_sums: dict = collections.defaultdict(float)
        self._loss_n = 0
        self._spent = collections.defaultdict(float)    # role -> seconds accounted (busy + waiting)
        self._wait = collections.defaultdict(float)     # role -> of which waiting
        self._totals_spent = collections.defaultdict(float)
        self._totals_wait = collections.defaultdict(float)
        self._tick_at = self.started
        self._tick_snapshot = self._snapshot()
        self._first_snapshot = dict(self._tick_snapshot, time=self.started)
        self._last_line = ""
        if self.learner.resumed:
            log(f"resuming {self.run_dir} at learner step {self.start_step}, weight version "
                f"{self.learner.version}")
            for change in self.learner.config_changes:
                log(f"  config change since the checkpoint: {change}")
        else:
            log(f"new run in {self.run_dir}")

    # ------------------------------------------------------------ hooks for subclasses

    @abc.abstractmethod
    def replay_counters(self) -> dict:
        """The replay buffer's counters."""

    @abc.abstractmethod
    def queue_counters(self) -> dict:
        """The query queue's counters."""

    def server_stats(self) -> dict:
        return {}

    @abc.abstractmethod
    def save_buffers(self) -> None:
        """Persist the replay buffer and the query queue to the run directory."""

    # ------------------------------------------------------------ shared logic

    def should_stop(self) -> bool:
        if self.stop_reason:
            return True
        max_steps = self.config.run.max_steps
        if max_steps and self.learner.step_count >= max_steps:
            self.stop_reason = "max_steps"
        elif time.monotonic() >= self.deadline:
            self.stop_reason = "minutes"
        return self.stop_reason is not None

    def add_stats(self, role: str, stats: dict) -> None:
        """Fold one producer step's stats into the counters and the wait accounting."""
        c = self.counters
        if role == "selfplay":
            for key, name in (("games", "games"), ("searches", "searches"), ("moves", "moves"),
                              ("examples", "selfplay_examples"), ("queries_pushed", "queries_pushed")):
                c[name] += int(stats.get(key, 0))
        else:
            c["solves"] += int(stats.get("solves", 0))
            c["solver_examples"] += int(stats.get("examples", 0))
            c["recursive_pushed"] += int(stats.get("recursive_pushed", 0))
        c["queries_dropped"] += int(stats.get("queries_dropped", 0))
        c["network_queries"] += int(stats.get("network_queries", 0))
        wait = sum(float(stats.get(k, 0.0)) for k in ("wait_inference", "wait_push", "wait_queue"))
        seconds = float(stats.get("seconds", 0.0))
        self._spent[role] += seconds
        self._wait[role] += wait
        if role == "solver":
            self._wait["solver_queue_empty"] += float(stats.get("wait_queue", 0.0))
            self._spent["solver_queue_empty"] += seconds

    def after_step(self, losses: dict) -> None:
        """Bookkeeping after one learner step: metrics, publish, checkpoint, evaluation."""
        self.last_losses = losses
        for k, v in losses.items():
            self._loss_sums[k] += v
        self._loss_n += 1
        published = self.learner.publish()
        if published is not None:
            self.counters["published"] += 1
            self.publish(*published)
        if self.learner.checkpoint_due():
            self.checkpoint()
        every = self.config.run.eval_every
        if every and self.learner.step_count % every == 0:
            self.request_eval()

    @abc.abstractmethod
    def publish(self, version: int, params) -> None:
        """Send a new weight version to whatever answers network queries."""

    @abc.abstractmethod
    def request_eval(self) -> None:
        """Start an exploitability evaluation of the latest weights."""

    def record_eval(self, step: int, version: int, rows: list[dict]) -> None:
        self.counters["evals"] += 1
        self.last_eval_step = step
        self.metrics.eval_rows(step, version, rows)
        for row in rows:
            self.eval_results.append({"step": step, "version": version, **row})
            self.log_line(f"eval at step {step} (v{version}): SoG({row['search']}) exploitability "
                          f"{row['mean_mbb']:.1f} mbb/h (min {row['min_mbb']:.1f}, max {row['max_mbb']:.1f}, "
                          f"{row['seeds']} seeds, {row['seconds']:.1f} s)")

    def checkpoint(self) -> None:
        try:
            self.save_buffers()
        except Exception as e:  # noqa: BLE001 - the checkpoint is still worth writing
            self.log_line(f"warning: could not save the replay/queue snapshot: {e}")
        counters = dict(self.counters, replay=self.replay_counters(), queue=self.queue_counters())
        if self.learner.checkpoint(counters):
            self.checkpoints.append(self.learner.step_count)

    def log_line(self, text: str) -> None:
        """A message that does not garble the progress line."""
        if self._last_line:
            self.log("\r" + " " * len(self._last_line) + "\r", end="")
        self.log(text)
        if self._last_line:
            self.log(self._last_line, end="")

    def _snapshot(self) -> dict:
        return {**{k: self.counters[k] for k in COUNTERS}, "steps": self.learner.step_count}

    def tick(self, force: bool = False) -> None:
        """Every `tick_seconds`: scalars to tensorboard / metrics.jsonl, the progress line, hooks."""
        now = time.monotonic()
        if not force and now - self._tick_at < self.tick_seconds:
            return
        dt = max(now - self._tick_at, 1e-9)
        snap = self._snapshot()
        prev = self._tick_snapshot
        rate = {k: (snap[k] - prev[k]) / dt for k in snap}
        replay, queue, server = self.replay_counters(), self.queue_counters(), self.server_stats()
        version = self.learner.version
        used = self.versions_in_use()
        scalars = {
            "learner/steps_per_s": rate["steps"], "learner/lr": self.last_losses.get("learning_rate", math.nan),
            "throughput/searches_per_s": rate["searches"], "throughput/games_per_s": rate["games"],
            "throughput/queries_per_s": rate["network_queries"], "throughput/solves_per_s": rate["solves"],
            "throughput/examples_per_s": rate["selfplay_examples"] + rate["solver_examples"],
            "replay/size": replay.get("size", 0), "replay/inserted": replay.get("inserted_total", 0),
            "replay/sampled": replay.get("sampled_total", 0),
            "replay/sample_to_insert": (replay.get("sampled_total", 0) / replay["inserted_total"]
                                        if replay.get("inserted_total") else 0.0),
            "queue/size": queue.get("size", 0), "queue/dropped": queue.get("dropped_total", 0),
            "queue/rejected": queue.get("rejected_total", 0),
            "weights/version": version, "weights/lag": (version - min(used)) if used else 0,
            "failures/actors": self.counters["actor_failures"],
            "memory/driver_mb": _rss(),
        }
        if self._loss_n:
            for k, name in (("loss", "loss/total"), ("value_loss", "loss/value"),
                            ("policy_loss", "loss/policy"), ("grad_norm", "loss/grad_norm")):
                scalars[name] = self._loss_sums[k] / self._loss_n
        for role, busy in self._spent.items():
            if busy > 0:
                scalars[f"wait/{role}"] = self._wait[role] / busy
        for k in ("mean_batch", "version", "busy_share", "batch_window"):
            if k in server:
                scalars[f"inference/{k}"] = server[k]
        for k, v in self.memory().items():
            scalars[f"memory/{k}_mb"] = v
        self.metrics.scalars(self.learner.step_count, scalars)
        for role in self._spent:
            self._totals_spent[role] += self._spent[role]
            self._totals_wait[role] += self._wait[role]
        self._spent.clear()
        self._wait.clear()
        self._loss_sums.clear()
        self._loss_n = 0
        self._tick_at, self._tick_snapshot = now, snap
        self.last_scalars = scalars
        self._progress(scalars, now)
        hook = self.hooks.get("on_tick")
        if hook is not None:
            hook(self)

    def _progress(self, s: dict, now: float) -> None:
        cfg = self.config
        total = f"/{cfg.run.max_steps}" if cfg.run.max_steps else ""
        loss = s.get("loss/total")
        line = (f"[{self.mode}] step {self.learner.step_count}{total} v{self.learner.version}"
                f" | loss {loss:.4f}" if loss is not None else
                f"[{self.mode}] step {self.learner.step_count}{total} v{self.learner.version} | loss -")
        line += (f" | {s['learner/steps_per_s']:.1f} steps/s | {s['throughput/searches_per_s']:.1f} searches/s"
                 f" | {s['throughput/queries_per_s']:.0f} queries/s")
        if "inference/mean_batch" in s:
            line += f" batch {s['inference/mean_batch']:.1f}"
        line += (f" | replay {int(s['replay/size'])} x{s['replay/sample_to_insert']:.1f}"
                 f" | queue {int(s['queue/size'])} | lag {int(s['weights/lag'])}"
                 f" | {_fmt_time(now - self.started)}/{_fmt_time(60 * cfg.run.minutes)}")
        pad = max(0, len(self._last_line) - len(line))
        self.log("\r" + line + " " * pad, end="")
        self._last_line = line

    def versions_in_use(self) -> list[int]:
        return []

    def memory(self) -> dict:
        return {}

    def summary(self) -> dict:
        now = time.monotonic()
        elapsed = max(now - self.started, 1e-9)
        first = self._first_snapshot
        snap = self._snapshot()
        steps = snap["steps"] - first["steps"]
        for role in self._spent:
            self._totals_spent[role] += self._spent[role]
            self._totals_wait[role] += self._wait[role]
        self._spent.clear()
        self._wait.clear()
        wait_share = {role: self._totals_wait[role] / busy for role, busy in self._totals_spent.items() if busy > 0}
        out = {
            "run_dir": str(self.run_dir), "mode": self.mode, "game": self.config.game,
            "resumed": self.learner.resumed, "stop_reason": self.stop_reason,
            "start_step": self.start_step, "steps": self.learner.step_count, "steps_this_run": steps,
            "version": self.learner.version, "seconds": elapsed,
            "learner_steps_per_s": steps / elapsed,
            "searches_per_s": (snap["searches"] - first["searches"]) / elapsed,
            "games_per_s": (snap["games"] - first["games"]) / elapsed,
            "queries_per_s": (snap["network_queries"] - first["network_queries"]) / elapsed,
            "solves_per_s": (snap["solves"] - first["solves"]) / elapsed,
            "wait_share": wait_share,
            "counters": dict(self.counters), "replay": self.replay_counters(), "queue": self.queue_counters(),
            "losses": self.last_losses, "checkpoints": self.checkpoints,
            "last_checkpoint": self.learner.store.latest_step(), "evals": self.eval_results,
            "config": config_to_dict(self.config),
        }
        return out

    def finish(self) -> None:
        if self._last_line:
            self.log("")
            self._last_line = ""
        self.metrics.flush()

    def close(self) -> None:
        self.metrics.close()
        self.learner.close()


def _rss() -> float:
    from sog.process import rss_mb
    return rss_mb()


# ====================================================================== sync mode

class SyncRun(_Run):
    """The whole loop in one process, deterministic given the config (see module doc)."""

    mode = "sync"

    def __init__(self, config: Config, run_dir, **kwargs):
        super().__init__(config, run_dir, **kwargs)
        from actors.examples import example_schema
        from actors.queue import QueryQueue
        from actors.replay import ReplayBuffer
        from networks.value_function import NetworkValueFunction, bucket_sizes

        self.replay = ReplayBuffer.from_config(example_schema(self.game), config.replay)
        self.queue = QueryQueue(config.solver.queue_size, self.game)
        for name, buf, path in (("replay buffer", self.replay, self.replay_path),
                                ("query queue", self.queue, self.queue_path)):
            if path.is_file():
                try:
                    buf.load(path)
                except ValueError as e:
                    self.close()
                    raise TrainError(f"{e} (move {path} away to start that part afresh)") from None
                self.log(f"restored the {name}: {len(buf)} items from {path}")
        version, params = self.learner.current()
        self.vf = NetworkValueFunction(self.game, config.network, params,
                                       buckets=bucket_sizes(config.inference.max_batch), version=version)
        self.evaluator = None
        self._persisted_at = time.monotonic()

    def replay_counters(self) -> dict:
        return self.replay.counters()

    def queue_counters(self) -> dict:
        return self.queue.counters()

    def save_buffers(self) -> None:
        self.replay.save(self.replay_path)
        self.queue.save(self.queue_path)
        self._persisted_at = time.monotonic()

    def versions_in_use(self) -> list[int]:
        return [self.vf.version]

    def server_stats(self) -> dict:
        return {"version": self.vf.version}

    def publish(self, version: int, params) -> None:
        self.vf.set_params(params, version)

    def request_eval(self) -> None:
        from learners.metrics import Evaluator
        if self.evaluator is None:
            self.evaluator = Evaluator(self.config)
        step = self.learner.step_count
        if step == self.last_eval_step:
            return
        rows = self.evaluator.evaluate(self.learner.params(), self.learner.version)
        self.record_eval(step, self.learner.version, rows)

    def production_round(self) -> None:
        from actors.query_solver import QuerySolver
        from actors.selfplay import SelfPlay

        cfg = self.config
        r = self.counters["rounds"]
        self.counters["rounds"] += 1
        q0 = self.vf.queries
        t0 = time.perf_counter()
        produced = SelfPlay(self.game, cfg, self.vf, derive_seed(cfg.run.seed, SELFPLAY_SEED, r)).play()
        self.replay.add(produced.examples, produced.ids)
        dropped = self.queue.push(produced.queries) if cfg.solver.solvers else 0
        t1 = time.perf_counter()
        self.add_stats("selfplay", {**produced.stats, "examples": len(produced.ids),
                                    "queries_pushed": len(produced.queries), "queries_dropped": dropped,
                                    "network_queries": self.vf.queries - q0, "seconds": t1 - t0})
        if cfg.solver.solvers and len(self.queue):
            k = min(MAX_SOLVE_BATCH, max(cfg.selfplay.games_per_worker, len(produced.queries)))
            q0 = self.vf.queries
            queries = self.queue.pop(k)
            solved = QuerySolver(self.game, cfg, self.vf, derive_seed(cfg.run.seed, SOLVER_SEED, r)).solve(queries)
            self.replay.add(solved.examples, solved.ids)
            dropped = self.queue.push(solved.queries)
            self.add_stats("solver", {**solved.stats, "examples": len(solved.ids),
                                      "recursive_pushed": len(solved.queries), "queries_dropped": dropped,
                                      "network_queries": self.vf.queries - q0,
                                      "seconds": time.perf_counter() - t1})

    def run(self) -> None:
        cfg = self.config
        batch_size = cfg.learner.batch_size
        if cfg.run.eval_every and self.learner.step_count == 0 and self.last_eval_step < 0:
            self.request_eval()        # the untrained network's figure: the curve's starting point
        while not self.should_stop():
            if self.replay.can_sample(batch_size):
                batch = self.replay.sample(batch_size, np.random.default_rng(self.learner.sample_seed()))
                self.after_step(self.learner.step(batch))
            else:
                self.production_round()
            if cfg.replay.persist_every and time.monotonic() - self._persisted_at >= cfg.replay.persist_every:
                self.save_buffers()
            self.tick()


# ====================================================================== Ray mode

class RayRun(_Run):
    """Actors on Ray, the learner in the driver (see module doc)."""

    mode = "ray"

    def __init__(self, config: Config, run_dir, num_cpus: int | None = None, **kwargs):
        os.environ.setdefault("XLA_PYTHON_CLIENT_MEM_FRACTION", LEARNER_MEM_FRACTION)
        import ray

        self.ray = ray
        self.owns_ray = not ray.is_initialized()
        if self.owns_ray:                 # before the learner starts JAX's threads (Ray forks)
            address = os.environ.get("RAY_ADDRESS")
            if address:
                ray.init(address=address)
            else:
                need = config.selfplay.workers + config.solver.solvers + 1
                ray.init(num_cpus=num_cpus or max(os.cpu_count() or 1, need), include_dashboard=False,
                         log_to_driver=True)
        try:
            super().__init__(config, run_dir, **kwargs)
        except BaseException:
            if self.owns_ray:
                ray.shutdown()
            raise
        from actors.examples import example_schema
        from actors.ray_actors import (
            InferenceServerActor,
            QueryQueueActor,
            QuerySolverActor,
            ReplayActor,
            SelfPlayWorker,
        )

        cfg = self.config
        gpus = ray.cluster_resources().get("GPU", 0)
        cpu_env = {"env_vars": {"JAX_PLATFORMS": "cpu"}}
        server_env = ({"env_vars": {"XLA_PYTHON_CLIENT_MEM_FRACTION": INFERENCE_MEM_FRACTION}}
                      if gpus else cpu_env)
        version, params = self.learner.current()
        self.weights_ref = ray.put(params)
        self.weights_version = version
        # the server's constructor argument: kept alive for the whole run, or Ray cannot restart it
        self.initial_weights_ref = self.weights_ref
        self.servers = [InferenceServerActor.options(num_gpus=0.5 if gpus else 0, runtime_env=server_env,
                                                     max_concurrency=1000)
                        .remote(cfg, self.weights_ref, version)]
        self.server = self.servers[0]
        # the replay and the queue write their snapshots into the run directory: keep them on the
        # driver's node (on a cluster the run directory is on the head node's disk)
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
        here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=False)
        self.replay = ReplayActor.options(scheduling_strategy=here).remote(
            example_schema(self.game), cfg.replay, str(self.replay_path))
        self.queue = (QueryQueueActor.options(scheduling_strategy=here).remote(
            cfg.solver.queue_size, cfg.game, str(self.queue_path)) if cfg.solver.solvers else None)
        self.workers = [SelfPlayWorker.options(runtime_env=cpu_env).remote(cfg, i, self.server, self.replay,
                                                                           self.queue)
                        for i in range(cfg.selfplay.workers)]
        self.solvers = [QuerySolverActor.options(runtime_env=cpu_env).remote(
            cfg, j, self.server, self.replay, self.queue, cfg.selfplay.games_per_worker)
            for j in range(cfg.solver.solvers)]
        self.evaluator = None
        for name, actor, path in (("replay buffer", self.replay, self.replay_path),
                                  ("query queue", self.queue, self.queue_path)):
            if actor is not None:
                state = ray.get(actor.loaded.remote())
                if state["error"]:
                    self.shutdown()
                    self.close()
                    raise TrainError(f"{state['error']} (move {path} away to start that part afresh)")
                if path.is_file():
                    self.log(f"restored the {name}: {state['size']} items from {path}")
        if cfg.run.eval_every:
            from learners.metrics import Evaluator
            self.evaluator = (ray.remote(Evaluator).options(num_cpus=0, max_restarts=-1, max_task_retries=-1,
                                                            runtime_env=cpu_env).remote(cfg))
        self.eval_ref = None
        self.eval_pending = None                      # (step, version, weights ref) waiting for the evaluator
        self._eval_job = None
        self._replay_counters = {}
        self._queue_counters = {}
        self._server_stats = {}
        self._server_prev = None
        self._server_pid = None
        self._published_at = time.monotonic()
        self.server_restarts = 0
        self._versions: dict[tuple[str, int], int] = {}
        self._memory: dict[str, float] = {}
        self._app_errors: dict[tuple[str, int], int] = collections.defaultdict(int)
        self._persist_ref = None
        self._persisted_at = time.monotonic()
        self.restarts = 0
        self.pids: dict[tuple[str, int], int] = {}

    # ------------------------------------------------------------ counters from actors

    def _get(self, ref, default, timeout: float = 30.0):
        try:
            return self.ray.get(ref, timeout=timeout)
        except Exception as e:  # noqa: BLE001 - a dead/restarting actor: keep the last value
            self.log_line(f"warning: {type(e).__name__} while reading actor stats; going on")
            return default

    def replay_counters(self) -> dict:
        return self._replay_counters

    def queue_counters(self) -> dict:
        return self._queue_counters

    def server_stats(self) -> dict:
        return self._server_stats

    def versions_in_use(self) -> list[int]:
        return [v for v in self._versions.values() if v >= 0]

    def memory(self) -> dict:
        return self._memory

    def refresh(self) -> None:
        """Read replay, queue and server counters (once per tick); re-publish to a restarted server."""
        ray = self.ray
        refs = [self.replay.counters.remote(), self.server.stats.remote()]
        if self.queue is not None:
            refs.append(self.queue.counters.remote())
        ready, _ = ray.wait(refs, num_returns=len(refs), timeout=10.0)
        if refs[0] in ready:
            self._replay_counters = self._get(refs[0], self._replay_counters)
            self._memory["replay"] = self._replay_counters.pop("rss_mb", 0.0)
            self._replay_counters.pop("ratio", None)
        if refs[1] in ready:
            stats = self._get(refs[1], None)
            if stats is not None:
                self._update_server(stats)
        if self.queue is not None and refs[2] in ready:
            self._queue_counters = self._get(refs[2], self._queue_counters)

    def _update_server(self, stats: dict) -> None:
        prev = self._server_prev
        self._memory["inference"] = stats.get("rss_mb", 0.0)
        out = {"version": stats["version"]}
        if prev is not None and stats["batches"] >= prev["batches"] and stats["seconds"] > prev["seconds"]:
            batches = stats["batches"] - prev["batches"]
            out["mean_batch"] = (stats["queries"] - prev["queries"]) / batches if batches else 0.0
            out["busy_share"] = (stats["busy_seconds"] - prev["busy_seconds"]) / (stats["seconds"] - prev["seconds"])
        else:
            out["mean_batch"] = stats["mean_batch"]
            out["busy_share"] = stats["busy_seconds"] / max(stats["seconds"], 1e-9)
        self._server_prev = stats
        self._server_stats = out
        self._server_totals = stats
        restarted = self._server_pid is not None and stats.get("pid") != self._server_pid
        stale = (stats["version"] < self.weights_version
                 and time.monotonic() - self._published_at > REPUBLISH_AFTER)
        self._server_pid = stats.get("pid")
        if restarted or stale:          # a restarted server starts from its initial weights: send the newest
            if restarted:
                self.server_restarts += 1
            self.log_line(f"inference server {'restarted' if restarted else 'behind'} at version "
                          f"{stats['version']} < {self.weights_version}: publishing again")
            for s in self.servers:
                s.set_weights.remote(self.weights_ref, self.weights_version)

    # ------------------------------------------------------------ publishing, evaluation, checkpoints

    def publish(self, version: int, params) -> None:
        ref = self.ray.put(params)                 # one object-store put per version
        for s in self.servers:
            s.set_weights.remote(ref, version)
        self.weights_ref, self.weights_version = ref, version   # the previous ref is dropped
        self._published_at = time.monotonic()

    def request_eval(self) -> None:
        if self.evaluator is None:
            return
        step = self.learner.step_count
        if step == self.last_eval_step or (self._eval_job and self._eval_job[0] == step):
            return
        if self.learner.version == self.weights_version and self.learner.step_count % \
                self.config.learner.publish_every == 0:
            ref = self.weights_ref
        else:
            ref = self.ray.put(self.learner.params())
        self.eval_pending = (step, self.learner.version, ref)
        self._start_eval()

    def _start_eval(self) -> None:
        if self.eval_ref is not None or self.eval_pending is None:
            return
        step, version, ref = self.eval_pending
        self.eval_pending = None
        self.eval_ref = self.evaluator.evaluate.remote(ref, version)
        self._eval_job = (step, version)

    def _finish_eval(self) -> None:
        step, version = self._eval_job
        ref, self.eval_ref, self._eval_job = self.eval_ref, None, None
        try:
            rows = self.ray.get(ref)
        except Exception as e:  # noqa: BLE001 - an evaluation failure must not end training
            self.log_line(f"warning: evaluation at step {step} failed: {type(e).__name__}: {e}")
        else:
            self.record_eval(step, version, rows)
        self._start_eval()

    def save_buffers(self) -> None:
        refs = [self.replay.save.remote()]
        if self.queue is not None:
            refs.append(self.queue.save.remote())
        self.ray.get(refs, timeout=120)
        self._persisted_at = time.monotonic()

    def checkpoint(self) -> None:
        self.refresh()
        super().checkpoint()

    # ------------------------------------------------------------ the loop

    def _submit(self, role: str, index: int) -> None:
        handle = (self.workers if role == "selfplay" else self.solvers)[index]
        self.inflight[handle.step.remote()] = (role, index)

    def _collect(self, ref) -> None:
        from ray.exceptions import RayActorError, RayTaskError

        role, index = self.inflight.pop(ref)
        try:
            stats = self.ray.get(ref)
        except RayActorError as e:
            self.counters["actor_failures"] += 1
            self.log_line(f"{role} {index} died ({type(e).__name__}); Ray restarts it, the run goes on")
        except RayTaskError as e:
            self.counters["actor_failures"] += 1
            self._app_errors[(role, index)] += 1
            if self._app_errors[(role, index)] >= APP_ERROR_LIMIT:
                raise TrainError(f"{role} {index} failed {APP_ERROR_LIMIT} times in a row; last error:\n{e}") from None
            self.log_line(f"{role} {index} raised {type(e.cause).__name__ if e.cause else 'an error'}; retrying")
        else:
            self._app_errors[(role, index)] = 0
            self.add_stats(role, stats)
            self._versions[(role, index)] = int(stats.get("version", -1))
            self._memory[f"{role}{index}"] = float(stats.get("rss_mb", 0.0))
            pid = stats.get("pid")
            if (role, index) in self.pids and pid != self.pids[(role, index)]:
                self.restarts += 1
            self.pids[(role, index)] = pid
        if self.stop_reason is None:
            self._submit(role, index)

    def run(self) -> None:
        ray, cfg = self.ray, self.config
        batch_size = cfg.learner.batch_size
        self.inflight: dict = {}
        for i in range(len(self.workers)):
            self._submit("selfplay", i)
        for j in range(len(self.solvers)):
            self._submit("solver", j)
        if cfg.run.eval_every and self.learner.step_count == 0:
            self.request_eval()
        self.refresh()
        next_sample_at = time.monotonic()
        sample_ref = None
        want_since = time.monotonic()           # the learner is ready for a batch since then
        while not self.should_stop():
            now = time.monotonic()
            if sample_ref is None and now >= next_sample_at:
                sample_ref = self.replay.try_sample.remote(batch_size, self.learner.sample_seed())
            waits = list(self.inflight)
            if sample_ref is not None:
                waits.append(sample_ref)
            if self.eval_ref is not None:
                waits.append(self.eval_ref)
            timeout = max(0.0, min(self._tick_at + self.tick_seconds - now,
                                   (next_sample_at - now) if sample_ref is None else 1.0, 1.0))
            ready, _ = ray.wait(waits, num_returns=1, timeout=timeout) if waits else ([], [])
            for ref in ready:
                if ref is sample_ref or (sample_ref is not None and ref == sample_ref):
                    sample_ref = None
                    try:
                        batch = ray.get(ref)
                    except Exception as e:  # noqa: BLE001 - the replay actor restarting
                        self.log_line(f"warning: sampling the replay failed ({type(e).__name__}); retrying")
                        batch = None
                    if batch is None:
                        next_sample_at = time.monotonic() + 0.02
                        continue
                    t0 = time.monotonic()
                    waited = t0 - want_since
                    # prefetch the next batch while this one trains
                    step = self.learner.step_count
                    if not (cfg.run.max_steps and step + 1 >= cfg.run.max_steps):
                        sample_ref = self.replay.try_sample.remote(batch_size, self.learner.sample_seed(step + 1))
                    losses = self.learner.step(batch)
                    self.after_step(losses)
                    want_since = time.monotonic()
                    self._wait["learner"] += waited
                    self._spent["learner"] += want_since - t0 + waited
                elif ref == self.eval_ref:
                    self._finish_eval()
                elif ref in self.inflight:
                    self._collect(ref)
            if cfg.replay.persist_every and time.monotonic() - self._persisted_at >= cfg.replay.persist_every:
                self._persist_async()
            if time.monotonic() - self._tick_at >= self.tick_seconds:
                self.refresh()
                self.tick()
        self.refresh()

    def _persist_async(self) -> None:
        if self._persist_ref is not None:
            ready, _ = self.ray.wait(self._persist_ref, num_returns=len(self._persist_ref), timeout=0)
            if len(ready) < len(self._persist_ref):
                return                                  # the previous snapshot is still being written
        self._persist_ref = [self.replay.save.remote()]
        if self.queue is not None:
            self._persist_ref.append(self.queue.save.remote())
        self._persisted_at = time.monotonic()

    def finish_evals(self, timeout: float = 600.0) -> None:
        """Wait for the evaluation in flight and the pending one (at the end of a run)."""
        end = time.monotonic() + timeout
        while self.eval_ref is not None and time.monotonic() < end:
            ready, _ = self.ray.wait([self.eval_ref], timeout=max(0.0, end - time.monotonic()))
            if ready:
                self._finish_eval()

    def shutdown(self) -> None:
        ray = self.ray
        for handle in [*self.workers, *self.solvers, *self.servers, self.replay, self.queue, self.evaluator]:
            if handle is not None:
                try:
                    ray.kill(handle, no_restart=True)
                except Exception:  # noqa: BLE001, S110 - already gone
                    pass
        if self.owns_ray:
            ray.shutdown()


# ====================================================================== entry point

def train(config: Config, run_dir: str | Path, sync: bool = False, log: Callable = _stderr,
          tick_seconds: float = 5.0, hooks: dict | None = None, num_cpus: int | None = None) -> dict:
    """Train (or resume) in `run_dir` until `run.minutes` or `run.max_steps`; returns a summary dict.

    hooks: {"on_tick": fn(run)} called after every progress tick (tests use it to kill actors).
    """
    run = SyncRun(config, run_dir, log=log, tick_seconds=tick_seconds, hooks=hooks) if sync else \
        RayRun(config, run_dir, log=log, tick_seconds=tick_seconds, hooks=hooks, num_cpus=num_cpus)
    failed = True
    try:
        try:
            run.run()
        except KeyboardInterrupt:
            run.stop_reason = "interrupted"
        if isinstance(run, RayRun):
            run.finish_evals()
        run.tick(force=True)
        run.finish()
        run.checkpoint()
        if config.run.eval_every and run.last_eval_step != run.learner.step_count:
            if isinstance(run, RayRun):
                run.request_eval()
                run.finish_evals()
            else:
                run.request_eval()
        failed = False
        summary = run.summary()
        if isinstance(run, RayRun):
            summary["actor_restarts_seen"] = run.restarts
            summary["server_restarts_seen"] = run.server_restarts
            summary["versions_in_use"] = {f"{role}{i}": v for (role, i), v in run._versions.items()}
            inference = dict(getattr(run, "_server_totals", {}))
            if inference.get("seconds"):
                inference["busy_share"] = inference["busy_seconds"] / inference["seconds"]
                summary["wait_share"]["inference"] = 1.0 - inference["busy_share"]
            summary["inference"] = inference
        return summary
    finally:
        if failed:
            run.finish()
            try:                                    # leave a resumable state: the newest data on disk
                run.save_buffers()
            except Exception:  # noqa: BLE001, S110 - best effort while failing
                pass
        if isinstance(run, RayRun):
            run.shutdown()
        run.close()
