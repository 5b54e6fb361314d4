"""Tabular policies: what solvers produce and what exploitability measures.

A `TabularPolicy` maps a decision public state to a float [N, A] array: the
actor's action distribution for each of its slots (rows of impossible slots
and illegal columns are ignored). Public states it does not list are played
uniformly over the legal actions. An information state is (public state,
actor slot), so a tabular policy is exactly a policy over information states.
"""
from __future__ import annotations

from collections.abc import Hashable

import numpy as np

from sog.errors import SogError
from sog.games.api import Game


class PolicyError(SogError, ValueError):
    """A policy that is malformed for its game (missing, illegal or bad entries)."""


class TabularPolicy:
    """table: {decision public state: float [N, A] action probabilities per actor slot}."""

    def __init__(self, game: Game, table: dict[Hashable, np.ndarray] | None = None):
        self.game = game
        self.table = {} if table is None else table

    def probs(self, pub) -> np.ndarray:
        """float [N, A]: normalised over legal actions; uniform where unspecified."""
        legal = self.game.cached("legal_mask", pub).astype(np.float64)
        raw = self.table.get(pub)
        p = legal if raw is None else np.asarray(raw, dtype=np.float64) * legal
        total = p.sum(axis=1, keepdims=True)
        uniform = legal / np.maximum(legal.sum(axis=1, keepdims=True), 1)
        return np.where(total > 0, p / np.where(total > 0, total, 1), uniform)

    def action_probs(self, pub, slot: int) -> np.ndarray:
        """float [A] for one information state (pub, slot)."""
        return self.probs(pub)[slot]

    def __setitem__(self, pub, probs: np.ndarray) -> None:
        self.table[pub] = np.asarray(probs, dtype=np.float64)

    def __contains__(self, pub) -> bool:
        return pub in self.table
