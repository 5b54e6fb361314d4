"""The counterfactual value-and-policy network (CVPN): an MLP in flax linen.

`CVPN.apply(params, inputs, possible)` is a pure function:

    inputs    float32 [B, 2N + F]  normalised ranges p0, p1 and public features
                                   (`networks.encoding.encode`)
    possible  bool    [B, 2, N]    possible slots of each player
    returns   values  float32 [B, 2, N]     in network units (see
                                            `networks.encoding`: per normalised
                                            ranges, units of max_utility)
              logits  float32 [B, 2, N, A]  prior-policy logits, one head per
                                            player (illegal actions are not
                                            masked here; losses and callers do it)

The trunk is `layers` Dense layers of width `hidden` with the configured
activation. The value head ends in DeepStack's zero-sum layer: with the
normalised ranges p_i and the raw values v_i masked to possible slots, the
error e = p0 . v0 + p1 . v1 is removed by

    v_i -= e * |p_i| / (|p0|^2 + |p1|^2)      on every possible slot of i,

|p_i| = sum(p_i), which is 1 (or 0 for an all-zero range). With both ranges
non-empty that is DeepStack's e / 2 each; with one empty, the whole shift goes
to the other player, whose values are the meaningless ones (in game units they
are scaled by the empty range's total, 0), so the meaningful values are left
alone. Afterwards p0 . v0 + p1 . v1 = 0 exactly (up to float rounding).
Impossible slots output 0.
"""
from __future__ import annotations

import functools

import flax.linen as nn
import jax
import jax.numpy as jnp

from sog.config import NetworkConfig
from sog.games.api import Game, GameSpec

ACTIVATIONS = {"relu": nn.relu, "gelu": nn.gelu}


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


class CVPN(nn.Module):
    """MLP CVPN for a game with N slots and A actions (see module doc for shapes)."""

    num_states: int
    num_actions: int
    hidden: int = 256
    layers: int = 3
    activation: str = "relu"

    @nn.compact
    def __call__(self, inputs: jax.Array, possible: jax.Array) -> tuple[jax.Array, jax.Array]:
        n, a = self.num_states, self.num_actions
        act = ACTIVATIONS[self.activation]
        x = inputs
        for layer in range(self.layers):
            x = act(nn.Dense(self.hidden, name=f"hidden_{layer}")(x))
        raw = nn.Dense(2 * n, name="value")(x).reshape(-1, 2, n)
        logits = jnp.stack([nn.Dense(n * a, name=f"policy_{i}")(x).reshape(-1, n, a) for i in (0, 1)],
                           axis=1)
        ranges = inputs[:, :2 * n].reshape(-1, 2, n)
        return zero_sum(raw, ranges, possible), logits


def make_model(spec: GameSpec, config: NetworkConfig) -> CVPN:
    """The CVPN of `config` for a game of `spec`; unknown activations raise ValueError."""
    if config.activation not in ACTIVATIONS:
        raise ValueError(f"unknown activation {config.activation!r}; choose one of {sorted(ACTIVATIONS)}")
    if config.layers < 1 or config.hidden < 1:
        raise ValueError(f"the CVPN needs layers >= 1 and hidden >= 1, got {config}")
    return CVPN(num_states=spec.num_states, num_actions=spec.num_actions, hidden=config.hidden,
                layers=config.layers, activation=config.activation)


@functools.partial(jax.jit, static_argnums=0)
def _init(model: CVPN, key: jax.Array, inputs: jax.Array, possible: jax.Array) -> dict:
    """`model.init`, jitted (3x faster than eager) and compiled once per model config."""
    return model.init(key, inputs, possible)


def init_params(game: Game, config: NetworkConfig, seed: int) -> dict:
    """Fresh flax variables `{"params": ...}` of the CVPN for `game`, from PRNG key `seed`."""
    spec = game.spec
    n = spec.num_states
    model = make_model(spec, config)
    inputs = jnp.zeros((1, 2 * n + spec.feature_size), jnp.float32)
    possible = jnp.ones((1, 2, n), bool)
    return _init(model, jax.random.key(seed), inputs, possible)
