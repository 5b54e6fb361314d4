"""Seeds derived from seeds: the one formula every part of sog uses.

`derive_seed(*words)` turns nonnegative integers (a task's seed, then tags
naming a sub-task: a role, an index) into a 62-bit seed through numpy's
SeedSequence: the same words always give the same seed, different words
independent ones. Two cases that SeedSequence reads alike: a word of 2**32 or
more counts as its 32-bit words (low first), and a list of fewer than four
words as if padded with zeros (so `derive_seed(s, 0) == derive_seed(s)`).

`fresh_seed(*words)` also takes in the clock and the process id: for streams
that a restarted process must not repeat.
"""
from __future__ import annotations

import os
import time

import numpy as np


def derive_seed(*words: int) -> int:
    """A seed in [0, 2**62) that is a function of `words` (nonnegative ints) only."""
    return int(np.random.SeedSequence([int(w) for w in words]).generate_state(1, np.uint64)[0] >> 2)


def fresh_seed(*words: int) -> int:
    """`derive_seed` of `words`, the clock (ns) and the process id: never the same twice."""
    return derive_seed(*words, time.time_ns() & (2**63 - 1), os.getpid())
