"""Value functions named on the command line: `oracle` or a checkpoint PATH."""
from __future__ import annotations

from sog.games.api import Game


def make_value_function(spec: str, game: Game, oracle_iterations: int = 50):
    """`oracle` -> the exact oracle; anything else is a run directory or checkpoint
    of a CVPN for `game` (ValueError with a clear message if it is not)."""
    if spec == "oracle":
        from sog.search.oracle import ExactValueFunction
        return ExactValueFunction(game, iterations=oracle_iterations)
    from learners.checkpoint import load_value_function
    return load_value_function(spec, game)
