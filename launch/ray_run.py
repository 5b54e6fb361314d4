"""The Ray training run (`sog train`, the default): producers and services as Ray actors, the
learner in the driver.

A local Ray instance (`launch.local_ray.LocalRay`: started in a process of its own, so
no Python runs in a fork of this one), or the cluster named by `RAY_ADDRESS` (e.g.
inside `ray job submit`). Every role of `launch.roles` becomes `count` actors
with the role's options:

    InferenceServer x inference.servers (async actors, GPU when the cluster has one; 0: none,
        each producer runs the network itself)
    ReplayActor, QueryQueueActor (reload their snapshots in the run directory)
    ProducerActor around SelfPlayWorker x selfplay.workers, QuerySolverWorker x solver.solvers
    Evaluator (when run.eval_every > 0; its process at nice `learners.metrics.EVAL_NICENESS`)

The learner runs in the driver process. It is the one place that needs the
replay's batches at a high rate and writes the checkpoints and metrics, so
keeping it there costs no extra copy of the weights or the batches, keeps
`--sync` and Ray on the same code, and makes "the learner crashed" the same
event as "the driver crashed": the run directory then holds the last
checkpoint and the last replay/queue snapshots, and re-running `sog train`
resumes from them. (On a cluster the driver runs where `ray job submit`
starts the entrypoint, the head node: give it the GPU the learner should use.)

The driver loop keeps one `step()` call in flight per producer, asks the
replay for the batches of the next `SAMPLE_STEPS` learner steps in one call
(the next call when half of them are left), and on every learner step may
publish weights (one `ray.put` per version, handed to every inference server
and the evaluator; the driver keeps only the newest reference, so older
versions are freed), checkpoint (replay and queue saved first, then the orbax
checkpoint), and start an evaluation (the evaluator actor is handed the weights
and, for its diagnostics, the replay actor's uncounted sample and newest
examples as object refs, and the evaluation deadline, past which it gives up;
the driver waits for it until then at the end). A producer or server that dies is
restarted by Ray; the driver counts the failure once (`actor_failures`; the
calls that fail while the actor is still restarting are the same failure) and
calls again, re-publishes the newest weights to a server whose version went
back (a restarted server starts from its initial weights), and sums each
server's inference stats across its restarts and then over the servers
(`inference_totals`).

Several inference servers (`inference.servers`): one server is one process
whose event loop takes every client's requests, so past some rate its
per-request overhead, not the network, bounds the run (on a 16-core
H100 host, 15 clients kept one server 94% busy at ~3.4 ms a batch for a
network that computes one in ~1 ms). Producer i (counted over the producer
roles in table order: self-play workers, then query solvers) sends its
queries to server i % servers (`server_of`) for its whole life, restarts
included; every publish goes to every server, and each server's restarts are
tracked apart. The servers' progress scalars are one set: the oldest version
served, the mean batch over all their batches, the mean busy share.

No inference server (`inference.servers` 0): each producer runs the network in
its own process (`actors.ray_actors.ProducerActor` with no server), built from
the run's weights at its start; every publish goes to every producer (a
`set_weights` call queued behind its step in flight, so it takes effect at its
next step), a restarted producer (it starts from the run's initial weights)
or one that still reports an older version `REPUBLISH_AFTER` seconds after
the last publish gets the newest again, and the inference totals are the
producers' own network calls as their steps return them (`OwnNetworks`). On a
CPU this is the faster choice: a round trip to a server costs more than a
small network (Kuhn 289 -> 449 searches/s and 65 -> 318 solves/s on 2
cores).

The sample-to-insert limiter lives in the replay buffer
(`replay.max_updates_per_example`), so the learner waits when it would reuse
data too much.

Devices and memory: the driver's JAX (the learner) runs on `learner.device` and takes at
most `learner.memory_fraction` of its GPU; the inference servers (with none, the producers)
run on `inference.device`, asking Ray for `inference.gpus` and taking at most
`inference.memory_fraction` together (each its part: `launch.roles.Role.actor_options`), so
they can share one GPU; the other roles run JAX on the CPU. No process preallocates GPU
memory (`networks.devices.xla_env`), and a device key naming a GPU the machine lacks stops
the run before anything starts (`TrainError`). The summary's `compiles` counts the XLA
compilations of the driver, the servers and the producers with their own networks.
"""
from __future__ import annotations

