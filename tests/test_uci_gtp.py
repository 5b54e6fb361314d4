"""`sog uci` and `sog gtp` as subprocesses: driven through python-chess's UCI client and
our GTP client, hosting random and (marked slow: JAX's start) a SoG agent with a fresh,
untrained CVPN, against Stockfish and GnuGo where they are installed; bad agent specs exit
2 with one line."""
from __future__ import annotations

import io
import math
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

import chess
import chess.engine
import jax
import numpy as np
import pytest
from engine_programs import needs_gnugo, needs_stockfish, program

from launch.gtp import GTPServer
from launch.uci import UCIServer
from sog.agents.external.gtp import GTPClient, GTPError
from sog.games import board_moves, load_game
from sog.games.api import DECISION
from sog.games.go import Go

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "JAX_PLATFORMS": "cpu"}


def sog(*args: str) -> list[str]:
    return [sys.executable, "-m", "launch.cli", *args]


def uci_engine(spec: str) -> chess.engine.SimpleEngine:
    return chess.engine.SimpleEngine.popen_uci(sog("uci", "--agent", spec), timeout=60, cwd=ROOT, env=ENV)


def test_uci_hosts_random_through_python_chess():
    with uci_engine("random") as engine:
        assert engine.id["name"] == "sog (random)"
        board = chess.Board()
        for _ in range(6):
            move = engine.play(board, chess.engine.Limit(time=1)).move
            assert move in board.legal_moves
            board.push(move)
        promote = chess.Board("8/P7/8/8/8/8/8/k6K w - - 0 1")
        assert engine.play(promote, chess.engine.Limit(time=1)).move in promote.legal_moves
        mated = chess.Board("7k/6Q1/6K1/8/8/8/8/8 b - - 0 1")   # black is checkmated: no move
        assert not engine.play(mated, chess.engine.Limit(time=1)).move     # bestmove 0000: the null move


@pytest.mark.slow          # JAX's start and the CVPN's compilation: ~10 s idle, ~50 s on a loaded 2-core machine
def test_uci_hosts_sog_with_a_fresh_network():
    with uci_engine("sog:fresh?s=2&c=1") as engine:
        board = chess.Board()
        for _ in range(2):
            move = engine.play(board, chess.engine.Limit(time=1), game="g1").move
            assert move in board.legal_moves
            board.push(move)
            board.push(next(iter(board.legal_moves)))


@needs_stockfish
def test_uci_random_loses_to_stockfish():
    board = chess.Board()
    with uci_engine("random") as ours, chess.engine.SimpleEngine.popen_uci(program("stockfish")) as sf:
        sf.configure({"UCI_LimitStrength": True, "UCI_Elo": 1350})
        while not board.is_game_over() and board.fullmove_number < 150:
            engine = ours if board.turn == chess.WHITE else sf
            board.push(engine.play(board, chess.engine.Limit(time=0.01)).move)
    assert board.is_game_over() and board.result() != "1-0"    # Stockfish 1350 is not deterministic


def test_uci_protocol_lines():
    script = ("uci\nisready\nposition startpos moves e2e4 e7e5\ngo infinite\nisready\nstop\n"
              "position startpos moves e2e5\ngo\nposition fen not a fen\ngo\nquit\n")
    out = subprocess.run(sog("uci", "--agent", "random"), input=script, capture_output=True, text=True, check=False,
                         cwd=ROOT, env=ENV, timeout=60)
    lines = out.stdout.splitlines()
    assert out.returncode == 0 and lines[:4] == ["id name sog (random)", "id author sog", "uciok", "readyok"]
    assert lines[4] == "readyok" and lines[5].startswith("bestmove ") and lines[5] != "bestmove 0000"
    assert lines[6].startswith("info string error: illegal move e2e5") and lines[7] == "bestmove 0000"
    assert lines[8].startswith("info string error: bad FEN") and lines[9] == "bestmove 0000"


def test_uci_server_resets_the_agent_per_game_only():
    """In one game the agent keeps its state (a SoG agent its search); a new game resets it."""
    out = io.StringIO()
    server = UCIServer("random", out)
    for line in ("position startpos", "go", "position startpos moves e2e4 e7e5", "go"):
        server.handle(line)
    assert server.host.games == 1                        # the second position extends the first
    for line in ("ucinewgame", "position startpos moves e2e4", "go", "position startpos moves d2d4", "go"):
        server.handle(line)
    server.close()                                       # the last search's bestmove
    assert server.host.games == 3                        # a new game, then a position off its line
    assert [x.split()[0] for x in out.getvalue().splitlines()] == ["bestmove"] * 4


