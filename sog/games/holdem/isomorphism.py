"""Suit isomorphism: the canonical form of (hole cards, board) under suit permutations.

Relabelling the suits of every card at once changes no showdown, so two information
situations that differ by a suit permutation are strategically identical (lossless
abstraction, Gilpin and Sandholm 2007). A situation is a list of card groups in deal
order: the hole cards, then the board cards of each round that deals some. Cards within
a group are a set (their order is not seen); the groups stay apart (our `Holdem` keeps
which round dealt which board card).

Canonical key: per suit, the signature `sum over ranks r of g(r) * base**r`, g(r) the
1-based group holding the card (r, suit) or 0, base = number of groups + 1 (at most
6**13 < 2**34 for five groups of a 13-rank deck); the key is the suits' signatures sorted
in decreasing order, int64 [S]. Two situations have equal keys iff a suit permutation
maps one onto the other. The 52-card counts (Pluribus, Gilpin and Sandholm): 169 hole
classes, 1,755 flops, 1,286,792 (hole, flop), 55,190,538 with the turn, 2,428,287,420
with the river.

`canonical_boards` enumerates the boards of a round up to isomorphism, extending the
previous round's canonical boards by every set of the next cards (never the raw boards);
`situation_classes` then the (hand, board) classes, board by board: two situations whose
boards are not isomorphic are never isomorphic, so each canonical board's hands are
uniqued alone, and a class's size is its board's orbit size times its hands on that board.
"""
from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence

import numpy as np

from sog.games.holdem.cards import Deck


def canonical_keys(num_ranks: int, num_suits: int, groups: Sequence[np.ndarray]) -> np.ndarray:
    """int64 [M, num_suits]: the canonical key of each situation.

    groups: card ids (int [M, k_g], k_g >= 0) of each group, hole cards first; card id
    `rank * num_suits + suit` as in `sog.games.holdem.cards`.
    """
    groups = [np.asarray(g, dtype=np.int64) for g in groups if np.asarray(g).shape[1] > 0]
    m = len(groups[0]) if groups else 0
    base = len(groups) + 1
    powers = base ** np.arange(num_ranks, dtype=np.int64)
    sig = np.zeros((m, num_suits), dtype=np.int64)
    rows = np.arange(m)
    for g, cards in enumerate(groups, start=1):
        for col in cards.T:                  # a card's (row, suit) cell gets one rank: no collisions
            sig[rows, col % num_suits] += g * powers[col // num_suits]
    return -np.sort(-sig, axis=1)


def key_view(keys: np.ndarray) -> np.ndarray:
    """[M] structured view of int64 [M, S] keys: one comparable item per row (lexicographic
    order), for `np.searchsorted` and `np.unique`."""
    keys = np.ascontiguousarray(keys, dtype=np.int64)
    dtype = np.dtype([(f"s{i}", np.int64) for i in range(keys.shape[1])])
    return keys.view(dtype).reshape(len(keys))


def unique_keys(keys: np.ndarray, weights: np.ndarray | None = None):
    """(unique keys int64 [C, S] in lexicographic order, inverse int64 [M], summed weights
    int64 [C] (counts when `weights` is None))."""
    uniq, inverse = np.unique(key_view(keys), return_inverse=True)
    sums = np.bincount(inverse, weights=weights, minlength=len(uniq)).astype(np.int64)
    return uniq.view(np.int64).reshape(len(uniq), keys.shape[1]), inverse.reshape(-1), sums


def split_groups(board: np.ndarray, group_sizes: Sequence[int]) -> list[np.ndarray]:
    """The columns of `board` (int [M, sum(group_sizes)]) per group."""
    bounds = np.cumsum([0, *group_sizes])
    return [board[:, a:b] for a, b in itertools.pairwise(bounds)]


def canonical_boards(num_ranks: int, num_suits: int, group_sizes: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """The boards dealt in groups of `group_sizes` cards, up to suit permutations.

    Returns (boards int64 [B, sum(group_sizes)]: one representative per class, each group
    sorted; orbit sizes int64 [B]: raw boards per class, summing to the number of boards).
    """
    size = num_ranks * num_suits
    boards, weights = np.zeros((1, 0), dtype=np.int64), np.ones(1, dtype=np.int64)
    sizes: list[int] = []
    for k in group_sizes:
        if k == 0:
            continue
        combos = np.array(list(itertools.combinations(range(size), k)), dtype=np.int64)   # [K, k]
        masks = np.bitwise_or.reduce(np.left_shift(np.int64(1), combos), axis=1)
        board_masks = np.bitwise_or.reduce(np.left_shift(np.int64(1), boards), axis=1) if boards.shape[1] else \
            np.zeros(len(boards), dtype=np.int64)
        b_idx, c_idx = np.nonzero((board_masks[:, None] & masks[None, :]) == 0)
        extended = np.concatenate([boards[b_idx], combos[c_idx]], axis=1)
        keys = canonical_keys(num_ranks, num_suits, split_groups(extended, [*sizes, k]))
        _, inverse, weights_new = unique_keys(keys, weights[b_idx])
        first = np.full(len(weights_new), len(inverse))
        np.minimum.at(first, inverse, np.arange(len(inverse)))
        boards, weights, sizes = extended[first], weights_new, [*sizes, k]
    return boards, weights


@dataclasses.dataclass(frozen=True)
class SituationClasses:
    """The (hand, board) classes of one round of a deck, in lexicographic key order.

    boards: int64 [B, b] the canonical boards (`canonical_boards`), board_weights: int64 [B]
    their orbit sizes; hand_class: int64 [B, N] the class of each hand of the deck
    (`Deck.hands`) on each canonical board, -1 where the hand holds a board card;
    keys: int64 [C, S] the classes' canonical keys (sorted); sizes: int64 [C] the raw
    (hand, board) situations in each class (they sum to N x C(deck - hole, b)).
    """

    boards: np.ndarray
    board_weights: np.ndarray
    hand_class: np.ndarray
    keys: np.ndarray
    sizes: np.ndarray

    @property
    def num_classes(self) -> int:
        return len(self.keys)


def situation_classes(deck: Deck, group_sizes: Sequence[int]) -> SituationClasses:
    """The classes of (hand of `deck`, board dealt in groups of `group_sizes` cards)."""
    boards, weights = canonical_boards(deck.num_ranks, deck.num_suits, group_sizes)
    n = deck.num_hands
    board_masks = deck.card_masks(boards) if boards.shape[1] else np.zeros(len(boards), dtype=np.uint64)
    valid = (board_masks[:, None] & deck.hand_masks[None, :]) == 0                     # [B, N]
    b_idx, h_idx = np.nonzero(valid)
    keys = canonical_keys(deck.num_ranks, deck.num_suits,
                          [deck.hands[h_idx], *split_groups(boards[b_idx], group_sizes)])
    uniq, inverse, sizes = unique_keys(keys, weights[b_idx])
    hand_class = np.full((len(boards), n), -1, dtype=np.int64)
    hand_class[b_idx, h_idx] = inverse
    return SituationClasses(boards, weights, hand_class, uniq, sizes)


def lookup(keys: np.ndarray, table: np.ndarray) -> np.ndarray:
    """int64 [M]: the row of each key (int64 [M, S]) in `table` (sorted int64 [C, S], as
    `SituationClasses.keys`); -1 for a key not in the table."""
    view, queries = key_view(table), key_view(keys)
    pos = np.minimum(np.searchsorted(view, queries), len(view) - 1)
    return np.where(view[pos] == queries, pos, -1)
