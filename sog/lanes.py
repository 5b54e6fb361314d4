"""Eight float64 lanes in numba kernels, and a compile that turns them into vector instructions.

A kernel that works out eight independent problems side by side (the poker terminal values:
eight showdowns of one board, eight folds, `sog.games.poker`) keeps one number of each in a
lane tuple (`UniTuple(float64, 8)`): `load(a, i)` reads row i of an [M, 8] array, `store(a, i, v)`
writes it, `add`, `sub` and `mul` work lane by lane. Numba inlines them, so a row is eight
adjacent loads or stores and an operation eight independent scalar ones: LLVM's SLP (superword)
vectoriser packs them into vector instructions (one AVX-512 or two AVX2 operations), where the
same kernel written over an [M, 8] array with an inner loop stays scalar (its rows may alias).

Numba compiles with the SLP vectoriser off (numba PR #8852, for miscompilations in the LLVM of
the time); `slp_njit` compiles one kernel with it on, leaving every other kernel as numba
builds it. A lane's arithmetic is the scalar code's, in the same order, so the results are the
same to the bit: `tests/test_lanes.py` compares each such kernel against itself compiled
without SLP. Measured on the hold'em river (1326 hands, `sog bench holdem`'s board), the two
sweeps of a showdown: 4.8 us a showdown with four lanes in scalar code, 1.8 us with eight lanes
vectorised.
"""
from __future__ import annotations

import numba
from numba.core import config
from numba.core.compiler_lock import global_compiler_lock

LANES = 8


def slp_njit(**options):
    """`numba.njit(**options)`, each signature compiled with LLVM's SLP vectoriser on (under numba's
    compiler lock, the setting put back after): a decorator."""
    def decorate(fn):
        dispatcher = numba.njit(**options)(fn)
        compile_plain = dispatcher.compile

        def compile_slp(sig):
            with global_compiler_lock:
                before = config.SLP_VECTORIZE
                config.SLP_VECTORIZE = 1
                try:
                    return compile_plain(sig)
                finally:
                    config.SLP_VECTORIZE = before

        dispatcher.compile = compile_slp      # (what numba calls to compile a new signature)
        return dispatcher
    return decorate


@numba.njit(inline="always")
def zeros():
    """Eight lanes of 0.0."""
    return (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


@numba.njit(inline="always")
def full(x):
    """Eight lanes of x."""
    return (x, x, x, x, x, x, x, x)


@numba.njit(inline="always")
def load(a, i):
    """Row i of a float [M, 8] array, as lanes."""
    return (a[i, 0], a[i, 1], a[i, 2], a[i, 3], a[i, 4], a[i, 5], a[i, 6], a[i, 7])


@numba.njit(inline="always")
def store(a, i, v):
    """Row i of a float [M, 8] array set to lanes v."""
    a[i, 0], a[i, 1], a[i, 2], a[i, 3], a[i, 4], a[i, 5], a[i, 6], a[i, 7] = v


@numba.njit(inline="always")
def add(u, v):
    return (u[0] + v[0], u[1] + v[1], u[2] + v[2], u[3] + v[3], u[4] + v[4], u[5] + v[5], u[6] + v[6],
            u[7] + v[7])


@numba.njit(inline="always")
def sub(u, v):
    return (u[0] - v[0], u[1] - v[1], u[2] - v[2], u[3] - v[3], u[4] - v[4], u[5] - v[5], u[6] - v[6],
            u[7] - v[7])


@numba.njit(inline="always")
def mul(u, v):
    return (u[0] * v[0], u[1] * v[1], u[2] * v[2], u[3] * v[3], u[4] * v[4], u[5] * v[5], u[6] * v[6],
            u[7] * v[7])
