"""Learner checkpoints with orbax-checkpoint: save, restore, and load weights for play.

A run directory holds one directory per saved learner step, written by an
orbax `CheckpointManager`:

    RUN_DIR/<step>/state/   params, opt_state, step, rng, and ema when the run keeps a
                            moving average of its weights (`ocp.args.StandardSave`)
    RUN_DIR/<step>/meta/    JSON metadata (`ocp.args.JsonSave`): format, game
                            name, spec shape (N, A, F), network and learner
                            configs, step, weight version, the caller's extra
                            counters (replay / limiter counters, ...)

Resuming training restores the whole state (`restore_train_state`); playing
and evaluating read only the run's network (`restore_params`, `load_value_function`:
no optimizer state, step or RNG; the moving average when the run kept one, the
weights it published) and build the network the checkpoint's own config
describes. Checkpoints saved before `network.kind` existed have none in their
metadata: they hold an mlp (the `NetworkConfig` default).

Crash safety: orbax writes a step into `RUN_DIR/<step>.orbax-checkpoint-tmp`
and renames it to `RUN_DIR/<step>` only once every item is written (atomic
rename on local file systems; `tests/test_learner.py` kills a process inside
a save and checks this). Listing and restoring ignore temporary directories,
and a new `CheckpointStore` deletes leftovers (in the background; done by the
time its first save returns). Saves are synchronous: when `save` returns, the
checkpoint is complete on disk. The last `LearnerConfig.keep_checkpoints`
steps are kept, plus every multiple of `LearnerConfig.keep_period` (if > 0).

Every problem with a checkpoint (missing, incomplete, corrupt, another game,
another network kind or shape, a network kind this version cannot build)
raises `CheckpointError` with a message naming it; two kinds have subclasses of their
own, so that the caller can go on without that checkpoint:
- `CheckpointGone`: a step removed while it was being read (a run keeps only its newest
  `keep_checkpoints`, so a reader beside a run that saves often finds steps gone under it).
  A reader of a run directory's newest step (`restore_params`, `load_value_function`) then
  reads the new newest one;
- `CorruptCheckpoint`: a step whose files do not restore (a resuming learner goes back to
  the newest intact one, `newest_intact`, and sets the others aside, `set_aside`).

A save that finds the disk full (`DiskFull`) removes what it wrote of that step, so the
checkpoints already written are left as they were, and names the path, the space the step
needs (about the size of the newest checkpoint) and the space free.
"""
from __future__ import annotations

import dataclasses
import errno
import json
import logging
import shutil
import sys
import time
from pathlib import Path
from typing import Self

import jax
import orbax.checkpoint as ocp

from learners.train_state import TrainState, init_train_state, with_ema
from networks.cvpn import init_params
from networks.registry import BUILDERS
from networks.value_function import NetworkValueFunction
from sog.config import LearnerConfig, NetworkConfig
from sog.errors import SogError
from sog.games import network_family_of
from sog.games.api import Game

FORMAT = "sog-checkpoint/1"
ITEMS = ("state", "meta")
NEWEST_TRIES = 5        # reads of a run directory's newest step, while the run removes it under the reader
REMOVAL_SECONDS = 1.0   # how long a reader whose step did not restore looks for its removal by the run
CORRUPT_SUFFIX = ".corrupt"   # a step directory set aside (`set_aside`) becomes RUN_DIR/<step>.corrupt


class CheckpointError(SogError, ValueError):
    """A checkpoint is missing, corrupt, or does not fit the game / network asked for."""


class CheckpointGone(CheckpointError):
    """The step directory asked for does not exist (any more): removed by the run that keeps it."""


class CorruptCheckpoint(CheckpointError):
    """A step directory whose items do not restore."""


class DiskFull(CheckpointError):
    """A save found no space left on the run directory's device."""


def _spec_shape(game: Game) -> dict:
    spec = game.spec
    return {"num_states": spec.num_states, "num_actions": spec.num_actions, "feature_size": spec.feature_size}


