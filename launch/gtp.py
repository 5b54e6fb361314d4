"""`sog gtp --agent SPEC`: any sog agent as a GTP Go engine, for Go servers and GUIs.

Speaks GTP version 2 on stdin/stdout (everything else goes to stderr; the
message format is `sog.agents.external.gtp`'s). Commands:

    protocol_version, name, version, known_command NAME, list_commands, quit
    boardsize N          9, 13 or 19 (clears the board)
    clear_board
    komi K               the game's komi (OpenSpiel's Tromp-Taylor area scoring)
    play COLOUR VERTEX   COLOUR b|black|w|white, VERTEX like D4 or pass
    genmove COLOUR       -> the agent's vertex (played on the board)
    undo                 takes back the last move
    showboard            -> the board as OpenSpiel draws it
    final_score          -> the Tromp-Taylor area score of the board as it stands: B+3.5, W+7.0
                            or 0; every stone on the board counts as alive (no dead-stone
                            removal), so it is GnuGo's `final_score` with --chinese-rules only
                            once dead stones are captured, as `gnugo --capture-all-dead` plays out

The game follows the controller's: no move limit, and a move that recreates an
earlier position (positional superko) is illegal for the mover (`sog.games.go`'s
hosted rules, `move_limit=0,superko=illegal`; the agent searches that game).
Colours must alternate, black first (the game has no handicap stones or
consecutive moves of one colour): a `play` or `genmove` for the side not to
move, an illegal vertex, or any move once the game is over (two passes) is
refused with `? ...`, as are an unknown command and a line that is not UTF-8
(`? the command is not UTF-8`). The agent plays the side to
move (`launch.hosted`): with a SoG spec (`sog:RUN?s=...`) it keeps its search
between the moves of a game.
"""
from __future__ import annotations

import math
from importlib.metadata import PackageNotFoundError, version
from typing import TextIO

from launch.console import UserError
from launch.hosted import HostedAgent, answer
from sog.agents.api import AgentError, AgentFailure
from sog.agents.external.gtp import parse_command, response
from sog.errors import SogError
from sog.games import board_moves, load_game

NAME = "sog"
SIZES = (9, 13, 19)
COLOURS = {"b": 0, "black": 0, "w": 1, "white": 1}
COMMANDS = ("protocol_version", "name", "version", "known_command", "list_commands", "quit", "boardsize",
            "clear_board", "komi", "play", "genmove", "undo", "showboard", "final_score")


class GTPCommandError(SogError):
    """A command that fails; its message is the `? message` answer."""


