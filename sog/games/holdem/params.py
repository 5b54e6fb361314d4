"""Hold'em parameters, named, defaulted and checked as OpenSpiel's `universal_poker` does.

`Rules.parse(**params)` takes the game-string parameters (ints, or space-separated
lists of ints as strings, e.g. `blind="2 1"`) and returns the validated, normalised
rules; any problem raises `HoldemParameterError` naming the parameter. Defaults are
universal_poker's, so `holdem` is OpenSpiel's default `universal_poker`.

The `sog` betting abstraction (no-limit only; the Student of Games paper's) adds
`betFraction` (one fixed fraction, e.g. `betFraction=0.75`) or `fractionSteps` (the draw's
grid: `k` equally spaced fractions of [0.5, 1.0], default 51, i.e. 0.50, 0.51, ..., 1.00)
and `stackSteps` (`k`: the hand's stacks drawn among `j / k` x `stack` (chips, rounded
down), j = 1..k, those below k above both blinds; default 1, the given stacks). See `sog.games.holdem.game` for how the
draw is a public chance event at the root.

`Rules.parse` is the two-player game's (numPlayers=2); `Rules.parse_table(params, max_players)`
reads games of 2..max_players players (`sog.multiplayer.holdem`): `blind` and `stack` then list
one value per player, and a table of 3 or more players given no `blind`, `stack` or `firstPlayer`
gets the ACPC server's ring-game layout (`table_defaults`): small blind 50, big blind 100,
the others 0, 1200 chips each (universal_poker's stack), the player after the big blind first
before the flop and player 1 first after it. The `sog` abstraction is two-player only.

Per-round lists (`raiseSize`, `firstPlayer`, `maxRaises`, `numBoardCards`) are read for
the first `numRounds` rounds; `firstPlayer` and `maxRaises` default per round to 1 and
255 (the ACPC server's defaults) where fewer are given. Stacks are ignored in limit
games, where the ACPC server plays with unbounded (INT32_MAX) stacks.
"""
from __future__ import annotations

import dataclasses
import fractions

from sog.games import UnknownGameError

INT32_MAX = 2**31 - 1
MAX_ROUNDS, MAX_BOARD_CARDS, MAX_HOLE_CARDS = 4, 7, 3  # the ACPC server's limits
DEFAULT_MAX_RAISES, DEFAULT_FIRST_PLAYER = 255, 1

# universal_poker's parameters and defaults, in the order names are written.
DEFAULTS = {
    "betting": "nolimit",
    "bettingAbstraction": "fcpa",
    "numPlayers": 2,
    "numRounds": 2,
    "blind": "100 100",
    "stack": "1200 1200",
    "raiseSize": "100 100",
    "firstPlayer": "1 1",
    "maxRaises": "",
    "numSuits": 4,
    "numRanks": 6,
    "numHoleCards": 1,
    "numBoardCards": "0 1",
}
SOG_PARAMETERS = {"betFraction": None, "fractionSteps": 51, "stackSteps": 1}   # the `sog` abstraction's
MIN_FRACTION, MAX_FRACTION = fractions.Fraction(1, 2), fractions.Fraction(1)


class HoldemParameterError(UnknownGameError):
    """A hold'em parameter is unknown, malformed or inconsistent."""


def _ints(name: str, value, lo: int | None = None, hi: int | None = None) -> tuple[int, ...]:
    if isinstance(value, int):
        items = [value]
    elif isinstance(value, str):
        try:
            items = [int(x) for x in value.split()]
        except ValueError:
            raise HoldemParameterError(f"holdem: {name}={value!r} is not a list of integers") from None
    elif isinstance(value, (list, tuple)) and all(isinstance(x, int) for x in value):
        items = list(value)
    else:
        raise HoldemParameterError(f"holdem: {name}={value!r} is not a list of integers")
    for x in items:
        if (lo is not None and x < lo) or (hi is not None and x > hi):
            bounds = f"at least {lo}" if hi is None else f"in {lo}..{hi}"
            raise HoldemParameterError(f"holdem: {name}={value!r}: every value must be {bounds}")
    return tuple(items)


