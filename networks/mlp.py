"""The MLP CVPN (`network.kind: mlp`): a trunk of Dense layers, a value head and two policy heads.

The trunk is `network.layers` Dense layers of width `network.hidden` with the
configured activation (`network.activation`: relu | gelu). The value head is a
Dense layer to [2, N] raw values followed by the zero-sum layer
(`networks.zero_sum`); each player's policy head is a Dense layer to [N, A]
logits. Inputs and outputs are those of every CVPN (`networks.cvpn`).
"""
from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp

from networks.zero_sum import zero_sum
from sog.config import NetworkConfig
from sog.games.api import GameSpec

ACTIVATIONS = {"relu": nn.relu, "gelu": nn.gelu}


class MLP(nn.Module):
    """MLP CVPN for a game with N slots and A actions (see `networks.cvpn` for shapes)."""

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


def build_mlp(spec: GameSpec, config: NetworkConfig) -> MLP:
    """The MLP of `config` (hidden, layers, activation) for a game of `spec`; unknown
    activations and non-positive sizes raise ValueError."""
    if config.activation not in ACTIVATIONS:
        raise ValueError(f"unknown activation {config.activation!r}; choose one of {sorted(ACTIVATIONS)}")
    if config.layers < 1 or config.hidden < 1:
        raise ValueError(f"the MLP needs layers >= 1 and hidden >= 1, got {config}")
    return MLP(num_states=spec.num_states, num_actions=spec.num_actions, hidden=config.hidden,
               layers=config.layers, activation=config.activation)
