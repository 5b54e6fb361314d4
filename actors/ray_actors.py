"""Ray actors: thin wrappers around the plain classes of `actors/`.

| actor | wraps | methods |
|---|---|---|
| `InferenceServerActor` | `actors.inference.InferenceServer` (async actor) | evaluate, set_weights, stats, ping |
| `ReplayActor` | `actors.replay.ReplayBuffer` | add, try_sample, counters, save, load |
| `QueryQueueActor` | `actors.queue.QueryQueue` | push, pop, counters, save |
| `SelfPlayWorker` | `actors.selfplay.SelfPlay` | step: play, push examples and queries |
| `QuerySolverActor` | `actors.query_solver.QuerySolver` | step: pop, solve, push examples and recursive queries |

The driver (`launch.train`) keeps one `step` call in flight per worker and
solver and collects the returned stats (counters, seconds, seconds waiting,
the weight version used, resident memory).

Fault tolerance: every actor is created with `max_restarts=-1`, so Ray
restarts one that dies. The stateless-on-restart services (inference server,
replay, queue) also have `max_task_retries=-1`: a call in flight when one
died is retried on the restarted actor, so workers just wait a little; replay
inserts are idempotent (example ids) so a retried `add` is harmless. The
replay and the queue reload their persisted files from the run directory
when (re)started, and a restarted inference server comes back with its
initial weights until the driver, which checks the server's version every
progress tick, publishes the latest again. Worker and solver `step` calls are
not retried (`max_task_retries=0`): the driver gets `RayActorError`, counts
it, and calls `step` again, which waits until the restarted actor is up. A
restarted worker or solver draws a fresh seed (the constructor mixes in the
clock), so it does not replay the games or example ids of its previous life.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import ray

from actors.inference import InferenceClient, InferenceServer
from actors.query_solver import QuerySolver
from actors.queue import QueryQueue
from actors.replay import ReplayBuffer
from actors.selfplay import SelfPlay
from sog.config import Config
from sog.games import load_game
from sog.process import rss_mb
from sog.seeding import fresh_seed

SERVICE = {"max_restarts": -1, "max_task_retries": -1}
PRODUCER = {"max_restarts": -1, "max_task_retries": 0}

# seed-sequence tags: distinct streams per role
SELFPLAY, SOLVER = 1, 2


InferenceServerActor = ray.remote(num_cpus=0, **SERVICE)(InferenceServer)


def _restore(store, path: str | None) -> str | None:
    """Load `path` into `store` (a replay buffer or query queue) if the file exists; the error
    message if it cannot be read, or None. Reported by `loaded()`, not raised: Ray would
    restart the actor forever."""
    if path and Path(path).is_file():
        try:
            store.load(path)
        except ValueError as e:
            return str(e)
    return None


@ray.remote(num_cpus=0, **SERVICE)
class ReplayActor:
    """The replay buffer; reloads `path` (if it exists) when (re)started."""

    def __init__(self, schema: dict, replay_config, path: str | None = None):
        self.buffer = ReplayBuffer.from_config(schema, replay_config)
        self.path = path
        self.load_error = _restore(self.buffer, path)

    def loaded(self) -> dict:
        """{"size": examples restored, "error": message or None}."""
        return {"size": self.buffer.size, "error": self.load_error}

    def add(self, examples: dict, ids) -> int:
        return self.buffer.add(examples, ids)

    def try_sample(self, batch_size: int, seed: int):
        return self.buffer.try_sample(batch_size, np.random.default_rng(seed))

    def counters(self) -> dict:
        return {**self.buffer.counters(), "ratio": self.buffer.sample_to_insert_ratio,
                "rss_mb": rss_mb()}

    def save(self, path: str | None = None) -> str:
        path = path or self.path
        self.buffer.save(path)
        return path

    def load(self, path: str) -> dict:
        self.buffer.load(path)
        return self.counters()


@ray.remote(num_cpus=0, **SERVICE)
class QueryQueueActor:
    """The query queue; reloads `path` (if it exists) when (re)started."""

    def __init__(self, capacity: int, game: str | None = None, path: str | None = None):
        self.queue = QueryQueue(capacity, load_game(game) if game else None)
        self.path = path
        self.load_error = _restore(self.queue, path)

    def loaded(self) -> dict:
        return {"size": len(self.queue), "error": self.load_error}

    def push(self, queries: list) -> int:
        return self.queue.push(queries)

    def pop(self, k: int) -> list:
        return self.queue.pop(k)

    def counters(self) -> dict:
        return self.queue.counters()

    def save(self, path: str | None = None) -> str:
        path = path or self.path
        self.queue.save(path)
        return path


def _push(replay, queue, produced) -> tuple[int, int]:
    """Send a Produced's examples to the replay and its queries to the queue; (new examples, dropped)."""
    refs = [replay.add.remote(produced.examples, produced.ids)]
    if produced.queries and queue is not None:
        refs.append(queue.push.remote(produced.queries))
    out = ray.get(refs)
    return int(out[0]), int(out[1]) if len(out) > 1 else 0


