"""The replay buffer: a preallocated ring (sliding window) with a sample-to-insert limiter.

A plain, Ray-free class; the Ray actor wraps it. Examples follow a fixed schema
given at construction, `name -> (shape, dtype)`; storage is one preallocated
array of shape `(capacity, *shape)` per name (np.zeros: pages cost memory only
once written), and the newest `capacity` examples are kept.

- Inserts are idempotent: every example carries an int64 id (e.g. a hash of
  producer, game and move); an id already in the window, or repeated within a
  batch, is skipped (counted in `duplicates_total`). The set of ids in the window
  follows the ring: an evicted example's id may be inserted again.
- Sampling is uniform with replacement over the window, indexed oldest-first,
  so a restored buffer draws the same examples for the same generator state.
- The limiter caps reuse at `max_updates_per_example` gradient updates per
  inserted example: `can_sample(b)` holds only when
  `sampled_total + b <= max_updates_per_example * inserted_total` and
  `size >= min_size`. The counters are part of the state, so the cap survives a
  resume.
- `save(path)` writes one `.npz` (the window oldest-first, ids, and a JSON
  header with schema and counters) atomically: a temporary file in the same
  folder, fsync, `os.replace`, fsync of the folder. A crash mid-save leaves the
  previous file intact. `load(path)` refuses a file whose schema differs.

Vectorised: `add` and `sample` do no per-example Python work except set
operations on the batch's ids.
"""
from __future__ import annotations

import json
import math
import os
import zipfile
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from sog.files import atomic_write

FORMAT = "sog-replay"
VERSION = 1

Schema = Mapping[str, tuple[tuple[int, ...], object]]


def _normalise_schema(schema: Schema) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    if not schema:
        raise ValueError("replay schema must name at least one array")
    out = {}
    for name, spec in schema.items():
        if not isinstance(name, str) or not name or "/" in name:
            raise ValueError(f"replay schema: bad array name {name!r}")
        try:
            shape, dtype = spec
            shape = tuple(int(d) for d in shape)
            dtype = np.dtype(dtype)
        except (TypeError, ValueError) as e:
            raise ValueError(f"replay schema: {name!r} must be (shape, dtype), got {spec!r}: {e}") from None
        if any(d < 0 for d in shape) or dtype.hasobject:
            raise ValueError(f"replay schema: bad spec for {name!r}: {spec!r}")
        out[name] = (shape, dtype)
    return out


def _schema_json(schema) -> dict:
    return {name: [list(shape), dtype.str] for name, (shape, dtype) in schema.items()}


