"""`sog uci --agent SPEC`: any sog agent as a UCI chess engine, for chess GUIs.

Speaks UCI on stdin/stdout (everything else goes to stderr):

    uci                          -> id name, id author, uciok
    isready                      -> readyok
    ucinewgame                   the next `go` starts a new game (the agent is reset)
    position startpos [moves M...]
    position fen FEN [moves M...]   moves in UCI notation (e2e4, e7e8q)
    go [...]                     -> bestmove M (0000 when there is no legal move); the
                                    agent's own budget decides, the clock arguments are
                                    ignored; `go infinite` / `go ponder` hold the answer
                                    until `stop` / `ponderhit`
    stop, ponderhit, setoption, debug, register   accepted (no options)
    quit                         (or the end of input) ends the program

A bad position (an unparsable FEN, an illegal move) is reported as
`info string error: ...` and leaves no position, so that a following `go`
answers `bestmove 0000`. The agent plays the side to move (`launch.hosted`):
with a SoG spec (`sog:RUN?s=...`) it keeps its search between the moves of a game.
"""
from __future__ import annotations

from typing import TextIO

import chess

from launch.console import UserError
from launch.hosted import HostedAgent, answer
from sog.agents import board_moves
from sog.agents.api import AgentError, AgentFailure
from sog.games import UnknownGameError, load_game
from sog.games.chess import Chess

NAME = "sog"


class UCIServer:
    """The UCI loop around one hosted agent; `handle(line)` is False after `quit`."""

    def __init__(self, spec: str, out: TextIO, seed: int = 0):
        self.spec, self.out = spec, out
        self.host = HostedAgent(spec, seed)
        self.standard = load_game("chess")
        try:
            self.host.agent(self.standard)       # a bad spec fails before the GUI is told anything
        except AgentError as e:
            raise UserError(str(e)) from None
        self.game: Chess | None = self.standard
        self.pub: tuple | None = ()
        self.pending: str | None = None          # a bestmove held until `stop` (go infinite)

    def send(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def handle(self, line: str) -> bool:
        words = line.split()
        if not words:
            return True
        cmd, args = words[0], words[1:]
        if cmd == "quit":
            return False
        if cmd == "uci":
            self.send(f"id name {NAME} ({self.spec})")
            self.send(f"id author {NAME}")
            self.send("uciok")
        elif cmd == "isready":
            self.send("readyok")
        elif cmd == "ucinewgame":
            self.host.new_game()
        elif cmd == "position":
            self.position(args)
        elif cmd == "go":
            move = self.bestmove()
            if "infinite" in args or "ponder" in args:
                self.pending = move
            else:
                self.send(f"bestmove {move}")
        elif cmd in ("stop", "ponderhit"):
            if self.pending is not None:
                self.send(f"bestmove {self.pending}")
                self.pending = None
        elif cmd not in ("setoption", "debug", "register"):
            self.send(f"info string unknown command {cmd}")
        return True

    def position(self, args: list[str]) -> None:
        """Set the position of `position startpos|fen FEN [moves ...]`."""
        self.game, self.pub = None, None
        moves_at = args.index("moves") if "moves" in args else len(args)
        head, moves = args[:moves_at], args[moves_at + 1:]
        if head == ["startpos"]:
            game = self.standard
        elif head[:1] == ["fen"] and len(head) > 1:
            fen = " ".join(head[1:])
            try:
                canonical = chess.Board(fen).fen()
            except ValueError as e:
                self.send(f"info string error: bad FEN {fen!r}: {e}")
                return
            try:
                game = self.standard if canonical == chess.STARTING_FEN else load_game(f"chess(fen={canonical})")
            except UnknownGameError as e:
                self.send(f"info string error: {e}")
                return
        else:
            self.send(f"info string error: expected 'position startpos|fen FEN [moves ...]', got {' '.join(args)!r}")
            return
        pub: tuple = ()
        for move in moves:
            action = board_moves.chess_legal_moves(game, pub).get(move)
            if action is None:
                self.send(f"info string error: illegal move {move} after {' '.join(moves[:len(pub)]) or 'the start'}")
                return
            pub += (action,)
        self.game, self.pub = game, pub

    def bestmove(self) -> str:
        """The agent's move in the current position in UCI notation, or 0000 if there is none."""
        if self.game is None or self.game.state(self.pub).is_terminal():
            return "0000"
        try:
            action = self.host.move(self.game, self.pub)
        except (AgentError, AgentFailure) as e:
            self.send(f"info string error: {e}")
            return "0000"
        return board_moves.chess_move_name(self.game, self.pub, action)


def serve(spec: str, inp: TextIO, out: TextIO, seed: int = 0) -> None:
    """Answer UCI commands from `inp` on `out` until `quit` or the end of input."""
    answer(UCIServer(spec, out, seed), inp)


def add_parser(subparsers):
    u = subparsers.add_parser("uci", help="speak UCI on stdin/stdout: host an agent in a chess GUI")
    u.add_argument("--agent", required=True, help="agent spec, e.g. sog:runs/chess?s=100&c=1, random")
    u.add_argument("--seed", type=int, default=0, help="seed of the first game (the next ones derive from it)")
    u.set_defaults(func=run, protocol=True)
    return u


def run(args, inp: TextIO, out: TextIO) -> None:
    serve(args.agent, inp, out, args.seed)
