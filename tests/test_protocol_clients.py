"""`sog uci`, `sog gtp` and `sog acpc` against what real clients do: illegal positions, the end of
input during a search, time limits and clocks kept, bytes that are not UTF-8, dealers that
break the connection or go silent."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

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