def _int(name: str, value, lo: int, hi: int) -> int:
    items = _ints(name, value, lo, hi)
    if len(items) != 1:
        raise HoldemParameterError(f"holdem: {name}={value!r} must be one integer")
    return items[0]


def _per_round(name: str, value, rounds: int, lo: int, hi: int | None, default: int | None) -> tuple[int, ...]:
    items = _ints(name, value, lo, hi)
    if len(items) < rounds:
        if default is None:
            raise HoldemParameterError(f"holdem: {name}={value!r} needs a value for each of the {rounds} rounds")
        items = items + (default,) * (rounds - len(items))
    return items[:rounds]


def _join(items) -> str:
    return " ".join(map(str, items))


def table_defaults(players: int) -> dict:
    """`blind`, `stack` and `firstPlayer` defaults of a table of `players` (universal_poker's
    for two; the ACPC ring-game layout for more, see the module docstring)."""
    if players == 2:
        return {}
    return {"blind": _join((50, 100) + (0,) * (players - 2)), "stack": _join((1200,) * players),
            "firstPlayer": "3 1"}


@dataclasses.dataclass(frozen=True)
class Rules:
    """The validated rules of a hold'em game (chips; players 0..n-1; rounds from 0).

    blinds, stacks: per player (n of each; stacks INT32_MAX in limit games; with `stackSteps` the
    largest stacks a hand may draw); raise_sizes: per round, limit only; max_raises,
    first_player (0..n-1), board_cards: per round; setups: the `sog` abstraction's equally likely
    (bet fraction, stacks) draws of a hand, ((None, stacks),) for the other abstractions.
    """

    limit: bool
    abstraction: str            # "fcpa", "fullgame" or "sog"
    blinds: tuple[int, ...]
    stacks: tuple[int, ...]
    raise_sizes: tuple[int, ...]
    max_raises: tuple[int, ...]
    first_player: tuple[int, ...]
    num_ranks: int
    num_suits: int
    hole: int
    board_cards: tuple[int, ...]
    setups: tuple[tuple[fractions.Fraction | None, tuple[int, ...]], ...]
    given: tuple[tuple[str, str], ...]  # the parameters as given, normalised (for the name)

    @property
    def num_players(self) -> int:
        return len(self.blinds)

    @property
    def num_rounds(self) -> int:
        return len(self.board_cards)

    @property
    def big_blind(self) -> int:
        return max(self.blinds)

    @property
    def deck_size(self) -> int:
        return self.num_ranks * self.num_suits

    @property
    def max_commitment(self) -> int:
        """The most chips one player can put in (universal_poker's MaxCommitment)."""
        if self.limit:
            return self.big_blind + sum(m * r for m, r in zip(self.max_raises, self.raise_sizes))
        return max(self.stacks)

    @classmethod
    def parse(cls, **params) -> Rules:
        """The two-player rules of the game-string parameters (numPlayers must be 2)."""
        return cls.parse_table(params, max_players=2)

    @classmethod
    def parse_table(cls, params: dict, max_players: int) -> Rules:
        """The rules of a table of 2..`max_players` players (see the module docstring)."""
        known = {**DEFAULTS, **SOG_PARAMETERS}
        unknown = sorted(set(params) - set(known))
        if unknown:
            raise HoldemParameterError(f"holdem: unknown parameter {unknown[0]!r}; known: {', '.join(known)}")
        players = _int("numPlayers", params.get("numPlayers", DEFAULTS["numPlayers"]), 1, 10)
        if max_players == 2 and players != 2:
            raise HoldemParameterError(f"holdem: numPlayers={params['numPlayers']!r}: only two players are "
                                       "supported")
        if not 2 <= players <= max_players:
            raise HoldemParameterError(f"holdem: numPlayers={params['numPlayers']!r} must be between 2 and "
                                       f"{max_players}")
        p = {**DEFAULTS, **table_defaults(players), **params}
        betting, abstraction = p["betting"], p["bettingAbstraction"]
        if betting not in ("limit", "nolimit"):
            raise HoldemParameterError(f"holdem: betting={betting!r} must be 'limit' or 'nolimit'")
        if abstraction not in ("fcpa", "fullgame", "sog"):
            raise HoldemParameterError(f"holdem: bettingAbstraction={abstraction!r} must be 'fcpa', 'fullgame' "
                                       "or 'sog'")
        sog_given = sorted(set(params) & set(SOG_PARAMETERS))
        if sog_given and abstraction != "sog":
            raise HoldemParameterError(f"holdem: {sog_given[0]} needs bettingAbstraction=sog")
        if abstraction == "sog" and players != 2:
            raise HoldemParameterError("holdem: bettingAbstraction=sog is for two players; use fcpa or fullgame")
        limit = betting == "limit"
        if limit and abstraction != "fcpa":
            raise HoldemParameterError("holdem: limit betting has one raise size: use bettingAbstraction=fcpa "
                                       "(its actions are fold 0, call 1, raise 2)")
        rounds = _int("numRounds", p["numRounds"], 1, MAX_ROUNDS)
        num_suits = _int("numSuits", p["numSuits"], 1, 4)
        num_ranks = _int("numRanks", p["numRanks"], 1, 13)
        hole = _int("numHoleCards", p["numHoleCards"], 1, MAX_HOLE_CARDS)
        board = _per_round("numBoardCards", p["numBoardCards"], rounds, 0, None, None)
        if sum(board) > MAX_BOARD_CARDS:
            raise HoldemParameterError(f"holdem: numBoardCards={p['numBoardCards']!r} deals more than "
                                       f"{MAX_BOARD_CARDS} board cards")
        if players * hole + sum(board) > num_ranks * num_suits:
            raise HoldemParameterError(
                f"holdem: {players * hole} hole cards and {sum(board)} board cards are more cards than the deck of "
                f"{num_ranks} ranks x {num_suits} suits = {num_ranks * num_suits} holds")
        blinds = _ints("blind", p["blind"], 0)
        if len(blinds) != players or max(blinds) < 1:
            raise HoldemParameterError(f"holdem: blind={p['blind']!r} must be {players} blinds (one per player), "
                                       "one of at least 1 chip")
        if limit:
            stacks = (INT32_MAX,) * players
            raise_sizes = _per_round("raiseSize", p["raiseSize"], rounds, 1, None, None)
        else:
            stacks = _ints("stack", p["stack"], 1)
            if len(stacks) != players:
                raise HoldemParameterError(f"holdem: stack={p['stack']!r} must be {players} stacks (one per player)")
            for player in range(players):
                if stacks[player] < blinds[player]:
                    raise HoldemParameterError(f"holdem: player {player}'s stack {stacks[player]} is smaller "
                                               f"than its blind {blinds[player]}")
            if stacks == blinds:
                raise HoldemParameterError("holdem: every stack equals its blind: no player could act")
            raise_sizes = ()
        setups = _setups(params, stacks, blinds) if abstraction == "sog" else ((None, stacks),)
        max_raises = _per_round("maxRaises", p["maxRaises"], rounds, 0, 255, DEFAULT_MAX_RAISES)
        first = _per_round("firstPlayer", p["firstPlayer"], rounds, 1, players, DEFAULT_FIRST_PLAYER)
        # parameters a game ignores (stack in limit, raiseSize in no-limit) keep their given values in the name
        normalised = {"betting": betting, "bettingAbstraction": abstraction, "numPlayers": players, "numRounds": rounds,
                      "blind": _join(blinds),
                      "stack": _join(_ints("stack", p["stack"]) if limit else stacks),
                      "raiseSize": _join(raise_sizes if limit else _ints("raiseSize", p["raiseSize"])),
                      "firstPlayer": _join(first), "maxRaises": _join(max_raises), "numSuits": num_suits,
                      "numRanks": num_ranks, "numHoleCards": hole, "numBoardCards": _join(board)}
        normalised.update({k: str(params[k]) for k in SOG_PARAMETERS if k in params})
        given = tuple((k, str(normalised[k])) for k in known if k in params)
        return cls(limit, abstraction, blinds, stacks, raise_sizes, max_raises,
                   tuple(f - 1 for f in first), num_ranks, num_suits, hole, board, setups, given)

    def name(self) -> str:
        """`holdem(...)` with the parameters as given (normalised): `load_game` rebuilds these rules."""
        return "holdem" + (f"({','.join(f'{k}={v}' for k, v in self.given)})" if self.given else "")

    def openspiel_name(self) -> str | None:
        """The `universal_poker(...)` game string with the same rules, every parameter explicit
        (None for the `sog` abstraction, which universal_poker does not have)."""
        if self.abstraction == "sog":
            return None
        p = self.openspiel_params(one_item_space=True)
        return f"universal_poker({','.join(f'{k}={v}' for k, v in p.items())})"

    def openspiel_params(self, one_item_space: bool = False) -> dict:
        """universal_poker's parameters, every one explicit, lists as space-separated strings
        (one_item_space: a one-item list keeps a trailing space, as a game string needs: without
        it OpenSpiel reads the item as a single value)."""
        def items(values) -> str:
            values = tuple(values)
            return _join(values) + (" " if one_item_space and len(values) == 1 else "")

        p = {"betting": "limit" if self.limit else "nolimit", "bettingAbstraction": self.abstraction,
             "numPlayers": self.num_players, "numRounds": self.num_rounds, "blind": items(self.blinds),
             "firstPlayer": items(f + 1 for f in self.first_player), "maxRaises": items(self.max_raises),
             "numSuits": self.num_suits, "numRanks": self.num_ranks, "numHoleCards": self.hole,
             "numBoardCards": items(self.board_cards)}
        if self.limit:
            p["raiseSize"] = items(self.raise_sizes)
        else:
            p["stack"] = items(self.stacks)
        return p


