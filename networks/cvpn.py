"""The counterfactual value-and-policy network (CVPN): the model of a config, and its weights.

`make_model(spec, config)` builds the flax module of `config.kind`
(`networks.registry`: mlp, resnet). Whatever the architecture,
`model.apply(params, inputs, possible)` is a pure function:

    inputs    float32 [B, 2N + F]  normalised ranges p0, p1 and public features
                                   (`networks.encoding.encode`)
    possible  bool    [B, 2, N]    possible slots of each player
    returns   values  float32 [B, 2, N]     in network units (see
                                            `networks.encoding`: per normalised
                                            ranges, units of max_utility), zero
                                            sum: p0 . v0 + p1 . v1 = 0 and 0 on
                                            impossible slots (`networks.zero_sum`)
              logits  float32 [B, 2, N, A]  prior-policy logits, one head per
                                            player (illegal actions are not
                                            masked here; losses and callers do it)
"""
from __future__ import annotations

import functools

import flax.linen as nn
import jax
import jax.numpy as jnp

from networks.registry import builder
from sog.config import NetworkConfig
from sog.games.api import Game, GameSpec


def make_model(spec: GameSpec, config: NetworkConfig) -> nn.Module:
    """The CVPN of `config` for a game of `spec`; an unknown kind or a config its
    architecture rejects raises ValueError."""
    return builder(config.kind)(spec, config)


@functools.partial(jax.jit, static_argnums=0)
def _init(model: nn.Module, key: jax.Array, inputs: jax.Array, possible: jax.Array) -> dict:
    """`model.init`, jitted (3x faster than eager) and compiled once per model config."""
    return model.init(key, inputs, possible)


def init_params(game: Game, config: NetworkConfig, seed: int) -> dict:
    """Fresh flax variables `{"params": ...}` of the CVPN of `config` for `game`, from PRNG key `seed`."""
    spec = game.spec
    n = spec.num_states
    model = make_model(spec, config)
    inputs = jnp.zeros((1, 2 * n + spec.feature_size), jnp.float32)
    possible = jnp.ones((1, 2, n), bool)
    return _init(model, jax.random.key(seed), inputs, possible)
