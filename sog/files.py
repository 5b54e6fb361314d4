"""Atomic file writes shared by every layer (replay buffer, query queue, config, policies).

`atomic_write(path, write, mode)` writes through a temporary file in the same
folder, fsyncs it, renames it over `path` and fsyncs the folder: a crash at any
point leaves either the previous file or the new one, never a partial one.
"""
from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import IO, Callable


def atomic_write(path: str | os.PathLike, write: Callable[[IO], None], mode: str = "wb") -> None:
    """Call write(f) on a temporary file opened with `mode` ('wb' or 'w'), then replace `path`."""
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, mode) as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    try:                            # make the rename itself durable
        dir_fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):      # some file systems cannot fsync a folder
            os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
