"""Fixtures shared by the test modules: the two poker games most tests run on.

Games are immutable (their memoised per-public-state facts are pure functions of
the public state), so one instance per session serves every test.
"""
from __future__ import annotations

import pytest

from sog.games import load_game


@pytest.fixture(scope="session")
def kuhn():
    return load_game("kuhn_poker")


@pytest.fixture(scope="session")
def leduc():
    return load_game("leduc_poker")
