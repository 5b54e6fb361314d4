"""The producers' step (plain, Ray-free): one unit of work, its outputs delivered, its stats.

A producer makes training data. `SelfPlayWorker.step` plays one
`SelfPlay.play` (`selfplay.games_per_worker` games); `QuerySolverWorker.step`
pops up to `sog.config.solve_batch` queries from the query queue and solves
them (`QuerySolver.solve`). Each hands its examples to the replay buffer and its
queries to the query queue through its `Channels`, and returns its stats.

Both training runs call these very methods: the Ray run in one actor per
producer (`actors.ray_actors.ProducerActor`: its client asks the inference
server actor, its channels are the replay and queue actors), the Ray-free run
in its own process (`LocalChannels`, and a client of the in-process network).

A producer is built as `cls(game, config, client, channels, seed)`:
client: the `actors.inference.InferenceClient` its searches ask (it counts
queries and seconds waiting and keeps the newest weight version seen, which
stamps the step's examples: `Produced.stamp`);
seed: its random stream (self-play games, solves, example ids).

Stats (a dict per step): the counters of the work (`games`, `searches`,
`moves` / `solves`, of which `random_solves`: `solver.q_random`), `examples`
made, `new_examples` (new to the replay), `queries_pushed` /
`recursive_pushed` and `queries_dropped` (by the full queue),
`network_queries` (public belief states asked), `seconds` (the whole
step), of which `wait_inference` (waiting for network answers), `wait_push`
(delivering) and, for solvers, `wait_queue` (popping; with an empty queue, the
whole step), where the searches' time went (`actors.search_time`), the weight
`version` last used, `rss_mb` and `pid` of the process.
"""
from __future__ import annotations

import os
import time
from typing import Protocol

from actors.examples import Produced
from actors.query_solver import QuerySolver
from actors.queue import QueryQueue
from actors.replay import ReplayBuffer
from actors.selfplay import SelfPlay
from sog.config import Config, solve_batch
from sog.games.api import Game
from sog.process import rss_mb


class Channels(Protocol):
    """Where a producer's outputs go and a solver's queries come from."""

    def deliver(self, produced: Produced) -> tuple[int, int]:
        """Examples to the replay, queries to the queue; (examples new to the replay, queries dropped)."""

    def pop(self, k: int) -> list:
        """Up to `k` queries from the queue (newest first); [] when it is empty."""


class LocalChannels:
    """`Channels` to an in-process replay buffer and query queue (None: queries are not kept)."""

    def __init__(self, replay: ReplayBuffer, queue: QueryQueue | None):
        self.replay, self.queue = replay, queue

    def deliver(self, produced: Produced) -> tuple[int, int]:
        new = self.replay.add(produced.examples, produced.ids)
        dropped = self.queue.push(produced.queries) if self.queue is not None else 0
        return new, dropped

    def pop(self, k: int) -> list:
        return self.queue.pop(k) if self.queue is not None else []


class SelfPlayWorker:
    """Sound self-play with `client`; one `step` = one `SelfPlay.play`, delivered (see module doc)."""

    def __init__(self, game: Game, config: Config, client, channels: Channels, seed: int):
        self.client, self.channels = client, channels
        self.selfplay = SelfPlay(game, config, client, seed)

    def step(self) -> dict:
        client = self.client
        t0, w0, q0 = time.perf_counter(), client.wait_seconds, client.queries
        produced = self.selfplay.play()
        produced.stamp(client.version)
        t1 = time.perf_counter()
        new, dropped = self.channels.deliver(produced)
        t2 = time.perf_counter()
        return {**produced.stats, "examples": len(produced.ids), "new_examples": new,
                "queries_pushed": len(produced.queries), "queries_dropped": dropped,
                "seconds": t2 - t0, "wait_inference": client.wait_seconds - w0,
                "wait_push": t2 - t1, "network_queries": client.queries - q0,
                "version": client.version, "rss_mb": rss_mb(), "pid": os.getpid()}


class QuerySolverWorker:
    """Query solving with `client`; one `step` = pop up to `batch`, solve, deliver (see module doc)."""

    def __init__(self, game: Game, config: Config, client, channels: Channels, seed: int):
        self.client, self.channels = client, channels
        self.solver = QuerySolver(game, config, client, seed)
        self.batch = solve_batch(config)

    def step(self, batch: int | None = None) -> dict:
        """Solve up to `batch` queries (default `self.batch`)."""
        client = self.client
        t0, w0, q0 = time.perf_counter(), client.wait_seconds, client.queries
        queries = self.channels.pop(self.batch if batch is None else batch)
        t1 = time.perf_counter()
        if not queries:
            return {"solves": 0, "random_solves": 0, "examples": 0, "new_examples": 0, "recursive_pushed": 0,
                    "queries_dropped": 0, "seconds": t1 - t0, "wait_queue": t1 - t0,
                    "wait_inference": 0.0, "wait_push": 0.0, "version": client.version,
                    "rss_mb": rss_mb(), "pid": os.getpid()}
        produced = self.solver.solve(queries)
        produced.stamp(client.version)
        t2 = time.perf_counter()
        new, dropped = self.channels.deliver(produced)
        t3 = time.perf_counter()
        return {**produced.stats, "examples": len(produced.ids), "new_examples": new,
                "recursive_pushed": len(produced.queries), "queries_dropped": dropped,
                "seconds": t3 - t0, "wait_queue": t1 - t0,
                "wait_inference": client.wait_seconds - w0, "wait_push": t3 - t2,
                "network_queries": client.queries - q0, "version": client.version,
                "rss_mb": rss_mb(), "pid": os.getpid()}
