"""GT-CFR's expansion walks as numba loops over a `PublicTree`'s arrays (see `sog.search.gtcfr`
for what a simulation does).

One `simulate` call samples a world state at the search node and walks down to where the
tree grows: chance is sampled, a decision's action is drawn from 1/2 pi_PUCT + 1/2 pi_CFR.
It returns what to add (`EXPAND_ALL` the node's children, `EXPAND_ACTIONS` the children the
listed actions reach, or `DONE` at a terminal); the tree itself is grown in Python
(`PublicTree.expand`).

The draws are those of the Python walk it replaces, bit for bit
(`tests/test_search_golden.py`): every draw is one uniform of the search's own
`np.random.Generator`, read in order from a block drawn ahead (`uniforms` float [U], `cursor`
int [1] the next one to read: `rng.random(k)` gives the numbers k calls of `rng.random()` give;
passing the Generator itself to numba costs ~15 us a call), and
`Generator.choice(n, p=w / w.sum())` is the search of one uniform in the cumulative sum of p
normalised by its last element (`choice`), with numpy's pairwise summation for the sums
(`pairwise_sum`).

Shapes: N slots, A actions; node-indexed arrays have >= (tree size) rows.
"""
from __future__ import annotations

import math

import numba
import numpy as np

from sog.games.api import CHANCE, DECISION, TERMINAL

DONE, EXPAND_ALL, EXPAND_ACTIONS = 0, 1, 2
"""What `simulate` asks for at the end of a walk: nothing (a terminal), every child of the
node, or the children that the actions it lists reach."""


@numba.njit(cache=True)
def _block_sum(a, lo, n):
    """float: numpy's sum of a block of n <= 128 float64 values from a[lo] (sequential below 8,
    else 8 interleaved accumulators added pairwise, then the rest). The accumulators are
    scalars, not an array: this runs for every sum of 8 or more terms (a tic-tac-toe prior's
    9 actions), and a heap array a call cost more than the sum."""
    if n < 8:
        res = 0.0
        for k in range(n):
            res += a[lo + k]
        return res
    r0, r1, r2, r3 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3]
    r4, r5, r6, r7 = a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    k = 8
    while k < n - n % 8:
        b = lo + k
        r0 += a[b]
        r1 += a[b + 1]
        r2 += a[b + 2]
        r3 += a[b + 3]
        r4 += a[b + 4]
        r5 += a[b + 5]
        r6 += a[b + 6]
        r7 += a[b + 7]
        k += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while k < n:
        res += a[lo + k]
        k += 1
    return res


@numba.njit(cache=True)
def pairwise_sum(a, lo, n):
    """float: a[lo:lo + n].sum() as numpy computes it for a contiguous float64 array, so the bits
    agree: blocks of <= 128 (`_block_sum`), larger ranges split at half (rounded down to a
    multiple of 8) and the halves' sums added. numpy recurses; this walks the same split tree
    with a stack (numba's cache cannot hold recursive functions)."""
    if n <= 128:
        return _block_sum(a, lo, n)
    los, ns, stage = np.empty(64, np.int64), np.empty(64, np.int64), np.empty(64, np.int64)
    sums = np.empty(64)
    los[0], ns[0], stage[0] = lo, n, 0
    top, done = 1, 0
    while top:
        l, m, st = los[top - 1], ns[top - 1], stage[top - 1]
        if m <= 128:
            sums[done] = _block_sum(a, l, m)
            done += 1
            top -= 1
        elif st == 2:                                    # both halves summed: left + right
            done -= 1
            sums[done - 1] = sums[done - 1] + sums[done]
            top -= 1
        else:                                            # push the left, then the right half
            half = m // 2 - (m // 2) % 8
            stage[top - 1] = st + 1
            los[top], ns[top], stage[top] = (l, half, 0) if st == 0 else (l + half, m - half, 0)
            top += 1
    return sums[0]


@numba.njit(cache=True)
def uniform(uniforms, cursor):
    """float: the next uniform of the block (see module doc)."""
    u = uniforms[cursor[0]]
    cursor[0] += 1
    return u


@numba.njit(cache=True)
def choice(uniforms, cursor, w, n):
    """int: `rng.choice(n, p=w[:n] / w[:n].sum())` with the next uniform (w float [>= n],
    nonnegative, some positive)."""
    total = pairwise_sum(w, 0, n)
    cdf = np.empty(n)
    acc = 0.0
    for k in range(n):
        acc = acc + w[k] / total if k else w[k] / total
        cdf[k] = acc
    u = uniform(uniforms, cursor)
    k = 0
    while k < n and cdf[k] / acc <= u:
        k += 1
    return k


@numba.njit(cache=True)
def fill_uniform_priors(lo, hi, first, legal, prior):
    """prior[i] = legal[i] / (legal actions per slot, at least 1) for the nodes i in [lo, hi) that
    are the first with their public state (`PublicTree.first`): the prior of a public state the
    value function has not evaluated."""
    N, A = legal.shape[1], legal.shape[2]
    for i in range(lo, hi):
        if first[i] != i:
            continue
        for s in range(N):
            count = 0
            for a in range(A):
                count += legal[i, s, a]
            for a in range(A):
                prior[i, s, a] = legal[i, s, a] / max(count, 1)


