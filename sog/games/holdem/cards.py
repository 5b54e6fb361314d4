"""Cards, private hands and the ACPC hand ranking, vectorised with numpy.

Cards are numbered as OpenSpiel's universal_poker numbers its chance outcomes:
card `c = rank * num_suits + suit`, rank 0 the deuce ('2') up to `num_ranks - 1`,
suit 0..3 written 'c', 'd', 'h', 's'. A deck of R ranks holds the R lowest ranks.

Hands are the `C(deck, k)` sets of k cards, in `itertools.combinations` order
(lexicographic in card ids); they are the information-state slots of both players.

`rank_cardsets` is the ACPC server's `rankCardset` (project_acpc_server/evalHandTables,
which universal_poker uses at showdowns) for any number of cards: a flush or straight
needs five cards, and with fewer than five cards the kickers compare as the sorted
ranks present (the tables' colex index of the top five, three or two ranks). Its
lookup tables are rebuilt here from their definition; values are ACPC's exactly
(high card 0.., pair 1287.., two pair 5005.., trips 8606.., straight 9620..,
flush 9633.., full house 10920.., quads 11934.., straight flush 12103..).
"""
from __future__ import annotations

import functools
import itertools
from math import comb

import numpy as np

RANK_CHARS = "23456789TJQKA"
SUIT_CHARS = "cdhs"
MAX_RANKS, MAX_SUITS = 13, 4

HIGH_CARD, PAIR, TWO_PAIR, TRIPS = 0, 1287, 5005, 8606
STRAIGHT, FLUSH, FULL_HOUSE, QUADS, STRAIGHT_FLUSH = 9620, 9633, 10920, 11934, 12103
TWO_PAIR_OTHER = 3718  # ACPC's offset of the second pair's rank in a two-pair value


@functools.lru_cache(maxsize=1)
def rank_tables() -> dict[str, np.ndarray]:
    """ACPC's lookup tables, indexed by a 13-bit mask of ranks (int64 [8192] each, [13] per rank)."""
    masks = np.arange(1 << MAX_RANKS)
    bits = (masks[:, None] >> np.arange(MAX_RANKS)) & 1               # [8192, 13]
    count = bits.sum(1)
    above = bits[:, ::-1].cumsum(1)[:, ::-1]                          # set bits at rank >= b
    binom = np.array([[comb(b, j) for j in range(6)] for b in range(MAX_RANKS)])

    def top_colex(k: int) -> np.ndarray:
        """Colex index of the k highest ranks present (all of them if fewer)."""
        chosen = bits * (above <= k)
        pos = np.clip(np.minimum(count, k)[:, None] - above + 1, 0, 5)  # 1-based rank among the chosen
        return (chosen * binom[np.arange(MAX_RANKS)[None, :], pos]).sum(1)

    straight_top = np.full(len(masks), -1)
    wheel = bits[:, [12, 0, 1, 2, 3]].all(1)
    straight_top[wheel] = 3
    for top in range(4, MAX_RANKS):
        straight_top[bits[:, top - 4:top + 1].all(1)] = top
    top5 = top_colex(5)
    is_straight = straight_top >= 0
    ranks = np.arange(MAX_RANKS)
    return {
        "any_suit": np.where(is_straight, STRAIGHT + straight_top, top5),
        "one_suit": np.where(count >= 5, np.where(is_straight, STRAIGHT_FLUSH + straight_top, FLUSH + top5), 0),
        "pair_other": top_colex(3),
        "trips_other": top_colex(2),
        "top_bit": np.where(count > 0, MAX_RANKS - 1 - np.argmax(bits[:, ::-1], axis=1), 0),
        "quads": QUADS + 13 * ranks,
        "trips": TRIPS + 78 * ranks,
        "pairs": PAIR + 286 * ranks,
        "two_pair_other": TWO_PAIR_OTHER + 13 * ranks,
    }


