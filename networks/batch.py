"""Training batches from examples stored in game units.

The replay buffer stores what the actors produce: the public state, both
ranges, counterfactual value targets in game units (cfv convention of
`sog.games.api`) and policy targets. `make_batch` turns B of them into the
arrays `learners.train_state` trains on (actors build them; the replay buffer stores them), converting values into network units
with `networks.encoding.to_network_units`, the exact inverse of the rescaling
`NetworkValueFunction` applies to the network's outputs.

`TRAIN_KEYS` are the keys the train step reads; a stored example also carries
metadata the diagnostics read (`actors.examples`): its public state's
`pub_key` and the weight version that produced it.
"""
from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from networks.encoding import encode, to_network_units, value_scales
from sog.games.api import DECISION, Game

TRAIN_KEYS = ("inputs", "possible", "value_target", "value_mask", "policy_target", "policy_mask", "legal")


def pub_key(game: Game, pub) -> int:
    """A stable int64 (>= 1) naming public state `pub`: 63 bits of blake2b of its repr (public
    states are tuples of plain values, so the repr is the same in every process and run);
    memoised per game. Diagnostics map keys back to public states (`learners.diagnostics`)."""
    def build() -> int:
        digest = hashlib.blake2b(repr(pub).encode(), digest_size=8).digest()
        return (int.from_bytes(digest, "little") >> 1) or 1
    return game.memo(("pub_key", pub), build)


def make_batch(game: Game, pubs: Sequence, ranges: np.ndarray, values: np.ndarray | None = None,
               value_mask: np.ndarray | None = None, policies: np.ndarray | None = None,
               policy_mask: np.ndarray | None = None) -> dict:
    """The training batch of B examples (numpy arrays, keys as in `networks.loss`, plus inputs).

    pubs: B public states; ranges: float [B, 2, N] (the belief each target belongs to).
    values: float [B, 2, N] counterfactual value targets in game units, or None.
    value_mask: bool [B, 2, N], False for entries without a value target (default: all
      True when `values` is given). Also masked: impossible slots and players whose
      opponent has zero total reach (their values carry no information).
    policies: float [B, 2, N, A] policy targets (distributions over legal actions), or None.
    policy_mask: bool [B, 2, N], False for slots without a policy target (default: every
      possible slot of the actor with a legal action, when `policies` is given).
    Legal actions: the actor's `legal_mask` at decision nodes, nothing for the other player.
    """
    spec = game.spec
    n, a = spec.num_states, spec.num_actions
    b = len(pubs)
    ranges = np.asarray(ranges, dtype=np.float64)
    inputs, possible = encode(game, pubs, ranges)
    legal = np.zeros((b, 2, n, a), dtype=bool)
    for k, pub in enumerate(pubs):
        if game.cached("kind", pub) == DECISION:
            actor = game.cached("actor", pub)
            legal[k, actor] = game.cached("legal_mask", pub) & possible[k, actor, :, None]

    if values is None:
        value_target, v_mask = np.zeros((b, 2, n), np.float32), np.zeros((b, 2, n), bool)
    else:
        value_target, v_mask = to_network_units(values, ranges, possible, value_scales(game, pubs))
        if value_mask is not None:
            v_mask &= value_mask
    if policies is None:
        policy_target, p_mask = np.zeros((b, 2, n, a), np.float32), np.zeros((b, 2, n), bool)
    else:
        policy_target = np.asarray(policies, dtype=np.float32)
        p_mask = legal.any(-1) if policy_mask is None else policy_mask & legal.any(-1)
    return {"inputs": inputs, "possible": possible, "value_target": value_target, "value_mask": v_mask,
            "policy_target": policy_target, "policy_mask": p_mask, "legal": legal}
