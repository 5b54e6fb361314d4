"""`sog uci` and `sog gtp` as subprocesses: driven through python-chess's UCI client and
our GTP client, hosting random and (marked slow: JAX's start) a SoG agent with a fresh,
untrained CVPN, against Stockfish and GnuGo where they are installed; bad agent specs exit
2 with one line."""
from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import chess
import chess.engine
import jax
import pytest
from engine_programs import needs_gnugo, needs_stockfish, program

from launch.uci import UCIServer
from sog.agents.gtp import GTPClient, GTPError
from sog.games import load_game

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
    assert server.host.games == 3                        # a new game, then a position off its line
    assert [x.split()[0] for x in out.getvalue().splitlines()] == ["bestmove"] * 4


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


@pytest.mark.slow          # as test_uci_hosts_sog_with_a_fresh_network
def test_gtp_hosts_sog_with_a_fresh_network():
    with gtp_engine("sog:fresh?s=2&c=1") as g:
        g.send("clear_board")
        first = g.send("genmove b")
        g.send("play w pass" if first == "pass" else ("play w A1" if first != "A1" else "play w B1"))
        assert g.send("genmove b")


@needs_gnugo
def test_gtp_random_loses_to_gnugo():
    """A whole game relayed between `sog gtp` (random, black) and GnuGo (white)."""
    gnugo = GTPClient([program("gnugo"), "--mode", "gtp", "--level", "0", "--chinese-rules", "--capture-all-dead",
                       "--never-resign"], timeout=30)
    with gtp_engine("random") as ours, gnugo:
        passes, moves = 0, 0
        for engine in (ours, gnugo):
            engine.send("boardsize 9")
            engine.send("komi 7.5")
            engine.send("clear_board")
        while passes < 2 and moves < 162:
            colour, mover, other = ("b", ours, gnugo) if moves % 2 == 0 else ("w", gnugo, ours)
            vertex = mover.send(f"genmove {colour}")
            other.send(f"play {colour} {vertex}")
            passes = passes + 1 if vertex.lower() == "pass" else 0
            moves += 1
        assert gnugo.send("final_score").startswith("W+")


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
