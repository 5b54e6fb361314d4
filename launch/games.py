"""Games named on the command line: `load_game` with its errors as `UserError`s."""
from __future__ import annotations

from launch.console import UserError
from sog.games import UnknownGameError, load_game
from sog.games.api import Game
from sog.games.holdem import Holdem


def named_game(name: str) -> Game:
    """The game `name` (`sog.games.load_game`); `UserError` if there is none."""
    try:
        return load_game(name)
    except UnknownGameError as e:
        raise UserError(str(e)) from None


def named_holdem(name: str) -> Holdem:
    """The hold'em game `name` (holdem(...) or hunl); `UserError` for any other name."""
    game = named_game(name)
    if not isinstance(game, Holdem):
        raise UserError(f"--game must be a hold'em game (holdem(...) or hunl), not {game.spec.name}")
    return game
