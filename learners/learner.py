"""The learner: train state, weight versions, checkpoints and resume (plain, Ray-free).

`Learner(game, config, run_dir)` starts from the newest complete checkpoint
in `run_dir` that restores when there is one (newer corrupt ones are set aside as
RUN_DIR/<step>.corrupt, each named in `skipped`), else from fresh weights (`run.seed`):

- `step(batch)` takes one optimizer step and returns float metrics (loss,
  value_loss, policy_loss, grad_norm, learning_rate);
- `publish()` returns `(version, params)` (numpy, ready for one object-store
  put; the moving average of the weights when the run keeps one) every
  `learner.publish_every` steps and None otherwise; versions count
  publications, the initial weights are version 0 (`current()` gives them);
- `checkpoint(counters)` saves params, optimizer state, step, RNG, weight
  version, the caller's counters and the config (orbax, keep the last N,
  `learners.checkpoint`); `checkpoint_due()` says when `learner.checkpoint_every`
  steps have passed;
- `sample_seed()`: the seed of the next replay sample, a pure function of the
  checkpointed RNG key and the step, so a resumed run draws what an
  uninterrupted one would have drawn.

Device: the train state lives on `learner.device` (`networks.devices.resolve`: auto is this
process's first GPU, else the CPU; gpu:K without that GPU is a `ConfigError`), and each step
donates the old state's buffers to the new one (no copy of the weights and optimizer state).

Resume checks: the checkpoint must be of the same game string and network
(`ResumeError`, a `CheckpointError`, names both); the optimizer must match
(`restore_train_state`). Every other difference (learning rate, budgets,
self-play settings...) is allowed and listed in `config_changes` so the
caller can log it. The replay buffer and query queue are not the learner's:
the caller persists them next to the checkpoints (`launch.training_run`).
"""
from __future__ import annotations

from pathlib import Path

import jax
import numpy as np

from learners.checkpoint import (
    CheckpointError,
    CheckpointStore,
    CorruptCheckpoint,
    read_metadata,
    restore_train_state,
    set_aside,
    steps,
)
from learners.train_state import init_train_state, make_train_step, served_params
from networks.batch import TRAIN_KEYS
from networks.cvpn import make_model
from networks.devices import resolve
from sog.config import (
    Config,
    ConfigError,
    config_diff,
    config_from_dict,
    config_to_dict,
)
from sog.games.api import Game
from sog.seeding import derive_seed


class ResumeError(CheckpointError):
    """The run directory holds a checkpoint of another game or network."""


