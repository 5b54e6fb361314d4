"""Policies of n-player games as OpenSpiel keeps tabular ones.

A policy is a dict: information-state key (OpenSpiel's string) -> list of
(action, probability) pairs over the legal actions, the form
`pyspiel.TabularPolicy(...)` and `pyspiel.nash_conv(game, ...)` take.
`policy_table` turns one into a per-row array on a `WorldTree`; keys the
policy lacks are filled uniformly (`completed` does the same on the dict).

`save_policy(game, policy, path)` writes one as the two-player policy files
(`sog.policy.files`: format "sog-tabular-policy/1", information-state string ->
{action id: probability}), the game named by its OpenSpiel game string
(`openspiel_game_string`: `kuhn_poker(players=3)`, `universal_poker(numPlayers=3,...)`), and
under "openspiel" its name and typed parameters: `pyspiel.load_game(name, params)` is the game
(OpenSpiel's string parser reads universal_poker's one-number lists such as firstPlayer=1 as
integers and refuses them), whose tabular policy the keys fill.
"""
from __future__ import annotations

import json
import os

import numpy as np

from sog.files import atomic_write
from sog.multiplayer.api import Game
from sog.multiplayer.tree import WorldTree

FORMAT = "sog-tabular-policy/1"

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


def openspiel_game_string(game: Game) -> str:
    """The string `pyspiel.load_game` takes for the same game, e.g. 'leduc_poker(players=3)'."""
    params = ",".join(f"{k}={v}" for k, v in sorted(game.openspiel_params().items()))
    return f"{game.name}({params})"


def save_policy(game: Game, policy: Policy, path: str | os.PathLike) -> None:
    """Write `policy` (its information states; OpenSpiel plays any other uniformly) atomically."""
    data = {"format": FORMAT, "game": openspiel_game_string(game), "players": game.num_players,
            "openspiel": {"name": game.name, "params": game.openspiel_params()},
            "policy": {key: {str(a): q for a, q in row} for key, row in policy.items()}}
    atomic_write(path, lambda f: json.dump(data, f), mode="w")
