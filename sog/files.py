"""Atomic file writes shared by every layer (replay buffer, query queue, config, policies),
and the YAML reader of the config files.

`atomic_write(path, write, mode)` writes through a temporary file in the same
folder, fsyncs it, renames it over `path` and fsyncs the folder: a crash at any
point leaves either the previous file or the new one, never a partial one.

`load_yaml(text)` is `yaml.safe_load` that refuses a mapping naming a key twice
(safe_load keeps the last silently: a tournament's second agent of one name
would replace the first).
"""
from __future__ import annotations

import collections.abc
import contextlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import yaml


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


class _UniqueKeyLoader(yaml.SafeLoader):
    """A SafeLoader whose mappings refuse a key given twice (merge keys `<<` aside)."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=deep)
            if not isinstance(key, collections.abc.Hashable):
                continue                                    # the base class refuses it
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    problem=f"duplicate key {key!r} on line {key_node.start_mark.line + 1}")
            seen.add(key)
        return super().construct_mapping(node, deep)


def load_yaml(text: str) -> Any:
    """`yaml.safe_load(text)`, but a key given twice in one mapping raises `yaml.YAMLError`
    ("duplicate key 'cfr' on line 5")."""
    return yaml.load(text, _UniqueKeyLoader)     # a SafeLoader: plain data only