class Learner:
    """See module doc."""

    def __init__(self, game: Game, config: Config, run_dir: str | Path):
        self.game, self.config = game, config
        self.device = resolve(config.learner.device, "learner.device")
        self.run_dir = Path(run_dir).absolute()
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.config_changes: list[str] = []
        self.skipped: list[str] = []          # a line for each corrupt checkpoint set aside at resume
        found = steps(self.run_dir)
        if not found:
            # one program (one compilation) rather than one per operation of the initialisation
            self.state = jax.jit(lambda: init_train_state(game, config.network, config.learner,
                                                          seed=config.run.seed))()
            self.version, self.counters, self.resumed = 0, {}, False
        else:
            self.state, meta = self._resume_newest_intact(found)
            self.version = int(meta["version"])
            self.counters = dict(meta.get("extra", {}).get("counters", {}))
            self.resumed = True
        # through the host: every leaf gets a buffer of its own on the device (a new moving average
        # starts as the weights themselves, and the step cannot donate one buffer twice)
        self.state = jax.device_put(jax.device_get(self.state), self.device)
        self.store = CheckpointStore(self.run_dir, game, config.network, config.learner)
        self._rng_words = None
        self._train_step = make_train_step(make_model(game.spec, config.network), config.learner,
                                           donate=True)
        # the step whose weights `version` names: known when it is a publication step
        step = self.step_count
        self._published_step = step if step % config.learner.publish_every == 0 else -1

    def _resume_newest_intact(self, found: list[int]):
        """(state, metadata) of the newest checkpoint of `found` (steps, newest first) that
        restores; the newer corrupt ones are set aside (`checkpoint.set_aside`), each with a line
        in `skipped`. When none restores, the newest one's `CorruptCheckpoint` is raised and
        nothing is moved."""
        corrupt = []
        for step in found:
            self.config_changes = []
            try:
                out = self._resume(step)
            except CorruptCheckpoint as e:
                corrupt.append(e)
                continue
            for error, bad in zip(corrupt, found):
                aside = set_aside(self.run_dir, bad)
                self.skipped.append(f"skipped a checkpoint: {error}; set aside as {aside}, resuming from step {step}")
            return out
        raise corrupt[0]

    def _resume(self, step: int):
        where = self.run_dir / str(step)
        saved = None
        try:
            saved_dict = read_metadata(where).get("extra", {}).get("config")
            if saved_dict is not None:
                saved = config_from_dict(saved_dict, source=str(where))
        except ConfigError as e:
            raise ResumeError(f"checkpoint {where} holds a config this version cannot read: {e}") from None
        if saved is not None:
            if saved.game != self.config.game:
                raise ResumeError(f"run directory {self.run_dir} holds a run of game {saved.game!r}, "
                                  f"not {self.config.game!r}; use another --run-dir")
            if saved.network.kind != self.config.network.kind:
                raise ResumeError(f"run directory {self.run_dir} holds a network of kind {saved.network.kind}, "
                                  f"not the configured {self.config.network.kind}; use another --run-dir")
            if saved.network != self.config.network:
                raise ResumeError(f"run directory {self.run_dir} holds a network {saved.network}, "
                                  f"not the configured {self.config.network}; use another --run-dir")
            self.config_changes = config_diff(saved, self.config)
        return restore_train_state(where, self.game, self.config.network, self.config.learner)

    # ------------------------------------------------------------ training

    @property
    def step_count(self) -> int:
        return int(self.state.step)

    def sample_seed(self, step: int | None = None) -> int:
        """Seed of the replay sample for learner step `step` (default: the next one; see module doc)."""
        if self._rng_words is None:
            self._rng_words = np.asarray(jax.device_get(self.state.rng), np.uint32).tolist()
        step = self.step_count if step is None else int(step)
        return derive_seed(*self._rng_words, step)

    def step(self, batch: dict) -> dict[str, float]:
        """One optimizer step on `batch` (a dict of numpy arrays: `networks.batch.TRAIN_KEYS`;
        other keys, the examples' metadata, are ignored)."""
        self.state, metrics = self._train_step(self.state, {k: batch[k] for k in TRAIN_KEYS})
        return {k: float(v) for k, v in jax.device_get(metrics).items()}

    def params(self):
        """The run's current network as numpy arrays (`train_state.served_params`: the moving
        average of the weights when `learner.ema_decay` > 0)."""
        return jax.device_get(served_params(self.state))

    def current(self) -> tuple[int, object]:
        """(version, params) to serve now: the current weights, published as a new version
        first if they are not the ones `version` names (a resume between publications)."""
        return self.publish(force=True) or (self.version, self.params())

    def publish(self, force: bool = False):
        """(new version, params) every `publish_every` steps (or when forced and the weights
        changed since the last publication); None otherwise."""
        step = self.step_count
        if step == self._published_step:
            return None
        if not force and (step == 0 or step % self.config.learner.publish_every):
            return None
        self.version += 1
        self._published_step = step
        return self.version, self.params()

    # ------------------------------------------------------------ checkpoints

    def checkpoint_due(self) -> bool:
        step = self.step_count
        return step > 0 and step % self.config.learner.checkpoint_every == 0

    def checkpoint(self, counters: dict | None = None) -> bool:
        """Save a checkpoint at the current step (False when one of this step exists)."""
        if counters is not None:
            self.counters = dict(counters)
        extra = {"counters": self.counters, "config": config_to_dict(self.config)}
        return self.store.save(self.state, self.version, extra)

    def close(self) -> None:
        self.store.close()