import collections
import contextlib
import dataclasses
import logging
import math
import os
import time

import ray
from ray.exceptions import RayActorError, RayTaskError
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from actors.examples import example_schema
from actors.inference import InferenceServer
from actors.ray_actors import ProducerActor, QueryQueueActor, ReplayActor
from launch.local_ray import LocalRay, quiet_ray_logs
from launch.roles import PRODUCERS, ROLES, Role
from launch.training_run import RunLock, TrainError, TrainingRun
from learners.metrics import EVAL_NICENESS, EvaluationAbandoned, Evaluator
from networks.devices import compiles, set_process_env
from sog.config import Config, device_kind

REPUBLISH_AFTER = 30.0           # seconds a server may lag behind the newest version before a re-send
SAMPLE_STEPS = 8                 # learner steps' batches per replay call (Kuhn's ~300 calls a
                                 # second kept the replay actor ~26% of a core busy on 2 cores)
# Ray logs an error when an actor that may restart gets constructor arguments from the object store
# (ray-project/ray#53727: if they went out of scope, the restart would fail); the run's producers and
# servers get the initial weights so, and the run holds that ref until it ends
RESTART_NOTE = ("(Ray's error line above, 'constructor arguments in the object store and max_restarts > 0', "
                "is expected: the run keeps those initial weights for a restarted actor)")
APP_ERROR_LIMIT = 5              # consecutive exceptions of one actor's step before the run fails


SUMMED_SERVER_STATS = ("batches", "requests", "queries", "busy_seconds", "idle_seconds", "weight_updates",
                       "seconds")


def server_of(config: Config, role: Role, index: int) -> int:
    """The inference server (its index) that producer `index` of `role` asks: producers are
    counted over the producer roles in table order, and producer i asks server i % servers."""
    before = sum(r.count(config) for r in PRODUCERS[:PRODUCERS.index(role)])
    return (before + index) % config.inference.servers


def add_server_totals(earlier: dict, latest: dict) -> dict:
    """`latest` server stats (`InferenceServer.stats`) with the cumulative ones of `earlier`
    (those of servers before a restart) added: counts, seconds and the batch-size histogram;
    the version, pid, memory and pending calls are the latest's."""
    if not earlier:
        return dict(latest)
    if not latest:
        return dict(earlier)
    out = {**latest, **{k: earlier.get(k, 0) + latest.get(k, 0) for k in SUMMED_SERVER_STATS}}
    sizes = collections.Counter(earlier.get("batch_sizes", {}))
    sizes.update(latest.get("batch_sizes", {}))
    out["batch_sizes"] = dict(sizes)
    out["mean_batch"] = out["queries"] / max(out["batches"], 1)
    return out


def sum_servers(servers: list[dict]) -> dict:
    """The cumulative stats of several servers (each `add_server_totals` over its restarts,
    `{}` before its first read) as one: counts, seconds, pending calls, restarts, resident memory
    and the batch-size histogram summed (seconds are server-seconds, so busy_seconds / seconds
    is the servers' mean busy share), the version the oldest one serves; `servers` the list."""
    read = [s for s in servers if s]
    if not read:
        return {}
    out = {k: sum(s.get(k, 0) for s in read) for k in (*SUMMED_SERVER_STATS, "pending", "restarts", "rss_mb")}
    sizes = collections.Counter()
    for s in read:
        sizes.update(s.get("batch_sizes", {}))
    out["batch_sizes"] = dict(sizes)
    out["mean_batch"] = out["queries"] / max(out["batches"], 1)
    out["version"] = min(s["version"] for s in read)
    out["servers"] = [dict(s) for s in servers]
    return out


def compact_inference(totals: dict) -> dict:
    """`inference_totals()` as the summary keeps it: each batch-size histogram (of the sum and of
    each server) replaced by its largest batch, `max_batch` (mean_batch stays)."""
    out = {k: v for k, v in totals.items() if k != "batch_sizes"}
    if "batch_sizes" in totals:
        out["max_batch"] = max(map(int, totals["batch_sizes"]), default=0)
        out["mean_batch"] = totals["queries"] / max(totals["batches"], 1)
    if "servers" in totals:
        out["servers"] = [compact_inference(s) for s in totals["servers"]]
    return out


