"""Game records of finished games in the standard formats: PGN for chess, SGF for Go.

`chess_pgn(game, actions, white, black, u0, ...)` is one game as PGN text, written by
python-chess (`chess.pgn`): the Seven Tag Roster (Event, Site, Date, Round, White, Black,
Result), FEN / SetUp from a non-standard start, and a comment after the last move of a
tournament's opening. Players are OpenSpiel's: player 0 is black, so u0 > 0 is "0-1".

`go_sgf(game, actions, black, white, u0, ...)` is one game as an SGF (FF[4]) game tree:
the root node holds GM[1], SZ, KM (komi), RU[Tromp-Taylor], PB / PW, RE and GN; then one
node per move, B[..] / W[..], a point written as two lowercase letters (column from the
left, row from the top: `aa` is the upper-left corner; GTP's A1 on 9 x 9 is `ai`) and a pass
as the empty value `[]`. RE is B+ or W+ with the Tromp-Taylor margin of the final
position (`Go.area_score`), or 0 (a draw: OpenSpiel ends a game that repeats a position
as one). Records are of finished games (a tournament plays every game to its end).

`write_records(game, records, path)` writes a tournament's finished games, one after the
other (a PGN database, an SGF collection), atomically.
"""
from __future__ import annotations

import io
import os
from collections.abc import Sequence

import chess
import chess.pgn

from sog.files import atomic_write
from sog.games.board_moves import chess_start_fen, chess_uci_moves, go_vertex
from sog.games.chess import Chess
from sog.games.go import Go

GTP_COLUMNS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"          # GTP skips I


def chess_pgn(game: Chess, actions: Sequence[int], white: str, black: str, u0: float,
              event: str = "sog tournament", round_: str = "?", opening: int = 0) -> str:
    """PGN text of one chess game (module doc); `opening`: how many of `actions` were the
    opening's (a comment marks where the agents took over)."""
    start = chess_start_fen(game)
    record = chess.pgn.Game()
    record.headers.update(Event=event, Site="sog", Date="????.??.??", Round=round_, White=white,
                          Black=black, Result="0-1" if u0 > 0 else "1-0" if u0 < 0 else "1/2-1/2")
    if start != chess.STARTING_FEN:
        record.setup(chess.Board(start))
    node = record
    for i, uci in enumerate(chess_uci_moves(game, tuple(int(a) for a in actions))):
        node = node.add_variation(chess.Move.from_uci(uci))
        if opening and i == opening - 1:
            node.comment = f"end of the opening ({opening} plies)"
    out = io.StringIO()
    record.accept(chess.pgn.FileExporter(out))
    return out.getvalue()


def sgf_point(game: Go, vertex: str) -> str:
    """A GTP vertex ('D4', 'PASS') as an SGF point ('dg' on 9 x 9; '' for a pass)."""
    if vertex.upper() == "PASS":
        return ""
    column = GTP_COLUMNS.index(vertex[0].upper())
    row = game.size - int(vertex[1:])
    return chr(ord("a") + column) + chr(ord("a") + row)


def _sgf_text(text: str) -> str:
    """SGF SimpleText escaping: backslash and ']'."""
    return text.replace("\\", "\\\\").replace("]", "\\]")


def go_sgf(game: Go, actions: Sequence[int], black: str, white: str, u0: float, name: str = "",
           opening: int = 0) -> str:
    """One Go game as an SGF game tree (module doc); `opening`: how many of `actions` were the
    opening's (a comment on the last of them)."""
    pub = tuple(int(a) for a in actions)
    result = "0" if u0 == 0 else f"{'B' if u0 > 0 else 'W'}+{abs(game.area_score(pub)):g}"
    root = (f"GM[1]FF[4]CA[UTF-8]AP[sog]SZ[{game.size}]KM[{game.komi:g}]RU[Tromp-Taylor]"
            f"PB[{_sgf_text(black)}]PW[{_sgf_text(white)}]RE[{result}]")
    if name:
        root += f"GN[{_sgf_text(name)}]"
    nodes = [root]
    for i, a in enumerate(pub):
        colour = "B" if i % 2 == 0 else "W"
        node = f"{colour}[{sgf_point(game, go_vertex(game, pub[:i], a))}]"
        if opening and i == opening - 1:
            node += f"C[end of the opening ({opening} moves)]"
        nodes.append(node)
    return "(;" + ";".join(nodes) + ")\n"


def _pgn_record(game: Chess, rec: dict, names: tuple[str, str], label: str, event: str) -> str:
    return chess_pgn(game, rec["moves"], white=names[1], black=names[0], u0=rec["returns"][0], event=event,
                     round_=label, opening=rec.get("opening_moves", 0))


def _sgf_record(game: Go, rec: dict, names: tuple[str, str], label: str, event: str) -> str:
    return go_sgf(game, rec["moves"], black=names[0], white=names[1], u0=rec["returns"][0],
                  name=f"{event} {label}", opening=rec.get("opening_moves", 0))


# a game's `capabilities.record` -> (file name, one record's text)
RECORD_FORMATS = {"pgn": ("games.pgn", _pgn_record), "sgf": ("games.sgf", _sgf_record)}


def write_records(game, records: Sequence[dict], path: str | os.PathLike, event: str) -> None:
    """The records (in the format of the game's `capabilities.record`: PGN for chess, SGF for Go)
    of tournament records (each with a, b, seat_a, deal, moves, opening, returns), one after the
    other, written atomically to `path`."""
    _, text = RECORD_FORMATS[game.capabilities.record]
    texts = []
    for rec in records:
        names = (rec["a"], rec["b"]) if rec["seat_a"] == 0 else (rec["b"], rec["a"])   # by player
        texts.append(text(game, rec, names, f"{rec['deal']}.{rec['seat_a']}", event))
    atomic_write(path, lambda f: f.write("\n".join(texts)), mode="w")
