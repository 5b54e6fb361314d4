"""N-player games at the world-state level and the solvers that work on them.

The two-player public-tree API (`sog.games.api`) stays the platform's main
interface; this package is a separate, small one for games of 2 to 6 players
(`api`): Kuhn and Leduc poker with OpenSpiel's n-player rules (`kuhn`,
`leduc`), a lazily grown flat world-state tree (`tree`), external-sampling
MCCFR with Pluribus' linear weighting and negative-regret pruning (`mccfr`),
and exact n-player best responses and NashConv on the full tree
(`best_response`).
"""
from __future__ import annotations

from sog.multiplayer.api import CHANCE, TERMINAL, Game, PlayersError, State
from sog.multiplayer.kuhn import KuhnPoker
from sog.multiplayer.leduc import LeducPoker

__all__ = ["CHANCE", "TERMINAL", "Game", "KuhnPoker", "LeducPoker", "PlayersError", "State", "UnknownGameError",
           "load_game"]

GAMES = {"kuhn_poker": KuhnPoker, "leduc_poker": LeducPoker}


class UnknownGameError(ValueError):
    """A game name this package does not implement."""


def load_game(name: str, players: int) -> Game:
    """The n-player game called `name` (OpenSpiel's short name: kuhn_poker, leduc_poker)."""
    if name not in GAMES:
        raise UnknownGameError(f"unknown n-player game {name!r}; choose from {', '.join(GAMES)}")
    return GAMES[name](players)
