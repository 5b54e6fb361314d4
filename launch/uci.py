"""`sog uci --agent SPEC`: any sog agent as a UCI chess engine, for chess GUIs.

Speaks UCI on stdin/stdout (everything else goes to stderr):

    uci                          -> id name, id author, uciok
    isready                      -> readyok (at once, also during a search; the first one
                                 after the warm-up below)
    ucinewgame                   the next `go` starts a new game (the agent is reset)
    position startpos [moves M...]
    position fen FEN [moves M...]   moves in UCI notation (e2e4, e7e8q)
    go [...]                     searches on a worker thread, then -> bestmove M (0000 only
                                 when the side to move has no legal move: checkmate, stalemate)
    stop                         ends the search: bestmove with the best move so far
    ponderhit                    answers a `go ponder` held answer
    setoption, debug, register   accepted (no options)
    quit                         (or the end of input) ends the search and the program

A line that is not UTF-8 is answered `info string error: the command is not UTF-8: ...`.

`go` limits: the agent's own budget (`uct?simulations=150`) is the longest search;
`movetime MS`, the clock (`wtime`/`btime` MS, `winc`/`binc` MS, `movestogo N`: the side to
move's time / N (20 if not given) + 3/4 of its increment, at most its time less 0.1 s) and
`nodes N` (iterations: simulations of the UCT kinds) end it earlier, as `stop` does; a search
stops before an iteration (a simulation) that would likely end past the time at the mean
iteration length so far, and always runs at least one. `go infinite` / `go ponder` hold the
answer until `stop` / `ponderhit`. The limits reach every search through
`sog.limits.SEARCH_LIMITS`: a `Budget`'s iterations (`sog.agents.sampling.common`: the UCT and MCCFR
kinds), GT-CFR's phases (`sog:`) and an external engine's own move limit. Commands that
change the position (`position`, `go`, `ucinewgame`) wait for a running search to end.

At start the agent is made and warmed up on a worker thread (`launch.hosted.HostedAgent.warm`:
a network's compilations of every batch size, then one short move from the start position)
while the GUI sends `uci` (answered at once) and its options; the first `isready`,
`position`, `go` or `ucinewgame` waits for it, so that the first move's clock pays no
compilation. A spec that makes no chess agent is then one line on stderr, exit status 2.

Positions follow the controller's game: a threefold repetition or a fifty-move count is a
draw that a player may claim, not the end of the game (OpenSpiel ends it automatically), so
such a position is searched as a game from its FEN (`board_moves.chess_continued`); in a
position with too little material to mate, where every move draws, the engine answers the
first legal move (python-chess's order).

A bad position (an unparsable FEN, an illegal position such as the side not to move in
check or a missing king, an illegal move) is reported as
`info string error: ...` and leaves no position, so that a following `go`
answers `bestmove 0000`. The agent plays the side to move (`launch.hosted`):
with a SoG spec (`sog:RUN?s=...`) it keeps its search between the moves of a game.
"""
from __future__ import annotations

import itertools
import threading
import time
from typing import TextIO

import chess

from launch.console import UserError
from launch.hosted import HostedAgent, answer
from sog.agents.api import AgentError, AgentFailure
from sog.games import UnknownGameError, board_moves, load_game
from sog.games.chess import Chess
from sog.limits import SEARCH_LIMITS

NAME = "sog"
MOVES_TO_GO = 20          # moves the clock is shared over when `go` gives no movestogo
INCREMENT_SHARE = 0.75    # of the increment spent on this move
CLOCK_RESERVE = 0.1       # seconds of the clock never spent
LATENCY = 0.02            # seconds of a move's time kept for the answer (the host's own work, the pipe)
GO_NUMBERS = ("wtime", "btime", "winc", "binc", "movestogo", "movetime", "nodes", "depth", "mate")


