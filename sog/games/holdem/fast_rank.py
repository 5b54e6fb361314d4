"""The ACPC hand ranking of `cards.rank_cardsets`, one card set at a time under numba.

`rank_cardsets` is numpy over many sets at once; a sampled-deal traverser needs the ranks
of a few thousand sets per deal (every hand on each round's board) from compiled code.
`rank_one` is the same function on the same tables (`cards._tables`, packed by `tables()`
into one int64 [9, 8192] array), so both give identical values (tested).

`ihr(...)`: a hand's immediate hand rank on the board dealt so far: P(win) + P(tie) / 2
against a uniformly random opponent hand of the cards left, with no card still to come
(on the river, the showdown equity of `equity.board_equities`).
"""
from __future__ import annotations

import functools

import numba
import numpy as np

from sog.games.holdem.cards import (
    FULL_HOUSE,
    MAX_RANKS,
    STRAIGHT,
    STRAIGHT_FLUSH,
    TRIPS,
    rank_tables,
)

ANY_SUIT, ONE_SUIT, PAIR_OTHER, TRIPS_OTHER, TOP_BIT, QUADS, TRIPS_ROW, PAIRS, TWO_PAIR_OTHER = range(9)


@functools.lru_cache(maxsize=1)
def tables() -> np.ndarray:
    """int64 [9, 8192]: the ranking tables (rows named by this module's constants; the per-rank
    tables fill their first 13 columns)."""
    t = rank_tables()
    out = np.zeros((9, 1 << MAX_RANKS), dtype=np.int64)
    for row, name in enumerate(("any_suit", "one_suit", "pair_other", "trips_other", "top_bit", "quads", "trips",
                                "pairs", "two_pair_other")):
        out[row, :len(t[name])] = t[name]
    out.setflags(write=False)
    return out


@numba.njit(cache=True, inline="always")
def rank_one(t, c0, c1, c2, c3):
    """int64: the ACPC rank of the card set whose 13-bit rank masks per suit are c0..c3."""
    flush = max(max(t[ONE_SUIT, c0], t[ONE_SUIT, c1]), max(t[ONE_SUIT, c2], t[ONE_SUIT, c3]))
    s0, s1 = c0 | c1, c0 & c1
    s2 = s1 & c2
    s1 = s1 | (s0 & c2)
    s0 = s0 | c2
    s3 = s2 & c3
    s2 = s2 | (s1 & c3)
    s1 = s1 | (s0 & c3)
    s0 = s0 | c3
    high = t[ANY_SUIT, s0]
    if flush >= STRAIGHT_FLUSH:
        return flush
    if s3 != 0:
        rq = t[TOP_BIT, s3]
        return t[QUADS, rq] + t[TOP_BIT, s0 ^ (1 << rq)]
    rt = t[TOP_BIT, s2]
    full_other = s1 ^ (1 << rt)
    if s2 != 0 and full_other != 0:
        return t[TRIPS_ROW, rt] + (FULL_HOUSE - TRIPS) + t[TOP_BIT, full_other]
    if flush > 0:
        return flush
    if high >= STRAIGHT:
        return high
    if s2 != 0:
        return t[TRIPS_ROW, rt] + t[TRIPS_OTHER, s0 ^ (1 << rt)]
    rp = t[TOP_BIT, s1]
    pair_rest, second = s0 ^ (1 << rp), s1 ^ (1 << rp)
    if s1 != 0 and second != 0:
        rp2 = t[TOP_BIT, second]
        return t[PAIRS, rp] + t[TWO_PAIR_OTHER, rp2] + t[TOP_BIT, pair_rest ^ (1 << rp2)]
    if s1 != 0:
        return t[PAIRS, rp] + t[PAIR_OTHER, pair_rest]
    return high


@numba.njit(cache=True)
def rank_sets(t, suits):
    """int64 [M]: `rank_one` of each row of suits (int64 [M, 4] rank masks per suit)."""
    out = np.empty(len(suits), np.int64)
    for i in range(len(suits)):
        out[i] = rank_one(t, suits[i, 0], suits[i, 1], suits[i, 2], suits[i, 3])
    return out


@numba.njit(cache=True)
def ihr_boards(t, hand_suits, hand_masks, board_suits, board_masks, heroes, out):
    """`ihr` of each board b (board_suits int64 [B, 4], board_masks int64 [B]) for its heroes
    (int64 [B, H]) into out (float64 [B, H]); the hands are ranked once for a run of equal boards
    (callers sort their boards so: `DealBuckets._strength`)."""
    ranks = np.empty(len(hand_masks), np.int64)
    for b in range(len(board_masks)):
        if b == 0 or board_masks[b] != board_masks[b - 1]:
            _board_ranks(t, hand_suits, hand_masks, board_suits[b], board_masks[b], ranks)
        _hero_ihr(hand_masks, ranks, heroes[b], out[b])


@numba.njit(cache=True)
def ihr(t, hand_suits, hand_masks, board_suits, board_mask, heroes, out, ranks):
    """out[j] = the immediate hand rank of hand `heroes[j]` (a row of the deck's hands) on one
    board: hand_suits int64 [N, 4] and hand_masks int64 [N] (card bit masks) of every hand,
    board_suits int64 [4], board_mask int64 (the heroes share no card with the board);
    ranks int64 [N] is scratch."""
    _board_ranks(t, hand_suits, hand_masks, board_suits, board_mask, ranks)
    _hero_ihr(hand_masks, ranks, heroes, out)


@numba.njit(cache=True)
def _board_ranks(t, hand_suits, hand_masks, board_suits, board_mask, ranks):
    """ranks[i] = hand i's rank with the board (int64 [N]; -1 where it holds a board card)."""
    for i in range(len(hand_masks)):
        if hand_masks[i] & board_mask:
            ranks[i] = -1
        else:
            ranks[i] = rank_one(t, hand_suits[i, 0] | board_suits[0], hand_suits[i, 1] | board_suits[1],
                                hand_suits[i, 2] | board_suits[2], hand_suits[i, 3] | board_suits[3])


@numba.njit(cache=True)
def _hero_ihr(hand_masks, ranks, heroes, out):
    """out[j]: P(win) + P(tie) / 2 of hand heroes[j] against the hands sharing no card with it,
    by `_board_ranks`' ranks."""
    n = len(hand_masks)
    for j in range(len(heroes)):
        h = heroes[j]
        mine, mask = ranks[h], hand_masks[h]
        score, count = 0.0, 0
        for i in range(n):
            if ranks[i] >= 0 and not (hand_masks[i] & mask):
                count += 1
                if ranks[i] < mine:
                    score += 1.0
                elif ranks[i] == mine:
                    score += 0.5
        out[j] = score / count
