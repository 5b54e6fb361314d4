"""Games of the platform behind one public-tree API (see `sog.games.api`).

`load_game("leduc_poker")` or `load_game("liars_dice(numdice=1,dice_sides=6)")`
returns a `Game`; `GAMES` names every registered game.
"""
from __future__ import annotations

import importlib
import re

from sog.games.api import Game

# name -> "module:Class"; modules are imported on first use.
GAMES = {
    "chess": "sog.games.chess:Chess",
    "go": "sog.games.go:Go",
    "kuhn_poker": "sog.games.kuhn:KuhnPoker",
    "holdem": "sog.games.holdem:Holdem",
    "hunl": "sog.games.holdem:hunl",
    "leduc_poker": "sog.games.leduc:LeducPoker",
    "liars_dice": "sog.games.liars_dice:LiarsDice",
    "scotland_yard": "sog.games.scotland_yard:ScotlandYard",
    "scotland_yard_london": "sog.games.scotland_yard:ScotlandYardLondon",
    "tic_tac_toe": "sog.games.tic_tac_toe:TicTacToe",
}


class UnknownGameError(ValueError):
    """An unknown game, or parameters the game refuses (names or values)."""


def parse_game_string(text: str) -> tuple[str, dict]:
    """'liars_dice(numdice=1,dice_sides=6)' -> ('liars_dice', {'numdice': 1, 'dice_sides': 6})."""
    m = re.fullmatch(r"\s*([a-z_0-9]+)\s*(?:\((.*)\))?\s*", text)
    if not m:
        raise UnknownGameError(f"cannot parse game string {text!r}")
    params = {}
    for item in filter(None, (m.group(2) or "").split(",")):
        key, sep, value = item.partition("=")
        if not sep:
            raise UnknownGameError(f"game parameter {item!r} in {text!r} is not key=value")
        value = value.strip()
        params[key.strip()] = int(value) if re.fullmatch(r"-?\d+", value) else value
    return m.group(1), params


def load_game(text: str) -> Game:
    name, params = parse_game_string(text)
    if name not in GAMES:
        raise UnknownGameError(f"unknown game {name!r}; known games: {', '.join(sorted(GAMES))}")
    module, cls = GAMES[name].split(":")
    try:
        return getattr(importlib.import_module(module), cls)(**params)
    except UnknownGameError:
        raise
    except (TypeError, ValueError) as e:     # unknown parameter names; values the game refuses
        raise UnknownGameError(f"bad parameters for {name}: {e}") from None


def network_family_of(text: str) -> str | None:
    """`Game.network_family` of the game named `text` (games whose networks are
    interchangeable: hold'em's stack draws, Go's score term); None if no game has that name."""
    try:
        return load_game(text).network_family
    except ValueError:
        return None