def _setups(params: dict, stacks: tuple[int, ...], blinds: tuple[int, ...]
            ) -> tuple[tuple[fractions.Fraction, tuple[int, int]], ...]:
    """The `sog` abstraction's (bet fraction, stacks) draws: every fraction of the grid (or the
    fixed `betFraction`) with every stack pair of `stackSteps`, in that order."""
    if "betFraction" in params:
        if "fractionSteps" in params:
            raise HoldemParameterError("holdem: give betFraction (fixed) or fractionSteps (drawn), not both")
        try:
            fixed = fractions.Fraction(str(params["betFraction"]))
        except ValueError:
            raise HoldemParameterError(f"holdem: betFraction={params['betFraction']!r} is not a number") from None
        if not MIN_FRACTION <= fixed <= MAX_FRACTION:
            raise HoldemParameterError(f"holdem: betFraction={params['betFraction']!r} must be in [0.5, 1]")
        fracs = (fixed,)
    else:
        k = _int("fractionSteps", params.get("fractionSteps", SOG_PARAMETERS["fractionSteps"]), 2, 10_000)
        fracs = tuple(MIN_FRACTION + (MAX_FRACTION - MIN_FRACTION) * fractions.Fraction(j, k - 1) for j in range(k))
    k = _int("stackSteps", params.get("stackSteps", SOG_PARAMETERS["stackSteps"]), 1, 100_000)
    pairs = [(stacks[0] * j // k, stacks[1] * j // k) for j in range(1, k)]
    pairs = [s for s in dict.fromkeys(pairs) if s[0] > blinds[0] and s[1] > blinds[1]] + [(stacks[0], stacks[1])]
    return tuple((f, s) for f in fracs for s in pairs)
