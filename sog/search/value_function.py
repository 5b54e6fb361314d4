"""The value-function protocol of search: values and priors of public belief states.

A public belief state is a public state with both players' ranges over its
slots (`sog.games.api`). GT-CFR asks a `ValueFunction` for the counterfactual
values of the public belief states at its frontier and for the prior policy it
expands and explores by; the exact oracle (`sog.search.oracle`), the CVPN
(`networks.value_function`), the inference server's client
(`actors.inference`) and the query merger (`actors.merging`) all answer it.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np


class ValueFunction(Protocol):
    """Values and prior-policy logits of public belief states, batched.

    evaluate(pubs, ranges) -> (values, logits), with B = len(pubs), N =
    `spec.num_states` slots and A = `spec.num_actions` actions of the game:

      pubs    B public states of the game.
      ranges  float [B, 2, N]: ranges[b, i, s] is player i's reach of slot s
              at pubs[b] (`sog.games.api`'s ranges: own action probabilities
              times i's private chance probabilities).
      values  float64 [B, 2, N]: values[b, i, s] is player i's counterfactual
              value of slot s (opponent and chance reach included, own reach
              excluded), in units of the game's utility; slots not possible at
              pubs[b] are ignored by callers.
      logits  float64 [B, 2, N, A]: logits[b, i, s] are player i's prior-policy
              logits over the actions in slot s (prior = softmax(logits / T)
              over the legal actions; only the actor's are used, entries of
              illegal actions are ignored by callers).

    An empty batch gives arrays whose first dimension is 0.
    """

    def evaluate(self, pubs: Sequence, ranges: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...
