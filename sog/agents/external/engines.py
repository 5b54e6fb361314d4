"""External engines as agents: UCI chess engines (Stockfish) and GnuGo over GTP.

    stockfish?elo=1350                 Stockfish at UCI_Elo 1350 (UCI_LimitStrength), 0.1 s a move
    stockfish?nodes=1000               full strength, 1,000 nodes a move
    uci:PROGRAM?depth=8                any UCI engine (a path, or a name on PATH)
    gnugo?level=1                      GnuGo at level 0..10 (default 10), Chinese (area) scoring,
                                       capturing all dead stones before it passes (the game's
                                       Tromp-Taylor scoring counts every stone left on the board)

UCI options (both kinds): elo=E (UCI_LimitStrength with UCI_Elo E; the engine
bounds it, Stockfish 15: 1350..2850), skill=K (Stockfish's `Skill Level` 0..20),
and a move limit: nodes=N, depth=D and/or movetime=S (seconds a move; default
0.1 when no limit is given), threads=T and hash=MB (the engine's own defaults
otherwise: Stockfish's are 1 thread and 16 MB).
All kinds: path=PROGRAM (default: the engine's name, looked up on PATH and
then in /usr/games, where Debian installs engines) and timeout=S (seconds an
engine may take beyond the move limit before it is declared hung; default 10;
starting and quitting may take at least 10).

Under a host's `sog.limits.SEARCH_LIMITS` (`sog uci`) a UCI engine's move
limit is also bounded by the host's: its time by the seconds to the host's
deadline, its nodes by the host's node limit, and the host's stop is passed
on as UCI `stop` (the engine then answers its best move so far).

The engine speaks for the game's side to move: the agent hands it the game's
moves so far (`sog.games.board_moves` names them) and converts its answer
back to an action. The engine process is started when the agent first needs it
after `reset` and ended by `close` (the match runner closes its agents: see
`sog.agents.api`); one that crashes, does not answer within its time, or
answers an illegal move raises `AgentFailure` (and is ended: the next game
starts a new one). GnuGo is seeded by `reset`'s seed (`set_random_seed`);
UCI engines have no seed, so their games are repeatable only as far as the
engine is (a node or depth limit with one thread is).

Chess uses python-chess's `chess.engine` (UCI) and GnuGo `sog.agents.external.gtp`.
A factory checks its options and that the program starts and accepts them
(a short probe) so that a bad spec fails before any game with `AgentError`.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import os
import shutil
from collections.abc import Hashable, Sequence
from pathlib import Path

import chess
import chess.engine

from sog.agents.api import Agent, AgentError, AgentFailure
from sog.agents.external.gtp import GTPClient, GTPError
from sog.agents.spec import take_params
from sog.games import board_moves
from sog.games.api import Game
from sog.games.chess import Chess
from sog.games.go import Go
from sog.limits import SEARCH_LIMITS, Limits

ENGINE_DIRS = ("/usr/games",)
DEFAULT_MOVETIME = 0.1
DEFAULT_TIMEOUT = 10.0
MIN_MOVETIME = 1e-3       # seconds: an engine's time limit when the host's deadline is (nearly) past
STOP_POLL = 0.02          # seconds between looks at the host's stop during an engine's move
GNUGO_LEVELS = (0, 10)


def find_program(kind: str, program: str) -> str:
    """The executable `program` names: a path (containing '/'), or a name on PATH or in
    /usr/games. AgentError naming `kind` if there is none."""
    if "/" in program:
        path = Path(program)
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
        raise AgentError(f"agent {kind!r}: {program} is not an executable file")
    found = shutil.which(program) or shutil.which(program, path=os.pathsep.join(ENGINE_DIRS))
    if found is None:
        raise AgentError(f"agent {kind!r}: no {program!r} executable on PATH or in "
                         f"{', '.join(ENGINE_DIRS)}; install it (e.g. apt-get install {program}) "
                         f"or give path=PROGRAM")
    return found


class UCIEngineAgent(Agent):
    """A chess agent played by a UCI engine process (python-chess's SimpleEngine)."""

    def __init__(self, game: Chess, program: str, options: dict, limit: chess.engine.Limit,
                 timeout: float = DEFAULT_TIMEOUT):
        self.game, self.program, self.options = game, program, dict(options)
        self.limit, self.timeout = limit, float(timeout)
        self.engine: chess.engine.SimpleEngine | None = None
        self._start_fen = board_moves.chess_start_fen(game)
        self._game_key = object()

    def __repr__(self) -> str:
        return f"{Path(self.program).name}({self.options}, {self.limit})"

    def open(self) -> None:
        """Start the engine and set its options (AgentFailure if it cannot)."""
        if self.engine is not None:
            return
        try:
            self.engine = chess.engine.SimpleEngine.popen_uci([self.program],
                                                              timeout=max(self.timeout, DEFAULT_TIMEOUT))
            self.engine.configure(self.options)
        except (chess.engine.EngineError, chess.engine.EngineTerminatedError, TimeoutError, OSError) as e:
            self._drop()
            raise AgentFailure(f"{Path(self.program).name} did not start with options {self.options}: "
                               f"{type(e).__name__}: {e}") from None

    def reset(self, player: int, seed: int) -> None:
        super().reset(player, seed)
        self._game_key = object()                # a new game for python-chess: `ucinewgame`

    def act(self, history: Sequence[Hashable], slot: int) -> int:
        pub = history[-1]
        board = chess.Board(self._start_fen)
        for move in board_moves.chess_uci_moves(self.game, pub):
            board.push_uci(move)
        self.open()
        limits = SEARCH_LIMITS.current()
        limit = self.move_limit(limits)
        # SimpleEngine.play's own call with a timeout (it has none for a node or depth limit)
        protocol = self.engine.protocol
        coro = asyncio.wait_for(protocol.play(board, limit, game=self._game_key), self.timeout + (limit.time or 0.0))
        future = asyncio.run_coroutine_threadsafe(coro, protocol.loop)
        if limits.stop is not None:
            # `stop` again at every look until the answer: one that reaches the engine before its
            # `go` (while it answers python-chess's `isready`) is ignored
            while not concurrent.futures.wait([future], timeout=STOP_POLL).done:
                if limits.stop.is_set():
                    protocol.loop.call_soon_threadsafe(protocol.send_line, "stop")
        try:
            result = future.result()
        except (chess.engine.EngineError, chess.engine.EngineTerminatedError, TimeoutError) as e:
            self._drop()
            kind = "no answer within the timeout" if isinstance(e, TimeoutError) else f"{type(e).__name__}: {e}"
            raise AgentFailure(f"{self!r} failed at {board.fen()}: {kind}") from None
        name = None if result.move is None else result.move.uci()
        action = board_moves.chess_legal_moves(self.game, pub).get(name)
        if action is None:
            self._drop()
            raise AgentFailure(f"{self!r} answered {name or 'no move'} at {board.fen()}, not a legal move")
        return action

    def move_limit(self, limits: Limits) -> chess.engine.Limit:
        """The agent's move limit bounded by the host's `limits`: time by the
        seconds to the deadline (at least MIN_MOVETIME), nodes by the host's node limit."""
        limit = self.limit
        left = limits.seconds_left()
        if left is not None:
            left = max(left, MIN_MOVETIME)
            limit = dataclasses.replace(limit, time=left if limit.time is None else min(limit.time, left))
        if limits.iterations is not None:
            nodes = limits.iterations if limit.nodes is None else min(limit.nodes, limits.iterations)
            limit = dataclasses.replace(limit, nodes=nodes)
        return limit

    def close(self) -> None:
        """Say `quit` to the engine and wait for it (up to the timeout; then kill it)."""
        engine, self.engine = self.engine, None
        if engine is not None:
            try:
                engine.quit()
            except (chess.engine.EngineError, chess.engine.EngineTerminatedError, TimeoutError, OSError):
                engine.close()

    def _drop(self) -> None:
        """End a failed engine at once (no `quit`: it may not be listening)."""
        engine, self.engine = self.engine, None
        if engine is not None:
            engine.close()


class GnuGoAgent(Agent):
    """A Go agent played by GnuGo over GTP (`gnugo --mode gtp`)."""

    def __init__(self, game: Go, program: str, level: int = 10, timeout: float = DEFAULT_TIMEOUT):
        self.game, self.program, self.level, self.timeout = game, program, int(level), float(timeout)
        self.client: GTPClient | None = None
        self._played: list[str] = []             # the engine's moves so far, as GTP `play` arguments
        self._seed = 0

    def __repr__(self) -> str:
        return f"GnuGoAgent(level={self.level})"

    def _send(self, command: str) -> str:
        try:
            return self.client.send(command)
        except GTPError as e:
            self.close()
            raise AgentFailure(f"{self!r}: {e}") from None

    def open(self) -> None:
        """Start GnuGo with the game's board size and komi (AgentFailure if it cannot)."""
        if self.client is not None:
            return
        command = [self.program, "--mode", "gtp", "--level", str(self.level), "--chinese-rules",
                   "--capture-all-dead", "--never-resign"]
        try:
            self.client = GTPClient(command, timeout=self.timeout)
        except GTPError as e:
            raise AgentFailure(f"{self!r}: {e}") from None
        self._send(f"boardsize {self.game.size}")
        self._send(f"komi {self.game.spiel_game.get_parameters()['komi']}")
        self._played = None

    def reset(self, player: int, seed: int) -> None:
        super().reset(player, seed)
        self._played = None                      # clear the engine's board before the next move
        self._seed = int(self.rng.integers(2**31 - 1))

    def act(self, history: Sequence[Hashable], slot: int) -> int:
        pub = history[-1]
        moves = [("B" if i % 2 == 0 else "W") + " " + board_moves.go_vertex(self.game, pub[:i], a)
                 for i, a in enumerate(pub)]
        self.open()
        if self._played is None or moves[:len(self._played)] != self._played:
            self._send("clear_board")
            self._send(f"set_random_seed {self._seed}")
            self._played = []
        for move in moves[len(self._played):]:
            self._send(f"play {move}")
            self._played.append(move)
        colour = "B" if len(pub) % 2 == 0 else "W"
        answer = self._send(f"genmove {colour}").upper()
        action = board_moves.go_legal_moves(self.game, pub).get(answer)
        if action is None:
            self.close()
            raise AgentFailure(f"{self!r} answered {answer!r} after {len(pub)} moves, not a legal move")
        self._played.append(f"{colour} {answer}")
        return action

    def close(self) -> None:
        client, self.client = self.client, None
        self._played = None
        if client is not None:
            client.close()


# ---------------------------------------------------------------- spec factories
_UCI_PARAMS = {"elo": int, "skill": int, "nodes": int, "depth": int, "movetime": float,
               "threads": int, "hash": int, "timeout": float, "path": str}
_UCI_MIN = {"nodes": 1, "depth": 1, "movetime": 1e-3, "threads": 1, "hash": 1, "timeout": 0.1}


def _need(kind: str, game: Game, cls: type, what: str) -> None:
    if not isinstance(game, cls):
        raise AgentError(f"agent {kind!r} plays {what} only, not {game.spec.name}")


def _probe(kind: str, agent: Agent) -> Agent:
    """`agent` after starting its engine once (options checked), or AgentError."""
    try:
        agent.open()
    except AgentFailure as e:
        raise AgentError(f"agent {kind!r}: {e}") from None
    finally:
        agent.close()
    return agent


def uci_agent(kind: str, program: str, game: Game, params: dict) -> UCIEngineAgent:
    """The UCI engine agent of a spec's options (see the module docstring)."""
    _need(kind, game, Chess, "chess")
    p = take_params(kind, params, _UCI_PARAMS, minimum=_UCI_MIN)
    options = {name: p[key] for key, name in (("threads", "Threads"), ("hash", "Hash")) if key in p}
    if "elo" in p:
        options.update(UCI_LimitStrength=True, UCI_Elo=p["elo"])
    if "skill" in p:
        options["Skill Level"] = p["skill"]
    if not any(k in p for k in ("nodes", "depth", "movetime")):
        p["movetime"] = DEFAULT_MOVETIME
    limit = chess.engine.Limit(nodes=p.get("nodes"), depth=p.get("depth"), time=p.get("movetime"))
    path = find_program(kind, p.get("path", program))
    return _probe(kind, UCIEngineAgent(game, path, options, limit, p.get("timeout", DEFAULT_TIMEOUT)))


def _stockfish(game, arg, params):
    if arg is not None:
        raise AgentError(f"agent 'stockfish' takes no ':' argument (give path=PROGRAM), got {arg!r}")
    return uci_agent("stockfish", "stockfish", game, params)


def _uci(game, arg, params):
    if arg is None:
        raise AgentError("agent 'uci' needs the engine program: uci:PROGRAM")
    return uci_agent("uci", arg, game, params)


def _gnugo(game, arg, params):
    if arg is not None:
        raise AgentError(f"agent 'gnugo' takes no ':' argument (give path=PROGRAM), got {arg!r}")
    _need("gnugo", game, Go, "Go")
    p = take_params("gnugo", params, {"level": int, "timeout": float, "path": str},
                    minimum={"level": GNUGO_LEVELS[0], "timeout": 0.1})
    level = p.get("level", GNUGO_LEVELS[1])
    if level > GNUGO_LEVELS[1]:
        raise AgentError(f"agent 'gnugo': level must be at most {GNUGO_LEVELS[1]}, got {level}")
    path = find_program("gnugo", p.get("path", "gnugo"))
    return _probe("gnugo", GnuGoAgent(game, path, level, p.get("timeout", DEFAULT_TIMEOUT)))


FACTORIES = {"stockfish": _stockfish, "uci": _uci, "gnugo": _gnugo}
