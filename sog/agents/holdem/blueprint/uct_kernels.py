"""Numba kernel of sampled-deal self-play UCT / Smooth UCT on the abstract betting tree.

Algorithm 1 of Heinrich and Silver 2015 (`sog.agents.sampling.uct` is the same algorithm on a game's
public states), one simulation per sampled deal, walking the two-player abstract betting tree
(`sog.games.holdem.betting_tree.BettingTree`, arrays passed one by one). A player's
information state is (decision d, its code on the node's round: `codes` int64 [2, R]), row
`base[d] + code` of the dense tables:

  visits  int64   [S]     N(u)
  counts  int64   [S, K]  N(u, a), column j = action slot j of the row's node
  q       float64 [S, K]  Q(u, a), mean return of the row's owner (big blinds)

A row is in its owner's tree once N(u) > 0. At a decision of player i: if i has left its
tree in this simulation, a uniformly random slot (rollout); else if i's row is not in the
tree it is added (the row is updated at the end, as every visited row), the slot is uniform
and i is out of tree; else SELECT. SELECT: UCB1, untried slots first (uniformly among them),
else argmax Q + c sqrt(log N(u) / N(u, a)) (ties, within 1e-12, uniformly); Smooth UCB
(`smooth`): with probability eta_k = max(gamma, eta / (1 + d sqrt(N(u)))) UCB1, else a slot
drawn from the average policy N(u, a) / N(u). c is `explore[n]` (float64 [M], big blinds): the
paper's schedule (3), fixed at the start of each betting round (`sog.agents.holdem.blueprint.sampled_uct`).
UPDATE at the terminal, for every in-tree row visited: N(u) += 1, N(u, a) += 1,
Q(u, a) += (r_i - Q(u, a)) / N(u, a), r_i the owner's payoff (`sampled_kernels.terminal_utility`).

Randomness: each simulation gets a uint64 seed; its uniforms are drawn in path order from
splitmix64 (`sampled_kernels.uniform01`): one per rollout or expansion, one for untried
(when more than one) or tied (when more than one) UCB slots, and with Smooth UCB one for the
mixing choice and one for an average-policy draw. A plain-Python walk in the same order
reproduces the tables exactly (tests/test_sampled_uct.py).

`stats` int64 [1]: rows in the trees.
"""
from __future__ import annotations

import numba
import numpy as np

from sog.agents.holdem.blueprint.sampled_kernels import terminal_utility, uniform01
from sog.games.api import CHANCE, TERMINAL

TIE = 1e-12


@numba.njit(cache=True, inline="always")
def _pick(u, k):
    """An index below k from a uniform u."""
    return min(int(u * k), k - 1)


@numba.njit(cache=True)
def _ucb(visits, counts, q, row, a, c, rng):
    """UCB1's slot of row `row` (a slots): untried first, else the best upper bound."""
    untried = 0
    for j in range(a):
        if counts[row, j] == 0:
            untried += 1
    if untried:
        k = 0 if untried == 1 else _pick(uniform01(rng), untried)
        for j in range(a):
            if counts[row, j] == 0:
                if k == 0:
                    return j
                k -= 1
    cl = c * np.sqrt(np.log(visits[row]))
    top = -np.inf
    for j in range(a):
        top = max(top, q[row, j] + cl / np.sqrt(counts[row, j]))
    best = 0
    for j in range(a):
        if q[row, j] + cl / np.sqrt(counts[row, j]) >= top - TIE:
            best += 1
    k = 0 if best == 1 else _pick(uniform01(rng), best)
    for j in range(a):
        if q[row, j] + cl / np.sqrt(counts[row, j]) >= top - TIE:
            if k == 0:
                return j
            k -= 1
    return a - 1


@numba.njit(cache=True)
def _select(visits, counts, q, row, a, c, smooth, gamma, eta, d, rng):
    """SELECT(u): UCB1, or Smooth UCB mixing in the average policy (see the module doc)."""
    if smooth:
        eta_k = max(gamma, eta / (1.0 + d * np.sqrt(visits[row])))
        if uniform01(rng) >= eta_k:
            x = uniform01(rng) * visits[row]
            acc = 0.0
            for j in range(a):
                acc += counts[row, j]
                if x < acc:
                    return j
            return a - 1
    return _ucb(visits, counts, q, row, a, c, rng)


@numba.njit(cache=True)
def _simulate(kind, actor, rnd, num_actions, child, decision, spent, folded, explore, base, codes, ranks,
              visits, counts, q, smooth, gamma, eta, d, rng, path, out, stats):
    """One simulation of a deal (codes int64 [2, R], ranks int64 [2]); path int64 [depth, 3] and
    out bool [2] are scratch."""
    out[0] = out[1] = False
    steps, n = 0, 0
    while kind[n] != TERMINAL:
        if kind[n] == CHANCE:
            n = child[n, 0]
            continue
        p, a = actor[n], num_actions[n]
        if out[p]:
            j = _pick(uniform01(rng), a)
        else:
            row = base[decision[n]] + codes[p, rnd[n]]
            if visits[row] == 0:
                out[p] = True
                stats[0] += 1
                j = _pick(uniform01(rng), a)
            else:
                j = _select(visits, counts, q, row, a, explore[n], smooth, gamma, eta, d, rng)
            path[steps, 0], path[steps, 1], path[steps, 2] = row, j, p
            steps += 1
        n = child[n, j]
    r0 = terminal_utility(spent, folded, n, ranks, 0)
    r1 = terminal_utility(spent, folded, n, ranks, 1)
    for i in range(steps):
        row, j = path[i, 0], path[i, 1]
        r = r0 if path[i, 2] == 0 else r1
        visits[row] += 1
        counts[row, j] += 1
        q[row, j] += (r - q[row, j]) / counts[row, j]


@numba.njit(cache=True)
def run(kind, actor, rnd, num_actions, child, decision, spent, folded, explore, base, codes, ranks, seeds,
        visits, counts, q, smooth, gamma, eta, d, stats, depth):
    """Simulations i = 0, 1, ... in order on deals (codes[i] int64 [2, R], ranks[i] int64 [2])
    with seeds[i] (uint64); `depth` bounds the decisions on a path."""
    path = np.zeros((depth + 1, 3), np.int64)
    out = np.zeros(2, np.bool_)
    rng = np.zeros(1, np.uint64)
    for i in range(len(seeds)):
        rng[0] = seeds[i]
        _simulate(kind, actor, rnd, num_actions, child, decision, spent, folded, explore, base, codes[i], ranks[i],
                  visits, counts, q, smooth, gamma, eta, d, rng, path, out, stats)