def uci_answers(spec: str, *lines: str) -> list[str]:
    """The lines that an in-process UCI server hosting `spec` answers to `lines` (each
    search waited for)."""
    out = io.StringIO()
    server = UCIServer(spec, out)
    for line in lines:
        server.handle(line)
        server.wait()
    server.close()
    return out.getvalue().splitlines()


def test_uci_moves_in_claimable_draws():
    """Threefold repetition, the fifty-move count and too little material are draws a player
    may claim, not game ends (OpenSpiel ends them): the engine still moves; only checkmate and
    stalemate answer 0000."""
    repeated = "position startpos moves g1f3 g8f6 f3g1 f6g8 g1f3 g8f6 f3g1 f6g8"      # the start, three times
    dead = "position fen 4k3/8/8/8/8/8/8/4KB2 w - - 0 1"                              # K+B v K
    answers = uci_answers("random", repeated, "go", repeated + " e2e4 e7e5", "go",
                          "position fen 4k3/8/8/8/8/8/8/R3K3 w - - 100 80", "go", dead, "go",
                          dead + " moves f1c4 e8d7", "go", "position fen 7k/6Q1/6K1/8/8/8/8/8 b - - 0 1", "go",
                          "position fen 7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", "go")
    assert len(answers) == 7 and all(a.startswith("bestmove ") for a in answers), answers
    moves = [chess.Move.from_uci(a.split()[1]) for a in answers]
    assert moves[0] in chess.Board().legal_moves
    after = chess.Board()
    for m in repeated.split()[3:] + ["e2e4", "e7e5"]:
        after.push_uci(m)
    assert moves[1] in after.legal_moves
    assert moves[2] in chess.Board("4k3/8/8/8/8/8/8/R3K3 w - - 100 80").legal_moves
    assert moves[3] in chess.Board("4k3/8/8/8/8/8/8/4KB2 w - - 0 1").legal_moves
    dead_after = chess.Board("4k3/8/8/8/8/8/8/4KB2 w - - 0 1")
    dead_after.push_uci("f1c4"), dead_after.push_uci("e8d7")
    assert moves[4] in dead_after.legal_moves
    assert answers[5:] == ["bestmove 0000"] * 2                     # checkmate, stalemate


def test_uci_finds_the_mate_after_a_fifty_move_count():
    """a1a8 mates on the hundredth reversible half-move (checkmate outranks the count)."""
    assert uci_answers("uct?simulations=60", "position fen 4k3/8/4K3/8/8/8/8/R7 w - - 100 80", "go") == \
        ["bestmove a1a8"]


def test_continued_game_drops_the_counts_not_the_position():
    board = chess.Board("4k3/8/4K3/8/8/8/8/R7 b - - 100 80")
    game = board_moves.chess_continued(board)
    assert game.spec.name == "chess(fen=4k3/8/4K3/8/8/8/8/R7 b - - 0 80)" and game.network_family == "chess"
    assert sorted(board_moves.chess_legal_moves(game, ())) == sorted(m.uci() for m in board.legal_moves)
    assert board_moves.chess_continued(chess.Board("4k3/8/8/8/8/8/8/4KB2 w - - 0 1")) is None


class LineReader:
    """A subprocess's stdout lines, read on a thread: `next(timeout)` is the next line or None."""

    def __init__(self, stream):
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=lambda: [self.lines.put(x.rstrip("\n")) for x in stream], daemon=True).start()

    def next(self, timeout: float) -> str | None:
        try:
            return self.lines.get(timeout=timeout)
        except queue.Empty:
            return None


