"""Policies of n-player games as OpenSpiel keeps tabular ones.

A policy is a dict: information-state key (OpenSpiel's string) -> list of
(action, probability) pairs over the legal actions, the form
`pyspiel.TabularPolicy(...)` and `pyspiel.nash_conv(game, ...)` take.
`policy_table` turns one into a per-row array on a `WorldTree`; keys the
policy lacks are filled uniformly (`completed` does the same on the dict).
"""
from __future__ import annotations

import numpy as np

from sog.multiplayer.tree import WorldTree

Policy = dict   # str -> list[tuple[int, float]]


def rows_to_policy(tree: WorldTree, weights: np.ndarray) -> Policy:
    """The policy of per-row weights (float [R, A], column j = `tree.row_actions[r][j]`):
    each row normalised over its legal actions, uniform where its weights sum to zero."""
    out = {}
    for r, key in enumerate(tree.row_key):
        actions = tree.row_actions[r]
        w = np.maximum(weights[r, :len(actions)], 0.0)
        total = w.sum()
        probs = w / total if total > 0 else np.full(len(actions), 1.0 / len(actions))
        out[key] = [(int(a), float(q)) for a, q in zip(actions, probs)]
    return out


def policy_table(tree: WorldTree, policy: Policy) -> np.ndarray:
    """float [R, A]: `policy` on the tree's rows (column j = `row_actions[r][j]`); uniform for
    rows the policy does not cover. Raises ValueError if a covered row's actions differ."""
    table = np.zeros((tree.num_rows, tree.num_actions))
    for r, key in enumerate(tree.row_key):
        actions = tree.row_actions[r]
        if key not in policy:
            table[r, :len(actions)] = 1.0 / len(actions)
            continue
        probs = dict(policy[key])
        if set(probs) - set(actions):
            raise ValueError(f"policy at {key!r} has actions {sorted(probs)} outside {list(actions)}")
        table[r, :len(actions)] = [probs.get(a, 0.0) for a in actions]
    return table


def completed(tree: WorldTree, policy: Policy) -> Policy:
    """`policy` plus uniform play at the tree's information states it does not cover."""
    out = dict(policy)
    for r, key in enumerate(tree.row_key):
        if key not in out:
            actions = tree.row_actions[r]
            out[key] = [(int(a), 1.0 / len(actions)) for a in actions]
    return out
