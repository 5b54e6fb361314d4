"""Seeds derived from seeds: the one formula every part of sog uses.

`derive_seed(*words)` turns nonnegative integers (a task's seed, then tags
naming a sub-task: a role, an index) into a 62-bit seed through numpy's
SeedSequence: the same words always give the same seed, different words
independent ones. Two cases that SeedSequence reads alike: a word of 2**32 or
more counts as its 32-bit words (low first), and a list of fewer than four
words as if padded with zeros (so `derive_seed(s, 0) == derive_seed(s)`).

`fresh_seed(*words)` also takes in the clock and the process id: for streams
that a restarted process must not repeat.

`generator(seed)` is `np.random.default_rng(seed)` (the same PCG64 stream) for a seed in
[0, 2**64), made in a third of the time: the SeedSequence hash that seeds PCG64 runs as one
numba call (`_seed_words`, numpy's algorithm for one or two 32-bit words of entropy and no
spawn key). Every search makes one (`default_rng` would be ~5% of a Kuhn query solve).
"""
from __future__ import annotations

import os
import time

import numba
import numpy as np
from numpy.random.bit_generator import ISeedSequence


def derive_seed(*words: int) -> int:
    """A seed in [0, 2**62) that is a function of `words` (nonnegative ints) only."""
    return int(np.random.SeedSequence([int(w) for w in words]).generate_state(1, np.uint64)[0] >> 2)


def fresh_seed(*words: int) -> int:
    """`derive_seed` of `words`, the clock (ns) and the process id: never the same twice."""
    return derive_seed(*words, time.time_ns() & (2**63 - 1), os.getpid())


def generator(seed: int) -> np.random.Generator:
    """`np.random.default_rng(seed)`, the same stream, for an int seed in [0, 2**64) (module doc)."""
    return np.random.Generator(np.random.PCG64(_SeedWords(seed)))


class _SeedWords(ISeedSequence):
    """The state words `np.random.SeedSequence(seed)` generates (`_seed_words`)."""

    def __init__(self, seed: int):
        if not 0 <= seed < 2**64:
            raise ValueError(f"seed {seed} is not in [0, 2**64)")
        self.seed = int(seed)

    def generate_state(self, n_words: int, dtype=np.uint32) -> np.ndarray:
        wide = np.dtype(dtype) == np.uint64
        words = np.empty(n_words * (2 if wide else 1), dtype=np.uint32)
        _seed_words(np.uint64(self.seed), words)     # (filled in place: a returned array costs more)
        return words.view(np.uint64) if wide else words


_MASK = np.uint64(0xFFFFFFFF)


@numba.njit(cache=True)
def _hashmix(value, hash_const):
    """SeedSequence's hashmix: value mixed with hash_const[0], which steps on (uint32 in uint64)."""
    value = (value ^ hash_const[0]) & _MASK
    hash_const[0] = (hash_const[0] * np.uint64(0x931e8875)) & _MASK
    value = (value * hash_const[0]) & _MASK
    return value ^ (value >> np.uint64(16))


@numba.njit(cache=True)
def _mix(x, y):
    """SeedSequence's mix of two uint32 words (in uint64)."""
    r = (np.uint64(0xca01f9dd) * x - np.uint64(0x4973f715) * y) & _MASK
    return r ^ (r >> np.uint64(16))


@numba.njit(cache=True)
def _seed_words(seed, out):
    """out uint32 [n] = `np.random.SeedSequence(seed).generate_state(n)` for a uint64 seed: the
    entropy is its low 32-bit word and, if nonzero, its high one; a pool of four words."""
    entropy = np.array([seed & _MASK, seed >> np.uint64(32)])
    n_entropy = 2 if entropy[1] else 1
    hash_const = np.full(1, np.uint64(0x43b0d7e5))
    pool = np.zeros(4, dtype=np.uint64)
    for i in range(4):
        pool[i] = _hashmix(entropy[i] if i < n_entropy else np.uint64(0), hash_const)
    for src in range(4):
        for dst in range(4):
            if src != dst:
                pool[dst] = _mix(pool[dst], _hashmix(pool[src], hash_const))
    h = np.uint64(0x8b51f9dd)
    for i in range(len(out)):
        value = pool[i % 4] ^ h
        h = (h * np.uint64(0x58f38ded)) & _MASK
        value = (value * h) & _MASK
        out[i] = value ^ (value >> np.uint64(16))
