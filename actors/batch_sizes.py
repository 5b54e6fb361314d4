"""A bounded histogram of batch sizes (rows per network call) and its percentiles.

The inference server keeps one of its batches and an `InferenceClient` one of its calls
(in the Ray-free training run, the network's batches); `stats()` carries the counts, so a
reader takes two snapshots and `summarize(difference(later, earlier))` for a time window.
"""
from __future__ import annotations

from collections.abc import Mapping

CAP = 4096   # sizes above this many rows are counted at CAP: at most CAP distinct keys


class BatchSizes:
    """How many batches of each size (rows) there were; sizes above `cap` count at `cap`."""

    def __init__(self, cap: int = CAP):
        self.cap = int(cap)
        self._counts: dict[int, int] = {}

    def add(self, rows: int) -> None:
        k = min(int(rows), self.cap)
        self._counts[k] = self._counts.get(k, 0) + 1

    def counts(self) -> dict[int, int]:
        """A copy of the counts: size (rows) -> batches."""
        return dict(self._counts)


def difference(later: Mapping, earlier: Mapping) -> dict[int, int]:
    """The counts added between two snapshots of `BatchSizes.counts()` (keys as ints)."""
    out = {int(k): int(v) - int(earlier.get(k, 0)) for k, v in later.items()}
    return {k: v for k, v in out.items() if v > 0}


def percentile(counts: Mapping[int, int], q: float) -> int:
    """The nearest-rank `q`-quantile (q in (0, 1]) of the sizes counted; 0 for no batches."""
    total = sum(counts.values())
    if not total:
        return 0
    need, seen = q * total, 0
    for size in sorted(counts):
        seen += counts[size]
        if seen >= need:
            return int(size)
    return int(max(counts))


def summarize(counts: Mapping[int, int]) -> dict:
    """batches, mean, p50, p95 and max of the sizes counted (rows; 0 for no batches)."""
    batches = sum(counts.values())
    rows = sum(size * n for size, n in counts.items())
    return {"batches": batches, "mean": rows / batches if batches else 0.0,
            "p50": percentile(counts, 0.5), "p95": percentile(counts, 0.95),
            "max": int(max(counts)) if counts else 0}
