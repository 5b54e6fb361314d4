"""The CVPN behind sog's `ValueFunction` protocol (`sog.search.value_function`).

`NetworkValueFunction.evaluate(pubs, ranges)` encodes the B public belief
states (`networks.encoding.encode_query`), runs one jitted `model.apply` of the
configured CVPN (`networks.cvpn`) per chunk and converts the values to game
units (`networks.encoding.game_values`):

    values  float64 [B, 2, N]     counterfactual values (cfv convention of
                                  `sog.games.api`, units of the game's utility)
    logits  float64 [B, 2, N, A]  prior-policy logits per player

Shapes are bucketed so jit compiles a handful of programs only: a batch of
size B <= max(buckets) is padded with empty rows (zero ranges, nothing
possible) up to the smallest bucket >= B; a larger batch is cut into chunks of
max(buckets), the last chunk padded the same way. `compilations` counts the
programs traced so far (at most `len(buckets)` per parameter shapes).
"""
from __future__ import annotations

import time
from collections.abc import Sequence

import jax
import numpy as np

from networks.cvpn import make_model
from networks.encoding import encode_query, game_values
from sog.config import NetworkConfig
from sog.games.api import Game


def bucket_sizes(max_batch: int = 1024) -> tuple[int, ...]:
    """(1, 2, 4, ..., max_batch): powers of two, with max_batch last even if it is not one."""
    if max_batch < 1:
        raise ValueError(f"max_batch must be >= 1, got {max_batch}")
    sizes = [1]
    while sizes[-1] * 2 < max_batch:
        sizes.append(sizes[-1] * 2)
    return tuple(sorted({*sizes, max_batch}))


def _padded(x: np.ndarray, size: int) -> np.ndarray:
    """x [B, ...] followed by size - B rows of zeros (a new array)."""
    out = np.zeros((size,) + x.shape[1:], dtype=x.dtype)
    out[:len(x)] = x
    return out


class NetworkValueFunction:
    """Counterfactual values and prior logits of a CVPN (see module doc).

    game: the game; config: the network config the CVPN is built from
    (`networks.cvpn.make_model`); params: its flax variables; buckets: the padded
    batch sizes (default `bucket_sizes()`); version: the weight version of `params`.
    Counters: `calls` (evaluations), `queries` (public belief states),
    `compilations` (jit traces).
    """

    def __init__(self, game: Game, config: NetworkConfig, params,
                 buckets: Sequence[int] | None = None, version: int = 0):
        self.game = game
        self.model = make_model(game.spec, config)
        self.buckets = tuple(sorted(set(buckets or bucket_sizes())))
        if self.buckets[0] < 1:
            raise ValueError(f"bucket sizes must be >= 1, got {self.buckets}")
        self.params, self.version = params, version
        self.calls = self.queries = self.compilations = 0
        self._apply = jax.jit(self._traced_apply)

    @classmethod
    def serving(cls, game: Game, config, params, version: int = 0) -> NetworkValueFunction:
        """The network that answers a training run's queries: `config.network` with the batch
        buckets of `config.inference.max_batch` (a run's `sog.config.Config`)."""
        return cls(game, config.network, params, buckets=bucket_sizes(config.inference.max_batch), version=version)

    def _traced_apply(self, params, inputs, possible):
        self.compilations += 1  # Python side effect: runs only when jit traces a new shape
        return self.model.apply(params, inputs, possible)

    def set_params(self, params, version: int) -> None:
        """Swap in new weights (same shapes: no recompilation)."""
        self.params, self.version = params, version

    def prepare(self, deadline: float) -> None:
        """Compile the batch buckets, smallest first, until `deadline` (a `time.perf_counter()`
        time, seconds): a search's first calls at a new batch size then pay no compilation (a
        protocol host does this before the first clock runs)."""
        inputs, possible, _ = encode_query(self.game, [self.game.root()], self.game.initial_ranges()[None])
        for size in self.buckets:
            if time.perf_counter() >= deadline:
                break
            self.apply_padded(np.repeat(inputs, size, axis=0), np.repeat(possible, size, axis=0))

    def apply_padded(self, inputs: np.ndarray, possible: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """`model.apply` on encoded inputs [B, 2N + F], possible [B, 2, N], through the buckets.

        Returns (values float32 [B, 2, N] in network units, logits float32 [B, 2, N, A]), read-only
        when they are the network's own output arrays.
        """
        biggest = self.buckets[-1]
        values, logits = [], []
        for start in range(0, len(inputs), biggest):
            x, m = inputs[start:start + biggest], possible[start:start + biggest]
            rows = len(x)
            size = next(b for b in self.buckets if b >= rows)
            if size > rows:         # empty rows up to the bucket (np.pad took ~0.1 ms a call)
                x, m = _padded(x, size), _padded(m, size)
            v, lg = self._apply(self.params, x, m)
            values.append(np.asarray(v)[:rows])
            logits.append(np.asarray(lg)[:rows])
        if len(values) == 1:
            return values[0], logits[0]
        return np.concatenate(values), np.concatenate(logits)

    def evaluate(self, pubs: Sequence, ranges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(values float64 [B, 2, N] in game units, logits float64 [B, 2, N, A]) for ranges [B, 2, N]."""
        spec = self.game.spec
        n, a = spec.num_states, spec.num_actions
        self.calls += 1
        self.queries += len(pubs)
        if not len(pubs):
            return np.zeros((0, 2, n)), np.zeros((0, 2, n, a))
        inputs, possible, unit = encode_query(self.game, pubs, ranges)
        values, logits = self.apply_padded(inputs, possible)
        return game_values(values, possible, unit), logits.astype(np.float64)