def _as_tree(state: TrainState) -> dict:
    """The checkpointed pytree of a TrainState: a plain dict (orbax-friendly; "ema" only with one)."""
    tree = {"step": state.step, "params": state.params, "opt_state": state.opt_state, "rng": state.rng}
    return tree if state.ema is None else {**tree, "ema": state.ema}


def _manager(run_dir: Path, options: ocp.CheckpointManagerOptions | None = None) -> ocp.CheckpointManager:
    options = options or ocp.CheckpointManagerOptions(create=False, enable_async_checkpointing=False)
    return ocp.CheckpointManager(run_dir, options=options, item_names=ITEMS)


class CheckpointStore:
    """The writer of one run directory's checkpoints (see module doc).

    run_dir: created if missing; game, network_config, learner_config: recorded
    in every checkpoint's metadata; the last `learner_config.keep_checkpoints`
    are kept, and every step that is a multiple of `learner_config.keep_period`
    (when > 0).
    """

    def __init__(self, run_dir: str | Path, game: Game, network_config: NetworkConfig,
                 learner_config: LearnerConfig):
        if learner_config.keep_checkpoints < 1:
            raise ValueError(f"keep_checkpoints must be >= 1, got {learner_config.keep_checkpoints}")
        self.run_dir = Path(run_dir).absolute()
        self._meta = {"format": FORMAT, "game": game.spec.name, "spec": _spec_shape(game),
                      "network": dataclasses.asdict(network_config),
                      "learner": dataclasses.asdict(learner_config)}
        self._manager = _manager(self.run_dir, ocp.CheckpointManagerOptions(
            max_to_keep=learner_config.keep_checkpoints, keep_period=learner_config.keep_period or None,
            create=True, enable_async_checkpointing=False, cleanup_tmp_directories=True))

    def save(self, state: TrainState, version: int, extra: dict | None = None) -> bool:
        """Checkpoint `state` at its step with weight `version` and JSON-able `extra` counters.

        Returns False (and writes nothing) when a checkpoint of this step or a
        later one already exists.
        """
        step = int(state.step)
        meta = {**self._meta, "step": step, "version": int(version), "extra": dict(extra or {})}
        try:
            json.dumps(meta)
        except (TypeError, ValueError) as e:
            raise ValueError(f"checkpoint extra counters are not JSON-serialisable: {e}") from None
        tree = _as_tree(state)
        try:
            return self._manager.save(step, args=ocp.args.Composite(
                state=ocp.args.StandardSave(tree), meta=ocp.args.JsonSave(meta)))
        except Exception as e:
            if not _disk_full(e):
                raise
            self._remove_partial(step)
            raise DiskFull(self._disk_full_message(step, tree)) from None

    def _remove_partial(self, step: int) -> None:
        """Remove what a failed save of `step` left (its temporary directory)."""
        for path in self.run_dir.glob(f"{step}.orbax-checkpoint-tmp*"):
            shutil.rmtree(path, ignore_errors=True)

    def _disk_full_message(self, step: int, tree: dict) -> str:
        """The line of a save of `step` that found the disk full: the path, the space the step needs
        (the size of the newest checkpoint; before any, the bytes of `tree`) and the space free."""
        newest = self._manager.latest_step()
        need = (_folder_bytes(self.run_dir / str(newest)) if newest is not None else
                sum(leaf.nbytes for leaf in jax.tree.leaves(tree)))
        kept = ", ".join(map(str, self._manager.all_steps())) or "none"
        return (f"no space left on the device of {self.run_dir} for checkpoint {self.run_dir / str(step)}: "
                f"it needs about {_megabytes(need)}, {_megabytes(shutil.disk_usage(self.run_dir).free)} are free "
                f"(the checkpoints already written are intact: {kept})")

    def latest_step(self) -> int | None:
        return self._manager.latest_step()

    def close(self) -> None:
        """Close the manager, after its background clean-up of leftovers (a process ending right
        after a refused resume would otherwise cut that thread off with a traceback)."""
        cleanup = getattr(self._manager, "_cleanup_tmp_directory_future", None)   # orbax does not wait
        if cleanup is not None:
            cleanup.result()
        self._manager.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _disk_full(error: BaseException) -> bool:
    """Whether `error` (or one it was raised from) says the device has no space left."""
    while error is not None:
        if getattr(error, "errno", None) == errno.ENOSPC or "No space left on device" in str(error):
            return True
        error = error.__cause__ or error.__context__
    return False


