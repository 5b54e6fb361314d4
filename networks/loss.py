"""The CVPN loss of Student of Games, a pure jittable function (network units).

    loss = w_v * value_loss + w_p * policy_loss
    value_loss  = masked mean over (b, i, s) of Huber_delta(v[b, i, s] - target[b, i, s])
    policy_loss = sum_i masked mean over (b, s) of KL(pi_target[b, i, s] || pi[b, i, s])

where pi = softmax of the logits restricted to the legal actions. The value
mask is `value_mask & possible`; the policy mask of player i is
`policy_mask & possible` and a positive target mass on legal actions. Policy
targets are read on legal actions only and renormalised there (mass on
illegal actions is dropped), and each player's term is averaged over its own
masked slots (a player with none contributes 0).

Batch (a dict; B = batch, N = slots, A = actions):
    possible       bool    [B, 2, N]
    value_target   float32 [B, 2, N]     network units (`networks.encoding`)
    value_mask     bool    [B, 2, N]     False where there is no value target
    policy_target  float32 [B, 2, N, A]  a distribution over legal actions
    policy_mask    bool    [B, 2, N]     False where there is no policy target
    legal          bool    [B, 2, N, A]
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import optax

_NEG = -1e30  # logit of an illegal action: exp underflows to 0, stays finite


def masked_mean(x: jax.Array, mask: jax.Array, axis=None) -> jax.Array:
    """Mean of `x` over the True entries of `mask` (0 where there are none)."""
    mask = mask.astype(x.dtype)
    return jnp.sum(x * mask, axis=axis) / jnp.maximum(jnp.sum(mask, axis=axis), 1.0)


def legal_log_softmax(logits: jax.Array, legal: jax.Array) -> jax.Array:
    """log pi [..., A] of the softmax over legal actions; 0 at illegal entries."""
    logp = jax.nn.log_softmax(jnp.where(legal, logits, _NEG), axis=-1)
    return jnp.where(legal, logp, 0.0)


def cvpn_loss(values: jax.Array, logits: jax.Array, batch: dict, value_weight: float = 1.0,
              policy_weight: float = 1.0, huber_delta: float = 1.0) -> tuple[jax.Array, dict]:
    """(total loss, {"value_loss", "policy_loss"}) for network outputs values [B, 2, N] and
    logits [B, 2, N, A] against `batch` (see module doc); all scalars."""
    possible, legal = batch["possible"], batch["legal"]
    v_mask = batch["value_mask"] & possible
    huber = optax.losses.huber_loss(values, batch["value_target"], delta=huber_delta)
    value_loss = masked_mean(huber, v_mask)

    target = jnp.where(legal, batch["policy_target"], 0.0)
    mass = jnp.sum(target, axis=-1)
    p_mask = batch["policy_mask"] & possible & (mass > 0)
    target = target / jnp.where(mass > 0, mass, 1.0)[..., None]
    log_target = jnp.log(jnp.where(target > 0, target, 1.0))
    kl = jnp.sum(target * (log_target - legal_log_softmax(logits, legal)), axis=-1)
    policy_loss = jnp.sum(masked_mean(kl, p_mask, axis=(0, 2)))

    total = value_weight * value_loss + policy_weight * policy_loss
    return total, {"value_loss": value_loss, "policy_loss": policy_loss}
