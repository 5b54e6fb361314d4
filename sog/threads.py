"""Threads for the compiled loops that release the GIL (numba `nogil` kernels): one process-wide count.

The count is 1 by default: every loop runs on the calling thread, as it always did (Ray actors,
tests and small games need nothing else). A process that solves one large tree (`sog bench
holdem`, `sog solve --threads K`) sets it with `set_threads(k)` (or `using(k)` for a block);
the callers that can split their work (`sog.search.row_cfr`'s passes over slots, the poker
terminal values over terminals, `sog.games.poker`) then run `parts()` pieces side by side on a
shared pool of k threads with `run`. A split never changes a result: every piece does the
arithmetic it would do alone, on its own rows. A piece is never split again: inside a call that
`run` runs, `parts()` is 1 (a loop that splits its work calls loops that could split theirs).
"""
from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor

_count = 1
_pool: ThreadPoolExecutor | None = None
_piece = threading.local()      # .inside: whether this thread is running a piece of `run`


def available() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def parts() -> int:
    """The number of pieces a splittable loop is cut into now: the thread count, 1 inside a piece."""
    return 1 if getattr(_piece, "inside", False) else _count


def set_threads(k: int) -> None:
    """Use k >= 1 threads from now on (ValueError otherwise); the pool is made when first needed."""
    global _count, _pool
    if int(k) != k or k < 1:
        raise ValueError(f"the thread count must be an integer >= 1, got {k!r}")
    if _pool is not None and k != _count:
        _pool.shutdown(wait=True)
        _pool = None
    _count = int(k)


@contextlib.contextmanager
def using(k: int) -> Iterator[None]:
    """`set_threads(k)` for the block, then the previous count again."""
    before = _count
    set_threads(k)
    try:
        yield
    finally:
        set_threads(before)


def bounds(n: int, pieces: int) -> list[tuple[int, int]]:
    """[lo, hi) ranges cutting range(n) into at most `pieces` contiguous non-empty pieces of
    near-equal size (one (0, n) piece for n <= 1)."""
    pieces = max(1, min(pieces, n))
    cuts = [n * i // pieces for i in range(pieces + 1)]
    return [(cuts[i], cuts[i + 1]) for i in range(pieces)]


def run(calls: Sequence[Callable[[], object]]) -> None:
    """Run the calls, the first on this thread and the others on the pool, and wait for all of
    them; the first exception raised is raised here (after every call has ended)."""
    global _pool
    if len(calls) == 1:
        calls[0]()
        return
    if _pool is None:
        _pool = ThreadPoolExecutor(max_workers=max(_count - 1, 1), thread_name_prefix="sog-compute")
    futures = [_pool.submit(_as_piece, c) for c in calls[1:]]
    error = None
    try:
        _as_piece(calls[0])
    except BaseException as e:  # noqa: BLE001 - raised below, once the others have ended
        error = e
    for f in futures:
        try:
            f.result()
        except BaseException as e:  # noqa: BLE001
            error = error or e
    if error is not None:
        raise error


def _as_piece(call: Callable[[], object]) -> None:
    """call(), with `parts()` 1 on this thread while it runs."""
    outer = getattr(_piece, "inside", False)
    _piece.inside = True
    try:
        call()
    finally:
        _piece.inside = outer
