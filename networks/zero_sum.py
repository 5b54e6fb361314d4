"""DeepStack's zero-sum output layer, shared by every CVPN architecture's value head.

With the normalised ranges p_i and the raw values v_i masked to possible
slots, the error e = p0 . v0 + p1 . v1 is removed by

    v_i -= e * |p_i| / (|p0|^2 + |p1|^2)      on every possible slot of i,

|p_i| = sum(p_i), which is 1 (or 0 for an all-zero range). With both ranges
non-empty that is DeepStack's e / 2 each; with one empty, the whole shift goes
to the other player, whose values are the meaningless ones (in game units they
are scaled by the empty range's total, 0), so the meaningful values are left
alone. Afterwards p0 . v0 + p1 . v1 = 0 exactly (up to float rounding).
Impossible slots output 0.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp


def zero_sum(values: jax.Array, ranges: jax.Array, possible: jax.Array) -> jax.Array:
    """Values [B, 2, N] shifted per example so that sum_i p_i . v_i = 0 (see module doc).

    ranges: normalised ranges [B, 2, N]; possible: bool [B, 2, N].
    """
    v = jnp.where(possible, values, 0.0)
    p = jnp.where(possible, ranges, 0.0)
    error = jnp.sum(p * v, axis=(1, 2))[:, None]           # [B, 1]
    mass = jnp.sum(p, axis=2)                              # [B, 2]: |p_i|
    norm = jnp.sum(mass * mass, axis=1, keepdims=True)     # [B, 1]
    shift = jnp.where(norm > 0, error * mass / jnp.where(norm > 0, norm, 1.0), 0.0)
    return jnp.where(possible, v - shift[:, :, None], 0.0)