class GTPServer:
    """The GTP loop around one hosted agent; `handle(line)` is False after `quit`."""

    def __init__(self, spec: str, out: TextIO, seed: int = 0, board_size: int = 9, komi: float = 7.5):
        self.out = out
        self.host = HostedAgent(spec, seed)
        if board_size not in SIZES:
            raise UserError(f"--boardsize must be one of {', '.join(map(str, SIZES))}, got {board_size}")
        if not math.isfinite(komi):
            raise UserError(f"--komi must be finite, got {komi}")
        try:                                     # a bad spec fails before the server is told anything
            self._set_game(board_size, float(komi))
        except GTPCommandError as e:
            raise UserError(str(e)) from None
        self.pub: tuple = ()

    def handle(self, line: str) -> bool:
        parsed = parse_command(line)
        if parsed is None:
            return True
        ident, cmd, args = parsed
        try:
            text = self.command(cmd, args)
            ok = True
        except GTPCommandError as e:
            text, ok = str(e), False
        self.out.write(response(ident, ok, text))
        self.out.flush()
        return cmd != "quit"

    def refuse(self, line: str, why: str) -> None:
        """Answer a line that cannot be read (`launch.hosted.answer`) with `? why` (its id kept)."""
        parsed = parse_command(line)
        self.out.write(response(parsed[0] if parsed else "", False, why))
        self.out.flush()

    def command(self, cmd: str, args: list[str]) -> str:
        """The answer text of one command (GTPCommandError: the failure message)."""
        if cmd == "protocol_version":
            return "2"
        if cmd == "name":
            return NAME
        if cmd == "version":
            try:
                return version("sog")
            except PackageNotFoundError:
                return "unknown"
        if cmd == "known_command":
            return "true" if args[:1] and args[0] in COMMANDS else "false"
        if cmd == "list_commands":
            return "\n".join(COMMANDS)
        if cmd == "quit":
            return ""
        if cmd == "boardsize":
            size = self._number(args, int, "boardsize")
            if size not in SIZES:
                raise GTPCommandError("unacceptable size")
            self._set_game(size, self.komi)
            self.pub = ()
            self.host.new_game()
            return ""
        if cmd == "clear_board":
            self.pub = ()
            self.host.new_game()
            return ""
        if cmd == "komi":
            komi = float(self._number(args, float, "komi"))
            if not math.isfinite(komi):
                raise GTPCommandError("syntax error: komi must be finite")
            self._set_game(self.size, komi)
            return ""
        if cmd == "play":
            if len(args) != 2:
                raise GTPCommandError("syntax error")
            self._turn(args[0])
            action = board_moves.go_legal_moves(self.game, self.pub).get(args[1].upper())
            if action is None:
                raise GTPCommandError("illegal move")
            self.pub += (action,)
            return ""
        if cmd == "genmove":
            if len(args) != 1:
                raise GTPCommandError("syntax error")
            self._turn(args[0])
            try:
                action = self.host.move(self.game, self.pub)
            except (AgentError, AgentFailure) as e:
                raise GTPCommandError(f"agent failed: {e}") from None
            vertex = board_moves.go_vertex(self.game, self.pub, action)
            self.pub += (action,)
            return vertex.lower() if vertex == "PASS" else vertex
        if cmd == "undo":
            if not self.pub:
                raise GTPCommandError("cannot undo")
            self.pub = self.pub[:-1]
            return ""
        if cmd == "showboard":
            return "\n" + self.game.render(self.pub)
        if cmd == "final_score":
            return score_text(self.game.area_score(self.pub))
        raise GTPCommandError("unknown command")

    def _set_game(self, size: int, komi: float) -> None:
        """Switch to the Go game of `size` and `komi` (the moves are kept)."""
        game = load_game(f"go(board_size={size},komi={komi},move_limit=0,superko=illegal)")
        try:
            self.host.agent(game)
        except AgentError as e:
            raise GTPCommandError(f"agent cannot play {game.network_family}: {e}") from None
        self.host.warm(game)                     # compiled before the first clock runs
        self.size, self.komi, self.game = size, komi, game

    def _turn(self, colour: str) -> None:
        """GTPCommandError unless `colour` is the side to move in a game not over."""
        player = COLOURS.get(colour.lower())
        if player is None:
            raise GTPCommandError("syntax error")
        state = self.game.state(self.pub)
        if state.is_terminal():
            raise GTPCommandError("illegal move: the game is over")
        if state.current_player() != player:
            raise GTPCommandError(f"illegal move: {('black', 'white')[state.current_player()]} is to play")

    def close(self) -> None:
        """Nothing to wait for: each command is answered before the next is read."""

    @staticmethod
    def _number(args: list[str], typ, what: str):
        try:
            (value,) = args
            return typ(value)
        except ValueError:
            raise GTPCommandError(f"syntax error: {what} needs one number") from None


def score_text(margin: float) -> str:
    """GTP's score of black's margin in points as GnuGo writes it: 'B+3.5', 'W+7.0', or '0' for
    a tie."""
    if margin == 0:
        return "0"
    return f"{'B' if margin > 0 else 'W'}+{abs(margin):.1f}"


def serve(spec: str, inp: TextIO, out: TextIO, seed: int = 0, board_size: int = 9, komi: float = 7.5) -> None:
    """Answer GTP commands from `inp` on `out` until `quit` or the end of input."""
    answer(GTPServer(spec, out, seed, board_size, komi), inp)


def add_parser(subparsers):
    g = subparsers.add_parser("gtp", help="host an agent on a Go server or GUI (GTP)")
    g.add_argument("--agent", required=True, help="agent spec, e.g. sog:runs/go?s=100&c=1, random")
    g.add_argument("--boardsize", type=int, default=9, help="board size until a `boardsize` command: 9, 13, 19")
    g.add_argument("--komi", type=float, default=7.5, help="komi until a `komi` command")
    g.add_argument("--seed", type=int, default=0, help="seed of the first game (the next ones derive from it)")
    g.set_defaults(func=run, protocol=True)
    return g


def run(args, inp: TextIO, out: TextIO) -> None:
    serve(args.agent, inp, out, args.seed, args.boardsize, args.komi)