class ReplayBuffer:
    """A sliding window of `capacity` examples with idempotent inserts and a reuse limiter."""

    def __init__(self, schema: Schema, capacity: int, min_size: int = 1,
                 max_updates_per_example: float = math.inf):
        if capacity < 1:
            raise ValueError(f"replay capacity must be >= 1, got {capacity}")
        if not 1 <= min_size <= capacity:
            raise ValueError(f"replay min_size must be in [1, capacity={capacity}], got {min_size}")
        if not max_updates_per_example > 0:
            raise ValueError(f"max_updates_per_example must be > 0, got {max_updates_per_example}")
        self.schema = _normalise_schema(schema)
        self.capacity = int(capacity)
        self.min_size = int(min_size)
        self.max_updates_per_example = float(max_updates_per_example)
        self._data = {name: np.zeros((self.capacity, *shape), dtype)
                      for name, (shape, dtype) in self.schema.items()}
        self._ids = np.zeros(self.capacity, np.int64)
        self._id_set: set[int] = set()
        self._next = 0                 # slot the next example goes to
        self.size = 0                  # valid examples in the window
        self.inserted_total = 0        # examples ever accepted (not counting duplicates)
        self.sampled_total = 0         # examples ever handed out by `sample`
        self.duplicates_total = 0      # examples skipped because their id was present

    @classmethod
    def from_config(cls, schema: Schema, cfg) -> ReplayBuffer:
        """From a `sog.config.ReplayConfig`."""
        return cls(schema, cfg.capacity, cfg.min_size, cfg.max_updates_per_example)

    # ------------------------------------------------------------ insert and sample

    def add(self, batch: Mapping[str, np.ndarray], ids) -> int:
        """Insert a batch (name -> array of shape (B, *shape)); returns how many were new."""
        ids = np.asarray(ids)
        if ids.ndim != 1 or not (np.issubdtype(ids.dtype, np.integer) or ids.size == 0):
            raise ValueError(f"replay ids must be a 1-D integer array, got shape {ids.shape} "
                             f"dtype {ids.dtype}")
        ids = ids.astype(np.int64, copy=False)
        n = len(ids)
        if set(batch) != set(self.schema):
            raise ValueError(f"replay batch arrays {sorted(batch)} do not match the schema "
                             f"{sorted(self.schema)}")
        arrays = {}
        for name, (shape, dtype) in self.schema.items():
            a = np.asarray(batch[name])
            if a.shape != (n, *shape):
                raise ValueError(f"replay batch {name!r}: expected shape {(n, *shape)}, got {a.shape}")
            if not np.can_cast(a.dtype, dtype, casting="same_kind"):
                raise ValueError(f"replay batch {name!r}: dtype {a.dtype} cannot be stored as {dtype}")
            arrays[name] = a
        if n == 0:
            return 0

        # first occurrence of each id within the batch, in batch order, not already in the window
        _, first = np.unique(ids, return_index=True)
        keep = np.zeros(n, bool)
        keep[first] = True
        present = self._id_set.intersection(ids[first].tolist())
        if present:
            keep &= ~np.isin(ids, np.fromiter(present, np.int64, len(present)))
        sel = np.flatnonzero(keep)
        new = len(sel)
        self.duplicates_total += n - new
        if new == 0:
            return 0
        self.inserted_total += new
        if new > self.capacity:        # the oldest would be overwritten within this very batch
            self._next = (self._next + new - self.capacity) % self.capacity
            sel = sel[-self.capacity:]
        m = len(sel)
        pos = (self._next + np.arange(m)) % self.capacity
        evicted = pos[pos < self.size]
        if len(evicted):
            self._id_set.difference_update(self._ids[evicted].tolist())
        for name, a in arrays.items():
            self._data[name][pos] = a[sel]
        new_ids = ids[sel]
        self._ids[pos] = new_ids
        self._id_set.update(new_ids.tolist())
        self._next = int((self._next + m) % self.capacity)
        self.size = min(self.capacity, self.size + m)
        return new

    def can_sample(self, batch_size: int) -> bool:
        """True when the window holds `min_size` examples and the reuse cap allows `batch_size` more."""
        return (self.size >= self.min_size and
                self.sampled_total + batch_size <= self.max_updates_per_example * self.inserted_total)

    def sample(self, batch_size: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """`batch_size` examples drawn uniformly (with replacement) from the window.

        Does not consult the limiter (see `can_sample`, `try_sample`); counts the
        draw in `sampled_total`.
        """
        out = self.peek(batch_size, rng)
        self.sampled_total += int(batch_size)
        return out

    def peek(self, batch_size: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """What `sample` draws, without counting it (diagnostics: the limiter is not touched)."""
        if self.size == 0:
            raise ValueError("cannot sample from an empty replay buffer")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        # index the window oldest-first, so a buffer restored from `save` draws the same examples
        idx = rng.integers(0, self.size, size=batch_size)
        if self.size == self.capacity and self._next:
            idx = (idx + self._next) % self.capacity
        return {name: a[idx] for name, a in self._data.items()}

    def newest(self, k: int) -> dict[str, np.ndarray]:
        """The newest min(k, size) examples, oldest of them first (not counted as sampled)."""
        idx = self._order()[max(self.size - int(k), 0):]
        return {name: a[idx] for name, a in self._data.items()}

    def try_sample(self, batch_size: int, rng: np.random.Generator) -> dict[str, np.ndarray] | None:
        """`sample` when `can_sample(batch_size)`, else None."""
        return self.sample(batch_size, rng) if self.can_sample(batch_size) else None

    def try_sample_many(self, batch_size: int, seeds) -> list[dict[str, np.ndarray]]:
        """`try_sample` once per seed (ints; each batch from `np.random.default_rng(seed)`), in
        order, stopping at the first the limiter refuses: the batches of several learner steps
        in one call (the Ray run's driver asks a few steps ahead)."""
        out = []
        for seed in seeds:
            batch = self.try_sample(batch_size, np.random.default_rng(seed))
            if batch is None:
                break
            out.append(batch)
        return out

    # ------------------------------------------------------------ introspection

    def __len__(self) -> int:
        return self.size

    def __contains__(self, example_id) -> bool:
        return int(example_id) in self._id_set

    @property
    def sample_to_insert_ratio(self) -> float:
        """Examples sampled per example inserted so far (bounded by max_updates_per_example)."""
        return self.sampled_total / self.inserted_total if self.inserted_total else 0.0

    def counters(self) -> dict[str, int]:
        return {"size": self.size, "inserted_total": self.inserted_total,
                "sampled_total": self.sampled_total, "duplicates_total": self.duplicates_total}

    def _order(self) -> np.ndarray:
        """Slots of the window, oldest first."""
        if self.size < self.capacity:
            return np.arange(self.size)
        return (self._next + np.arange(self.capacity)) % self.capacity

    # ------------------------------------------------------------ state

    def state_dict(self) -> dict:
        """Window (oldest first), ids, counters and schema; copies, safe to keep."""
        order = self._order()
        return {
            "format": FORMAT, "version": VERSION,
            "schema": _schema_json(self.schema),
            "capacity": self.capacity,
            "counters": self.counters(),
            "ids": self._ids[order].copy(),
            "data": {name: a[order].copy() for name, a in self._data.items()},
        }

    def load_state_dict(self, state: Mapping) -> None:
        """Restore from `state_dict()`; the schema must match. A different capacity keeps the newest."""
        if state.get("format") != FORMAT:
            raise ValueError(f"not a replay buffer state (format {state.get('format')!r})")
        if state.get("version") != VERSION:
            raise ValueError(f"replay state version {state.get('version')!r}, expected {VERSION}")
        mine = _schema_json(self.schema)
        theirs = {k: [list(v[0]), v[1]] for k, v in dict(state["schema"]).items()}
        if theirs != mine:
            raise ValueError(f"replay schema mismatch: stored {theirs}, expected {mine}")
        ids = np.asarray(state["ids"], np.int64)
        data = state["data"]
        n = len(ids)
        if set(data) != set(self.schema) or any(len(data[k]) != n for k in data):
            raise ValueError("replay state is inconsistent: arrays and ids differ in length or names")
        if len(np.unique(ids)) != n:
            raise ValueError("replay state is inconsistent: duplicate ids in the window")
        counters = state["counters"]
        keep = slice(max(0, n - self.capacity), n)   # a smaller capacity keeps the newest examples
        ids = ids[keep]
        m = len(ids)
        for name, (shape, dtype) in self.schema.items():
            a = np.asarray(data[name])[keep]
            if a.shape[1:] != shape:
                raise ValueError(f"replay state {name!r}: shape {a.shape[1:]}, expected {shape}")
            self._data[name][:m] = a
        self._ids[:m] = ids
        self._id_set = set(ids.tolist())
        self.size = m
        self._next = m % self.capacity
        self.inserted_total = int(counters["inserted_total"])
        self.sampled_total = int(counters["sampled_total"])
        self.duplicates_total = int(counters.get("duplicates_total", 0))
        if self.inserted_total < m:
            raise ValueError(f"replay state is inconsistent: inserted_total {self.inserted_total} "
                             f"< window size {m}")

    # ------------------------------------------------------------ files

    def save(self, path: str | os.PathLike) -> None:
        """Write the buffer to `path` (.npz) atomically."""
        path = Path(path)
        state = self.state_dict()
        header = {k: state[k] for k in ("format", "version", "schema", "capacity", "counters")}
        arrays = {f"data/{name}": a for name, a in state["data"].items()}
        arrays["ids"] = state["ids"]
        arrays["header"] = np.array(json.dumps(header))
        atomic_write(path, lambda f: np.savez(f, **arrays))

    def load(self, path: str | os.PathLike) -> None:
        """Replace the contents with those saved at `path`; a different schema is a ValueError."""
        path = Path(path)
        try:
            with np.load(path, allow_pickle=False) as z:
                header = json.loads(str(z["header"][()]))
                if not isinstance(header, dict) or header.get("format") != FORMAT:
                    raise ValueError("header is not a replay buffer header")
                names = [k[len("data/"):] for k in z.files if k.startswith("data/")]
                state = dict(header, ids=z["ids"], data={name: z[f"data/{name}"] for name in names})
        except ValueError as e:
            raise ValueError(f"cannot load replay buffer {path}: {e}") from None
        except (OSError, KeyError, EOFError, zipfile.BadZipFile) as e:
            raise ValueError(f"cannot load replay buffer {path}: corrupt or not a replay file ({e})") from None
        try:
            self.load_state_dict(state)
        except ValueError as e:
            raise ValueError(f"cannot load replay buffer {path}: {e}") from None
