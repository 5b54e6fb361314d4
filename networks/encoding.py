"""Network inputs and the unit conversion between game values and network values.

Shapes: B = batch, N = `spec.num_states`, A = `spec.num_actions`,
F = `spec.feature_size`.

Inputs. Each player's range is masked to its possible slots and normalised to
a distribution over them (an all-zero range stays all zero), then both are
concatenated with the public features: float32 [B, 2N + F] laid out as
`[p0 (N), p1 (N), game.features(pub) (F)]`.

Units. Counterfactual values of the game scale as
`cfv_0(r0, c * r1) = c * cfv_0(r0, r1)` and do not change when r0 is scaled
(the same for player 1 with the roles swapped). The network therefore
predicts values for the normalised ranges in units of the public state's
value scale `Game.value_scale(pub)` ("network units": `spec.max_utility` by
default; hold'em's pot, as DeepStack normalises by the pot, so that the values
early in a 200-big-blind hand are not thousandths of a unit), and

    cfv_i = v_i * scale * sum(r_{1-i})          (to_game_units)
    v_i   = cfv_i / (scale * sum(r_{1-i}))      (to_network_units)

where the sums run over the opponent's possible slots. Where the opponent's
total reach is 0 the game value is 0 whatever the network says, so
`to_network_units` masks those entries out of training.

A value function's per-call path (`encode_query`, then `game_values` on the network's answer)
does the normalisation and the unit factor `scale * sum(r_{1-i})` in numba loops, one pass over
the ranges, with the public state's scale kept beside its features (the numpy
version's dozen small array operations and a Python call of `value_scale` per query cost a
tic-tac-toe search ~10% of its time). The sums are numpy's pairwise sums
(`sog.search.expansion.pairwise_sum`) and the arithmetic is `normalise_ranges` /
`to_game_units`' own, so the bits are theirs.
"""
from __future__ import annotations

from collections.abc import Sequence

import numba
import numpy as np

from sog.games.api import Game
from sog.search.expansion import pairwise_sum


def normalise_ranges(ranges: np.ndarray, possible: np.ndarray) -> np.ndarray:
    """float32 [B, 2, N]: ranges masked to `possible` (bool [B, 2, N]), each summing to 1 (or 0)."""
    r = np.where(possible, ranges, 0.0)
    total = r.sum(-1, keepdims=True)
    return np.where(total > 0, r / np.where(total > 0, total, 1.0), 0.0).astype(np.float32)


class _PublicRows:
    """Each public state's possible mask, features and value scale, built once (from the game's
    `cached` view and `value_scale`) and kept as a row of three tables, so a batch is encoded by
    one gather instead of memo look-ups and row copies per public state.

    possible: bool [K, 2, N]; features: float32 [K, F]; scale: float64 [K]; `row[pub]` indexes
    them (K grows by doubling, like the game's own memo, with every public state ever encoded).
    """

    def __init__(self, game: Game):
        spec = game.spec
        self.game, self.row = game, {}
        self.possible = np.zeros((64, 2, spec.num_states), dtype=bool)
        self.features = np.zeros((64, spec.feature_size), dtype=np.float32)
        self.scale = np.zeros(64)

    def rows(self, pubs: Sequence) -> np.ndarray:
        """int [B]: the rows of `pubs`, new ones added."""
        row = self.row
        try:
            return np.fromiter(map(row.__getitem__, pubs), dtype=np.int64, count=len(pubs))
        except KeyError:
            for pub in pubs:
                if pub not in row:
                    self._add(pub)
            return np.fromiter(map(row.__getitem__, pubs), dtype=np.int64, count=len(pubs))

    def _add(self, pub) -> None:
        k = len(self.row)
        if k == len(self.features):
            self.possible = np.concatenate([self.possible, np.zeros_like(self.possible)])
            self.features = np.concatenate([self.features, np.zeros_like(self.features)])
            self.scale = np.concatenate([self.scale, np.zeros_like(self.scale)])
        self.possible[k] = self.game.cached("possible_mask", pub)
        self.features[k] = self.game.cached("features", pub)
        self.scale[k] = self.game.value_scale(pub)
        self.row[pub] = k


def _table(game: Game) -> _PublicRows:
    return game.memo(("networks.encoding",), lambda: _PublicRows(game))