class Republisher:
    """When the newest weights go again to an actor that serves an older version, and when that
    is worth a line: a restarted actor (it starts from the run's initial weights) gets them at
    once; one that lags gets them `REPUBLISH_AFTER` seconds after the last publish or re-send to
    it, at most once per that many seconds. A line is logged on a change of state only (a
    restart, or an actor falling behind; not each poll while it stays behind), and none for an
    actor that has reported no version yet (version < 0: it is starting, not behind)."""

    def __init__(self):
        self.behind: set[str] = set()              # actors logged as behind, until they catch up
        self.sent_at: dict[str, float] = {}        # actor -> time.monotonic() of its last re-send

    def check(self, name: str, version: int, newest: int, restarted: bool, published_at: float,
              now: float) -> tuple[bool, str | None]:
        """(whether to send `name` the newest weights now, the line to log or None); `version` is
        what it serves, `newest` the run's version, `published_at` and `now` monotonic seconds."""
        if version >= newest:
            self.behind.discard(name)
            return False, None
        last = max(published_at, self.sent_at.get(name, -math.inf))
        if not restarted and now - last <= REPUBLISH_AFTER:
            return False, None
        self.sent_at[name] = now
        line = None
        if restarted:
            line = f"{name} restarted at version {version} < {newest}: publishing again"
        elif version >= 0 and name not in self.behind:
            line = (f"{name} behind at version {version} < {newest}: publishing again "
                    f"(every {REPUBLISH_AFTER:g} s while it stays behind)")
        if version >= 0:
            self.behind.add(name)
        return True, line


class OwnNetworks:
    """The network calls of producers that run their own network (`inference.servers` 0), summed
    from their steps' `inference` stats (`actors.ray_actors.ProducerActor.step`)."""

    def __init__(self):
        self.batches = self.queries = 0
        self.busy_seconds = 0.0
        self.sizes = collections.Counter()
        self._read = (0, 0, 0.0, time.monotonic())        # batches, queries, busy seconds, clock at the last read
        self._mean_batch = 0.0

    def add(self, calls: dict) -> None:
        """One step's calls: calls, queries, seconds, batch_sizes (size -> count)."""
        self.batches += int(calls.get("calls", 0))
        self.queries += int(calls.get("queries", 0))
        self.busy_seconds += float(calls.get("seconds", 0.0))
        self.sizes.update({int(k): int(v) for k, v in calls.get("batch_sizes", {}).items()})

    def totals(self) -> dict:
        """batches, queries, busy_seconds (summed over the producers: network seconds, so
        busy_seconds over a window's seconds is network seconds per second) and batch_sizes."""
        return {"batches": self.batches, "queries": self.queries, "busy_seconds": self.busy_seconds,
                "batch_sizes": dict(self.sizes)}

    def since_read(self) -> dict:
        """The mean batch (the previous one when no step returned since) and the network seconds
        per second since the previous call."""
        batches, queries, busy, at = self._read
        now = time.monotonic()
        self._read = (self.batches, self.queries, self.busy_seconds, now)
        if self.batches > batches:
            self._mean_batch = (self.queries - queries) / (self.batches - batches)
        return {"mean_batch": self._mean_batch, "busy_share": (self.busy_seconds - busy) / max(now - at, 1e-9)}


