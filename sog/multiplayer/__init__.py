"""N-player games at the world-state level and the solvers that work on them.

The two-player public-tree API (`sog.games.api`) stays the platform's main
interface; this package is a separate, small one for games of 2 to 6 players
(`api`): Kuhn and Leduc poker with OpenSpiel's n-player rules (`kuhn`,
`leduc`), hold'em with universal_poker's parameters and rules (`holdem`), a
lazily grown flat world-state tree (`tree`), external-sampling MCCFR with
Pluribus' linear weighting and negative-regret pruning, and outcome-sampling
MCCFR (`mccfr`), the same solvers compiled with numba for Kuhn and Leduc
(`compiled`, on the betting skeleton and deal of `dealt`), exact n-player best
responses and NashConv on the full tree (`best_response`), and policy files
OpenSpiel reads (`policy`).
"""
from __future__ import annotations

from sog.games import UnknownGameError, parse_game_string
from sog.games.holdem.params import HoldemParameterError
from sog.multiplayer.api import CHANCE, TERMINAL, Game, PlayersError, State
from sog.multiplayer.holdem import Holdem
from sog.multiplayer.kuhn import KuhnPoker
from sog.multiplayer.leduc import LeducPoker

__all__ = ["CHANCE", "TERMINAL", "Game", "Holdem", "KuhnPoker", "LeducPoker", "PlayersError", "State",
           "UnknownGameError", "load_game"]

GAMES = {"kuhn_poker": KuhnPoker, "leduc_poker": LeducPoker, "holdem": Holdem, "universal_poker": Holdem}


def load_game(text: str, players: int) -> Game:
    """The n-player game `text` names: kuhn_poker, leduc_poker, or hold'em with universal_poker's
    parameters, `holdem(numRanks=4,blind=50 100 0,...)` (`universal_poker` is the same game);
    PlayersError for a bad player count, UnknownGameError for anything else wrong."""
    try:
        name, params = parse_game_string(text)
    except ValueError as e:
        raise UnknownGameError(str(e)) from None
    if name not in GAMES:
        raise UnknownGameError(f"unknown n-player game {name!r}; choose from {', '.join(GAMES)}")
    if params and GAMES[name] is not Holdem:
        raise UnknownGameError(f"{name} takes no parameters here, got {text!r}")
    try:
        return GAMES[name](players, **params)
    except HoldemParameterError as e:
        raise UnknownGameError(str(e)) from None