@numba.njit(cache=True)
def centred_logits(nodes, actor, legal, logits, temperature):
    """float [B, N, A]: logits[b, actor[v]] / temperature at the legal actions of node v = nodes[b]
    (actor int8 [>= n], legal bool [>= n, N, A]: the tree's arrays) less their maximum per slot,
    -inf elsewhere: the exponents of the prior's softmax (logits float [B, 2, N, A])."""
    B, N, A = len(nodes), legal.shape[1], legal.shape[2]
    z = np.empty((B, N, A))
    for b in range(B):
        v = nodes[b]
        i = actor[v]
        for s in range(N):
            top, any_legal = -np.inf, False
            for a in range(A):
                z[b, s, a] = logits[b, i, s, a] / temperature if legal[v, s, a] else -np.inf
                if legal[v, s, a] and (not any_legal or z[b, s, a] > top):
                    top, any_legal = z[b, s, a], True
            for a in range(A):
                z[b, s, a] = z[b, s, a] - (top if any_legal else 0.0)
    return z


@numba.njit(cache=True)
def normalise_priors(nodes, first, z, prior):
    """prior[first[nodes[b]], s] = z[b, s] / max(z[b, s].sum(), 1e-300) in order of b (a later row
    of the same public state wins); z float [B, N, A], the exponentials of the softmax; first
    int [>= n]: `PublicTree.first`."""
    N, A = z.shape[1], z.shape[2]
    for b in range(len(nodes)):
        row = first[nodes[b]]
        for s in range(N):
            total = max(pairwise_sum(z[b, s], 0, A), 1e-300)
            for a in range(A):
                prior[row, s, a] = z[b, s, a] / total


@numba.njit(cache=True)
def commit_visits(path, count, pending, visits):
    """Add the phase's pending visits of the path records path[:count] ((node, slot, action)
    int [>= count, 3]) to visits and clear them (float [>= n, N, A] both)."""
    for k in range(count):
        v, s, a = path[k, 0], path[k, 1], path[k, 2]
        visits[v, s, a] += pending[v, s, a]
        pending[v, s, a] = 0.0


@numba.njit(cache=True)
def _sample_world(uniforms, cursor, ranges, possible, chance_weights):
    """(slot 0, slot 1) drawn from ranges [2, N] at the possible slots (bool [2, N]) times the
    deal's correlation chance_weights float [N, N]; from the possible slots alone if no deal has
    weight."""
    N = ranges.shape[1]
    joint = np.empty(N * N)
    for a in range(N):
        for b in range(N):
            joint[a * N + b] = (ranges[0, a] * possible[0, a]) * (ranges[1, b] * possible[1, b]) \
                * chance_weights[a, b]
    if not pairwise_sum(joint, 0, N * N) > 0:
        for a in range(N):
            for b in range(N):
                joint[a * N + b] = (1.0 * possible[0, a]) * (1.0 * possible[1, b]) * chance_weights[a, b]
    k = choice(uniforms, cursor, joint, N * N)
    return k // N, k % N


@numba.njit(cache=True)
def _puct_action(node, s, i, legal, ranges, q, visits, pending, prior_row, puct_c, max_utility):
    """The legal action maximising Q + puct_c * prior * sqrt(sum n + 1) / (1 + n) at (node, slot s)
    of actor i (the first of equals), with the phase's pending visits counted in n and as
    virtual losses in Q."""
    N, A = ranges.shape[2], legal.shape[2]
    scale = max_utility * max(pairwise_sum(ranges[node, 1 - i], 0, N), 1e-12)
    n = np.empty(A)
    for a in range(A):
        n[a] = visits[node, s, a] + pending[node, s, a]
    root = math.sqrt(pairwise_sum(n, 0, A) + 1)
    best, best_u = -1, 0.0
    for a in range(A):
        if legal[node, s, a]:
            u = (q[node, s, a] / scale - pending[node, s, a]) + puct_c * prior_row[a] * root / (1 + n[a])
            if best < 0 or u > best_u:
                best, best_u = a, u
    return best


@numba.njit(cache=True)
def _cfr_action(uniforms, cursor, node, s, legal, present, avg):
    """An action drawn from the average policy at (node, slot s): positive average weights over
    the legal actions whose child is present (uniform over those if none is positive), or
    uniform over the legal actions if no child is present."""
    A = legal.shape[2]
    pi = np.zeros(A)
    count, any_present = 0, False
    for a in range(A):
        any_present = any_present or present[node, s, a]
        count += legal[node, s, a] and present[node, s, a]
    if any_present:
        for a in range(A):
            if legal[node, s, a] and present[node, s, a]:
                pi[a] = max(avg[node, s, a], 0.0)
        total = pairwise_sum(pi, 0, A)
        for a in range(A):
            usable = legal[node, s, a] and present[node, s, a]
            pi[a] = pi[a] / total if total > 0 else usable / max(count, 1)
    else:
        for a in range(A):
            count += legal[node, s, a]
        for a in range(A):
            pi[a] = legal[node, s, a] / count
    return choice(uniforms, cursor, pi, A)