@dataclasses.dataclass
class ServerTrack:
    """What the driver knows of one inference server: its stats at the last read (`latest`, this
    process's), the summed totals of its processes before a restart (`earlier`), its pid and the
    restarts seen."""

    latest: dict = dataclasses.field(default_factory=dict)
    earlier: dict = dataclasses.field(default_factory=dict)
    pid: int | None = None
    restarts: int = 0

    def totals(self) -> dict:
        """Its cumulative stats over its processes, with `restarts` ({} before the first read)."""
        out = add_server_totals(self.earlier, self.latest)
        return {**out, "restarts": self.restarts} if out else {}

    def read(self, stats: dict) -> tuple[dict, bool]:
        """Take a new read: (the differences since the previous read of this process:
        batches, queries, busy_seconds, seconds; the cumulative figures at the first read or
        after a restart), whether the server restarted since the previous read."""
        prev = self.latest
        restarted = self.pid is not None and stats.get("pid") != self.pid
        if restarted:
            self.earlier = add_server_totals(self.earlier, self.latest)
            self.restarts += 1
        keys = ("batches", "queries", "busy_seconds", "seconds")
        if prev and not restarted and stats["batches"] >= prev["batches"] and stats["seconds"] > prev["seconds"]:
            delta = {k: stats[k] - prev[k] for k in keys}
        else:
            delta = {k: stats[k] for k in keys}
        self.latest, self.pid = stats, stats.get("pid")
        return delta, restarted