def _folder_bytes(path: Path) -> int:
    """The bytes the files under `path` take on their device (whole blocks)."""
    return sum(p.stat().st_blocks * 512 for p in path.rglob("*") if p.is_file())


def _megabytes(n: int) -> str:
    return f"{n / 1e6:.2f} MB" if n >= 1e6 else f"{n / 1e3:.0f} kB"


def _listed(run_dir: Path, read):
    """read(manager) over a fresh listing of `run_dir`'s steps, listed again when a step is removed
    while orbax lists them (a run keeping only its newest turns them over), `NEWEST_TRIES` times at
    most (then CheckpointGone)."""
    for _ in range(NEWEST_TRIES):
        try:
            with _manager(run_dir) as manager:
                return read(manager)
        except FileNotFoundError:
            continue
    raise CheckpointGone(f"the checkpoints of {run_dir} were removed while they were being listed")


def latest_step(run_dir: str | Path) -> int | None:
    """The newest complete checkpoint step in `run_dir`, or None (also when it does not exist)."""
    run_dir = Path(run_dir).absolute()
    if not run_dir.is_dir():
        return None
    return _listed(run_dir, lambda manager: manager.latest_step())


def steps(run_dir: str | Path) -> list[int]:
    """The complete checkpoint steps in `run_dir`, newest first ([] when it does not exist)."""
    run_dir = Path(run_dir).absolute()
    if not run_dir.is_dir():
        return []
    return _listed(run_dir, lambda manager: sorted(manager.all_steps(), reverse=True))


def set_aside(run_dir: str | Path, step: int) -> Path:
    """Rename RUN_DIR/<step> (a corrupt checkpoint) to RUN_DIR/<step>.corrupt (with a number
    added when that is taken), where no listing or save sees it and a person can look at it;
    returns the new path."""
    path = Path(run_dir).absolute() / str(step)
    target, n = path.with_name(path.name + CORRUPT_SUFFIX), 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}{CORRUPT_SUFFIX}-{n}")
    return path.rename(target)


def _resolve(path: str | Path) -> tuple[Path, int]:
    """(run directory, step) of PATH: a run directory (its latest step) or one step's directory."""
    path = Path(path).absolute()
    if not path.is_dir():
        gone = path.name.isdigit() and path.parent.is_dir()
        raise (CheckpointGone if gone else CheckpointError)(f"no checkpoint at {path}: not a directory")
    if any((path / name).exists() for name in (*ITEMS, "_CHECKPOINT_METADATA")):
        if not path.name.isdigit():
            raise CheckpointError(f"checkpoint directory {path} is not named after a step")
        return path.parent, int(path.name)
    step = latest_step(path)
    if step is None:
        raise CheckpointError(f"no checkpoint in {path}")
    return path, step


class _Restores:
    """Whether a restore is running or has failed in this process (the reads it leaves behind
    finish later, on tensorstore's threads)."""
    open_or_failed = False