@numba.njit(cache=True)
def _step(node, slots, i, a, first_child, next_sibling, in_state_maps, in_actor_map):
    """The first child reached when actor i plays a (the other player's slot decides among
    children sharing (slot, action)); slots int [2] updated in place; -1 if none."""
    c = first_child[node]
    while c >= 0:
        cs = in_actor_map[c, slots[i], a]
        co = in_state_maps[c, 1 - i, slots[1 - i]]
        if cs >= 0 and co >= 0:
            slots[i], slots[1 - i] = cs, co
            return c
        c = next_sibling[c]
    return -1


@numba.njit(cache=True)
def _sample_chance(uniforms, cursor, node, slots, first_child, next_sibling, prob, in_state_maps):
    """A chance child compatible with both slots, drawn by its probability; slots updated; -1 if
    none is (a query solve's sampled chance root, `PublicTree.expand_sample`)."""
    m = 0
    c = first_child[node]
    while c >= 0:
        m += 1
        c = next_sibling[c]
    cands = np.empty(m, dtype=np.int64)
    probs = np.empty(m)
    m = 0
    c = first_child[node]
    while c >= 0:
        if in_state_maps[c, 0, slots[0]] >= 0 and in_state_maps[c, 1, slots[1]] >= 0:
            cands[m], probs[m] = c, prob[c]
            m += 1
        c = next_sibling[c]
    if m == 0:
        return -1
    c = cands[choice(uniforms, cursor, probs, m)]
    slots[0], slots[1] = in_state_maps[c, 0, slots[0]], in_state_maps[c, 1, slots[1]]
    return c


@numba.njit(cache=True)
def _top_k(node, s, legal, prior_row, k, actions):
    """Writes into actions the (at most k) legal actions at (node, slot s) with the largest prior,
    ties to the lower action (a stable sort); returns how many."""
    A = legal.shape[2]
    chosen = np.zeros(A, dtype=np.bool_)
    m = 0
    while m < k:
        best = -1
        for a in range(A):
            if legal[node, s, a] and not chosen[a] and (best < 0 or prior_row[a] > prior_row[best]):
                best = a
        if best < 0:
            break
        chosen[best] = True
        actions[m] = best
        m += 1
    return m


@numba.njit(cache=True)
def simulate(uniforms, cursor, start, world, tree, search, puct_c, max_utility, top_k, path, count, actions):
    """One expansion simulation from node `start`, drawing from uniforms[cursor[0]:] (at most
    1 + 2 * (the depth below `start`) of them).

    world: (ranges float [2, N], possible bool [2, N], chance_weights float [N, N]) at `start`,
      the world state's distribution (`_sample_world`).
    tree: `PublicTree` arrays (kind, actor, first_child, next_sibling, prob, in_state_maps,
      in_actor_map, legal, present, first).
    search: GT-CFR's node-indexed arrays (ranges [2, N], q, visits, avg, pending, prior [N, A]);
      the prior is read at each node's `first` row.
    puct_c, max_utility: floats; top_k: children added at a decision leaf, -1 for all.
    path: int [>= count + depth + 1, 3]: the (node, slot, action) of each decision passed is
      written from row `count` on, its pending visit added.
    actions: int [A]: the actions of an `EXPAND_ACTIONS` answer.
    Returns (`DONE` / `EXPAND_ALL` / `EXPAND_ACTIONS`, the node to expand, the number of
    actions, the new count of path rows).
    """
    kind, actor, first_child, next_sibling, prob, in_state_maps, in_actor_map, legal, present, first = tree
    ranges, q, visits, avg, pending, prior = search
    slots = np.empty(2, dtype=np.int64)
    slots[0], slots[1] = _sample_world(uniforms, cursor, world[0], world[1], world[2])
    node = start
    while kind[node] != TERMINAL:
        if first_child[node] < 0:
            if kind[node] != DECISION or top_k < 0:
                return EXPAND_ALL, node, 0, count
            s = slots[actor[node]]
            return EXPAND_ACTIONS, node, _top_k(node, s, legal, prior[first[node], s], top_k, actions), count
        if kind[node] == CHANCE:
            node = _sample_chance(uniforms, cursor, node, slots, first_child, next_sibling, prob, in_state_maps)
            if node < 0:
                return DONE, start, 0, count
            continue
        i = actor[node]
        s = slots[i]
        if uniform(uniforms, cursor) < 0.5:
            a = _puct_action(node, s, i, legal, ranges, q, visits, pending, prior[first[node], s], puct_c,
                             max_utility)
        else:
            a = _cfr_action(uniforms, cursor, node, s, legal, present, avg)
        path[count, 0], path[count, 1], path[count, 2] = node, s, a
        pending[node, s, a] += 1.0
        count += 1
        if not present[node, s, a]:
            actions[0] = a
            return EXPAND_ACTIONS, node, 1, count
        node = _step(node, slots, i, a, first_child, next_sibling, in_state_maps, in_actor_map)
        if node < 0:
            raise RuntimeError("no child for the slot and action")
    return DONE, node, 0, count
