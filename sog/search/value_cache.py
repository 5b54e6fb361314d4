"""GT-CFR's evaluation cache: a search's frontier values reused while a leaf's beliefs stay put.

A regret update pass asks the value function for every frontier leaf at the ranges the
current policy induces there. In a perfect-information game a leaf has one slot per player
(`spec.num_states` = 1) and its ranges are the players' reaches, so its normalised beliefs are
one of (1, 1), (1, 0), (0, 1), (0, 0), and pass after pass asks the same few questions again: a
tic-tac-toe SoG(400,1) search sent ~35k rows to the network for ~1,100 different ones
without it. This is AlphaZero's evaluation cache keyed by position; here the key is the public
state and both players' normalised ranges, so it is also correct, and rarely hits, in
imperfect-information games (Leduc SoG(100,1): 6% of the rows, no time saved).

What a hit reuses rests on how counterfactual values scale (`networks.encoding`'s units):
player i's values do not change when its own range is scaled and are multiplied by c when
the opponent's is. So the cache keeps, per public state, up to `WAYS` entries, each the
ranges of an evaluation normalised to sum 1 over the possible slots (the key, compared
exactly), its values divided by the opponent's total reach and its actor's logits (float32,
the CVPN's own precision); a frontier leaf whose normalised ranges equal a key gets that
entry's values times its own opponent reach, without a value request. Rows of one pass that
repeat an earlier miss of the same pass are asked once. The CVPN computes exactly this (it
sees only the normalised ranges and multiplies by the opponent's reach), so a hit differs from
asking again only by rounding: the float32 network's output depends slightly on the batch a
row is computed in (XLA on CPU), and the scaling rounds twice; values and policies agree with
the uncached search to ~1e-7 (`tests/test_value_cache.py` checks 1e-5). The exact oracle is
homogeneous in the same way up to its own stopping rule.

Scope: one search (the arrays live in the `GTCFR` object, node-indexed by `PublicTree.first`,
so they are bounded by the tree and go with it; chess: +27% of the search's arrays). A search
asks one value function, so nothing changes the weights under it, except an inference server
that publishes new weights in the middle of a search: then hits keep the older answer until
the leaf's ranges move, as a request already answered by the older weights would have.

The search still records every frontier row as a query (`SearchResult.queries` is what it is
without the cache) and sets the priors from every row in order (a hit's from its cached
logits), so only the rows sent to the value function change. Both kernels are numba loops
over the frontier.
"""
from __future__ import annotations

import numba

WAYS = 4
"""Entries kept per public state (its latest normalised ranges, replaced round robin): a
perfect-information leaf has four, each player's range being 0 or 1 there."""


@numba.njit(cache=True)
def lookup(frontier, first, ranges, possible, keys, filled, next_way, source_row, norm, total, way, source,
           store_way, miss_index):
    """Look up every frontier node v = frontier[b] (int [F]) of a pass; reserve the entries its misses
    will fill. Node-indexed (by public state, `first` int [>= n]): ranges float64 [>= n, 2, N],
    possible bool [>= n, 2, N]; the cache's keys float64 [>= n, W, 2, N], filled float64 [>= n, W]
    (1 filled, -1 reserved by a miss of this pass, 0 empty), next_way float64 [>= n] (the way the
    next miss replaces), source_row float64 [>= n, W] (the row that reserved a way).

    Written per row b: norm[b] float64 [2, N], ranges[v] masked by possible[v] and normalised per
    player to sum 1 (all 0 if the total is 0); total[b] float64 [2], each player's total reach over
    its possible slots; and which of three it is: a hit (way[b] >= 0, the entry whose key equals
    norm[b] exactly), a repeat of an earlier miss of this pass (source[b] >= 0, that row), or a
    miss (both -1: store_way[b] the way it reserved, miss_index[b] its row in the request).
    Returns the number of misses."""
    N = ranges.shape[2]
    W = keys.shape[1]
    misses = 0
    for b in range(len(frontier)):
        v = frontier[b]
        p = first[v]
        for i in range(2):
            t = 0.0
            for s in range(N):
                if possible[v, i, s]:
                    t += ranges[v, i, s]
            total[b, i] = t
            for s in range(N):
                norm[b, i, s] = ranges[v, i, s] / t if t > 0.0 and possible[v, i, s] else 0.0
        way[b] = source[b] = store_way[b] = miss_index[b] = -1
        for w in range(W):
            if filled[p, w] == 0.0:
                continue
            same = True
            for i in range(2):
                for s in range(N):
                    if norm[b, i, s] != keys[p, w, i, s]:
                        same = False
            if same:
                if filled[p, w] > 0.0:
                    way[b] = w
                else:
                    source[b] = int(source_row[p, w])
                break
        if way[b] < 0 and source[b] < 0:
            w = int(next_way[p])
            next_way[p] = (w + 1) % W
            keys[p, w] = norm[b]
            filled[p, w] = -1.0
            source_row[p, w] = b
            store_way[b] = w
            miss_index[b] = misses
            misses += 1
    return misses


@numba.njit(cache=True)
def answer(frontier, first, actor, way, source, store_way, miss_index, total, miss_values, miss_logits, filled,
           unit_values, actor_logits, values, logits):
    """The frontier's values (float64 [F, 2, N]) and logits (float64 [F, 2, N, A]; a hit's are zero
    but the actor's) written, and the misses stored, after `lookup` (its way, source, store_way,
    miss_index, total) and the value function's answer to the misses (miss_values float64
    [M, 2, N], miss_logits float64 [M, 2, N, A], in row order). A hit reads its entry as it was
    at `lookup`: unit_values [>= n, W, 2, N] (values over the opponent's total reach) times its
    own opponent total, and the actor's logits actor_logits [>= n, W, N, A]; a miss takes its
    answer and fills its reserved way; a repeat scales its source row's answer."""
    F, N = len(frontier), unit_values.shape[3]
    for b in range(F):                         # hits first: a miss may refill the way they read
        w = way[b]
        if w < 0:
            continue
        v = frontier[b]
        p = first[v]
        for i in range(2):
            for s in range(N):
                values[b, i, s] = unit_values[p, w, i, s] * total[b, 1 - i]
        a = actor[v] if actor[v] >= 0 else 1       # a chance leaf's prior is never read
        logits[b, a] = actor_logits[p, w]
    for b in range(F):
        if way[b] >= 0:
            continue
        v = frontier[b]
        p = first[v]
        src = b if source[b] < 0 else source[b]
        m = miss_index[src]
        for i in range(2):
            t_src, t = total[src, 1 - i], total[b, 1 - i]
            for s in range(N):
                if src == b:
                    values[b, i, s] = miss_values[m, i, s]
                else:
                    values[b, i, s] = miss_values[m, i, s] / t_src * t if t_src > 0.0 else 0.0
        logits[b] = miss_logits[m]
        if src == b:
            w = store_way[b]
            filled[p, w] = 1.0
            for i in range(2):
                t = total[b, 1 - i]
                for s in range(N):
                    unit_values[p, w, i, s] = miss_values[m, i, s] / t if t > 0.0 else 0.0
            a = actor[v] if actor[v] >= 0 else 1
            actor_logits[p, w] = miss_logits[m, a]