def test_uci_answers_isready_during_a_search_and_stop_ends_it():
    """The input is read while the agent searches: `isready` is answered at once, `stop` ends
    an infinite search with its best move so far, `go movetime` / `go nodes` / the clock end it
    in time (a search of 10^6 simulations would take hours)."""
    proc = subprocess.Popen(sog("uci", "--agent", "uct?simulations=1000000"), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, cwd=ROOT, env=ENV)
    reader = LineReader(proc.stdout)

    def send(line: str) -> float:
        proc.stdin.write(line + "\n")
        proc.stdin.flush()
        return time.perf_counter()

    def answer(prefix: str, timeout: float) -> float:
        line = reader.next(timeout)
        assert line is not None and line.startswith(prefix), line
        return time.perf_counter()

    try:
        send("isready")
        answer("readyok", 60)                              # the program has started
        send("position fen 4k3/8/4K3/8/8/8/8/R7 w - - 0 1")
        send("go infinite")
        time.sleep(1.0)
        start = send("isready")
        assert answer("readyok", 5) - start < 0.5
        start = send("stop")
        assert answer("bestmove ", 10) - start < 3.0
        start = send("go movetime 500")
        assert answer("bestmove ", 10) - start < 2.0
        start = send("go wtime 3000 btime 3000")           # 3 s / 20 moves: 0.15 s
        assert answer("bestmove ", 10) - start < 2.0
        start = send("go nodes 5")
        assert answer("bestmove ", 60) - start < 30
        send("quit")
        assert proc.wait(timeout=30) == 0
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize("command, message", [
    (("uci", "--agent", "random?x=1"), "sog uci: error: agent 'random': unknown option 'x'"),
    (("uci", "--agent", "gnugo"), "sog uci: error: agent 'gnugo' plays Go only"),
    (("gtp", "--agent", "sog:/no/such/run"), "sog gtp: error: agent cannot play go: agent 'sog'"),
    (("gtp", "--agent", "random", "--boardsize", "7"), "sog gtp: error: --boardsize must be one of 9, 13, 19"),
])
def test_bad_agent_exits_2_with_one_line(command, message):
    out = subprocess.run(sog(*command), input="", capture_output=True, text=True, check=False, cwd=ROOT,
                         env=ENV, timeout=60)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.strip().startswith(message) and len(out.stderr.strip().splitlines()) == 1


def gtp_engine(spec: str, *args: str) -> GTPClient:
    return GTPClient(sog("gtp", "--agent", spec, *args), timeout=60)


def test_gtp_commands():
    with gtp_engine("random") as g:
        assert g.send("protocol_version") == "2" and g.send("name") == "sog"
        assert g.send("known_command genmove") == "true" and g.send("known_command fly") == "false"
        assert "genmove" in g.send("list_commands").split("\n")
        assert g.send("boardsize 9") == "" and g.send("clear_board") == "" and g.send("komi 6.5") == ""
        assert g.send("play black D4") == ""
        with pytest.raises(GTPError, match="illegal move"):
            g.send("play w D4")                          # occupied
        with pytest.raises(GTPError, match="white is to play"):
            g.send("genmove b")
        reply = g.send("genmove w")
        assert reply == "pass" or (reply[0] in "ABCDEFGHJ" and 1 <= int(reply[1:]) <= 9 and reply != "D4")
        assert g.send("undo") == "" and g.send("play w pass") == "" and g.send("play b pass") == ""
        with pytest.raises(GTPError, match="game is over"):
            g.send("genmove w")
        with pytest.raises(GTPError, match="unacceptable size"):
            g.send("boardsize 8")
        with pytest.raises(GTPError, match="unknown command"):
            g.send("fly")
        assert "ABCDEFGHJ" in g.send("showboard")
        assert g.send("known_command final_score") == "true"
        assert g.send("final_score") == "B+74.5"                # D4 alone: 81 - 6.5
        g.send("clear_board")
        assert g.send("final_score") == "W+6.5"


def random_go_game(seed: int) -> tuple[Go, tuple]:
    """A random 9 x 9 game under the hosted rules (no move limit, superko illegal) to its end:
    stones rather than passes (97%), which makes long games with captures."""
    game, rng = Go(move_limit=0, superko="illegal"), np.random.default_rng(seed)
    pub = ()
    while game.kind(pub) == DECISION:
        legal = np.flatnonzero(game.legal_mask(pub)[0])
        stones = legal[legal != 81]
        pub += (int(rng.choice(stones)) if len(stones) and rng.random() < 0.97 else 81,)
    return game, pub


def test_gtp_follows_the_controllers_game():
    """No move limit (the game is not over after 162 moves), and a move that repeats an
    earlier position is refused as illegal for the mover, not played as the end of the game."""
    out = io.StringIO()
    server = GTPServer("random", out, seed=1)
    moves = 0
    while server.handle(f"genmove {'bw'[moves % 2]}") and not out.getvalue().splitlines()[-2].startswith("?"):
        moves += 1
    assert moves > 162 and out.getvalue().splitlines()[-2] == "? illegal move: the game is over"
    assert server.pub[-2:] == (81, 81)                            # it ended with two passes
    game, pub = random_go_game(103)                               # a game with a superko move
    base = Go(move_limit=0)
    k = next(i for i in range(len(pub)) if (base.legal_mask(pub[:i]) & ~game.legal_mask(pub[:i])).any())
    banned = int(np.flatnonzero(base.legal_mask(pub[:k])[0] & ~game.legal_mask(pub[:k])[0])[0])
    out = io.StringIO()
    server = GTPServer("random", out)
    for i, a in enumerate(pub[:k]):
        server.handle(f"play {'bw'[i % 2]} {board_moves.go_vertex(game, pub[:i], a)}")
    vertex = board_moves.go_vertex(game, pub[:k], banned)
    server.handle(f"play {'bw'[k % 2]} {vertex}")
    assert out.getvalue().splitlines()[-2] == "? illegal move" and len(server.pub) == k


