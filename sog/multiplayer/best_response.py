"""Exact n-player best responses and NashConv over the full world-state tree.

`Evaluator(game, max_nodes)` expands the whole tree once (`WorldTree.expand_all`: TreeTooLargeError
past max_nodes) and keeps
it as arrays over its N nodes, processed a depth at a time (no Python loop
over nodes):

  kids     int [N, K]   child ids (-1 past a node's legal actions; K = most children)
  utility  float [N, n] returns at terminals (0 elsewhere)

For a policy (a dict as in `sog.multiplayer.policy`, uniform where it has no
entry) it computes, all in chips:

* `values(policy)`: float [n], each player's expected return when everyone
  plays the policy (bottom-up expectation over chance and every player's
  action probabilities).
* `best_response_values(policy)`: float [n], for each player i the value of
  its best response to the others' fixed policies: top-down, the reach of
  every history through chance and the other players; bottom-up, at i's
  information set I the action maximising sum_{h in I} reach_-i(h) v(h, a)
  (with perfect recall all of I's histories lie at one depth, checked), and
  v(h) = v(h, a*(I)).
* `nash_conv(policy)`: sum_i (best-response value_i - value_i).
"""
from __future__ import annotations

import numpy as np

from sog.multiplayer.api import CHANCE, TERMINAL, Game
from sog.multiplayer.policy import Policy, policy_table
from sog.multiplayer.tree import InconsistentGameError, WorldTree


class Evaluator:
    """Exact policy values, best responses and NashConv on `game`'s full tree."""

    def __init__(self, game: Game, max_nodes: int | None = None):
        tree = self.tree = WorldTree(game).expand_all(max_nodes)
        self.num_players = n = game.num_players
        self.player = np.array(tree.player)
        self.row = np.array(tree.row)
        count = np.array([len(a) for a in tree.actions])
        k = int(count.max())
        cols = np.arange(k)
        valid = cols < count[:, None]
        self.kids = np.where(valid, np.array(tree.first)[:, None] + cols, -1)
        self._safe_kids = np.maximum(self.kids, 0)
        self.chance_probs = np.zeros((tree.num_nodes, k))
        for node in np.flatnonzero(self.player == CHANCE):
            cum = tree.cum[node]
            self.chance_probs[node, :len(cum)] = np.diff(cum, prepend=0.0)
        self.utility = np.zeros((tree.num_nodes, n))
        term = np.flatnonzero(self.player == TERMINAL)
        self.utility[term] = [tree.utility[t] for t in term]
        depth = np.array(tree.depth)
        order = np.argsort(depth, kind="stable")
        bounds = np.flatnonzero(np.diff(depth[order])) + 1
        # non-terminal nodes per depth, root first
        self.levels = [lv[self.player[lv] != TERMINAL] for lv in np.split(order, bounds)]
        dec = self.row >= 0
        lo = np.full(tree.num_rows, depth.max() + 1)
        hi = np.full(tree.num_rows, -1)
        np.minimum.at(lo, self.row[dec], depth[dec])
        np.maximum.at(hi, self.row[dec], depth[dec])
        if np.any(lo != hi):
            raise InconsistentGameError("an information set spans several depths")

    @property
    def num_nodes(self) -> int:
        return len(self.player)

    def step_probs(self, policy: Policy) -> np.ndarray:
        """float [N, K]: the probability of each child given its parent (chance or policy)."""
        table = policy_table(self.tree, policy)
        probs = self.chance_probs.copy()
        dec = np.flatnonzero(self.row >= 0)
        k = min(table.shape[1], probs.shape[1])
        probs[dec, :k] = table[self.row[dec], :k]
        return probs

    def values(self, policy: Policy, probs: np.ndarray | None = None) -> np.ndarray:
        """float [n]: expected returns at the root when every player plays `policy`."""
        probs = self.step_probs(policy) if probs is None else probs
        v = self.utility.copy()
        for nodes in reversed(self.levels):
            v[nodes] = np.einsum("mk,mkn->mn", probs[nodes], v[self._safe_kids[nodes]])
        return v[0]

    def best_response_value(self, policy: Policy, player: int, probs: np.ndarray | None = None) -> float:
        """The value of `player`'s best response to the others playing `policy` (chips)."""
        probs = self.step_probs(policy) if probs is None else probs
        reach = np.zeros(self.num_nodes)
        reach[0] = 1.0
        for nodes in self.levels:
            step = np.where((self.player[nodes] == player)[:, None], 1.0, probs[nodes])
            ok = self.kids[nodes] >= 0
            reach[self.kids[nodes][ok]] = (reach[nodes][:, None] * step)[ok]
        v = self.utility[:, player].copy()
        for nodes in reversed(self.levels):
            kids, safe = self.kids[nodes], self._safe_kids[nodes]
            child_v = v[safe]
            mine = self.player[nodes] == player
            others = nodes[~mine]
            v[others] = (probs[others] * child_v[~mine]).sum(axis=1)
            if mine.any():
                rows = self.row[nodes[mine]]
                q = np.zeros((self.tree.num_rows, kids.shape[1]))
                np.add.at(q, rows, reach[nodes[mine]][:, None] * child_v[mine])
                q = np.where(kids[mine] >= 0, q[rows], -np.inf)     # per history, its set's q
                best = np.argmax(q, axis=1)
                v[nodes[mine]] = child_v[mine][np.arange(len(best)), best]
        return float(v[0])

    def best_response_values(self, policy: Policy) -> np.ndarray:
        """float [n]: each player's best-response value against the others' `policy`."""
        probs = self.step_probs(policy)
        return np.array([self.best_response_value(policy, p, probs) for p in range(self.num_players)])

    def improvements(self, policy: Policy) -> np.ndarray:
        """float [n]: what each player gains by deviating to a best response."""
        probs = self.step_probs(policy)
        br = np.array([self.best_response_value(policy, p, probs) for p in range(self.num_players)])
        return br - self.values(policy, probs)

    def nash_conv(self, policy: Policy) -> float:
        """sum over players of `improvements(policy)` (chips)."""
        return float(self.improvements(policy).sum())