def _ignore_reads_finishing_after_a_failed_restore() -> None:
    """Install (once) the two filters that keep the reads a failed restore leaves in flight quiet.

    When one read of a corrupt checkpoint fails, orbax's restore raises while the other reads are
    still in flight, and each one that fails later reports itself on stderr:
    - if the event loop the restore ran on is closed by then, `loop.call_soon_threadsafe` (from
      a tensorstore thread) raises "Event loop is closed", which ends up in `sys.unraisablehook`
      as a traceback; the hook installed here drops exactly that error;
    - if the loop is still open, the read's asyncio future holds its error and nobody retrieves
      it: asyncio logs "Future exception was never retrieved" with the error when the future is
      collected; the `asyncio` logger's filter installed here drops those records while a
      restore runs or after one failed (`_Restores.open_or_failed`).
    The restore's own error (`CheckpointError`) says what is wrong. Which of the two happens,
    if any, depends on thread timing (a loaded machine shows the second).
    """
    previous = sys.unraisablehook
    if getattr(previous, "drops_closed_loop_reads", False):
        return

    def hook(unraisable) -> None:
        if not (isinstance(unraisable.exc_value, RuntimeError)
                and str(unraisable.exc_value) == "Event loop is closed"):
            previous(unraisable)

    def unretrieved_read_error(record: logging.LogRecord) -> bool:
        return not (_Restores.open_or_failed
                    and record.getMessage().startswith("Future exception was never retrieved"))

    hook.drops_closed_loop_reads = True
    sys.unraisablehook = hook
    logging.getLogger("asyncio").addFilter(unretrieved_read_error)


def _restore(run_dir: Path, step: int, **items: ocp.args.CheckpointArgs):
    _ignore_reads_finishing_after_a_failed_restore()
    earlier_failed = _Restores.open_or_failed
    _Restores.open_or_failed = True
    try:
        with _manager(run_dir) as manager:
            restored = manager.restore(step, args=ocp.args.Composite(**items))
    except Exception as e:  # noqa: BLE001 - orbax raises many types; the caller gets one, with the reason
        where = run_dir / str(step)
        if _being_removed(where):
            raise CheckpointGone(f"checkpoint {where} was removed while it was being read") from None
        reason = (str(e).strip().splitlines() or [""])[0][:300]
        raise CorruptCheckpoint(f"checkpoint {where} is corrupt or incomplete: "
                                f"cannot restore its {'/'.join(items)} ({type(e).__name__}: {reason})") from None
    _Restores.open_or_failed = earlier_failed
    return restored


def _being_removed(where: Path) -> bool:
    """Whether the step directory `where`, which did not restore, is gone or going within
    `REMOVAL_SECONDS` (its writer removes its files first, then the folder)."""
    end = time.monotonic() + REMOVAL_SECONDS
    while (where / "_CHECKPOINT_METADATA").is_file():
        if time.monotonic() >= end:
            return False
        time.sleep(0.05)
    return True


def read_metadata(path: str | Path) -> dict:
    """The JSON metadata of the checkpoint at PATH (run directory: its latest step)."""
    run_dir, step = _resolve(path)
    meta = _restore(run_dir, step, meta=ocp.args.JsonRestore()).meta
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise CheckpointError(f"checkpoint {run_dir / str(step)} has no {FORMAT} metadata")
    return meta


def _open(path: str | Path, game: Game, family: bool = False) -> tuple[Path, int, dict]:
    """(run directory, step, metadata) of the checkpoint at PATH, checked to be of `game` (with
    `family`: of a game of its `network_family`, e.g. a network trained with hold'em stacks drawn
    per hand, evaluated at fixed stacks)."""
    run_dir, step = _resolve(path)
    where = str(run_dir / str(step))
    meta = read_metadata(where)
    if meta["game"] != game.spec.name and not (family and network_family_of(meta["game"]) == game.network_family):
        raise CheckpointError(f"checkpoint is for game {meta['game']}, not {game.spec.name} ({where})")
    if meta["spec"] != _spec_shape(game):
        raise CheckpointError(f"checkpoint {where} has shapes {meta['spec']}, "
                              f"but {game.spec.name} has {_spec_shape(game)}")
    return run_dir, step, meta


def _network_config(meta: dict, where: str) -> NetworkConfig:
    """The checkpoint's network config (no `kind` saved: mlp), of a kind this version builds."""
    try:
        network = NetworkConfig(**meta["network"])
    except (TypeError, KeyError) as e:
        raise CheckpointError(f"checkpoint {where} has an unreadable network config: {e}") from None
    if network.kind not in BUILDERS:
        raise CheckpointError(f"checkpoint {where} holds a network of kind {network.kind!r}, which this "
                              f"version cannot build (known kinds: {', '.join(BUILDERS)})")
    return network