@pytest.mark.slow          # as test_uci_hosts_sog_with_a_fresh_network
def test_gtp_hosts_sog_with_a_fresh_network():
    with gtp_engine("sog:fresh?s=2&c=1") as g:
        g.send("clear_board")
        first = g.send("genmove b")
        g.send("play w pass" if first == "pass" else ("play w A1" if first != "A1" else "play w B1"))
        assert g.send("genmove b")


def relay_against_gnugo(spec: str, seed: int = 0) -> tuple[str, str]:
    """A whole 9 x 9 game relayed between `sog gtp` (SPEC, black) and GnuGo (white) until two
    passes: (GnuGo's final_score, ours)."""
    gnugo = GTPClient([program("gnugo"), "--mode", "gtp", "--level", "0", "--chinese-rules", "--capture-all-dead",
                       "--never-resign"], timeout=30)
    with gtp_engine(spec, "--seed", str(seed)) as ours, gnugo:
        passes, moves = 0, 0
        for engine in (ours, gnugo):
            engine.send("boardsize 9")
            engine.send("komi 7.5")
            engine.send("clear_board")
        while passes < 2:
            assert moves < 1000
            colour, mover, other = ("b", ours, gnugo) if moves % 2 == 0 else ("w", gnugo, ours)
            vertex = mover.send(f"genmove {colour}")
            other.send(f"play {colour} {vertex}")
            passes = passes + 1 if vertex.lower() == "pass" else 0
            moves += 1
        return gnugo.send("final_score"), ours.send("final_score")


@needs_gnugo
def test_gtp_random_loses_to_gnugo():
    theirs, ours = relay_against_gnugo("random")
    assert theirs.startswith("W+") and ours == theirs


@needs_gnugo
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_gtp_final_score_is_gnugos_chinese_score(seed):
    """Games that GnuGo plays out on both sides (capturing every dead stone before it passes):
    the Tromp-Taylor area score is GnuGo's Chinese-rules score."""
    theirs, ours = relay_against_gnugo("gnugo?level=0", seed)
    assert ours == theirs


def test_fresh_agent_takes_a_training_configs_network():
    """`sog:fresh?net=CONFIG`: the untrained network of a run's architecture (an Elo table's
    starting point); net= with a checkpoint or the oracle, or a missing config, is one error."""
    from launch.tournament import setup_agents
    from sog.agents.api import AgentError
    from sog.agents.registry import make_agent

    setup_agents()
    go = load_game("go")
    small = make_agent("sog:fresh?s=1&net=go9_small", go).resolver.value_fn
    default = make_agent("sog:fresh?s=1", go).resolver.value_fn
    count = lambda vf: sum(x.size for x in jax.tree_util.tree_leaves(vf.params))
    assert count(small) < count(default)
    for bad, words in (("sog:oracle?net=go9_small", "sog:fresh only"), ("sog:fresh?net=nope", "nope")):
        with pytest.raises(AgentError, match=words):
            make_agent(bad, go)


def test_a_hosted_agent_is_warmed_up_before_the_first_clock_and_plays_as_without(monkeypatch):
    """`HostedAgent.warm` compiles the agent's network (the agent's `prepare` with no time limit,
    then one short move from the start) and leaves no trace: the moves of a warmed host are those
    of a cold one, and a second warm-up does nothing."""
    import launch.hosted
    from launch.hosted import HostedAgent

    monkeypatch.setattr(launch.hosted, "WARM_SECONDS", 3.0)
    from launch.tournament import setup_agents

    setup_agents()
    game = load_game("go(board_size=9)")
    spec = "sog:fresh?s=2&c=1&net=go9_small"

    def moves(host: HostedAgent) -> list[int]:
        pub, played = (), []
        for _ in range(3):
            action = host.move(game, pub)
            played.append(action)
            pub += (action,)
        return played

    prepared = []
    sog_agent = type(HostedAgent(spec).agent(game))
    monkeypatch.setattr(sog_agent, "prepare", lambda self, deadline: prepared.append(deadline))
    warm = HostedAgent(spec, seed=3)
    warm.warm(game)
    value_fn = warm.agent(game).resolver.value_fn
    compiled = value_fn.compilations
    assert compiled > 0 and prepared == [math.inf]
    warm.warm(game)
    assert value_fn.compilations == compiled and warm.games == 0
    assert moves(warm) == moves(HostedAgent(spec, seed=3))
