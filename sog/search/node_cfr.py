"""CFR+ passes straight on a growing `PublicTree`'s node-indexed arrays: GT-CFR's regret
update phase, with no compilation.

`sog.search.cfr` renumbers a tree by depth and precomputes per-depth index arrays
(`compile_tree`, `Levels`) so that a pass is a few numpy calls per depth. GT-CFR's
tree grows after every simulation, and on Leduc SoG(100, 1) rebuilding those arrays
every iteration cost more than the CFR passes themselves. Here the passes
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
from sog.search.expansion import pairwise_sum
from sog.search.tree import PublicTree


class TreeView:
    """The arrays of a `PublicTree` snapshot that the passes read: the tree's own arrays cut to
    its n nodes and m edges (no copies), and the leaves (one numba loop, `_leaves`); made again
    when the tree's `version` changes.

    A forest's trees (`PublicTree.roots`; a batch of searches) are passed over together: their
    nodes never meet, and each node's arithmetic is the same as in its tree alone.

    n: nodes; roots int [R]; tree_of int [n]: each node's tree (`PublicTree.tree_of`)
    kind, actor int8 [n]; parent int [n]; possible bool [n, 2, N]
    legal, present: bool [n, N, A]; the *entries* are their conjunction (present is only set
      below decision nodes, for the (slot, action) pairs whose child is in the tree)
    first_child, next_sibling int [n]: the children of a node in increasing id order, -1 ends
    edge_start int [n + 1]: the edges into node c are [edge_start[c], edge_start[c + 1])
    e_player, e_src, e_dst, e_action int [m]: the edge table
    prob float [n]: the chance probability of the edge into each node (1 below decision nodes)
    frontier: int [F] non-terminal leaves by (depth, id): the value function's batch order (a
      tree's own frontier in its own order, interleaved with the others')
    terminals: int [T] terminal nodes, increasing
    """

    def __init__(self, tree: PublicTree):
        n, m = tree.size, tree.num_edges
        self.n, self.version = n, tree.version
        self.roots, self.tree_of = np.array(tree.roots, dtype=np.int64), tree.tree_of[:n]
        self.kind, self.actor, self.parent = tree.kind[:n], tree.actor[:n], tree.parent[:n]
        self.possible, self.legal, self.present = tree.possible[:n], tree.legal[:n], tree.present[:n]
        self.first_child, self.next_sibling = tree.first_child[:n], tree.next_sibling[:n]
        self.edge_start = tree.edge_start[:n + 1]
        self.e_player, self.e_src, self.e_dst = tree.e_player[:m], tree.e_src[:m], tree.e_dst[:m]
        self.e_action, self.prob = tree.e_action[:m], tree.prob[:n]
        self.frontier, self.terminals = _leaves(self.kind, tree.depth[:n], self.first_child)


@numba.njit(cache=True)
def _leaves(kind, depth, first_child):
    """(frontier int [F]: the non-terminal leaves by (depth, id), terminals int [T]: increasing)."""
    n = len(kind)
    frontier_count, terminal_count, deepest = 0, 0, 0
    for v in range(n):
        if kind[v] == TERMINAL:
            terminal_count += 1
        elif first_child[v] < 0:
            frontier_count += 1
            deepest = max(deepest, depth[v])
    at_depth = np.zeros(deepest + 2, dtype=np.int64)    # counting sort by depth, stable in id
    for v in range(n):
        if kind[v] != TERMINAL and first_child[v] < 0:
            at_depth[depth[v] + 1] += 1
    for d in range(deepest + 1):
        at_depth[d + 1] += at_depth[d]
    frontier = np.empty(frontier_count, dtype=np.int64)
    terminals = np.empty(terminal_count, dtype=np.int64)
    k = 0
    for v in range(n):
        if kind[v] == TERMINAL:
            terminals[k] = v
            k += 1
        elif first_child[v] < 0:
            frontier[at_depth[depth[v]]] = v
            at_depth[depth[v]] += 1
    return frontier, terminals


@numba.njit(cache=True)
def current_policy(kind, legal, present, regrets, sigma):
    """Regret matching+ at the entries: sigma[p, s, a] = max(r, 0) / sum over the slot's entries
    (uniform over them where no regret is positive), at the decision nodes; in place on sigma
    (float [>= n, N, A], only the entries written)."""
    N, A = legal.shape[1], legal.shape[2]
    for p in range(len(kind)):
        if kind[p] != DECISION:
            continue
        for s in range(N):
            total, count = 0.0, 0
            for a in range(A):
                if legal[p, s, a] and present[p, s, a]:
                    total += max(regrets[p, s, a], 0.0)
                    count += 1
            for a in range(A):
                if legal[p, s, a] and present[p, s, a]:
                    if total > 0:
                        sigma[p, s, a] = max(regrets[p, s, a], 0.0) / total
                    else:
                        sigma[p, s, a] = 1.0 / count


@numba.njit(cache=True)
def matched_policies(nodes, leaf, weights, legal, present, out):
    """out[k] float [N, A]: regret matching+ of weights (float [>= n, N, A]: regrets or average-policy
    sums) at node nodes[k] (int [K]) over each slot's mask: its entries (legal and present), or at a
    `leaf` (bool [K]: the node's children are not in the tree) its legal actions; positive weights
    normalised, uniform over the mask where none is positive, zero off it. The sums are numpy's
    (`expansion.pairwise_sum`), so the bits are `sog.search.cfr.regret_matching`'s."""
    N, A = legal.shape[1], legal.shape[2]
    pos = np.empty(A)
    for k in range(len(nodes)):
        v = nodes[k]
        for s in range(N):
            count = 0
            for a in range(A):
                on = legal[v, s, a] and (leaf[k] or present[v, s, a])
                pos[a] = max(weights[v, s, a], 0.0) if on else 0.0
                count += on
            total = pairwise_sum(pos, 0, A)
            for a in range(A):
                on = legal[v, s, a] and (leaf[k] or present[v, s, a])
                out[k, s, a] = pos[a] / total if total > 0 else on / max(count, 1)


@numba.njit(cache=True)
def propagate_ranges(roots, root_ranges, possible, parent, edge_start, e_player, e_src, e_dst, e_action,
                     sigma, ranges):
    """ranges [>= n, 2, N] (zeroed here): root roots[k]'s (int [R]) are root_ranges[k] (float
    [R, 2, N]) at its possible slots; every other node's slot sums its edges' parent reach times
    sigma (actor edges) or 1."""
    n = len(parent)
    ranges[:n] = 0.0
    for k in range(len(roots)):
        r = roots[k]
        for i in range(2):
            for s in range(possible.shape[2]):
                ranges[r, i, s] = root_ranges[k, i, s] * possible[r, i, s]
    for c in range(n):
        p = parent[c]
        if p < 0:
            continue
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
def propagate_values(actor, first_child, next_sibling, edge_start, e_player, e_src, e_dst, e_action, prob,
                     legal, present, sigma, values, q, best_response=False):
    """Counterfactual values up, in place on values [>= n, 2, N] (leaves set, internal nodes zero),
    and the actor's action values q [>= n, N, A] at the entries (zeroed here at internal decision
    nodes); the actor's value at a slot is sum_a sigma q, or with `best_response` max_a q (each
    player's best response to the other's policy, whose reach the ranges below carry)."""
    n = len(actor)
    N, A = legal.shape[1], legal.shape[2]
    for p in range(n - 1, -1, -1):
        if first_child[p] < 0:
            continue
        i = actor[p]
        if i >= 0:
            q[p] = 0.0
        c = first_child[p]
        while c >= 0:
            for e in range(edge_start[c], edge_start[c + 1]):
                a = e_action[e]
                if a >= 0:
                    q[p, e_src[e], a] += values[c, i, e_dst[e]]
                else:
                    values[p, e_player[e], e_src[e]] += values[c, e_player[e], e_dst[e]] * prob[c]
            c = next_sibling[c]
        if i >= 0:
            for s in range(N):
                v, any_entry = 0.0, False
                for a in range(A):
                    if legal[p, s, a] and present[p, s, a]:
                        if not best_response:
                            v += sigma[p, s, a] * q[p, s, a]
                        elif not any_entry or q[p, s, a] > v:
                            v = q[p, s, a]
                        any_entry = True
                if any_entry:
                    values[p, i, s] = v


@numba.njit(cache=True)
def update_regrets(kind, actor, players, t, legal, present, sigma, q, values, ranges, regrets, avg):
    """CFR+ at the entries of the decision nodes whose actor is in `players` (bool [2]): regrets
    max(r + q - v, 0), averages + t * reach * sigma (linear averaging); in place."""
    N, A = legal.shape[1], legal.shape[2]
    for p in range(len(kind)):
        if kind[p] != DECISION or not players[actor[p]]:
            continue
        i = actor[p]
        for s in range(N):
            for a in range(A):
                if legal[p, s, a] and present[p, s, a]:
                    regrets[p, s, a] = max(regrets[p, s, a] + (q[p, s, a] - values[p, i, s]), 0.0)
                    avg[p, s, a] = avg[p, s, a] + t * ranges[p, i, s] * sigma[p, s, a]


@numba.njit(cache=True)
def down_pass(roots, root_ranges, kind, possible, parent, edge_start, e_player, e_src, e_dst, e_action, legal,
              present, regrets, sigma, ranges, terminals, payoffs, values):
    """A pass's work before its frontier values: the current policy (`current_policy`), the
    ranges (`propagate_ranges`), values [>= n, 2, N] zeroed over the n nodes and the terminals'
    values from their payoff matrices (`terminal_values`; payoffs float [T, N, N], or [0, N, N]
    for a game without dense payoffs: its terminals are left zero)."""
    current_policy(kind, legal, present, regrets, sigma)
    propagate_ranges(roots, root_ranges, possible, parent, edge_start, e_player, e_src, e_dst, e_action, sigma,
                     ranges)
    values[:len(kind)] = 0.0
    if len(payoffs):
        terminal_values(terminals, payoffs, possible, ranges, values)


@numba.njit(cache=True)
def up_pass(frontier, leaf_values, kind, actor, first_child, next_sibling, edge_start, e_player, e_src, e_dst,
            e_action, prob, possible, legal, present, sigma, players, t, last, ranges, values, q, regrets, avg,
            own, value_sum, value_weight):
    """A pass's work after its frontier values (leaf_values float [F, 2, N], in `frontier`'s
    order): frontier rows of values set (masked to the possible slots), values and q up
    (`propagate_values`), CFR+ for `players` (`update_regrets`), their rows of values copied into
    `own` [>= n, 2, N]; on the iteration's `last` pass, value_sum += t * own and value_weight += t
    over the n nodes (the iteration-averaged values' sums)."""
    for k in range(len(frontier)):
        v = frontier[k]
        for i in range(2):
            for s in range(possible.shape[2]):
                values[v, i, s] = leaf_values[k, i, s] * possible[v, i, s]
    propagate_values(actor, first_child, next_sibling, edge_start, e_player, e_src, e_dst, e_action, prob, legal,
                     present, sigma, values, q)
    update_regrets(kind, actor, players, t, legal, present, sigma, q, values, ranges, regrets, avg)
    n = len(kind)
    for i in range(2):
        if players[i]:
            own[:n, i] = values[:n, i]
    if last:
        for v in range(n):
            for i in range(2):
                for s in range(own.shape[2]):
                    value_sum[v, i, s] += t * own[v, i, s]
            value_weight[v] += t
