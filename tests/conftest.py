"""Fixtures shared by the test modules: the two poker games most tests run on.

Games are immutable (their memoised per-public-state facts are pure functions of
the public state), so one instance per session serves every test.
"""
from __future__ import annotations

import os

import pytest

from sog.games import load_game

# No test shares exact-oracle references through the machine's cache (`learners.oracle_reference`):
# each computes what it asks for, as on a fresh machine; the test of the shared file sets its own.
os.environ["SOG_CACHE_DIR"] = ""


def pytest_xdist_auto_num_workers(config):
    """`-n auto` (pytest-xdist): one worker per CPU this process may run on, logical ones
    included (xdist's own count is of physical cores: one on a 2-vCPU machine whose vCPUs are
    a core's two hyperthreads), at most 8 (each worker holds its own JAX, numba and Ray)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:          # not on Linux
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, 8))


@pytest.fixture(scope="session")
def kuhn():
    return load_game("kuhn_poker")


@pytest.fixture(scope="session")
def leduc():
    return load_game("leduc_poker")
