"""The ResNet CVPN (`network.kind: resnet`): AlphaZero's residual tower for board games.

For games whose features are planes of a board (`spec.feature_shape` = (C, H, W):
chess 119 x 8 x 8, Go 17 x 9 x 9). The flat inputs [B, 2N + F] of every CVPN
(`networks.cvpn`) are reshaped to [B, H, W, C] (NHWC) and the 2N normalised ranges
are appended as constant planes (for perfect-information games N = 1: two planes of
1s, all 0 in padding rows), so the tower sees [B, H, W, C + 2N].

Tower: a 3 x 3 convolution to `network.channels` channels, then `network.blocks`
residual blocks (conv 3 x 3, norm, ReLU, conv 3 x 3, norm, skip, ReLU). Heads as
AlphaZero's:

* value: conv 1 x 1 to 1 channel, norm, ReLU, Dense 256, ReLU, Dense 2N raw
  values, then the zero-sum layer (`networks.zero_sum`) -> values [B, 2, N];
* policy, one per player: conv 1 x 1 to 2 channels, norm, ReLU, Dense N * A
  -> logits [B, 2, N, A].

Normalisation is LayerNorm rather than AlphaZero's batch norm (over the channels in the
tower; over the whole map, H x W x channels, in the heads, whose 1 or 2 channels a LayerNorm
over channels alone would erase: `head_norm`): batch
statistics would be a mutable collection that the learner and the jitted
inference (fixed padded batch buckets, `networks.value_function`) do not carry, and
padding rows would bias them.
"""
from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp

from networks.zero_sum import zero_sum
from sog.config import NetworkConfig
from sog.games.api import GameSpec

VALUE_HIDDEN = 256


def head_norm(name: str) -> nn.LayerNorm:
    """A head's normalisation: over the whole head map (H, W and its 1 or 2 channels) of each
    example, a scale and bias per channel. A LayerNorm over the channels alone would map a
    1-channel map to 0 everywhere (the value head then saw nothing of the board and gave one
    value for every position) and a 2-channel one to +-1."""
    return nn.LayerNorm(reduction_axes=(-3, -2, -1), feature_axes=-1, name=name)


class ResidualBlock(nn.Module):
    """x + conv-norm-relu-conv-norm(x), then ReLU; x: [B, H, W, channels]."""

    channels: int

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        y = nn.relu(nn.LayerNorm()(nn.Conv(self.channels, (3, 3), use_bias=False)(x)))
        y = nn.LayerNorm()(nn.Conv(self.channels, (3, 3), use_bias=False)(y))
        return nn.relu(x + y)


class ResNet(nn.Module):
    """ResNet CVPN for a board of `feature_shape` (C, H, W), N slots and A actions."""

    num_states: int
    num_actions: int
    feature_shape: tuple[int, int, int]
    blocks: int = 6
    channels: int = 64

    @nn.compact
    def __call__(self, inputs: jax.Array, possible: jax.Array) -> tuple[jax.Array, jax.Array]:
        n, a = self.num_states, self.num_actions
        c, h, w = self.feature_shape
        batch = inputs.shape[0]
        ranges = inputs[:, :2 * n]
        board = inputs[:, 2 * n:].reshape(batch, c, h, w).transpose(0, 2, 3, 1)
        x = jnp.concatenate([board, jnp.broadcast_to(ranges[:, None, None, :], (batch, h, w, 2 * n))],
                            axis=-1)
        x = nn.relu(nn.LayerNorm()(nn.Conv(self.channels, (3, 3), use_bias=False, name="stem")(x)))
        for i in range(self.blocks):
            x = ResidualBlock(self.channels, name=f"block_{i}")(x)
        v = nn.relu(head_norm(name="value_norm")(nn.Conv(1, (1, 1), name="value_conv")(x)))
        v = nn.relu(nn.Dense(VALUE_HIDDEN, name="value_hidden")(v.reshape(batch, -1)))
        raw = nn.Dense(2 * n, name="value")(v).reshape(batch, 2, n)
        logits = []
        for i in (0, 1):
            p = nn.Conv(2, (1, 1), name=f"policy_conv_{i}")(x)
            p = nn.relu(head_norm(name=f"policy_norm_{i}")(p))
            logits.append(nn.Dense(n * a, name=f"policy_{i}")(p.reshape(batch, -1)).reshape(batch, n, a))
        return zero_sum(raw, ranges.reshape(batch, 2, n), possible), jnp.stack(logits, axis=1)


def build_resnet(spec: GameSpec, config: NetworkConfig) -> ResNet:
    """The ResNet of `config` (blocks, channels) for a game of `spec`; a game without
    spatial features (`spec.feature_shape` None) or non-positive sizes raise ValueError."""
    if spec.feature_shape is None:
        raise ValueError(f"network.kind resnet needs a game with board features; {spec.name} has none")
    if config.blocks < 0 or config.channels < 1:
        raise ValueError(f"the ResNet needs blocks >= 0 and channels >= 1, got {config}")
    return ResNet(num_states=spec.num_states, num_actions=spec.num_actions,
                  feature_shape=tuple(spec.feature_shape), blocks=config.blocks,
                  channels=config.channels)
