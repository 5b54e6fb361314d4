"""The learner's state, optimizer, learning-rate schedule and jitted train step (no Ray).

Learning rate: alpha_t = learning_rate * lr_decay_rate ** (t / lr_decay_steps),
t = learner steps taken (smooth, `optax.exponential_decay` with staircase off).
Optimizer: adam, or sgd with momentum 0.9 (`LearnerConfig.optimizer`).
Moving average (`LearnerConfig.ema_decay` = d > 0): after each step t -> t + 1,
ema <- d_t * ema + (1 - d_t) * params with d_t = min(d, (1 + t) / (10 + t)) (the
warm-up lets the average follow the fast early change); `served_params` is the
network the run plays with: the average when there is one, else the trained weights.

A batch is a dict of arrays (see `networks.loss` for the targets and
`networks.batch.make_batch` to build one from game-unit targets):
    inputs [B, 2N + F] float32, possible [B, 2, N] bool, value_target [B, 2, N],
    value_mask [B, 2, N], policy_target [B, 2, N, A], policy_mask [B, 2, N],
    legal [B, 2, N, A].
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import flax.linen as nn
import flax.struct
import jax
import jax.numpy as jnp
import optax

from networks.cvpn import init_params
from networks.loss import cvpn_loss
from sog.config import LearnerConfig, NetworkConfig
from sog.games.api import Game


@flax.struct.dataclass
class TrainState:
    """step: int32 scalar, learner steps taken; params: flax variables (the trained ones);
    opt_state: optax state; rng: uint32 [2] raw PRNG key data for the caller's sampling
    (checkpointed; `train_step` does not consume it); ema: the moving average of params
    (same tree), or None without one (`LearnerConfig.ema_decay` = 0)."""

    step: jax.Array
    params: Any
    opt_state: Any
    rng: jax.Array
    ema: Any = None


def served_params(state: TrainState) -> Any:
    """The weights the run plays and is evaluated with: the moving average, else params."""
    return state.params if state.ema is None else state.ema


def with_ema(state: TrainState, config: LearnerConfig) -> TrainState:
    """`state` with a moving average iff `config.ema_decay` > 0: a new one starts at the
    trained weights (a resume that turns the average on), an unwanted one is dropped."""
    if config.ema_decay > 0:
        return state if state.ema is not None else state.replace(ema=state.params)
    return state.replace(ema=None)


def learning_rate_schedule(config: LearnerConfig) -> optax.Schedule:
    """alpha_t = learning_rate * lr_decay_rate ** (t / lr_decay_steps)."""
    return optax.exponential_decay(init_value=config.learning_rate, transition_steps=config.lr_decay_steps,
                                   decay_rate=config.lr_decay_rate, staircase=False)


def make_optimizer(config: LearnerConfig) -> optax.GradientTransformation:
    """adam or sgd (momentum 0.9) over `learning_rate_schedule(config)`; others raise ValueError."""
    schedule = learning_rate_schedule(config)
    if config.optimizer == "adam":
        return optax.adam(schedule)
    if config.optimizer == "sgd":
        return optax.sgd(schedule, momentum=0.9)
    raise ValueError(f"unknown optimizer {config.optimizer!r}; choose adam or sgd")


def init_train_state(game: Game, network_config: NetworkConfig, learner_config: LearnerConfig,
                     seed: int) -> TrainState:
    """Step 0, fresh CVPN weights and optimizer state, all from `seed`."""
    params = init_params(game, network_config, seed)
    rng = jax.random.key_data(jax.random.fold_in(jax.random.key(seed), 1))
    state = TrainState(step=jnp.zeros((), jnp.int32), params=params,
                       opt_state=make_optimizer(learner_config).init(params), rng=rng)
    return with_ema(state, learner_config)


def make_train_step(model: nn.Module, config: LearnerConfig,
                    donate: bool = False) -> Callable[[TrainState, dict], tuple[TrainState, dict]]:
    """A jitted `train_step(state, batch) -> (state, metrics)`: one optimizer step on the loss
    of `networks.loss` with the config's weights. Metrics (float32 scalars): loss, value_loss,
    policy_loss, grad_norm, learning_rate (the rate used for this step). A state with a moving
    average (`with_ema`) has it updated with `config.ema_decay` (module doc). donate: the state
    passed in is donated (its buffers hold the new state: no copy of weights and optimizer
    state per step), so the caller must not use it afterwards."""
    tx = make_optimizer(config)
    schedule = learning_rate_schedule(config)

    def loss_fn(params, batch):
        values, logits = model.apply(params, batch["inputs"], batch["possible"])
        return cvpn_loss(values, logits, batch, value_weight=config.value_weight,
                         policy_weight=config.policy_weight, huber_delta=config.huber_delta)

    def train_step(state: TrainState, batch: dict) -> tuple[TrainState, dict]:
        (loss, parts), grads = jax.value_and_grad(loss_fn, has_aux=True)(state.params, batch)
        updates, opt_state = tx.update(grads, state.opt_state, state.params)
        params = optax.apply_updates(state.params, updates)
        ema = state.ema
        if ema is not None:
            t = state.step.astype(jnp.float32)
            decay = jnp.minimum(config.ema_decay, (1.0 + t) / (10.0 + t))
            ema = jax.tree.map(lambda e, p: decay * e + (1.0 - decay) * p, ema, params)
        metrics = {**parts, "loss": loss, "grad_norm": optax.tree.norm(grads),
                   "learning_rate": jnp.asarray(schedule(state.step), jnp.float32)}
        return state.replace(step=state.step + 1, params=params, opt_state=opt_state, ema=ema), metrics

    return jax.jit(train_step, donate_argnums=0 if donate else ())
