"""A table tournament's batches kept on disk as they finish, so that a stopped run resumes.

`sog tournament` at a table (`launch.table`) plays each match in batches of deals whose cards
and random numbers come from (seed, batch) alone (`sog.eval.table.tournament.play_match`), so a batch's
chips do not depend on the batches before it. Each finished batch is written at once to

    OUT/batches/<key>-<batch>.npz     raw, aivat float64 [batch deals, n]; cpu_seconds,
                                      play_seconds, value_seconds; meta (JSON text)

where `meta` names the match (the game, both agents' specs and the digests of the blueprints
they play, the seed, the batch size, the AIVAT settings) and `key` is the first 16 hex digits
of its SHA-256. A run of the same match finds them and plays only the batches missing, so a
run killed midway loses the batch in flight, and a larger `deals` (or `cpu_seconds`) extends
a match (the report's rates and the agents' stats then cover the batches played by this run,
`batches_kept` the others). Another config, seed or retrained blueprint has another key: its batches are never
mixed in and no file is overwritten. A file of the key that cannot be read, or whose meta or
shapes are not the match's, is a `UserError` (one line, exit status 2) naming it.
"""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import numpy as np

from launch.console import UserError
from sog.files import atomic_write

FIELDS = ("raw", "aivat", "cpu_seconds", "play_seconds", "value_seconds")


def agent_digest(agent, cache: dict) -> str | None:
    """The SHA-256 (16 hex digits) of the blueprint an agent plays (its keys and probabilities;
    a search, end-game or Modicum agent's blueprint, a continuation's base), None for the
    agents without one (call, random); `cache` keeps a blueprint's by id."""
    while not hasattr(agent, "table_probs"):
        inner = getattr(agent, "blueprint", None) or getattr(agent, "base", None)
        if inner is None:
            return None
        agent = inner
    if id(agent.table_probs) not in cache:
        h = hashlib.sha256(np.ascontiguousarray(agent.keys).tobytes())
        h.update(np.ascontiguousarray(agent.table_probs).tobytes())
        cache[id(agent.table_probs)] = h.hexdigest()[:16]
    return cache[id(agent.table_probs)]


class BatchStore:
    """One match's kept batches in `folder` (module doc); `meta` is JSON-able."""

    def __init__(self, folder: Path, meta: dict):
        self.folder, self.meta = Path(folder), json.dumps(meta, sort_keys=True)
        self.key = hashlib.sha256(self.meta.encode()).hexdigest()[:16]
        self.batch, self.players = int(meta["batch"]), int(meta["players"])

    def load(self) -> dict[int, dict]:
        """{batch index: record} of every kept batch of this match (UserError on a bad file)."""
        out = {}
        if not self.folder.is_dir():
            return out
        pattern = re.compile(rf"{self.key}-(\d+)\.npz")
        for path in sorted(self.folder.iterdir()):
            m = pattern.fullmatch(path.name)
            if m is None:
                continue
            try:
                with np.load(path, allow_pickle=False) as z:
                    meta = str(z["meta"])
                    record = {f: (z[f].astype(np.float64) if f in ("raw", "aivat") else float(z[f])) for f in FIELDS}
            except Exception as e:  # noqa: BLE001 - any unreadable file is reported the same way
                raise UserError(f"{path}: not a readable batch of this match ({type(e).__name__}); remove it "
                                "to play that batch again") from None
            shape = (self.batch, self.players)
            if meta != self.meta or record["raw"].shape != shape or record["aivat"].shape != shape:
                raise UserError(f"{path}: a batch of another match (its meta or shape differ); remove it to play "
                                "that batch again")
            out[int(m.group(1))] = record
        return out

    def save(self, b: int, record: dict) -> None:
        """Keep batch b's record (atomically: a crash leaves the old state or the new one)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        atomic_write(self.folder / f"{self.key}-{b:06d}.npz",
                     lambda f: np.savez(f, meta=np.array(self.meta), **{k: np.asarray(record[k]) for k in FIELDS}))
