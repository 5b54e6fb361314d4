"""Moves of chess and Go as engines name them, to and from the games' action ids.

Chess: UCI long algebraic notation (`e2e4`, `e7e8q`, castling as the king's
move `e1g1`), the notation of the UCI protocol and python-chess's `Move.uci()`.
Go: GTP vertices (`D4`: column letter A..T without I, row number from 1 at
the bottom; `PASS`), the notation of the GTP protocol.

Both directions go through OpenSpiel's own naming of the position's legal
actions (`pyspiel.chess.action_to_move(...).to_lan()`, Go's `action_to_string`
"B d4"), so a name maps to an action exactly when the move is legal there:
`*_legal_moves(game, pub)` is {name: action} over the legal actions of `pub`
(empty at a terminal state). Names are compared as given for chess (UCI is
lower case) and upper-cased for Go (GTP vertices are case-insensitive).

`chess_continued(board)` is the game a chess host searches from when the
controller's position (a python-chess `Board`) has legal moves: the game
continues after a threefold repetition or a fifty-move count that no one
claimed, which OpenSpiel ends automatically.

`NOTATIONS` maps a game's `capabilities.notation` to its `Notation`, so code that names moves
(openings, records, hosts) reads the game's record instead of asking for its class.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable

import chess
import pyspiel

from sog.games.chess import Chess
from sog.games.go import Go


def chess_move_name(game: Chess, pub: tuple, action: int) -> str:
    """The UCI name of chess action `action` at public state `pub` (the moves so far)."""
    return pyspiel.chess.action_to_move(action, game.state(pub).board()).to_lan()


def chess_legal_moves(game: Chess, pub: tuple) -> dict[str, int]:
    """{UCI move: action} of the legal moves at `pub`."""
    state = game.state(pub)
    if state.is_terminal():
        return {}
    board = state.board()
    return {pyspiel.chess.action_to_move(a, board).to_lan(): a for a in state.legal_actions()}


def chess_continued(board: chess.Board) -> Chess | None:
    """The game from `board`'s position with no history and the fifty-move count at 0 (draws by
    repetition or by the count that were not claimed are not counted again); None if OpenSpiel
    ends that game at once (a position without legal moves, or one with too little material to
    mate, where every move draws)."""
    fen = board.fen().split()
    game = Chess(fen=" ".join(fen[:4] + ["0", fen[5]]))
    return None if game.state(()).is_terminal() else game


def chess_start_fen(game: Chess) -> str:
    """The FEN of the game's starting position (the standard one, or the game's `fen`)."""
    return game.state(()).board().to_fen()


def chess_uci_moves(game: Chess, pub: tuple) -> list[str]:
    """The UCI names of the moves of `pub`, from the game's start."""
    return [chess_move_name(game, pub[:i], a) for i, a in enumerate(pub)]


def go_vertex(game: Go, pub: tuple, action: int) -> str:
    """The GTP vertex of Go action `action` at `pub` ('D4', or 'PASS')."""
    state = game.state(pub)
    return state.action_to_string(state.current_player(), action).split()[-1].upper()


def go_legal_moves(game: Go, pub: tuple) -> dict[str, int]:
    """{GTP vertex: action} of the legal moves at `pub` (upper case, 'PASS' included; the
    game's `legal_mask`, which leaves out superko moves when the game makes them illegal)."""
    state = game.state(pub)
    if state.is_terminal():
        return {}
    player = state.current_player()
    return {state.action_to_string(player, a).split()[-1].upper(): a
            for a in game.cached("legal_mask", pub)[0].nonzero()[0].tolist()}


@dataclasses.dataclass(frozen=True)
class Notation:
    """A move notation: legal_moves(game, pub) -> {name: action} of the legal moves at `pub` (empty
    at a terminal state); key(name) -> a user's name spelt as legal_moves spells it."""

    legal_moves: Callable[..., dict[str, int]]
    key: Callable[[str], str]


NOTATIONS = {"uci": Notation(chess_legal_moves, str), "gtp": Notation(go_legal_moves, str.upper)}
