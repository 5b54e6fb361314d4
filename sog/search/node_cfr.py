"""CFR+ passes straight on a growing `PublicTree`'s node-indexed arrays: GT-CFR's regret
update phase, with no compilation.

`sog.search.cfr` renumbers a tree by depth and precomputes per-depth index arrays
(`compile_tree`, `Levels`) so that a pass is a few numpy calls per depth. GT-CFR's
tree grows after every simulation, and on Leduc SoG(100, 1) rebuilding those arrays
every iteration cost more than the CFR passes themselves (issue 24). Here the passes
are numba loops over the tree's own arrays, indexed by node id:

* down: node ids are a topological order (a child is appended after its parent), so
  reach flows down in one loop over the edge table (`PublicTree`'s `e_*` columns,
  contiguous per child, in node order);
* up: parents in decreasing id order, each summing its children's values in
  increasing id order.

Every sum adds the same terms in the same order, starting from 0.0, as the
`np.bincount`s of `sog.search.cfr` do, so the results are bit-identical to
`CFRSolver`'s CFR+ (`tests/test_search_golden.py`).

Shapes: n = tree nodes, N = slots, A = actions, m = edges; regrets, averages,
policies and action values are dense node-indexed [>= n, N, A] arrays, nonzero only
at the *entries*: (slot, action) pairs legal and present at internal decision nodes.
"""
from __future__ import annotations

import numba
import numpy as np

from sog.games.api import DECISION, TERMINAL
from sog.search.tree import PublicTree


class TreeView:
    """The index arrays of a `PublicTree` snapshot that the passes read (rebuilt when the tree's
    `version` changes, in a few numpy calls).

    n: nodes; kind, actor int8 [n]; parent int [n]; possible bool [n, 2, N]
    entry: bool [n, N, A], legal and present at internal decision nodes
    child_start int [n + 1], child_ids int [n - 1]: the children of node p are
      child_ids[child_start[p]:child_start[p + 1]], increasing
    edge_start int [n + 1]: the edges into node c are [edge_start[c], edge_start[c + 1])
    e_player, e_src, e_dst, e_action int [m]: the edge table
    prob float [n]: the chance probability of the edge into each node (1 below decision nodes)
    decision: int [k] internal decision nodes, increasing
    frontier: int [F] non-terminal leaves by (depth, id): the value function's batch order
    terminals: int [T] terminal nodes, increasing
    """

    def __init__(self, tree: PublicTree):
        n, m = tree.size, tree.num_edges
        self.n, self.version = n, tree.version
        self.kind, self.actor, self.parent = tree.kind[:n], tree.actor[:n], tree.parent[:n]
        self.possible = tree.possible[:n]
        order = np.argsort(self.parent, kind="stable")
        self.child_ids = order[1:] if n else order   # node 0, the root, sorts first (parent -1)
        self.child_start = np.searchsorted(self.parent[order], np.arange(n + 1)) - 1
        internal = np.diff(self.child_start) > 0
        self.decision = np.flatnonzero(internal & (self.kind == DECISION))
        self.entry = tree.legal[:n] & tree.present[:n] & (internal & (self.kind == DECISION))[:, None, None]
        e_child = tree.e_child[:m]
        self.edge_start = np.searchsorted(e_child, np.arange(n + 1))
        self.e_player, self.e_src, self.e_dst = tree.e_player[:m], tree.e_src[:m], tree.e_dst[:m]
        self.e_action, self.prob = tree.e_action[:m], tree.prob[:n]
        leaf = ~internal
        frontier = np.flatnonzero(leaf & (self.kind != TERMINAL))
        self.frontier = frontier[np.argsort(tree.depth[frontier], kind="stable")]
        self.terminals = np.flatnonzero(self.kind == TERMINAL)
        if list(tree.roots) != [0]:
            raise ValueError(f"node CFR passes need a tree with one root, node 0 (roots {tree.roots})")


@numba.njit(cache=True)
def current_policy(decision, entry, regrets, sigma):
    """Regret matching+ at the entries: sigma[p, s, a] = max(r, 0) / sum over the slot's entries
    (uniform over them where no regret is positive), for p in `decision`; in place on sigma
    (float [>= n, N, A], only the entries written)."""
    N, A = entry.shape[1], entry.shape[2]
    for p in decision:
        for s in range(N):
            total, count = 0.0, 0
            for a in range(A):
                if entry[p, s, a]:
                    total += max(regrets[p, s, a], 0.0)
                    count += 1
            for a in range(A):
                if entry[p, s, a]:
                    if total > 0:
                        sigma[p, s, a] = max(regrets[p, s, a], 0.0) / total
                    else:
                        sigma[p, s, a] = 1.0 / count


