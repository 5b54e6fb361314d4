"""Games of the platform behind one public-tree API (see `sog.games.api`).

`load_game("leduc_poker")` or `load_game("liars_dice(numdice=1,dice_sides=6)")`
returns a `Game`; `GAMES` names every registered game. OpenSpiel's names of the games
that have an OpenSpiel twin load too (`OPENSPIEL`), so that a name a game records
(`Game.openspiel_name`, e.g. in a policy file) or OpenSpiel writes (`str(pyspiel.load_game(name))`,
every parameter explicit) names that game again: `universal_poker(...)` is `holdem(...)` with
the same parameters, and OpenSpiel's parameters that a twin does not vary (`players=2`,
`chess960=false`, Go's `handicap=0`) are taken at the values it plays.
"""
from __future__ import annotations

import importlib
import re

from sog.errors import SogError
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

# OpenSpiel's game name -> (the twin in GAMES, {OpenSpiel parameter the twin does not take: the
# one value it plays, or a function of the given parameters giving it}).
OPENSPIEL = {
    "chess": ("chess", {"chess960": False}),
    "go": ("go", {"handicap": 0, "max_game_length": lambda p: 2 * int(p.get("board_size", 9)) ** 2}),
    "kuhn_poker": ("kuhn_poker", {"players": 2}),
    "leduc_poker": ("leduc_poker", {"players": 2, "action_mapping": False, "suit_isomorphism": False,
                                    "starting_player": 0}),
    "liars_dice": ("liars_dice", {}),
    "tic_tac_toe": ("tic_tac_toe", {}),
    "universal_poker": ("holdem", {"boardCards": "", "handReaches": "", "potSize": 0, "calcOddsNumSims": 0}),
}
# the `sog` betting abstraction's parameters (`sog.games.holdem.params`), which universal_poker lacks
_NOT_UNIVERSAL_POKER = ("betFraction", "fractionSteps", "stackSteps")


class UnknownGameError(SogError, ValueError):
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


def _openspiel_params(name: str, params: dict) -> tuple[str, dict]:
    """(the twin's name, its parameters) of OpenSpiel's game `name` with `params`: the parameters
    only OpenSpiel takes dropped where they have the value the twin plays (`OPENSPIEL`), else
    UnknownGameError naming the parameter and that value."""
    twin, fixed = OPENSPIEL[name]
    out = dict(params)
    for key, want in fixed.items():
        if key not in out:
            continue
        want = want(params) if callable(want) else want
        got = out.pop(key)
        if str(got).lower() != str(want).lower():
            raise UnknownGameError(f"{name}: {key}={got} is not supported; this {twin} plays only {key}="
                                   f"{str(want).lower() if isinstance(want, bool) else want}")
    if name == "universal_poker" and (out.get("bettingAbstraction") == "sog"
                                      or any(k in out for k in _NOT_UNIVERSAL_POKER)):
        raise UnknownGameError("universal_poker has no 'sog' betting abstraction (bettingAbstraction=sog, "
                               "betFraction, fractionSteps, stackSteps): name that game holdem(...)")
    return twin, out


def load_game(text: str) -> Game:
    """The game named `text`: a name of `GAMES` or of `OPENSPIEL` with its parameters, e.g.
    'leduc_poker', 'go(board_size=9,komi=7.5)' or 'universal_poker(numRanks=3,numSuits=1)';
    UnknownGameError for an unknown name or parameters the game refuses."""
    name, params = parse_game_string(text)
    if name in OPENSPIEL:
        name, params = _openspiel_params(name, params)
    if name not in GAMES:
        raise UnknownGameError(f"unknown game {name!r}; known games: {', '.join(sorted(GAMES))} "
                               f"(and OpenSpiel's universal_poker(...))")
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