class RayRun(TrainingRun):
    """Actors on Ray, the learner in the driver (see module doc).

    actors: role name -> its actor handles (`count` of each role, in the roles table's order).
    """

    mode = "ray"

    def __init__(self, config: Config, run_dir, num_cpus: int | None = None, **kwargs):
        set_process_env(config.learner.memory_fraction)       # before JAX starts its backend
        self.lock = RunLock(run_dir)      # before Ray starts: a run refused starts nothing
        self.owns_ray = not ray.is_initialized()
        self.local_ray = None             # the local instance this run started (`launch.local_ray`)
        try:
            if self.owns_ray:
                self._connect(config, num_cpus)
            gpus = int(ray.cluster_resources().get("GPU", 0))
            for key, text in (("learner.device", config.learner.device),
                              ("inference.device", config.inference.device)):
                try:
                    device_kind(text, gpus)       # a GPU Ray does not see: stop before anything starts
                except ValueError as e:
                    raise TrainError(f"{key}: {e}") from None
            super().__init__(config, run_dir, **kwargs)
        except BaseException:
            if self.owns_ray and ray.is_initialized():
                ray.shutdown()
            if self.local_ray is not None:
                self.local_ray.stop()
            self.lock.release()
            raise
        version, params = self.learner.current()
        self.weights_ref = ray.put(params)
        self.weights_version = version
        # the server's constructor argument: kept alive for the whole run, or Ray cannot restart it
        self.initial_weights_ref = self.weights_ref
        self.actors: dict[str, list] = {}
        try:
            cluster_gpus = int(ray.cluster_resources().get("GPU", 0))
            # services first: the producers are handed the server, replay and queue actors
            for role in sorted(ROLES, key=lambda role: role.step is not None):
                self.actors[role.name] = self._start(role, cluster_gpus)
            self.log(RESTART_NOTE)
            for role in ROLES:
                if role.snapshot:
                    for actor in self.actors[role.name]:
                        self._check_restored(role, actor)
        except BaseException:
            self.close()
            raise
        self.eval_ref = None
        self.eval_pending = None                      # (step, version, weights ref) waiting for the evaluator
        self._eval_job = None
        self._replay_counters = {}
        self._queue_counters = {}
        self._server_stats = {}
        self._tracks = [ServerTrack() for _ in self.servers]     # per inference server
        self._own = OwnNetworks() if not self.servers else None  # the producers' own networks' calls
        self._published_at = time.monotonic()
        self._republisher = Republisher()
        self._versions: dict[tuple[str, int], int] = {}
        self._memory: dict[str, float] = {}
        self._compiles: dict[tuple[str, int], int] = {}   # producer -> its process's XLA compilations
        self._app_errors: dict[tuple[str, int], int] = collections.defaultdict(int)
        self._down: set[tuple[str, int]] = set()       # producers whose last call died, until one succeeds
        self._persist_ref = None
        self._persisted_at = time.monotonic()
        self.restarts = 0
        self.pids: dict[tuple[str, int], int] = {}

    def _connect(self, config: Config, num_cpus: int | None) -> None:
        """Connect to the cluster of `RAY_ADDRESS`, or to a local instance started now."""
        address = os.environ.get("RAY_ADDRESS")
        if not address:
            need = 1 + sum(role.ray_options.get("num_cpus", 0) * role.count(config) for role in ROLES)
            self.local_ray = LocalRay(num_cpus=num_cpus or max(os.cpu_count() or 1, need), include_dashboard=False)
            address = self.local_ray.address
        quiet_ray_logs()
        ray.init(address=address, log_to_driver=True, logging_level=logging.WARNING)

    def _start(self, role: Role, gpus: int) -> list:
        """The `count` actors of `role` with its options (a role with a snapshot on this node:
        its file is in the run directory, on the driver's disk)."""
        cfg = self.config
        n = role.count(cfg)
        try:
            options = role.actor_options(cfg, gpus)
        except ValueError as e:
            raise TrainError(f"inference.device: {e}") from None
        if role.snapshot:
            options["scheduling_strategy"] = NodeAffinitySchedulingStrategy(
                ray.get_runtime_context().get_node_id(), soft=False)
        if role.step is not None:
            actor = ray.remote(ProducerActor).options(**options)
            return [actor.remote(role.plain, role.step, cfg, i, role.seed_tag,
                                 self.servers[server_of(cfg, role, i)] if self.servers else None,
                                 self.replay, self.queue, self.initial_weights_ref, self.weights_version)
                    for i in range(n)]
        path = str(self.snapshot_path(role)) if role.snapshot else None
        services = {           # role -> (the class the actor runs, its constructor arguments)
            "inference": lambda: (InferenceServer, (cfg, self.weights_ref, self.weights_version)),
            "replay": lambda: (ReplayActor, (example_schema(self.game), cfg.replay, path)),
            "queue": lambda: (QueryQueueActor, (cfg.solver.queue_size, cfg.game, path)),
            "evaluator": lambda: (Evaluator, (cfg, EVAL_NICENESS)),
        }
        cls, args = services[role.name]()
        actor = ray.remote(cls).options(**options)
        return [actor.remote(*args) for _ in range(n)]

    def _check_restored(self, role: Role, actor) -> None:
        path = self.snapshot_path(role)
        state = ray.get(actor.loaded.remote())
        if state["error"]:
            raise TrainError(f"{state['error']} (move {path} away to start that part afresh)")
        if path.is_file():
            self.log(f"restored the {role.title}: {state['size']} items from {path}")

    def _first(self, name: str):
        """The (first) actor of role `name`, or None when the config has none."""
        members = self.actors.get(name)
        return members[0] if members else None

    @property
    def server(self):
        """The first inference server."""
        return self._first("inference")

    @property
    def servers(self) -> list:
        """The inference servers (`inference.servers` of them)."""
        return self.actors.get("inference", [])

    @property
    def server_restarts(self) -> int:
        """Inference server restarts seen, over all servers."""
        return sum(t.restarts for t in self._tracks)

    @property
    def replay(self):
        return self._first("replay")

    @property
    def queue(self):
        return self._first("queue")

    @property
    def evaluator(self):
        return self._first("evaluator")

    # ------------------------------------------------------------ counters from actors

    def _get(self, ref, default, timeout: float = 30.0):
        try:
            return ray.get(ref, timeout=timeout)
        except Exception as e:  # noqa: BLE001 - a dead/restarting actor: keep the last value
            self.log_line(f"warning: {type(e).__name__} while reading actor stats; going on")
            return default

    def replay_counters(self) -> dict:
        return self._replay_counters

    def queue_counters(self) -> dict:
        return self._queue_counters

    def server_stats(self) -> dict:
        return self._server_stats

    def inference_totals(self) -> dict:
        """The servers' own cumulative stats as last read (every progress tick): each summed
        over its processes in this invocation (a restarted server counts from zero; what the old
        one did after its last read is lost), then over the servers (`sum_servers`; `servers`
        holds each one's, with its restarts). Without servers, the producers' own networks'
        calls as their steps returned them (`OwnNetworks.totals`)."""
        if self._own is not None:
            return self._own.totals()
        return sum_servers([t.totals() for t in self._tracks])

    def versions_in_use(self) -> list[int]:
        return [v for v in self._versions.values() if v >= 0]

    def memory(self) -> dict:
        return self._memory

    def refresh(self) -> None:
        """Read replay, queue and server counters (once per tick); re-publish to a restarted server."""
        replay_ref = self.replay.counters.remote()
        server_refs = [s.stats.remote() for s in self.servers]
        queue_ref = self.queue.counters.remote() if self.queue is not None else None
        refs = [replay_ref, *server_refs, *([queue_ref] if queue_ref is not None else [])]
        ready, _ = ray.wait(refs, num_returns=len(refs), timeout=10.0)
        if replay_ref in ready:
            self._replay_counters = self._get(replay_ref, self._replay_counters)
            self._memory["replay"] = self._replay_counters.pop("rss_mb", 0.0)
            self._replay_counters.pop("ratio", None)
        read = {}
        for i, ref in enumerate(server_refs):
            stats = self._get(ref, None) if ref in ready else None
            if stats is not None:
                read[i] = stats
        if read:
            self._update_servers(read)
        if queue_ref is not None and queue_ref in ready:
            self._queue_counters = self._get(queue_ref, self._queue_counters)
        if self._own is not None:
            used = self.versions_in_use()
            self._server_stats = {"version": min(used) if used else self.weights_version, **self._own.since_read()}

    def _update_servers(self, read: dict[int, dict]) -> None:
        """Take the stats `read` (server index -> `InferenceServer.stats`): the progress scalars
        since the previous read (the oldest version served, the mean batch over all the servers'
        batches, their mean busy share), restarts, and the newest weights again to a server
        that restarted or lags."""
        batches = queries = 0
        busy = []
        for i, stats in read.items():
            track = self._tracks[i]
            delta, restarted = track.read(stats)
            self._memory["inference" if len(self._tracks) == 1 else f"inference{i}"] = stats.get("rss_mb", 0.0)
            batches += delta["batches"]
            queries += delta["queries"]
            busy.append(delta["busy_seconds"] / max(delta["seconds"], 1e-9))
            name = "inference server" if len(self._tracks) == 1 else f"inference server {i}"
            self._send_newest(name, self.servers[i], stats["version"], restarted)
        versions = [t.latest["version"] for t in self._tracks if t.latest]
        self._server_stats = {"version": min(versions), "mean_batch": queries / batches if batches else 0.0,
                               "busy_share": sum(busy) / len(busy)}

    # ------------------------------------------------------------ publishing, evaluation, checkpoints

    def _send_newest(self, name: str, actor, version: int, restarted: bool) -> None:
        """Send the newest weights to `actor` (an inference server, or a producer with its own
        network) that serves `version` when it is behind and restarted (it starts from the run's
        initial weights) or still lags `REPUBLISH_AFTER` seconds after the last publish (`Republisher`:
        when, and which changes of state get a line)."""
        send, line = self._republisher.check(name, version, self.weights_version, restarted,
                                             self._published_at, time.monotonic())
        if line is not None:
            self.log_line(line)
        if send:
            actor.set_weights.remote(self.weights_ref, self.weights_version)

    def publish(self, version: int, params) -> None:
        ref = ray.put(params)                 # one object-store put per version
        for s in self.servers or self._producers():
            s.set_weights.remote(ref, version)
        self.weights_ref, self.weights_version = ref, version   # the previous ref is dropped
        self._published_at = time.monotonic()

    def request_eval(self) -> None:
        if self.evaluator is None:
            return
        step = self.learner.step_count
        if step == self.last_eval_step or (self._eval_job and self._eval_job[0] == step) or step in self.unfinished:
            return
        if self.eval_time_left() <= 0:
            self.abandon_eval(step)
            return
        if self.learner.version == self.weights_version and self.learner.step_count % \
                self.config.learner.publish_every == 0:
            ref = self.weights_ref
        else:
            ref = ray.put(self.learner.params())
        n = self.config.run.diagnose_samples
        samples = ((self.replay.peek.remote(n, self.diagnostics_sample()), self.replay.newest.remote(n))
                   if n else (None, None))
        self.eval_pending = (step, self.learner.version, ref, samples)
        self._start_eval()

    def _start_eval(self) -> None:
        if self.eval_ref is not None or self.eval_pending is None:
            return
        step, version, ref, (examples, fresh) = self.eval_pending
        self.eval_pending = None
        self.eval_ref = self.evaluator.evaluate.remote(ref, version, examples, fresh, self.eval_wall_deadline())
        self._eval_job = (step, version)

    def _finish_eval(self) -> None:
        step, version = self._eval_job
        ref, self.eval_ref, self._eval_job = self.eval_ref, None, None
        try:
            out = ray.get(ref)
        except Exception as e:  # noqa: BLE001 - an evaluation failure must not end training
            if isinstance(e, EvaluationAbandoned) or isinstance(getattr(e, "cause", None), EvaluationAbandoned):
                self.abandon_eval(step)
            else:
                self.log_line(f"warning: evaluation at step {step} failed: {type(e).__name__}: {e}")
        else:
            self.record_eval(step, version, out["rows"], out["diagnostics"])
        self._start_eval()

    def _save_snapshots(self) -> list:
        """Start saving every role with a snapshot; the refs of the calls."""
        return [actor.save.remote() for role in ROLES if role.snapshot for actor in self.actors[role.name]]

    def save_buffers(self) -> None:
        ray.get(self._save_snapshots(), timeout=120)
        self._persisted_at = time.monotonic()

    def checkpoint(self) -> None:
        self.refresh()
        super().checkpoint()

    def summary(self) -> dict:
        out = super().summary()
        out["actor_restarts_seen"] = self.restarts
        out["server_restarts_seen"] = self.server_restarts
        out["versions_in_use"] = {f"{role}{i}": v for (role, i), v in self._versions.items()}
        inference = compact_inference(self.inference_totals())
        if inference.get("seconds"):
            inference["busy_share"] = inference["busy_seconds"] / inference["seconds"]
            out["wait_share"]["inference"] = 1.0 - inference["busy_share"]
        out["inference"] = inference
        out["compiles"] = {"driver": compiles(), "servers": sum(int(t.latest.get("compiles", 0)) for t in self._tracks),
                           "producers": sum(self._compiles.values())}
        return out

    # ------------------------------------------------------------ the loop

    def _producers(self) -> list:
        """Every producer actor, in the roles table's order."""
        return [actor for role in PRODUCERS for actor in self.actors[role.name]]

    def _submit(self, role: Role, index: int) -> None:
        self.inflight[self.actors[role.name][index].step.remote()] = (role, index)

    def _collect(self, ref) -> None:
        role, index = self.inflight.pop(ref)
        key = (role.name, index)
        try:
            stats = ray.get(ref)
        except RayActorError as e:
            if key not in self._down:                   # calls failing while it restarts: the same failure
                self._down.add(key)
                self.counters["actor_failures"] += 1
                self.log_line(f"{role.name} {index} died ({type(e).__name__}); Ray restarts it, the run goes on")
        except RayTaskError as e:
            self.counters["actor_failures"] += 1
            self._app_errors[key] += 1
            if self._app_errors[key] >= APP_ERROR_LIMIT:
                raise TrainError(f"{role.name} {index} failed {APP_ERROR_LIMIT} times in a row; "
                                 f"last error:\n{e}") from None
            self.log_line(f"{role.name} {index} raised {type(e.cause).__name__ if e.cause else 'an error'}; "
                          "retrying")
        else:
            self._down.discard(key)
            self._app_errors[key] = 0
            if self._own is not None:
                self._own.add(stats.pop("inference", {}))
            self.add_stats(role, stats)
            self._versions[key] = version = int(stats.get("version", -1))
            self._memory[f"{role.name}{index}"] = float(stats.get("rss_mb", 0.0))
            if "compiles" in stats:                     # a producer with its own network
                self._compiles[key] = int(stats["compiles"])
            pid = stats.get("pid")
            restarted = key in self.pids and pid != self.pids[key]
            if restarted:
                self.restarts += 1
            self.pids[key] = pid
            if self._own is not None:
                self._send_newest(f"{role.name} {index}", self.actors[role.name][index], version, restarted)
        if self.stop_reason is None:
            self._submit(role, index)

    def run(self) -> None:
        cfg = self.config
        batch_size = cfg.learner.batch_size
        self.inflight: dict = {}
        for role in PRODUCERS:
            for i in range(len(self.actors[role.name])):
                self._submit(role, i)
        if cfg.run.eval_every and self.learner.step_count == 0:
            self.request_eval()
        self.refresh()
        next_sample_at = time.monotonic()
        sample_ref = None
        batches: collections.deque = collections.deque()   # sampled, not yet trained on, in step order
        want_since = time.monotonic()           # the learner is ready for a batch since then
        while not self.should_stop():
            now = time.monotonic()
            if sample_ref is None and now >= next_sample_at and len(batches) <= SAMPLE_STEPS // 2:
                sample_ref = self._sample(batch_size, self.learner.step_count + len(batches))
            waits = list(self.inflight)
            if sample_ref is not None:
                waits.append(sample_ref)
            if self.eval_ref is not None:
                waits.append(self.eval_ref)
            timeout = 0.0 if batches else max(0.0, min(self._tick_at + self.tick_seconds - now,
                                                       (next_sample_at - now) if sample_ref is None else 1.0, 1.0))
            ready, _ = ray.wait(waits, num_returns=1, timeout=timeout) if waits else ([], [])
            for ref in ready:
                if ref is sample_ref or (sample_ref is not None and ref == sample_ref):
                    sample_ref = None
                    got = []
                    try:
                        got = ray.get(ref)
                    except Exception as e:  # noqa: BLE001 - the replay actor restarting
                        self.log_line(f"warning: sampling the replay failed ({type(e).__name__}); retrying")
                    batches.extend(got)
                    if not got:
                        next_sample_at = time.monotonic() + 0.02
                elif ref == self.eval_ref:
                    self._finish_eval()
                elif ref in self.inflight:
                    self._collect(ref)
            if batches:
                t0 = time.monotonic()
                waited = t0 - want_since
                losses = self.train_step(batches.popleft())
                self.after_step(losses)
                want_since = time.monotonic()
                self._wait["learner"] += waited
                self._spent["learner"] += want_since - t0 + waited
            if cfg.replay.persist_every and time.monotonic() - self._persisted_at >= cfg.replay.persist_every:
                self._persist_async()
            if time.monotonic() - self._tick_at >= self.tick_seconds:
                self.refresh()
                self.tick()
        self.refresh()

    def _sample(self, batch_size: int, step: int):
        """A ref to the replay's batches for learner steps `step`, `step` + 1, ... (`SAMPLE_STEPS` of
        them, none from `run.max_steps` on; fewer where the limiter refuses), each drawn from its
        step's seed; None when `step` is past the run's last. (A run that stops on time leaves up to
        1.5 x `SAMPLE_STEPS` batches drawn and not trained on, which the limiter has counted.)"""
        end, last = step + SAMPLE_STEPS, self.config.run.max_steps
        if last:
            end = min(end, last)
        if end <= step:
            return None
        seeds = [self.learner.sample_seed(s) for s in range(step, end)]
        return self.replay.try_sample_many.remote(batch_size, seeds)

    def _persist_async(self) -> None:
        if self._persist_ref is not None:
            ready, _ = ray.wait(self._persist_ref, num_returns=len(self._persist_ref), timeout=0)
            if len(ready) < len(self._persist_ref):
                return                                  # the previous snapshot is still being written
        self._persist_ref = self._save_snapshots()
        self._persisted_at = time.monotonic()

    def finish_evals(self) -> None:
        """Wait for the evaluation in flight and the pending one until the evaluation deadline;
        those unfinished then are given up (the actor, which gives up too, is killed at `close`)."""
        while self.eval_ref is not None and self.eval_time_left() > 0:
            ready, _ = ray.wait([self.eval_ref], timeout=max(0.0, self.eval_time_left()))
            if ready:
                self._finish_eval()
        for job in (self._eval_job, self.eval_pending):
            if job is not None:
                self.abandon_eval(job[0])
        self.eval_ref = self._eval_job = self.eval_pending = None

    def close(self) -> None:
        """Kill every actor (and Ray, when this run started it), then release the driver's part."""
        for handles in self.actors.values():
            for handle in handles:
                with contextlib.suppress(Exception):     # already gone
                    ray.kill(handle, no_restart=True)
        if self.owns_ray:
            ray.shutdown()
        if self.local_ray is not None:
            self.local_ray.stop()
        super().close()
