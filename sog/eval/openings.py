"""Tournament openings: the moves played for both agents before they take over, so that the
games of one pairing differ (board games: chess, Go, tic-tac-toe).

An opening is a line of moves in the game's notation, then `random_moves` uniformly random
legal moves drawn from a seed (stopping early at a terminal position). Lines are written
as engines name moves (`sog.games.board_moves`): UCI for chess (`e2e4 e7e5 g1f3`), GTP
vertices for Go (`D4 F6 pass`, any case), action ids for any other game (`4 0 8`).
`parse_line` checks the line is legal from the start (ValueError naming the move);
`opening_actions` gives the action ids of one opening.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sog.games import world as W
from sog.games.api import DECISION, Game
from sog.games.board_moves import NOTATIONS


def _legal(game: Game, world: W.World) -> dict[str, int]:
    """{move name: action} at `world` in the notation of `game`'s opening lines (its
    `capabilities.notation`; action ids where it has none)."""
    notation = NOTATIONS.get(game.capabilities.notation)
    if notation is not None:
        return notation.legal_moves(game, world.pub)
    if W.kind(game, world) != DECISION:
        return {}
    return {str(a): int(a) for a in W.legal_actions(game, world)}


def _start(game: Game) -> W.World:
    """The root of a perfect-information game (one slot per player)."""
    if not game.spec.perfect_information:
        raise ValueError(f"openings need a perfect-information game; {game.spec.name} is not one")
    return W.World(game.root(), (0, 0))


def parse_line(game: Game, line: str) -> list[int]:
    """The actions of an opening line (module doc); ValueError naming the first illegal move."""
    world, actions = _start(game), []
    notation = NOTATIONS.get(game.capabilities.notation)
    for i, name in enumerate(line.split()):
        key = notation.key(name) if notation is not None else name
        legal = _legal(game, world)
        if key not in legal:
            names = sorted(legal)
            raise ValueError(f"opening {line!r}: move {i + 1} {name!r} is not legal there ("
                             + ("the game is over" if not names else
                                "legal: " + " ".join(names[:12]) + (" ..." if len(names) > 12 else "")) + ")")
        actions.append(legal[key])
        world = W.apply_action(game, world, legal[key])
    return actions


def opening_actions(game: Game, line: Sequence[int], random_moves: int, seed: int) -> list[int]:
    """`line` (actions, from `parse_line`) then up to `random_moves` uniformly random legal
    actions drawn from `seed`: the opening of one pairing's game (both colours get the same)."""
    rng = np.random.default_rng(seed)
    world = _start(game)
    for a in line:
        world = W.apply_action(game, world, a)
    out = list(line)
    for _ in range(random_moves):
        if W.kind(game, world) != DECISION:
            break
        legal = W.legal_actions(game, world)
        a = int(legal[rng.integers(len(legal))])
        out.append(a)
        world = W.apply_action(game, world, a)
    return out
