"""The external engines the engine tests play, found as sog finds them (`find_program`: the
PATH, then /usr/games), and the skip marks for a machine without them (.ci/run installs both)."""
from __future__ import annotations

import pytest

from sog.agents.api import AgentError
from sog.agents.external.engines import find_program


def program(name: str) -> str | None:
    """The path of engine `name`, or None if it is not installed."""
    try:
        return find_program(name, name)
    except AgentError:
        return None


needs_stockfish = pytest.mark.skipif(program("stockfish") is None, reason="stockfish is not installed "
                                     "(apt-get install stockfish; .ci/run installs it)")
needs_gnugo = pytest.mark.skipif(program("gnugo") is None, reason="gnugo is not installed "
                                 "(apt-get install gnugo; .ci/run installs it)")
