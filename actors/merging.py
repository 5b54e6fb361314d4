"""Run several searches at once and merge their network queries into one call.

Each search (a self-play game, a query solve) runs in its own thread against a
`MergingValueFunction`: a thread asking for values waits until every running
thread is waiting too (or `max_wait_s` passed), then one `evaluate` call on
the wrapped value function answers all of them. NumPy releases the GIL in its
kernels, so the threads' CFR passes overlap a little too; the point is the
batch size the inference server sees, which grows with the number of games.

Each request's time in `evaluate` is split (seconds, summed over requests): the
merged call that answered it (`network_seconds`: every request of a call counts
the whole call) and the rest (`merge_wait_seconds`: waiting for the other
threads' requests, then for the lock after the answer).
"""
from __future__ import annotations

import threading
import time
from typing import Callable, Sequence

import numpy as np

from sog.search.value_function import ValueFunction


class MergingValueFunction:
    """A `ValueFunction` (`sog.search.value_function`) shared by `parties` threads that
    merges their calls into calls of the wrapped one; see module doc."""

    def __init__(self, value_fn: ValueFunction, parties: int, max_wait_s: float = 0.05):
        self.value_fn, self.active, self.max_wait_s = value_fn, parties, max_wait_s
        self._cv = threading.Condition()
        self._pending: list[dict] = []
        self.calls = 0
        self.network_seconds = self.merge_wait_seconds = 0.0   # see module doc

    def evaluate(self, pubs: Sequence, ranges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        t0 = time.perf_counter()
        req = {"pubs": list(pubs), "ranges": np.asarray(ranges), "out": None, "call": 0.0}
        with self._cv:
            self._pending.append(req)
            while req["out"] is None:
                if len(self._pending) >= self.active:
                    self._flush()
                elif not self._cv.wait(timeout=self.max_wait_s) and req["out"] is None:
                    self._flush()
            self.network_seconds += req["call"]
            self.merge_wait_seconds += time.perf_counter() - t0 - req["call"]
        if isinstance(req["out"], BaseException):
            raise req["out"]
        return req["out"]

    def leave(self) -> None:
        """A thread finished: the others no longer wait for it."""
        with self._cv:
            self.active -= 1
            self._cv.notify_all()

    def _flush(self) -> None:
        """Answer every pending request with one call (the lock is held)."""
        batch, self._pending = self._pending, []
        if not batch:
            return
        pubs = [p for r in batch for p in r["pubs"]]
        t0 = time.perf_counter()
        try:
            values, logits = self.value_fn.evaluate(pubs, np.concatenate([r["ranges"] for r in batch]))
            self.calls += 1
            k = 0
            for r in batch:
                n = len(r["pubs"])
                r["out"] = (values[k:k + n], logits[k:k + n])
                k += n
        except BaseException as err:   # handed to every waiting thread, re-raised there
            for r in batch:
                r["out"] = err
        call = time.perf_counter() - t0
        for r in batch:
            r["call"] = call
        self._cv.notify_all()


def run_merged(jobs: Sequence[Callable], value_fn: ValueFunction) -> tuple[list, dict]:
    """Run `jobs` (each `job(merged_value_fn) -> result`) in threads with merged queries.

    Returns the jobs' results and the requests' seconds {"network": ..., "merge_wait": ...}
    (`MergingValueFunction`'s split, summed over every request of every job)."""
    merged = MergingValueFunction(value_fn, len(jobs))
    results: list = [None] * len(jobs)

    def work(i):
        try:
            results[i] = jobs[i](merged)
        except BaseException as err:
            results[i] = err
        finally:
            merged.leave()

    threads = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(len(jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        if isinstance(r, BaseException):
            raise r
    return results, {"network": merged.network_seconds, "merge_wait": merged.merge_wait_seconds}
