"""Numba kernels of the sampled-deal MCCFR traverser: Pluribus's TRAVERSE-MCCFR and UPDATE-STRATEGY.

One traversal walks the abstract betting tree (`sog.games.holdem.betting_tree.BettingTree`,
arrays passed one by one) for one sampled deal: `codes` int64 [P, R] gives each of the P
players' information-state code per round, `ranks` int64 [P] the showdown ranks. An
information state is (decision d, code); its row in the tables is found in `row_of`, a
numba dict keyed `d * num_codes + code`, and allocated (zero regrets: uniform) the first
time its owner's traversal or update pass meets it; an opponent row never met is played
uniformly without being allocated.

Tables (float64 [capacity, K], K = the tree's width; column j = action slot j of the row's
node): `regret`, `avg`. `row_key` int64 [capacity]: each row's dict key; `counts` int64 [3]:
rows allocated, nodes visited, actions skipped by pruning.

Randomness: each traversal gets a uint64 seed; its opponent and own-action samples are
drawn in depth-first order from splitmix64 (`uniform01`) started at that seed, so a
traversal is a pure function of (deal, seed, tables) and a plain-Python reference that
walks the same tree in the same order reproduces it exactly (tests/test_sampled_mccfr.py).

The recursive kernels are compiled once per process (about 10 s), not cached on disk:
numba's cache of self-recursive functions loads code that crashes (numba 0.68, seen here).
"""
from __future__ import annotations

import numba
import numpy as np

from sog.games.api import CHANCE, TERMINAL

TRAVERSE, TRAVERSE_PRUNED, UPDATE = 0, 1, 2
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)


@numba.njit(cache=True, inline="always")
def uniform01(state):
    """A float in [0, 1) from splitmix64, advancing state (uint64 [1])."""
    state[0] += _GOLDEN
    z = state[0]
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    z = z ^ (z >> _S31)
    return np.float64(z >> _S11) * (1.0 / 9007199254740992.0)


@numba.njit(cache=True, inline="always")
def _policy(regret, row, n, out):
    """out[:n] = regret matching of row `row` (uniform if row < 0 or no positive regret)."""
    total = 0.0
    if row >= 0:
        for j in range(n):
            if regret[row, j] > 0.0:
                total += regret[row, j]
    for j in range(n):
        if total > 0.0:
            out[j] = regret[row, j] / total if regret[row, j] > 0.0 else 0.0
        else:
            out[j] = 1.0 / n


@numba.njit(cache=True, inline="always")
def _sample(sigma, n, u):
    """The slot j < n with sigma[j] > 0 at which the cumulative sum first exceeds u x total."""
    total = 0.0
    for j in range(n):
        total += sigma[j]
    target, acc, last = u * total, 0.0, -1
    for j in range(n):
        if sigma[j] > 0.0:
            last = j
            acc += sigma[j]
            if target < acc:
                return j
    return last


@numba.njit(cache=True, inline="always")
def _row(row_of, key, allocate, row_key, counts):
    """The row of dict key `key`: allocated (the next row) when new and `allocate`, else -1."""
    if key in row_of:
        return row_of[key]
    if not allocate:
        return -1
    r = counts[0]
    row_of[key] = r
    row_key[r] = key
    counts[0] += 1
    return r


@numba.njit(cache=True, inline="always")
def terminal_utility(spent, folded, n, ranks, p):
    """The payoff of player p at terminal node n (big blinds): the ACPC server's valueOfState
    (`sog.multiplayer.holdem.HoldemState.returns`): a folded player loses what it put in; the
    last player standing wins the rest; at a showdown the pots are cut at each distinct
    commitment and each split among the best hands still in it."""
    players = spent.shape[1]
    if folded[n, p]:
        return -spent[n, p]
    standing, total = 0, 0.0
    for q in range(players):
        total += spent[n, q]
        if not folded[n, q]:
            standing += 1
    if standing == 1:
        return total - spent[n, p]
    win, prev = 0.0, 0.0
    while True:
        level = np.inf
        for q in range(players):
            if prev < spent[n, q] < level:
                level = spent[n, q]
        if level > spent[n, p]:
            break
        amount, best, winners = 0.0, -1, 0
        for q in range(players):
            amount += min(spent[n, q], level) - min(spent[n, q], prev)
            if not folded[n, q] and spent[n, q] >= level:
                if ranks[q] > best:
                    best, winners = ranks[q], 1
                elif ranks[q] == best:
                    winners += 1
        if ranks[p] == best:
            win += amount / winners
        prev = level
    return win - spent[n, p]


