"""`sog uci`, `sog gtp` and `sog acpc` against what real clients do: illegal positions, the end of
input during a search, time limits and clocks kept, bytes that are not UTF-8, dealers that
break the connection or go silent."""
from __future__ import annotations

import os
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import chess
import chess.engine
import pytest
from engine_programs import needs_stockfish, program

from launch.cli import main

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "JAX_PLATFORMS": "cpu"}


def sog(*args: str) -> list[str]:
    return [sys.executable, "-m", "launch.cli", *args]


def run_script(command: tuple[str, ...], script: bytes, timeout: float = 60, **env: str):
    return subprocess.run(sog(*command), input=script, capture_output=True, check=False, cwd=ROOT,
                          env={**ENV, **env}, timeout=timeout)


def test_uci_refuses_an_illegal_position_and_keeps_serving():
    """The side not to move in check: refused with an error line, and the next commands are served."""
    script = (b"uci\nposition fen 8/8/8/4k3/4r3/8/8/4K3 b - - 0 1\ngo movetime 200\nisready\n"
              b"position startpos\ngo movetime 100\nquit\n")
    out = run_script(("uci", "--agent", "uct?simulations=2"), script)
    lines = out.stdout.decode().splitlines()
    assert out.returncode == 0 and out.stderr == b"", out.stderr.decode()[-2000:]
    assert lines[3] == "info string error: illegal position '8/8/8/4k3/4r3/8/8/4K3 b - - 0 1': opposite check"
    assert lines[4:6] == ["bestmove 0000", "readyok"]
    assert lines[6].startswith("bestmove ") and lines[6] != "bestmove 0000" and len(lines) == 7


def test_uci_end_of_input_ends_an_infinite_search():
    out = run_script(("uci", "--agent", "uct?simulations=1000000"), b"position startpos\ngo infinite\n", timeout=60)
    lines = out.stdout.decode().splitlines()
    assert out.returncode == 0 and len(lines) == 1 and lines[0].startswith("bestmove ") and lines[0] != "bestmove 0000"


def test_gtp_and_uci_answer_a_line_that_is_not_utf8_and_go_on():
    gtp = run_script(("gtp", "--agent", "random"), b"name\n\xff name\n7 \xfe\nname\nquit\n", PYTHONIOENCODING="utf-8:strict")
    assert gtp.returncode == 0 and b"Traceback" not in gtp.stderr, gtp.stderr.decode()[-2000:]
    assert gtp.stdout.decode() == "= sog\n\n? the command is not UTF-8\n\n?7 the command is not UTF-8\n\n= sog\n\n=\n\n"
    uci = run_script(("uci", "--agent", "random"), b"uci\n\xff isready\nisready\nquit\n", PYTHONIOENCODING="utf-8:strict")
    assert uci.returncode == 0 and b"Traceback" not in uci.stderr, uci.stderr.decode()[-2000:]
    assert uci.stdout.decode().splitlines()[3:] == [
        "info string error: the command is not UTF-8: '\ufffd isready'", "readyok"]


class OneShotDealer(threading.Thread):
    """A dealer that reads the client's version line, then does `act(conn)`: sends bytes,
    resets the connection or stays silent."""

    def __init__(self, act):
        super().__init__(daemon=True)
        self.act = act
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(1)
        self.port = self.server.getsockname()[1]

    def run(self):
        conn, _ = self.server.accept()
        with conn:
            conn.recv(64)
            self.act(conn)


def send_bytes(data: bytes):
    def act(conn):
        conn.sendall(data)
        time.sleep(0.5)
    return act


def reset(conn):
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))   # close sends RST


def silent(conn):
    time.sleep(3)


ACPC_GAME = "holdem(betting=nolimit,bettingAbstraction=fullgame,numRanks=13,numSuits=4,numHoleCards=2,numRounds=4," \
            "numBoardCards=0 3 1 1,blind=100 50,firstPlayer=2 1 1 1,stack=20000 20000)"


@pytest.mark.parametrize("act, message", [
    (send_bytes(b"MATCHSTATE:1:0::|9d\xff6c\r\n"), "bad state from the dealer: not ASCII: b'MATCHSTATE:1:0::|9d\\xff6c'"),
    (reset, "broke the connection: Connection reset by peer"),
    (silent, "sent nothing for 1 s"),
], ids=["not-ascii", "reset", "silent"])
def test_acpc_dealer_faults_are_one_line(act, message, capsys):
    dealer = OneShotDealer(act)
    dealer.start()
    code = main(["acpc", "--host", "127.0.0.1", "--port", str(dealer.port), "--agent", "call", "--game", ACPC_GAME,
                 "--read-timeout", "1"])
    dealer.join(10)
    out = capsys.readouterr()
    err = out.err.strip().splitlines()
    assert code == 2 and out.out == "" and len(err) == 1, out.err
    assert err[0].startswith("sog acpc: error: ") and message in err[0]


@needs_stockfish
def test_uci_plays_a_one_second_game_through_python_chess_without_a_time_loss():
    """1 s + 0 against Stockfish 1350 through `popen_uci`, the clock measured around each `play`."""
    engine = chess.engine.SimpleEngine.popen_uci(sog("uci", "--agent", "uct?simulations=30"), timeout=60, cwd=ROOT,
                                                 env=ENV)
    with engine, chess.engine.SimpleEngine.popen_uci(program("stockfish")) as sf:
        sf.configure({"UCI_LimitStrength": True, "UCI_Elo": 1350})
        engine.ping()                                      # the warm-up is over before the clock runs
        board, left = chess.Board(), 1.0
        while not board.is_game_over(claim_draw=True) and board.fullmove_number < 150:
            limit = chess.engine.Limit(white_clock=max(left, 0.0), black_clock=1.0, white_inc=0, black_inc=0)
            start = time.perf_counter()
            move = (engine if board.turn == chess.WHITE else sf).play(board, limit).move
            if board.turn == chess.WHITE:
                left -= time.perf_counter() - start
                assert left > 0, f"lost on time at move {board.fullmove_number}"
            board.push(move)
