"""How `sog` commands talk to the user: `UserError` and `say`.

Every command prints its one JSON object on stdout (`launch.cli.emit`);
everything meant for a person goes to stderr through `say`. A `UserError`
(unknown game, bad option, malformed file) is reported by `launch.cli.main`
as one line, `sog COMMAND: error: MESSAGE`, with exit status 2.
"""
from __future__ import annotations

import sys
import time

from sog.errors import SogError

PROGRESS_SECONDS = 30.0    # a progress line written to a file or pipe: at most one per this many seconds
_last_progress = [-float("inf")]
_clock = time.monotonic


class UserError(SogError):
    """An error caused by the command's input; reported without a traceback."""


def say(*args, end: str = "\n") -> None:
    """`print(*args)` to stderr, flushed at once. A progress line (end="", redrawn in place after
    a "\\r") redraws on a terminal. Into a file or a pipe (the log of a background run or a
    cluster job) it is written as a line of its own instead, at most one every
    PROGRESS_SECONDS, and blank lines (a progress line's erasing, the empty `say()` ending it)
    are left out: such a log keeps one event per line instead of one line of every redraw."""
    stream = sys.stderr
    isatty = getattr(stream, "isatty", None)
    if isatty is not None and isatty():
        print(*args, file=stream, flush=True, end=end)
        return
    text = " ".join(map(str, args)).replace("\r", "").rstrip()
    if not text:
        return
    if end == "":
        now = _clock()
        if now - _last_progress[0] < PROGRESS_SECONDS:
            return
        _last_progress[0] = now
    print(text, file=stream, flush=True)