class UCIServer:
    """The UCI loop around one hosted agent; `handle(line)` is False after `quit` (which ends a
    running search); `close()` waits for a running search."""

    def __init__(self, spec: str, out: TextIO, seed: int = 0):
        self.spec, self.out = spec, out
        self.host = HostedAgent(spec, seed)
        self.standard = load_game("chess")
        self.broken: AgentError | None = None    # the spec's error, raised by `wait_warm`
        self.board: chess.Board | None = chess.Board()   # the controller's position; None: bad
        self.game: Chess | None = self.standard          # it as OpenSpiel plays it; None: dead
        self.pub: tuple = ()
        self.line: tuple[list[str], list[str]] | None = None   # (start, moves) of the last good `position`
        self.lock = threading.Lock()             # one writer of `out` at a time; guards `held`
        self.search: threading.Thread | None = None
        self.stop = threading.Event()
        self.held: str | None = None             # a bestmove held until `stop` / `ponderhit`
        self.holding = False                     # the running search's answer is to be held
        self.failure: BaseException | None = None
        # the warm-up (`HostedAgent.warm`: a network's compilations) while the GUI sets up; the
        # first isready / ucinewgame / position / go waits for it, so no clock runs meanwhile
        self.warming: threading.Thread | None = threading.Thread(target=self._warm, daemon=True)
        self.warming.start()

    def _warm(self) -> None:
        """The warm-up thread: the agent made (its network loaded: `uciok` does not wait for it),
        then `HostedAgent.warm`."""
        try:
            self.host.agent(self.standard)
        except AgentError as e:
            self.broken = e
            return
        self.host.warm(self.standard)

    def send(self, text: str) -> None:
        with self.lock:
            self.out.write(text + "\n")
            self.out.flush()

    def handle(self, line: str) -> bool:
        words = line.split()
        if not words:
            return True
        cmd, args = words[0], words[1:]
        if cmd == "quit":
            self.stop.set()
            return False
        if cmd == "uci":
            self.send(f"id name {NAME} ({self.spec})")
            self.send(f"id author {NAME}")
            self.send("uciok")
        elif cmd == "isready":
            self.wait_warm()
            self.send("readyok")
        elif cmd == "ucinewgame":
            self.wait()
            self.host.new_game()
        elif cmd == "position":
            self.wait()
            self.position(args)
        elif cmd == "go":
            self.wait()
            self.go(args)
        elif cmd in ("stop", "ponderhit"):
            if cmd == "stop":
                self.stop.set()
            with self.lock:
                self.holding = False
                move, self.held = self.held, None
            if move is not None:
                self.send(f"bestmove {move}")
        elif cmd not in ("setoption", "debug", "register"):
            self.send(f"info string unknown command {cmd}")
        return True

    def refuse(self, line: str, why: str) -> None:
        """Answer a line that cannot be read (`launch.hosted.answer`) with an error line."""
        self.send(f"info string error: {why}: {line.strip()!r}")

    def wait_warm(self) -> None:
        """Wait for the warm-up (if it still runs); UserError if the agent cannot be made."""
        if self.warming is not None:
            self.warming.join()
            self.warming = None
        if self.broken is not None:
            raise UserError(str(self.broken))

    def wait(self) -> None:
        """Wait for the warm-up and the running search (if any) to end; re-raise what broke it."""
        self.wait_warm()
        if self.search is not None:
            self.search.join()
            self.search = None
        if self.failure is not None:
            failure, self.failure = self.failure, None
            raise failure

    def close(self) -> None:
        """End the running search as `stop` does (the end of input) and wait for it: its bestmove
        is still sent."""
        self.stop.set()
        self.wait()

    def position(self, args: list[str]) -> None:
        """Set the position of `position startpos|fen FEN [moves ...]`; a position that extends
        the last one (the same start, more moves: a game going on) plays only the new moves."""
        moves_at = args.index("moves") if "moves" in args else len(args)
        head, moves = args[:moves_at], args[moves_at + 1:]
        last, self.line = self.line, None
        if last is not None and last[0] == head and moves[:len(last[1])] == last[1]:
            board, game, pub, done = self.board, self.game, self.pub, len(last[1])
        else:
            start = self.start(head, args)
            if start is None:
                self.board = self.game = None
                return
            (board, game), pub, done = start, (), 0
        self.board = self.game = None
        for i in range(done, len(moves)):
            name = moves[i]
            try:
                move = board.parse_uci(name)
            except ValueError:
                move = chess.Move.null()
            if not move:
                self.send(f"info string error: illegal move {name} after {' '.join(moves[:i]) or 'the start'}")
                return
            if game is not None and game.state(pub).is_terminal():
                game, pub = board_moves.chess_continued(board), ()
            if game is not None:
                pub += (board_moves.chess_legal_moves(game, pub)[board.uci(move)],)
            board.push(move)
        if game is not None and game.state(pub).is_terminal():
            game, pub = board_moves.chess_continued(board), ()
        self.board, self.game, self.pub, self.line = board, game, pub, (head, moves)

    def start(self, head: list[str], args: list[str]) -> tuple[chess.Board, Chess] | None:
        """(board, game) of `position` HEAD (`startpos` or `fen FEN`); None (an error line sent)
        if it is not a legal position."""
        if head == ["startpos"]:
            return chess.Board(), self.standard
        if head[:1] != ["fen"] or len(head) < 2:
            self.send(f"info string error: expected 'position startpos|fen FEN [moves ...]', got {' '.join(args)!r}")
            return None
        fen = " ".join(head[1:])
        try:
            board = chess.Board(fen)
        except ValueError as e:
            self.send(f"info string error: bad FEN {fen!r}: {e}")
            return None
        if board.status() != chess.STATUS_VALID:
            self.send(f"info string error: illegal position {fen!r}: {status_text(board.status())}")
            return None
        canonical = board.fen()
        try:
            return board, self.standard if canonical == chess.STARTING_FEN else load_game(f"chess(fen={canonical})")
        except UnknownGameError as e:
            self.send(f"info string error: {e}")
            return None

    def go(self, args: list[str]) -> None:
        """Start the search of `go ARGS` on a worker thread (its bestmove sent when it ends)."""
        deadline, nodes = self.limits(args)
        self.stop.clear()
        self.held, self.holding = None, "infinite" in args or "ponder" in args
        self.search = threading.Thread(target=self._search, args=(deadline, nodes), daemon=True)
        self.search.start()

    def limits(self, args: list[str]) -> tuple[float | None, int | None]:
        """(deadline as a `time.perf_counter()` time or None, nodes or None) of `go ARGS`."""
        now = time.perf_counter()
        numbers: dict[str, int] = {}
        for key, value in itertools.pairwise(args):
            if key in GO_NUMBERS:
                try:
                    numbers[key] = int(value)
                except ValueError:
                    self.send(f"info string error: go {key} needs an integer, got {value!r} (ignored)")
        seconds = []
        if "movetime" in numbers:
            seconds.append(numbers["movetime"] / 1000)
        white = self.board is None or self.board.turn == chess.WHITE
        clock, inc = ("wtime", "winc") if white else ("btime", "binc")
        if clock in numbers:
            left = numbers[clock] / 1000
            share = left / max(numbers.get("movestogo", MOVES_TO_GO), 1) + INCREMENT_SHARE * numbers.get(inc, 0) / 1000
            seconds.append(min(share, left - CLOCK_RESERVE))
        deadline = now + max(min(seconds) - LATENCY, 0.0) if seconds else None
        return deadline, numbers.get("nodes")

    def _search(self, deadline: float | None, nodes: int | None) -> None:
        """The worker thread: the best move under the limits, sent (or held) as bestmove."""
        try:
            with SEARCH_LIMITS.limited(self.stop, deadline, nodes):
                move = self.bestmove()
        except Exception as e:  # noqa: BLE001 - re-raised on the input thread by `wait`
            self.failure = e
            move = "0000"
        with self.lock:
            if self.holding and not self.stop.is_set():
                self.held = move
                return
            self.holding = False
        self.send(f"bestmove {move}")

    def bestmove(self) -> str:
        """The agent's move in the current position in UCI notation; 0000 if there is none, the
        first legal move in a dead position (too little material)."""
        if self.board is None or not any(self.board.legal_moves):
            return "0000"
        if self.game is None:
            return next(iter(self.board.legal_moves)).uci()
        try:
            action = self.host.move(self.game, self.pub)
        except (AgentError, AgentFailure) as e:
            self.send(f"info string error: {e}")
            return "0000"
        return board_moves.chess_move_name(self.game, self.pub, action)


def status_text(status: chess.Status) -> str:
    """python-chess's reasons that a position is illegal, in words: 'opposite check, ...'."""
    return ", ".join(flag.name.lower().replace("_", " ") for flag in chess.Status if flag and flag in status)


def serve(spec: str, inp: TextIO, out: TextIO, seed: int = 0) -> None:
    """Answer UCI commands from `inp` on `out` until `quit` or the end of input."""
    answer(UCIServer(spec, out, seed), inp)


def add_parser(subparsers):
    u = subparsers.add_parser("uci", help="host an agent in a chess GUI (UCI on stdin/stdout)")
    u.add_argument("--agent", required=True, help="agent spec, e.g. sog:runs/chess?s=100&c=1, random")
    u.add_argument("--seed", type=int, default=0, help="seed of the first game (the next ones derive from it)")
    u.set_defaults(func=run, protocol=True)
    return u


def run(args, inp: TextIO, out: TextIO) -> None:
    serve(args.agent, inp, out, args.seed)