def _learner_config(meta: dict, where: str) -> LearnerConfig:
    try:
        return LearnerConfig(**meta["learner"])
    except (TypeError, KeyError) as e:
        raise CheckpointError(f"checkpoint {where} has an unreadable learner config: {e}") from None


def restore_train_state(path: str | Path, game: Game, network_config: NetworkConfig,
                        learner_config: LearnerConfig) -> tuple[TrainState, dict]:
    """(TrainState, metadata) of the checkpoint at PATH (run directory: latest; or a step directory).

    The checkpoint must be of `game` with the same network config and optimizer
    (other learner settings, such as the learning rate, may change on resume; a moving average
    is started or dropped as `learner_config.ema_decay` says, `train_state.with_ema`).
    """
    run_dir, step, meta = _open(path, game)
    where = str(run_dir / str(step))
    saved_network, saved_learner = _network_config(meta, where), _learner_config(meta, where)
    if saved_network.kind != network_config.kind:
        raise CheckpointError(f"checkpoint {where} holds a network of kind {saved_network.kind}, "
                              f"not the configured {network_config.kind}")
    if saved_network != network_config:
        raise CheckpointError(f"checkpoint {where} has network {saved_network}, not the configured {network_config}")
    if saved_learner.optimizer != learner_config.optimizer:
        raise CheckpointError(f"checkpoint {where} was trained with optimizer {saved_learner.optimizer}, "
                              f"not {learner_config.optimizer}")
    target = jax.eval_shape(lambda: init_train_state(game, network_config, saved_learner, seed=0))
    tree = _restore(run_dir, step, state=ocp.args.StandardRestore(_as_tree(target))).state
    return with_ema(TrainState(**tree), learner_config), meta


def restore_params(path: str | Path, game: Game) -> tuple[dict, NetworkConfig, dict]:
    """(params, network config, metadata) of the checkpoint at PATH (run directory: latest,
    read again from the new latest while the run removes it under the reader, `NEWEST_TRIES`
    times at most; or a step directory): only the run's network is read (the moving average of
    the weights when the run kept one, else the trained weights; not the optimizer state, step
    or RNG), for the network the checkpoint's own config describes, onto the default device."""
    tries = 1
    while True:
        try:
            return _restore_params(path, game)
        except CheckpointGone:
            if tries >= NEWEST_TRIES or not _is_run_dir(path):
                raise
            tries += 1


def _is_run_dir(path: str | Path) -> bool:
    """Whether PATH names a run directory (its newest step), not one step's directory."""
    path = Path(path)
    return path.is_dir() and not any((path / name).exists() for name in (*ITEMS, "_CHECKPOINT_METADATA"))


def _restore_params(path: str | Path, game: Game) -> tuple[dict, NetworkConfig, dict]:
    run_dir, step, meta = _open(path, game, family=True)
    where = str(run_dir / str(step))
    network_config = _network_config(meta, where)
    key = "ema" if _learner_config(meta, where).ema_decay > 0 else "params"
    device = jax.sharding.SingleDeviceSharding(jax.devices()[0])
    shapes = jax.eval_shape(lambda: init_params(game, network_config, seed=0))
    target = {key: jax.tree.map(lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=device), shapes)}
    only_params = ocp.args.PyTreeRestore(target, restore_args=ocp.checkpoint_utils.construct_restore_args(target),
                                         partial_restore=True)
    return _restore(run_dir, step, state=only_params).state[key], network_config, meta


def load_value_function(path: str | Path, game: Game, buckets=None) -> NetworkValueFunction:
    """The CVPN of the checkpoint at PATH (run directory: latest; or a step directory) as a
    value function of `game`, with the checkpoint's weight version (`restore_params`)."""
    params, network_config, meta = restore_params(path, game)
    return NetworkValueFunction(game, network_config, params, buckets=buckets, version=meta["version"])
