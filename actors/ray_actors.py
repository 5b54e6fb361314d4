"""Ray actors: thin wrappers around the plain classes of `actors/`.

| actor | wraps | methods |
|---|---|---|
| `actors.inference.InferenceServer` (an async actor as it is) | the CVPN behind batching | infer, set_weights, stats, ping |
| `ReplayActor` | `actors.replay.ReplayBuffer` | loaded, add, try_sample_many, peek, newest, counters, save, load |
| `QueryQueueActor` | `actors.queue.QueryQueue` | loaded, push, pop, counters, save |
| `ProducerActor` | a producer of `actors.producers` (self-play worker, query solver), with its own network when the run has no server | step, set_weights, ping |

The classes here are plain Python; the training run (`launch.ray_run`) makes
each one a Ray actor class with the options of its role (`launch.roles`:
resources, restarts). The driver keeps one `step` call in flight per producer
and collects the returned stats (counters, seconds, seconds waiting, the
weight version used, resident memory): the stats of the plain producer's
step, the very method the Ray-free run calls.

Fault tolerance: every actor is created with `max_restarts=-1`, so Ray
restarts one that dies. The stateless-on-restart services (inference server,
replay, queue) also have `max_task_retries=-1`: a call in flight when one
died is retried on the restarted actor, so workers just wait a little; replay
inserts are idempotent (example ids) so a retried `add` is harmless. The
replay and the queue reload their persisted files from the run directory
when (re)started, and a restarted inference server comes back with its
initial weights until the driver, which checks every server's version every
progress tick, publishes the latest again. A restarted producer keeps the
inference server it was given, and a restarted server answers the same
producers as before. Producer `step` calls are not
retried (`max_task_retries=0`): the driver gets `RayActorError`, counts it,
and calls `step` again, which waits until the restarted actor is up. A
restarted producer draws a fresh seed (the constructor mixes in the clock),
so it does not replay the games or example ids of its previous life.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import ray

from actors.batch_sizes import difference
from actors.examples import Produced
from actors.inference import InferenceClient
from actors.queue import QueryQueue
from actors.replay import ReplayBuffer
from sog.config import Config
from sog.games import load_game
from sog.process import rss_mb
from sog.seeding import fresh_seed

IDLE_SLEEP = 0.05          # seconds an empty pop waits before answering, so an idle solver does not spin



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

    def try_sample_many(self, batch_size: int, seeds: list[int]) -> list:
        return self.buffer.try_sample_many(batch_size, seeds)

    def peek(self, batch_size: int, seed: int):
        """`ReplayBuffer.peek` (None when the buffer is empty)."""
        return self.buffer.peek(batch_size, np.random.default_rng(seed)) if self.buffer.size else None

    def newest(self, k: int) -> dict:
        return self.buffer.newest(k)

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


class RayChannels:
    """`actors.producers.Channels` to the replay and queue actors (queue None: no solvers, queries
    are not kept). An empty pop answers after `IDLE_SLEEP` seconds."""

    def __init__(self, replay, queue):
        self.replay, self.queue = replay, queue

    def deliver(self, produced: Produced) -> tuple[int, int]:
        refs = [self.replay.add.remote(produced.examples, produced.ids)]      # both calls at once
        if produced.queries and self.queue is not None:
            refs.append(self.queue.push.remote(produced.queries))
        out = ray.get(refs)
        return int(out[0]), int(out[1]) if len(out) > 1 else 0

    def pop(self, k: int) -> list:
        queries = ray.get(self.queue.pop.remote(k))
        if not queries:
            time.sleep(IDLE_SLEEP)
        return queries


class ProducerActor:
    """A producer of `actors.producers` on Ray: `plain(game, config, client, channels, seed)` with
    `RayChannels(replay, queue)`, seeded afresh from (run.seed, seed_tag, index) and the clock; a
    `step` call is one call of its method `step`.

    Its client asks the inference server `server` (with several, the run hands each producer one:
    `launch.ray_run.server_of`), or, with `server` None (`inference.servers` 0), a network in
    this process built from `weights` (flax variables) at `version`, which `set_weights` swaps;
    each step's stats then carry `inference`, the network calls since the previous step: calls,
    queries (rows), seconds (computing) and the batch-size counts. That network runs on
    `inference.device` (`networks.devices.resolve`), and the stats carry `compiles`, the XLA
    compilations of this process so far (`networks.devices.compiles`).
    """

    def __init__(self, plain: type, step: str, config: Config, index: int, seed_tag: int,
                 server, replay, queue, weights=None, version: int = 0):
        self.name = f"{plain.__name__}{index}"
        game = load_game(config.game)
        self.vf = None
        if server is None:
            # here, not at the top: only a producer with its own network builds one (and runs JAX)
            import jax

            from networks.devices import compiles, resolve
            from networks.value_function import NetworkValueFunction
            self._compiles = compiles
            device = resolve(config.inference.device, "inference.device")
            # the weights move to the device once per version
            self._device_put = lambda params: jax.device_put(params, device)
            self.vf = NetworkValueFunction.serving(game, config, self._device_put(weights), version)
            self.client = InferenceClient.in_process(self.vf)
        else:
            self.client = InferenceClient.for_actor(server, game)
        producer = plain(game, config, self.client, RayChannels(replay, queue),
                         fresh_seed(config.run.seed, seed_tag, index))
        self._step = getattr(producer, step)
        self._reported = (0, 0, 0.0, {})        # the client's calls, queries, seconds, sizes at the last step

    def step(self) -> dict:
        stats = self._step()
        if self.vf is not None:
            stats["compiles"] = self._compiles()
            c = self.client
            calls, queries, seconds, sizes = self._reported
            now = c.batch_sizes.counts()
            stats["inference"] = {"calls": c.calls - calls, "queries": c.queries - queries,
                                  "seconds": c.wait_seconds - seconds, "batch_sizes": difference(now, sizes)}
            self._reported = (c.calls, c.queries, c.wait_seconds, now)
        return stats

    def set_weights(self, params, version: int) -> int:
        """Swap in weights `version` for the next step (a producer with its own network; a newer
        version only); returns the version now current (-1 for a producer that asks a server)."""
        if self.vf is None:
            return -1
        if version > self.vf.version:
            self.vf.set_params(self._device_put(params), version)
        return self.vf.version

    def ping(self) -> int:
        return os.getpid()

    def __repr__(self) -> str:
        """Ray's prefix for this actor's log lines (SelfPlayWorker0 rather than ProducerActor)."""
        return self.name
