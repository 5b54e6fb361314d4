"""Blueprint checkpoints and blueprint files (`save_checkpoint`, `load_checkpoint`): the tables (regrets, averages,
snapshot sums) of the allocated rows with their abstract keys, the iteration count, the
counters and the generator's state, stamped with a fingerprint of the game, the
abstraction and the solver settings; a checkpoint of another fingerprint, or a damaged
one, raises `BlueprintError`. A run resumed from a checkpoint taken between batches
repeats the uninterrupted run bit for bit (rows are numbered in a different order, but
a row's updates come in the same order).
"""
from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np

from sog.agents.holdem.blueprint.settings import BlueprintError
from sog.agents.holdem.blueprint.world_mccfr import BlueprintMCCFR
from sog.files import atomic_write

CHECKPOINT_FORMAT = 1
# the arrays of a checkpoint per solver kind (meta "solver"; `solver_kind` of the solver, else MCCFR):
# the sampled UCT solver's are `sog.agents.holdem.blueprint.sampled_uct.SampledUCT.state`'s
CHECKPOINT_ARRAYS = {"mccfr": {"regret", "avg", "snap", "snap_rows", "legal", "keys", "counters", "rng"},
                     "uct": {"keys", "visits", "counts", "q", "counters", "rng"}}


def save_checkpoint(solver: BlueprintMCCFR, path: str | Path, extra: dict | None = None) -> None:
    """Write the solver's state (and `extra`, JSON-able) to `path` (.npz, atomically)."""
    meta = {"format": CHECKPOINT_FORMAT, "fingerprint": solver.fingerprint(), "extra": extra or {},
            "solver": getattr(solver, "solver_kind", "mccfr")}
    arrays = {"meta": np.array(json.dumps(meta, sort_keys=True)), **solver.state()}
    atomic_write(path, lambda f: np.savez_compressed(f, **arrays))


def read_checkpoint(path: str | Path) -> tuple[dict, dict]:
    """(meta, arrays) of a checkpoint file; `BlueprintError` if it is not one."""
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {name: z[name] for name in z.files}
        meta = json.loads(str(arrays.pop("meta")))
        if not isinstance(meta, dict) or meta.get("format") != CHECKPOINT_FORMAT:
            raise BlueprintError(f"{path}: not a blueprint checkpoint of format {CHECKPOINT_FORMAT}")
        kind = meta.get("solver", "mccfr")
        if kind not in CHECKPOINT_ARRAYS:
            raise BlueprintError(f"{path}: a checkpoint of an unknown solver {kind!r}")
        needed = CHECKPOINT_ARRAYS[kind]
        if needed - set(arrays):
            raise BlueprintError(f"{path}: a blueprint checkpoint without {min(needed - set(arrays))!r}")
        rows = len(arrays["keys"])
        if kind == "mccfr" and (arrays["regret"].shape[0] != rows or arrays["avg"].shape != arrays["regret"].shape
                or arrays["snap"].shape != arrays["regret"].shape or arrays["legal"].shape != arrays["regret"].shape
                or arrays["snap_rows"].shape != (rows,) or arrays["counters"].shape != (5,)):
            raise BlueprintError(f"{path}: a blueprint checkpoint whose tables are damaged")
    except BlueprintError:
        raise
    except (OSError, ValueError, TypeError, KeyError, EOFError, zipfile.BadZipFile) as e:
        raise BlueprintError(f"{path}: not a readable blueprint checkpoint ({type(e).__name__}: {e})") from None
    return meta, arrays


def load_checkpoint(solver: BlueprintMCCFR, path: str | Path) -> dict:
    """Restore `solver` from `path`; returns the checkpoint's `extra`. `BlueprintError` if the
    file is not a checkpoint or was written for another game, abstraction or settings."""
    meta, arrays = read_checkpoint(path)
    mine, theirs = solver.fingerprint(), meta.get("fingerprint")
    if theirs != mine:
        what = ("game" if not isinstance(theirs, dict) or theirs.get("game") != mine["game"] else
                "abstraction" if any(theirs.get(k) != mine.get(k) for k in ("buckets", "recall", "bet_sizes", "indexer"))
                else "MCCFR settings" if theirs.get("settings") != mine["settings"] else "configuration")
        detail = (f"written for {theirs.get('game')}, not {mine['game']}" if what == "game"
                  else f"its {what} differ from this configuration's")
        raise BlueprintError(f"{path}: a blueprint checkpoint of another {what} ({detail})")
    if meta.get("solver", "mccfr") != getattr(solver, "solver_kind", "mccfr"):
        raise BlueprintError(f"{path}: a checkpoint of another solver ({meta.get('solver', 'mccfr')})")
    if "regret" in arrays and arrays["regret"].shape[1] != solver.num_actions:
        raise BlueprintError(f"{path}: a blueprint checkpoint whose tables are damaged")
    try:
        solver.restore(arrays)
    except (ValueError, TypeError, KeyError) as e:
        raise BlueprintError(f"{path}: a damaged blueprint checkpoint ({type(e).__name__}: {e})") from None
    return meta.get("extra", {})


def read_blueprint(path: str | Path) -> tuple[dict, np.ndarray, np.ndarray]:
    """(meta, keys str [R], probs float32 [R, K]) of a blueprint policy file (`save_blueprint`);
    `BlueprintError` if it is not one."""
    try:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(str(z["meta"]))
            keys, probs = z["keys"], z["probs"]
    except (OSError, KeyError, ValueError, EOFError, zipfile.BadZipFile) as e:
        raise BlueprintError(f"{path}: not a blueprint file ({e})") from None
    if not isinstance(meta, dict) or meta.get("kind") != "blueprint":
        raise BlueprintError(f"{path}: a {meta.get('kind') if isinstance(meta, dict) else None!r} file, "
                             "not a blueprint")
    if probs.ndim != 2 or probs.shape[0] != len(keys):
        raise BlueprintError(f"{path}: probabilities of shape {probs.shape} for {len(keys)} keys")
    return meta, keys, probs


def save_blueprint(solver: BlueprintMCCFR, path: str | Path, probs: np.ndarray | None = None) -> None:
    """The blueprint policy file: abstract keys, float32 [R, K] probabilities over each row's
    abstract actions in increasing id (slot j: its j-th legal action; the solver's
    `blueprint_probs`, or `probs`: [R, A] over action ids for the world tree, `in_slots`, [R, K]
    already for the solvers on sampled deals), the fingerprint."""
    meta = {"format": CHECKPOINT_FORMAT, "kind": "blueprint", "fingerprint": solver.fingerprint(),
            "iterations": solver.iterations}
    probs = solver.blueprint_probs() if probs is None else probs
    if isinstance(solver, BlueprintMCCFR):
        probs = in_slots(probs, solver.tree.row_legal)
    arrays = {"meta": np.array(json.dumps(meta, sort_keys=True)),
              "keys": np.array(solver.tree.row_key, dtype=str).reshape(solver.tree.num_rows),
              "probs": probs.astype(np.float32)}
    atomic_write(path, lambda f: np.savez_compressed(f, **arrays))


def in_slots(probs: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """float [R, K]: rows over action ids (`probs` float [R, A], `legal` bool [R, A]) as rows over
    their legal actions in increasing id (K: the most legal actions of a row; zeros past a row's)."""
    order = np.argsort(~legal, axis=1, kind="stable")
    k = max(int(legal.sum(axis=1).max(initial=0)), 1)
    return np.where(np.take_along_axis(legal, order, axis=1), np.take_along_axis(probs, order, axis=1), 0.0)[:, :k]
