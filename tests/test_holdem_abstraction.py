"""Hold'em information abstraction: suit isomorphism (sog.games.holdem.isomorphism) and board
equities (equity.board_equities)."""
from __future__ import annotations

import itertools
from math import comb

import numpy as np
import pytest

from sog.games.holdem.cards import Deck
from sog.games.holdem.equity import board_equities, equity
from sog.games.holdem.isomorphism import (
    canonical_boards,
    canonical_keys,
    lookup,
    situation_classes,
    split_groups,
)


def raw_situations(deck: Deck, group_sizes):
    """Every (hand, board in groups) of the deck: hands int [M, h], groups [int [M, k]]."""
    rows = []
    for h in deck.hands.tolist():
        left = [c for c in range(deck.size) if c not in h]

        def deal(cards, sizes):
            if not sizes:
                yield ()
                return
            for g in itertools.combinations(cards, sizes[0]):
                rest = [c for c in cards if c not in g]
                for tail in deal(rest, sizes[1:]):
                    yield (g, *tail)
        rows.extend((tuple(h), *groups) for groups in deal(left, list(group_sizes)))
    return [np.array([r[j] for r in rows], dtype=np.int64).reshape(len(rows), len(rows[0][j]))
            for j in range(1 + len(group_sizes))]


def orbit_labels(deck: Deck, groups) -> np.ndarray:
    """int [M]: the suit-permutation orbit of each situation, by brute force: the smallest
    (group bitmasks) over every permutation of the suits."""
    best = None
    for perm in itertools.permutations(range(deck.num_suits)):
        perm = np.array(perm)
        masks = np.stack([np.bitwise_or.reduce(
            np.left_shift(np.int64(1), (g // deck.num_suits) * deck.num_suits + perm[g % deck.num_suits]), axis=1)
            if g.shape[1] else np.zeros(len(g), dtype=np.int64) for g in groups], axis=1)
        if best is None:
            best = masks
        else:
            first_diff = np.argmax(masks != best, axis=1)
            rows = np.arange(len(masks))
            smaller = masks[rows, first_diff] < best[rows, first_diff]
            best = np.where(smaller[:, None], masks, best)
    return np.unique(best, axis=0, return_inverse=True)[1].reshape(-1)


def same_partition(a: np.ndarray, b: np.ndarray) -> bool:
    pairs = len(np.unique(np.stack([a, b], axis=1), axis=0))
    return pairs == len(np.unique(a)) == len(np.unique(b))


# ---- suit isomorphism -------------------------------------------------------
def test_52_card_preflop_has_169_classes_of_1326_hands():
    deck = Deck(13, 4, 2)
    classes = situation_classes(deck, [])
    assert classes.num_classes == 169
    assert classes.sizes.sum() == 1326
    assert sorted(np.bincount(classes.sizes).nonzero()[0].tolist()) == [4, 6, 12]     # suited, pairs, offsuit
    assert np.bincount(classes.sizes)[[4, 6, 12]].tolist() == [78, 13, 78]
    assert (classes.hand_class[0] >= 0).all()


def test_52_card_flops_have_1755_classes():
    boards, weights = canonical_boards(13, 4, [3])
    assert len(boards) == 1755 and weights.sum() == comb(52, 3)


@pytest.mark.slow
def test_52_card_hole_and_flop_classes():
    classes = situation_classes(Deck(13, 4, 2), [3])
    assert classes.num_classes == 1_286_792           # Pluribus's count for the second round
    assert classes.sizes.sum() == 1326 * comb(50, 3)


@pytest.mark.parametrize("ranks,suits,hole,groups", [(6, 2, 2, (3, 1)), (4, 3, 1, (2, 1)), (3, 4, 1, (2,)),
                                                     (5, 3, 2, (0, 2)), (4, 4, 2, ())])
def test_canonical_keys_are_exactly_the_suit_orbits(ranks, suits, hole, groups):
    deck = Deck(ranks, suits, hole)
    raw = raw_situations(deck, groups)
    keys = canonical_keys(ranks, suits, raw)
    labels = np.unique(keys, axis=0, return_inverse=True)[1].reshape(-1)
    assert same_partition(labels, orbit_labels(deck, raw))
    classes = situation_classes(deck, groups)
    assert classes.num_classes == len(np.unique(labels))
    assert classes.sizes.sum() == len(keys)
    assert (np.bincount(lookup(keys, classes.keys)) == classes.sizes).all()
    if groups:
        boards = np.unique(np.concatenate(raw[1:], axis=1), axis=0)
        orbits = orbit_labels(deck, split_groups(boards, groups))
        assert len(canonical_boards(ranks, suits, groups)[0]) == len(np.unique(orbits))


def test_lookup_misses_are_minus_one():
    classes = situation_classes(Deck(4, 2, 1), [2])
    keys = canonical_keys(4, 2, [np.array([[0]]), np.array([[1, 2]])])
    assert lookup(keys, classes.keys)[0] >= 0
    assert lookup(np.full((1, 2), 10**12), classes.keys)[0] == -1


# ---- board equities ---------------------------------------------------------
@pytest.mark.parametrize("ranks,suits,hole,board", [(6, 3, 2, 5), (6, 2, 1, 2), (13, 4, 2, 5), (5, 2, 2, 3)])
def test_board_equities_match_equity(ranks, suits, hole, board):
    deck = Deck(ranks, suits, hole)
    rng = np.random.default_rng(1)
    boards = np.sort(np.argsort(rng.random((6, deck.size)), axis=1)[:, :board], axis=1)
    eq = board_equities(deck, boards)
    for b in range(len(boards)):
        for i in rng.choice(deck.num_hands, min(15, deck.num_hands), replace=False):
            blocked = bool(set(deck.hands[i].tolist()) & set(boards[b].tolist()))
            assert np.isnan(eq[b, i]) == blocked
            if not blocked:
                assert eq[b, i] == pytest.approx(equity(deck, deck.hands[i], boards[b], board), abs=1e-12)