@ray.remote(num_cpus=1, **PRODUCER)
class SelfPlayWorker:
    """Sound self-play against the inference server; one `step` = one `SelfPlay.play`."""

    def __init__(self, config: Config, index: int, server, replay, queue):
        self.game = load_game(config.game)
        self.client = InferenceClient.for_actor(server, self.game)
        self.selfplay = SelfPlay(self.game, config, self.client, fresh_seed(config.run.seed, SELFPLAY, index))
        self.replay, self.queue = replay, queue
        self.index = index

    def step(self) -> dict:
        t0, w0, q0 = time.perf_counter(), self.client.wait_seconds, self.client.queries
        produced = self.selfplay.play()
        t1 = time.perf_counter()
        new, dropped = _push(self.replay, self.queue, produced)
        t2 = time.perf_counter()
        return {**produced.stats, "examples": len(produced.ids), "new_examples": new,
                "queries_pushed": len(produced.queries), "queries_dropped": dropped,
                "seconds": t2 - t0, "wait_inference": self.client.wait_seconds - w0,
                "wait_push": t2 - t1, "network_queries": self.client.queries - q0,
                "version": self.client.version, "rss_mb": rss_mb(), "pid": os.getpid()}

    def ping(self) -> int:
        return os.getpid()


@ray.remote(num_cpus=1, **PRODUCER)
class QuerySolverActor:
    """Query solving against the inference server; one `step` = pop up to k, solve, push."""

    def __init__(self, config: Config, index: int, server, replay, queue, batch: int,
                 idle_sleep: float = 0.05):
        self.game = load_game(config.game)
        self.client = InferenceClient.for_actor(server, self.game)
        self.solver = QuerySolver(self.game, config, self.client, fresh_seed(config.run.seed, SOLVER, index))
        self.replay, self.queue = replay, queue
        self.batch, self.idle_sleep = batch, idle_sleep

    def step(self) -> dict:
        t0, w0, q0 = time.perf_counter(), self.client.wait_seconds, self.client.queries
        queries = ray.get(self.queue.pop.remote(self.batch))
        t1 = time.perf_counter()
        if not queries:
            time.sleep(self.idle_sleep)
            t2 = time.perf_counter()
            return {"solves": 0, "examples": 0, "new_examples": 0, "recursive_pushed": 0,
                    "queries_dropped": 0, "seconds": t2 - t0, "wait_queue": t2 - t0,
                    "wait_inference": 0.0, "wait_push": 0.0, "version": self.client.version,
                    "rss_mb": rss_mb(), "pid": os.getpid()}
        produced = self.solver.solve(queries)
        t2 = time.perf_counter()
        new, dropped = _push(self.replay, self.queue, produced)
        t3 = time.perf_counter()
        return {**produced.stats, "examples": len(produced.ids), "new_examples": new,
                "recursive_pushed": len(produced.queries), "queries_dropped": dropped,
                "seconds": t3 - t0, "wait_queue": t1 - t0,
                "wait_inference": self.client.wait_seconds - w0, "wait_push": t3 - t2,
                "network_queries": self.client.queries - q0, "version": self.client.version, "rss_mb": rss_mb(), "pid": os.getpid()}

    def ping(self) -> int:
        return os.getpid()
