"""How `sog` commands talk to the user: `UserError` and `say`.

Every command prints its one JSON object on stdout (`launch.cli.emit`);
everything meant for a person goes to stderr through `say`. A `UserError`
(unknown game, bad option, malformed file) is reported by `launch.cli.main`
as one line, `sog COMMAND: error: MESSAGE`, with exit status 2.
"""
from __future__ import annotations

import sys


class UserError(Exception):
    """An error caused by the command's input; reported without a traceback."""


def say(*args, end: str = "\n") -> None:
    """`print(*args)` to stderr, flushed at once (progress lines redraw with end="")."""
    print(*args, file=sys.stderr, flush=True, end=end)