@numba.njit
def _traverse(n, p, depth, kind, actor, rnd, num_actions, child, decision, spent, folded, codes, ranks,
              num_codes, row_of, row_key, regret, counts, prune, threshold, floor, last_round, rng, buf):
    """TRAVERSE-MCCFR(h, p) from node n: p's expected payoff (big blinds) under the current
    strategies, sampling the opponent and enumerating p's actions (those with regret at or
    below `threshold` skipped when `prune`, except on the last round and actions ending the
    hand), p's regrets updated and floored at `floor`. buf float64 [depth, 2K] is scratch."""
    counts[1] += 1
    k = kind[n]
    if k == TERMINAL:
        return terminal_utility(spent, folded, n, ranks, p)
    if k == CHANCE:
        return _traverse(child[n, 0], p, depth + 1, kind, actor, rnd, num_actions, child, decision, spent, folded,
                         codes, ranks, num_codes, row_of, row_key, regret, counts, prune, threshold, floor,
                         last_round, rng, buf)
    a = num_actions[n]
    q = actor[n]
    r = rnd[n]
    key = decision[n] * num_codes + codes[q, r]
    width = child.shape[1]
    sigma = buf[depth, :width]
    if q != p:
        row = _row(row_of, key, False, row_key, counts)
        _policy(regret, row, a, sigma)
        j = _sample(sigma, a, uniform01(rng))
        return _traverse(child[n, j], p, depth + 1, kind, actor, rnd, num_actions, child, decision, spent, folded,
                         codes, ranks, num_codes, row_of, row_key, regret, counts, prune, threshold, floor,
                         last_round, rng, buf)
    row = _row(row_of, key, True, row_key, counts)
    _policy(regret, row, a, sigma)
    values = buf[depth, width:]
    may_prune = prune and r < last_round
    v = 0.0
    for j in range(a):
        c = child[n, j]
        if may_prune and regret[row, j] <= threshold and kind[c] != TERMINAL:
            values[j] = np.nan
            counts[2] += 1
        else:
            values[j] = _traverse(c, p, depth + 1, kind, actor, rnd, num_actions, child, decision, spent, folded,
                                  codes, ranks, num_codes, row_of, row_key, regret, counts, prune, threshold,
                                  floor, last_round, rng, buf)
            v += sigma[j] * values[j]
    for j in range(a):
        if not np.isnan(values[j]):
            regret[row, j] = max(regret[row, j] + values[j] - v, floor)
    return v


@numba.njit
def _update(n, p, depth, kind, actor, rnd, num_actions, child, decision, codes, num_codes, row_of, row_key,
            regret, avg, counts, max_round, rng, buf):
    """UPDATE-STRATEGY(h, p) from node n, on rounds <= max_round: at p's decisions its current
    policy row is added to its average sums and one action sampled from it; the opponent's
    actions are all followed."""
    counts[1] += 1
    k = kind[n]
    if k == TERMINAL or rnd[n] > max_round:
        return
    if k == CHANCE:
        _update(child[n, 0], p, depth + 1, kind, actor, rnd, num_actions, child, decision, codes, num_codes,
                row_of, row_key, regret, avg, counts, max_round, rng, buf)
        return
    a = num_actions[n]
    q = actor[n]
    if q != p:
        for j in range(a):
            _update(child[n, j], p, depth + 1, kind, actor, rnd, num_actions, child, decision, codes, num_codes,
                    row_of, row_key, regret, avg, counts, max_round, rng, buf)
        return
    row = _row(row_of, decision[n] * num_codes + codes[q, rnd[n]], True, row_key, counts)
    sigma = buf[depth]
    _policy(regret, row, a, sigma)
    for j in range(a):
        avg[row, j] += sigma[j]
    j = _sample(sigma, a, uniform01(rng))
    _update(child[n, j], p, depth + 1, kind, actor, rnd, num_actions, child, decision, codes, num_codes,
            row_of, row_key, regret, avg, counts, max_round, rng, buf)


@numba.njit
def run(kind, actor, rnd, num_actions, child, decision, spent, folded, codes, ranks, players, modes, seeds,
        num_codes, row_of, row_key, regret, avg, counts, margin, threshold, floor, last_round, max_avg_round,
        depth):
    """Run traversals i = 0, 1, ... in order: player players[i], mode TRAVERSE, TRAVERSE_PRUNED
    or UPDATE, deal (codes[i] int64 [P, R], ranks[i] int64 [P]), seed seeds[i] (uint64).
    Stops before a traversal once fewer than `margin` free rows are left (the tables'
    capacity: len(row_key)); returns the traversals done."""
    buf = np.zeros((depth + 2, 2 * child.shape[1]))
    rng = np.zeros(1, np.uint64)
    capacity = len(row_key)
    for i in range(len(players)):
        if counts[0] + margin > capacity:
            return i
        rng[0] = seeds[i]
        if modes[i] == UPDATE:
            _update(0, players[i], 0, kind, actor, rnd, num_actions, child, decision, codes[i], num_codes, row_of,
                    row_key, regret, avg, counts, max_avg_round, rng, buf)
        else:
            _traverse(0, players[i], 0, kind, actor, rnd, num_actions, child, decision, spent, folded, codes[i],
                      ranks[i], num_codes, row_of, row_key, regret, counts, modes[i] == TRAVERSE_PRUNED, threshold,
                      floor, last_round, rng, buf)
    return len(players)
