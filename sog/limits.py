"""Search limits that a protocol host puts on the searches run on its thread.

A host (`sog uci`) runs an agent's move on a worker thread inside
`SEARCH_LIMITS.limited(stop, deadline, iterations)`; every search loop on that
thread (the baselines' `sog.agents.sampling.common.Budget`, GT-CFR's phases, an external
engine's move limit) reads `SEARCH_LIMITS.current()` when it starts and asks
its `more` between units of work; a unit that can run long (a UCT rollout to the end of
a chess game) asks `expired` as it goes and is cut short. Outside `limited` there is no
limit, and the searches run exactly as they would without a host.
"""
from __future__ import annotations

import contextlib
import dataclasses
import threading
import time

__all__ = ["SEARCH_LIMITS", "Limits", "SearchLimits"]


@dataclasses.dataclass(frozen=True)
class Limits:
    """`stop` (a threading.Event, set from another thread), `deadline` (a `time.perf_counter()`
    time, seconds) and `iterations` (units of work: a baseline's iterations, GT-CFR's
    simulations, an engine's nodes); None: no such limit."""

    stop: threading.Event | None = None
    deadline: float | None = None
    iterations: int | None = None

    def more(self, done: int, start: float, step: int = 1) -> bool:
        """Whether a loop that began at `start` (a `time.perf_counter()` time, seconds) and has
        run `done` >= 1 units may run `step` more: not stopped, within `iterations`, and `step`
        more units of the mean length so far end before the deadline."""
        if self.stop is not None and self.stop.is_set():
            return False
        if self.iterations is not None and done + step > self.iterations:
            return False
        if self.deadline is not None:
            now = time.perf_counter()
            if now + (now - start) * step / done >= self.deadline:
                return False
        return True

    def timed(self) -> bool:
        """Whether a stop or a deadline can end the work (else `expired` is always False)."""
        return self.stop is not None or self.deadline is not None

    def expired(self) -> bool:
        """Stopped or past the deadline: a search cuts the unit of work it is in (a rollout)."""
        return (self.stop is not None and self.stop.is_set()) or (
            self.deadline is not None and time.perf_counter() >= self.deadline)

    def seconds_left(self) -> float | None:
        """Seconds to the deadline (negative past it), None without one."""
        return None if self.deadline is None else self.deadline - time.perf_counter()


class SearchLimits(threading.local):
    """The `Limits` of the current thread, set while `limited(...)` holds (module doc); searches
    end after at least one unit of work, so a stopped search still has a result."""

    stop: threading.Event | None = None
    deadline: float | None = None
    iterations: int | None = None

    def current(self) -> Limits:
        """The limits in force on this thread now."""
        return Limits(self.stop, self.deadline, self.iterations)

    @contextlib.contextmanager
    def limited(self, stop: threading.Event | None = None, deadline: float | None = None,
                iterations: int | None = None):
        saved = self.stop, self.deadline, self.iterations
        self.stop, self.deadline, self.iterations = stop, deadline, iterations
        try:
            yield
        finally:
            self.stop, self.deadline, self.iterations = saved


SEARCH_LIMITS = SearchLimits()
