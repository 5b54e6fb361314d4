"""The Go Text Protocol (GTP version 2): a client for engines, and the message format.

A GTP command is one line, `[id] name [arguments...]`; the answer is
`=[id] result` (success) or `?[id] message` (failure), possibly over several
lines, ended by an empty line. `#` starts a comment; empty lines are ignored.

`GTPClient(command, timeout)` starts an engine process (`command`: its argv)
and `send(line)` returns the result text of a success, raising `GTPError` for
a failure answer, an engine that exits or closes its output, or no complete
answer within `timeout` seconds. `close()` says `quit` and ends the process
(killing it if it does not exit within a second); `with GTPClient(...)` closes.

`parse_command(line)` and `response(id, ok, text)` are the server side's halves
of the same format (`launch.gtp`).
"""
from __future__ import annotations

import queue
import subprocess
import threading
from typing import Self

from sog.errors import SogError

_EOF = object()


class GTPError(SogError, RuntimeError):
    """A GTP engine answered a failure, died, or did not answer in time."""


class GTPClient:
    """One GTP engine process; see the module docstring."""

    def __init__(self, command: list[str], timeout: float = 10.0):
        self.command = list(command)
        self.timeout = float(timeout)
        try:
            self.proc = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.DEVNULL, text=True, bufsize=1)
        except OSError as e:
            raise GTPError(f"cannot start {self.command[0]}: {e}") from None
        self._lines: queue.Queue = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        """Reader thread: the engine's output lines into the queue, then _EOF."""
        for line in self.proc.stdout:
            self._lines.put(line.rstrip("\r\n"))
        self._lines.put(_EOF)

    def _line(self, command: str) -> str:
        try:
            line = self._lines.get(timeout=self.timeout)
        except queue.Empty:
            raise GTPError(f"{self.command[0]} did not answer {command!r} within {self.timeout:g} s") from None
        if line is _EOF:
            self._lines.put(_EOF)
            try:                             # stdout closes just before the exit status is in
                code = self.proc.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                code = None
            raise GTPError(f"{self.command[0]} exited (status {code}) before answering {command!r}")
        return line

    def send(self, command: str) -> str:
        """The result text of `command` (one line, without an id); GTPError on failure."""
        try:
            self.proc.stdin.write(command + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise GTPError(f"{self.command[0]} exited (status {self.proc.poll()}) before {command!r}") from None
        line = self._line(command)
        while not line.strip():                  # stray empty lines between answers
            line = self._line(command)
        if line[0] not in "=?":
            raise GTPError(f"{self.command[0]} answered {command!r} with {line!r}, not a GTP response")
        ok, text = line[0] == "=", [line[1:].lstrip("0123456789").strip()]
        line = self._line(command)
        while line.strip():
            text.append(line)
            line = self._line(command)
        out = "\n".join(text).strip()
        if not ok:
            raise GTPError(f"{self.command[0]} refused {command!r}: {out}")
        return out

    def close(self) -> None:
        """Say `quit` and end the process (kill it after a second); the reader thread ends at
        the end of the engine's output, then the pipes are closed."""
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write("quit\n")
                self.proc.stdin.flush()
            except (BrokenPipeError, OSError, ValueError):
                pass
            try:
                self.proc.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        try:
            self.proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass
        self._reader.join(timeout=1.0)
        if not self._reader.is_alive():          # else a child of the engine holds its output open
            self.proc.stdout.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def parse_command(line: str) -> tuple[str, str, list[str]] | None:
    """'12 play b D4 # comment' -> ('12', 'play', ['b', 'D4']); None for an empty or comment
    line. The id is '' when absent; control characters other than tab are dropped."""
    line = "".join(c for c in line.split("#", 1)[0] if c == "\t" or c >= " ").replace("\t", " ")
    words = line.split()
    if not words:
        return None
    ident = words.pop(0) if words[0].isdigit() else ""
    if not words:
        return None
    return ident, words[0], words[1:]


def response(ident: str, ok: bool, text: str = "") -> str:
    """The GTP answer text: '=ID text' or '?ID text', then the empty line that ends it (empty
    lines inside `text` are dropped: they would end the answer early)."""
    head = ("=" if ok else "?") + ident
    body = "\n".join(line.rstrip() for line in text.split("\n") if line.strip())
    if text.startswith("\n"):                    # a multi-line answer that starts on its own line
        body = "\n" + body
    return f"{head} {body}\n\n" if body else f"{head}\n\n"
