"""Batched CVPN inference shared by the self-play workers and query solvers (the Ray
run has `inference.servers` servers, each answering its share of the producers; with
none, each producer asks a network in its own process through `InferenceClient.in_process`).

Three pieces:

- `BatchingInference`: the plain asyncio core (no Ray). Concurrent
  `await infer(inputs, possible)` requests are gathered into one batch of
  at most `max_batch` rows (a single larger request forms a batch of its own),
  waiting at most `max_wait_ms` after the first request of a batch for more;
  one `apply_fn(params, inputs, possible)` call answers the batch and each
  request gets its rows back, tagged with the weight version that computed
  them. The call runs in a worker thread, so the event loop stays free while
  a batch computes: new requests queue up for the next batch, and
  `set_weights(params, version)` only swaps a reference that the *next*
  batch picks up. A weight update therefore never waits behind inference,
  and a batch never mixes two versions.
- `InferenceServer`: that core around a jitted CVPN (`NetworkValueFunction`'s
  bucketed `apply_padded`), with async methods; the Ray training run
  (`launch.ray_run`) makes it a Ray async actor (all methods on one event
  loop, up to 1000 concurrent calls). It runs on `inference.device`
  (`networks.devices.resolve`); the weights are moved there once per version, with
  the shapes of the first (no recompilation: `compiles` in `stats()` counts the
  process's XLA compilations).
- `InferenceClient`: a sog `ValueFunction` (`sog.search.value_function`)
  backed by one server. It encodes the beliefs itself
  (`networks.encoding.encode_query`) and converts the network's outputs to game
  units (`game_values`), exactly as `NetworkValueFunction.evaluate` does,
  so the wire carries small float arrays, not public states, and the
  encoding work is spread over the clients. It records the latest weight
  version it saw (for the weight-lag metric), the seconds spent waiting and
  the sizes of its calls (`batch_sizes`).

Metrics (`stats()`): batches, requests, queries (rows), mean batch size,
the histogram of batch sizes (`actors.batch_sizes`), busy seconds
(computing), idle seconds (no request pending), the current version and
weight updates; rates are differences of these over time.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import os
import time
from collections.abc import Callable, Sequence

import numpy as np

from actors.batch_sizes import BatchSizes
from networks.encoding import encode_query, game_values
from sog.games import load_game
from sog.process import rss_mb

ApplyFn = Callable[[object, np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]


class BatchingInference:
    """Gathers concurrent requests into batches for one `apply_fn` (see module doc).

    apply_fn(params, inputs [B, ...], possible [B, ...]) -> (values [B, ...], logits [B, ...]):
    row-wise; called in a single worker thread. params, version: the initial weights.
    """

    def __init__(self, apply_fn: ApplyFn, params, version: int = 0, max_batch: int = 1024,
                 max_wait_ms: float = 2.0):
        if max_batch < 1:
            raise ValueError(f"max_batch must be >= 1, got {max_batch}")
        if max_wait_ms < 0:
            raise ValueError(f"max_wait_ms must be >= 0, got {max_wait_ms}")
        self.apply_fn = apply_fn
        self.max_batch = int(max_batch)
        self.max_wait = float(max_wait_ms) / 1000.0
        self._weights = (params, int(version))
        self._pending: list[tuple[np.ndarray, np.ndarray, asyncio.Future]] = []
        self._arrived: asyncio.Event | None = None
        self._task: asyncio.Task | None = None
        self._executor = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="inference")
        self.batches = self.requests = self.queries = self.weight_updates = 0
        self.busy_seconds = self.idle_seconds = 0.0
        self._busy_since = self._idle_since = None   # the perf_counter start of a period in progress
        self.batch_sizes = BatchSizes()
        self.started = time.perf_counter()

    # ------------------------------------------------------------ public API

    @property
    def version(self) -> int:
        return self._weights[1]

    def set_weights(self, params, version: int) -> None:
        """Use `params` from the next batch on; never waits (a batch in flight keeps its weights)."""
        self._weights = (params, int(version))
        self.weight_updates += 1

    async def infer(self, inputs: np.ndarray, possible: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
        """(values, logits, version) for one request's rows; waits for its batch."""
        self._ensure_started()
        future = asyncio.get_running_loop().create_future()
        self._pending.append((np.asarray(inputs), np.asarray(possible), future))
        self.requests += 1
        self._arrived.set()
        return await future

    def stats(self) -> dict:
        """The counters now; busy and idle seconds include a period in progress."""
        now = time.perf_counter()
        busy = self.busy_seconds + (now - self._busy_since if self._busy_since is not None else 0.0)
        idle = self.idle_seconds + (now - self._idle_since if self._idle_since is not None else 0.0)
        return {"version": self.version, "batches": self.batches, "requests": self.requests,
                "queries": self.queries, "mean_batch": self.queries / max(self.batches, 1),
                "batch_sizes": self.batch_sizes.counts(),
                "busy_seconds": busy, "idle_seconds": idle,
                "weight_updates": self.weight_updates, "pending": len(self._pending),
                "seconds": now - self.started}

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            self._task = None
        self._executor.shutdown(wait=False)

    # ------------------------------------------------------------ the batching loop

    def _ensure_started(self) -> None:
        if self._task is None or self._task.done():
            self._arrived = asyncio.Event()
            self._task = asyncio.get_running_loop().create_task(self._loop())

    def _pending_rows(self) -> int:
        return sum(len(x) for x, _, _ in self._pending)

    async def _loop(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            if not self._pending:
                self._idle_since = time.perf_counter()
                self._arrived.clear()
                await self._arrived.wait()
                self.idle_seconds += time.perf_counter() - self._idle_since
                self._idle_since = None
            deadline = loop.time() + self.max_wait
            while self._pending_rows() < self.max_batch:
                remaining = deadline - loop.time()
                if remaining <= 0:
                    break
                self._arrived.clear()
                try:
                    await asyncio.wait_for(self._arrived.wait(), remaining)
                except TimeoutError:
                    break
            batch, rows = [], 0
            while self._pending and (not batch or rows + len(self._pending[0][0]) <= self.max_batch):
                item = self._pending.pop(0)
                batch.append(item)
                rows += len(item[0])
            batch = [b for b in batch if not b[2].done()]      # a caller that gave up
            if not batch:
                continue
            params, version = self._weights                    # one version for the whole batch
            inputs = np.concatenate([b[0] for b in batch])
            possible = np.concatenate([b[1] for b in batch])
            self._busy_since = time.perf_counter()
            try:
                values, logits = await loop.run_in_executor(self._executor, self.apply_fn, params,
                                                            inputs, possible)
            except Exception as err:  # noqa: BLE001 - every waiting caller gets the error
                for _, _, fut in batch:
                    if not fut.done():
                        fut.set_exception(err)
                continue
            finally:
                self.busy_seconds += time.perf_counter() - self._busy_since
                self._busy_since = None
            self.batches += 1
            self.queries += len(inputs)
            self.batch_sizes.add(len(inputs))
            k = 0
            for x, _, fut in batch:
                n = len(x)
                if not fut.done():
                    fut.set_result((values[k:k + n], logits[k:k + n], version))
                k += n


class InferenceServer:
    """The CVPN of `config` behind a `BatchingInference` (async methods; see module doc).

    params: flax variables (numpy or jax arrays); version: their weight version.
    Runs on `config.inference.device` as this process resolves it (`networks.devices.resolve`).
    """

    def __init__(self, config, params, version: int = 0):
        import jax

        from networks.devices import compiles, resolve
        from networks.value_function import NetworkValueFunction

        self._jax, self._compiles = jax, compiles
        self.device = resolve(config.inference.device, "inference.device")
        game = load_game(config.game)
        self.vf = NetworkValueFunction.serving(game, config, jax.device_put(params, self.device), version)
        self.core = BatchingInference(self._apply, self.vf.params, version, config.inference.max_batch,
                                      config.inference.max_wait_ms)

    def _apply(self, params, inputs, possible):
        self.vf.params = params            # only this (single) worker thread touches vf
        return self.vf.apply_padded(inputs, possible)

    async def infer(self, inputs: np.ndarray, possible: np.ndarray):
        """`BatchingInference.infer`: (values, logits in network units, version) for encoded
        inputs [B, 2N + F] and possible [B, 2, N]."""
        return await self.core.infer(inputs, possible)

    async def set_weights(self, params, version: int) -> int:
        """Swap in weights `version` for the next batch; returns the version now current."""
        if version > self.core.version:
            self.core.set_weights(self._jax.device_put(params, self.device), version)
        return self.core.version

    async def stats(self) -> dict:
        return {**self.core.stats(), "rss_mb": rss_mb(), "pid": os.getpid(), "compiles": self._compiles(),
                "device": str(self.device)}

    async def ping(self) -> int:
        return self.core.version


class InferenceClient:
    """A `ValueFunction` answered by an inference server (see module doc).

    submit(inputs, possible) -> (values, logits, version): the transport; use
    `InferenceClient.for_actor(handle, game)` for a Ray actor handle,
    `InferenceClient.in_process(vf)` for a network in this process.
    """

    def __init__(self, submit: Callable, game):
        self.submit = submit
        self.game = game
        self.version = -1               # the newest weight version seen in an answer
        self.calls = self.queries = 0
        self.wait_seconds = 0.0
        self.batch_sizes = BatchSizes()     # rows per call (the Ray-free run: the network's batches)

    @classmethod
    def for_actor(cls, handle, game) -> InferenceClient:
        import ray

        def submit(inputs, possible):
            return ray.get(handle.infer.remote(inputs, possible))
        return cls(submit, game)

    @classmethod
    def in_process(cls, vf) -> InferenceClient:
        """A client of `vf`, a `NetworkValueFunction` in this process (the Ray-free training run):
        the same answers as `vf.evaluate`, tagged with `vf`'s current version."""
        def submit(inputs, possible):
            return (*vf.apply_padded(inputs, possible), vf.version)
        return cls(submit, vf.game)

    def evaluate(self, pubs: Sequence, ranges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        spec = self.game.spec
        n, a = spec.num_states, spec.num_actions
        if not len(pubs):
            return np.zeros((0, 2, n)), np.zeros((0, 2, n, a))
        inputs, possible, unit = encode_query(self.game, pubs, ranges)
        t0 = time.perf_counter()
        values, logits, version = self.submit(inputs, possible)
        self.wait_seconds += time.perf_counter() - t0
        self.version = max(self.version, int(version))
        self.calls += 1
        self.queries += len(pubs)
        self.batch_sizes.add(len(pubs))
        return game_values(values, possible, unit), np.asarray(logits, dtype=np.float64)