@numba.njit(cache=True)
def propagate_ranges(root_ranges, possible, parent, edge_start, e_player, e_src, e_dst, e_action,
                     sigma, ranges):
    """ranges [>= n, 2, N] (zeroed here): the root's (node 0) are root_ranges [2, N] at its possible
    slots; every other node's slot sums its edges' parent reach times sigma (actor edges) or 1."""
    n = len(parent)
    ranges[:n] = 0.0
    for i in range(2):
        for s in range(possible.shape[2]):
            ranges[0, i, s] = root_ranges[i, s] * possible[0, i, s]
    for c in range(1, n):
        p = parent[c]
        for e in range(edge_start[c], edge_start[c + 1]):
            i, d = e_player[e], e_dst[e]
            if possible[c, i, d]:
                a = e_action[e]
                w = sigma[p, e_src[e], a] if a >= 0 else 1.0
                ranges[c, i, d] += ranges[p, i, e_src[e]] * w


@numba.njit(cache=True)
def terminal_values(terminals, payoffs, possible, ranges, values):
    """Both players' values at the terminals (int [T]; payoffs float [T, N, N], player 0's): player
    0's from player 1's ranges, player 1's from player 0's, over nonzero payoffs between possible
    slots; written into values [>= n, 2, N]."""
    N = possible.shape[2]
    for k in range(len(terminals)):
        t = terminals[k]
        for i in range(N):
            acc = 0.0
            if possible[t, 0, i]:
                for j in range(N):
                    if payoffs[k, i, j] != 0 and possible[t, 1, j]:
                        acc += payoffs[k, i, j] * ranges[t, 1, j]
            values[t, 0, i] = acc
        for j in range(N):
            acc = 0.0
            if possible[t, 1, j]:
                for i in range(N):
                    if payoffs[k, i, j] != 0 and possible[t, 0, i]:
                        acc += -payoffs[k, i, j] * ranges[t, 0, i]
            values[t, 1, j] = acc


@numba.njit(cache=True)
def propagate_values(actor, child_start, child_ids, edge_start, e_player, e_src, e_dst, e_action, prob,
                     entry, sigma, values, q):
    """Counterfactual values up, in place on values [>= n, 2, N] (leaves set, internal nodes zero),
    and the actor's action values q [>= n, N, A] at the entries (zeroed here at internal decision
    nodes); the actor's value at a slot is sum_a sigma q."""
    n = len(actor)
    N, A = entry.shape[1], entry.shape[2]
    for p in range(n - 1, -1, -1):
        lo, hi = child_start[p], child_start[p + 1]
        if lo == hi:
            continue
        i = actor[p]
        if i >= 0:
            q[p] = 0.0
        for k in range(lo, hi):
            c = child_ids[k]
            for e in range(edge_start[c], edge_start[c + 1]):
                a = e_action[e]
                if a >= 0:
                    q[p, e_src[e], a] += values[c, i, e_dst[e]]
                else:
                    values[p, e_player[e], e_src[e]] += values[c, e_player[e], e_dst[e]] * prob[c]
        if i >= 0:
            for s in range(N):
                v, any_entry = 0.0, False
                for a in range(A):
                    if entry[p, s, a]:
                        v += sigma[p, s, a] * q[p, s, a]
                        any_entry = True
                if any_entry:
                    values[p, i, s] = v


@numba.njit(cache=True)
def update_regrets(decision, actor, players, t, entry, sigma, q, values, ranges, regrets, avg):
    """CFR+ at the entries of the decision nodes whose actor is in `players` (bool [2]): regrets
    max(r + q - v, 0), averages + t * reach * sigma (linear averaging); in place."""
    N, A = entry.shape[1], entry.shape[2]
    for p in decision:
        i = actor[p]
        if not players[i]:
            continue
        for s in range(N):
            for a in range(A):
                if entry[p, s, a]:
                    regrets[p, s, a] = max(regrets[p, s, a] + (q[p, s, a] - values[p, i, s]), 0.0)
                    avg[p, s, a] = avg[p, s, a] + t * ranges[p, i, s] * sigma[p, s, a]