def encode(game: Game, pubs: Sequence, ranges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Network inputs for B public belief states.

    pubs: B public states; ranges: float [B, 2, N] (any scale).
    Returns (inputs float32 [B, 2N + F], possible bool [B, 2, N]). Features
    and masks are kept per public state (`_PublicRows`, one per game object), so
    each public state is featurised once.
    """
    inputs, possible, _ = encode_query(game, pubs, ranges)
    return inputs, possible


def encode_query(game: Game, pubs: Sequence, ranges: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`encode`'s (inputs float32 [B, 2N + F], possible bool [B, 2, N]) and the unit factor of
    `game_values`, float64 [B, 2]: entry [b, i] is `value_scale(pubs[b])` times player 1 - i's
    total reach over its possible slots (`to_game_units`' factor), from one numba pass over
    the ranges (float [B, 2, N], any scale)."""
    spec = game.spec
    n, f = spec.num_states, spec.feature_size
    ranges = np.ascontiguousarray(ranges, dtype=np.float64)
    if ranges.shape != (len(pubs), 2, n):
        raise ValueError(f"ranges have shape {ranges.shape}, expected {(len(pubs), 2, n)}")
    table = _table(game)
    rows = table.rows(pubs)
    possible = table.possible[rows]
    inputs = np.empty((len(pubs), 2 * n + f), dtype=np.float32)
    inputs[:, 2 * n:] = table.features[rows]
    unit = np.empty((len(pubs), 2))
    normalise_into(ranges, possible, table.scale[rows], inputs, unit)
    return inputs, possible, unit


@numba.njit(cache=True)
def normalise_into(ranges, possible, scale, inputs, unit):
    """inputs[b, i * N + s] = `normalise_ranges`' entry (float32), unit[b, 1 - i] = scale[b] times
    player i's total reach over its possible slots (ranges float64 [B, 2, N], possible bool
    [B, 2, N], scale float64 [B]; inputs float32 [B, >= 2N], unit float64 [B, 2] written)."""
    B, N = ranges.shape[0], ranges.shape[2]
    r = np.empty(N)
    for b in range(B):
        for i in range(2):
            for s in range(N):
                r[s] = ranges[b, i, s] if possible[b, i, s] else 0.0
            total = pairwise_sum(r, 0, N)
            for s in range(N):
                inputs[b, i * N + s] = np.float32(r[s] / total) if total > 0 else np.float32(0.0)
            unit[b, 1 - i] = scale[b] * total


def game_values(values: np.ndarray, possible: np.ndarray, unit: np.ndarray) -> np.ndarray:
    """float64 [B, 2, N]: `to_game_units` of network values [B, 2, N] with `encode_query`'s unit
    factor (float64 [B, 2]); 0 at impossible slots (bool [B, 2, N])."""
    out = np.empty(possible.shape)
    _game_values_into(values, possible, unit, out)
    return out


@numba.njit(cache=True)
def _game_values_into(values, possible, unit, out):
    """out[b, i, s] = float64(values[b, i, s]) * unit[b, i] at possible slots, else 0."""
    B, N = possible.shape[0], possible.shape[2]
    for b in range(B):
        for i in range(2):
            for s in range(N):
                out[b, i, s] = np.float64(values[b, i, s]) * unit[b, i] if possible[b, i, s] else 0.0


def opponent_reach(ranges: np.ndarray, possible: np.ndarray) -> np.ndarray:
    """float64 [B, 2]: entry [b, i] is the total reach of player 1 - i over its possible slots."""
    total = np.where(possible, ranges, 0.0).sum(-1)
    return total[:, ::-1].astype(np.float64)


def value_scales(game: Game, pubs: Sequence) -> np.ndarray:
    """float64 [B]: `game.value_scale(pub)` of each public state, the network's unit there."""
    table = _table(game)
    rows = table.rows(pubs)            # (first: adding rows may replace table.scale by a longer array)
    return table.scale[rows]


def to_game_units(values: np.ndarray, ranges: np.ndarray, possible: np.ndarray, scale) -> np.ndarray:
    """float64 [B, 2, N] counterfactual values from network values [B, 2, N]; 0 at impossible slots.
    scale: the unit, one number or one per row (float [B]: `value_scales`)."""
    scale = np.reshape(np.asarray(scale, dtype=np.float64), (-1, 1, 1)) * opponent_reach(ranges, possible)[:, :, None]
    return np.where(possible, np.asarray(values, dtype=np.float64) * scale, 0.0)


def to_network_units(values: np.ndarray, ranges: np.ndarray, possible: np.ndarray,
                     scale) -> tuple[np.ndarray, np.ndarray]:
    """The exact inverse of `to_game_units` where it is invertible.

    values: counterfactual values in game units [B, 2, N] for `ranges` [B, 2, N]; scale: the
    unit, one number or float [B].
    Returns (network values float32 [B, 2, N], mask bool [B, 2, N]): mask is
    False at impossible slots and where the opponent's total reach is 0
    (there the value is 0 for every network output); values are 0 there.
    """
    opp = opponent_reach(ranges, possible)[:, :, None]
    mask = possible & (opp > 0)
    unit = np.reshape(np.asarray(scale, dtype=np.float64), (-1, 1, 1))
    scaled = np.asarray(values, dtype=np.float64) / (unit * np.where(mask, opp, 1.0))
    return np.where(mask, scaled, 0.0).astype(np.float32), mask