def rank_cardsets(suits: np.ndarray) -> np.ndarray:
    """int64 [M]: ACPC's rank of each card set (larger is better, equal ties).

    suits: int [M, 4], per set and suit the 13-bit mask of its ranks in that suit.
    """
    t = rank_tables()
    top = t["top_bit"]
    c = [np.asarray(suits[:, s], dtype=np.int64) for s in range(MAX_SUITS)]
    flush = np.max(np.stack([t["one_suit"][x] for x in c]), axis=0)
    # ranks present at least once (s0), twice (s1), three times (s2), four times (s3)
    s0, s1 = c[0] | c[1], c[0] & c[1]
    s2 = s1 & c[2]
    s1 = s1 | (s0 & c[2])
    s0 = s0 | c[2]
    s3 = s2 & c[3]
    s2 = s2 | (s1 & c[3])
    s1 = s1 | (s0 & c[3])
    s0 = s0 | c[3]
    high = t["any_suit"][s0]
    rq, rt, rp = top[s3], top[s2], top[s1]
    full_other = s1 ^ (1 << rt)
    pair_rest, second = s0 ^ (1 << rp), s1 ^ (1 << rp)
    rp2 = top[second]
    return np.select(
        [flush >= STRAIGHT_FLUSH, s3 != 0, (s2 != 0) & (full_other != 0), flush > 0, high >= STRAIGHT,
         s2 != 0, (s1 != 0) & (second != 0), s1 != 0],
        [flush, t["quads"][rq] + top[s0 ^ (1 << rq)], t["trips"][rt] + (FULL_HOUSE - TRIPS) + top[full_other],
         flush, high, t["trips"][rt] + t["trips_other"][s0 ^ (1 << rt)],
         t["pairs"][rp] + t["two_pair_other"][rp2] + top[pair_rest ^ (1 << rp2)],
         t["pairs"][rp] + t["pair_other"][pair_rest]],
        default=high)


class Deck:
    """A deck of `num_ranks` x `num_suits` cards and its k-card hands."""

    def __init__(self, num_ranks: int, num_suits: int, hole: int):
        self.num_ranks, self.num_suits, self.hole = num_ranks, num_suits, hole
        self.size = num_ranks * num_suits
        cards = np.arange(self.size)
        self.rank, self.suit = cards // num_suits, cards % num_suits
        self.hands = np.array(list(itertools.combinations(range(self.size), hole)), dtype=np.int64)  # [N, k]
        self.hand_masks = self.card_masks(self.hands)                                            # [N]
        self.hand_suits = self.suit_masks(self.hands)                                            # [N, 4]
        self._index = {tuple(h): i for i, h in enumerate(self.hands.tolist())}

    @property
    def num_hands(self) -> int:
        return len(self.hands)

    def card_masks(self, sets: np.ndarray) -> np.ndarray:
        """uint64 [M]: the bit mask over card ids of each row of `sets` (int [M, k])."""
        return np.bitwise_or.reduce(np.left_shift(np.uint64(1), sets.astype(np.uint64)), axis=1)

    def suit_masks(self, sets: np.ndarray) -> np.ndarray:
        """int64 [M, 4]: per row of `sets` (int [M, k]) and suit, the 13-bit mask of its ranks."""
        out = np.zeros((len(sets), MAX_SUITS), dtype=np.int64)
        rows = np.repeat(np.arange(len(sets)), sets.shape[1])
        np.bitwise_or.at(out, (rows, self.suit[sets].ravel()), 1 << self.rank[sets].ravel())
        return out

    def hand_index(self, cards) -> int:
        """The slot of a hand given its cards (any order)."""
        return self._index[tuple(sorted(cards))]

    def strengths(self, board: tuple[int, ...]) -> np.ndarray:
        """int64 [N]: ACPC rank of every hand together with `board` (meaningless for hands
        sharing a card with the board)."""
        suits = self.hand_suits
        if board:
            suits = suits | self.suit_masks(np.array([board], dtype=np.int64))[0]
        return rank_cardsets(suits)

    def card_name(self, card: int) -> str:
        return RANK_CHARS[self.rank[card]] + SUIT_CHARS[self.suit[card]]

    def cards_name(self, cards) -> str:
        """OpenSpiel's CardSet string: highest rank first, suits s, h, d, c within a rank."""
        return "".join(self.card_name(c) for c in sorted(cards, reverse=True))
