"""The resignation threshold calibrated on the no-resignation games (AlphaGo Zero's rule).

A fixed threshold (Table S2: -0.9) can be far off for a young network: a go9_small
run resigned wrongly in 29% of the cases its no-resignation games could check. AlphaGo Zero
instead chose the threshold "automatically to keep the fraction of false positives below 5%".
Here each self-play worker keeps, for the seats of its last `window` no-resignation games, the
lowest value its searches gave the position (`actors.selfplay.searcher_value`: expected utility
/ max utility) and whether the seat lost. A threshold t would have made the seats with lowest
value < t resign; a resignation is false when the seat did not lose. The calibrated threshold
is the highest t, at most the configured one (`selfplay.resign_threshold`, the ceiling), whose
false share over the window is at most `false_rate`; until `min_records` seats are in the window
it is the configured one.

The state lives in the worker; a restarted worker starts again from the configured threshold.
"""
from __future__ import annotations

from collections import deque

import numpy as np

WINDOW = 2000           # seat records kept (most recent)
MIN_RECORDS = 20        # records before the threshold moves


def calibrated_threshold(lowest: np.ndarray, lost: np.ndarray, false_rate: float, ceiling: float) -> float:
    """The highest t <= ceiling such that of the seats with lowest < t at most `false_rate` did
    not lose (module doc). lowest float [n]: each seat's lowest value; lost bool [n]."""
    below = lowest < ceiling
    v, bad = lowest[below], ~lost[below]
    if len(v) == 0:
        return ceiling
    order = np.argsort(v, kind="stable")
    v, bad = v[order], bad[order]
    k = np.arange(1, len(v) + 1)
    ok = np.cumsum(bad) <= false_rate * k          # resigning the k lowest seats is within the rate
    # t in (v[k-1], v[k]] resigns exactly the k lowest seats; only where v[k-1] < v[k] (ties)
    cut = np.append(v[1:] > v[:-1], True)
    good = np.flatnonzero(ok & cut)
    if len(good) == 0:
        return float(v[0])                         # no seat of the window would resign
    k_best = good[-1] + 1
    return ceiling if k_best == len(v) else float(v[k_best])


class ResignCalibration:
    """A worker's window of (lowest value, lost) seat records and its threshold (module doc)."""

    def __init__(self, ceiling: float, false_rate: float, window: int = WINDOW, min_records: int = MIN_RECORDS):
        self.ceiling, self.false_rate, self.min_records = ceiling, false_rate, min_records
        self.records: deque[tuple[float, bool]] = deque(maxlen=window)
        self.threshold = ceiling

    def add(self, records) -> None:
        """Add (lowest value, lost) records of no-resignation games' seats and recalibrate (when
        `false_rate` > 0; else the threshold stays the configured one)."""
        self.records.extend((float(v), bool(lost)) for v, lost in records if np.isfinite(v))
        if self.false_rate > 0 and len(self.records) >= self.min_records:
            lowest, lost = (np.array(x) for x in zip(*self.records))
            self.threshold = calibrated_threshold(lowest, lost.astype(bool), self.false_rate, self.ceiling)
