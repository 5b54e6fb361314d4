"""Buckets of sampled deals: each player's bucket code on every round, and the showdown ranks.

P players (2 by default; n-player hold'em, `sog.multiplayer`, up to 6).

A sampled-deal traverser (`sog.agents.holdem.blueprint.sampled_mccfr`) draws whole deals (both hands and
the full board) and needs, per deal, each player's information-state code on each round
and both showdown ranks, without enumerating situations. `DealBuckets.sample(rng, n)`
gives them for n deals at once:

  cards  int64 [n, Ph + b]  player 0's h hole cards, player 1's, ..., then the board in deal order
  codes  int64 [n, P, R]    the code of player p on round r (below)
  ranks  int64 [n, P]       ACPC showdown rank of each player's hand with the full board

A round's bucket comes from one of two indexers:

* `table` (`sog.games.holdem.buckets.Buckets`, k-means over equity distributions or one
  bucket per suit class): the suit-isomorphic canonical key of (hand, board) looked up
  among the round's classes. The world-tree blueprint uses the same tables, so on small
  decks both solvers play the same abstract game. Round 0 always uses it (169 classes on
  52 cards).
* `strength` (rounds after the first when `indexer="strength"`): the hand's immediate hand
  rank on the board dealt so far (`fast_rank.ihr_boards`: P(win) + P(tie)/2 against a uniformly
  random hand, with no card still to come) cut into `buckets[r]` buckets at thresholds from
  1-D k-means (scikit-learn, `random_state=seed`) over `sample` deals drawn with that seed.
  Computed on demand, one evaluator pass over the deck's hands per round and deal (about
  10 microseconds on 52 cards), so nothing is enumerated or cached: the 52-card turn and
  river have 55M and 2.4G suit classes, whose k-means tables this repository cannot build
  (`buckets` module doc), and a bounded cache of on-demand equity distributions would cost
  46 (turn) or 1,081 (flop) evaluator passes per miss. The price is potential: a draw is
  bucketed by what it is now, not by what it may become (Johanson et al. 2013), and
  thresholds cut one number instead of clustering distributions.

Codes: `recall="imperfect"`: the current round's bucket; `"perfect"`: the buckets of rounds
0..r in mixed radix (`code * sizes[k] + bucket_k`), as `sog.agents.holdem.blueprint.abstraction.CardAbstraction`.
"""
from __future__ import annotations

import numpy as np

from sog.errors import SogError
from sog.games.holdem import fast_rank
from sog.games.holdem.buckets import Buckets
from sog.games.holdem.cards import Deck, rank_cardsets

INDEXERS = ("table", "strength")
STRENGTH_SAMPLE = 20_000


class DealBucketError(SogError, ValueError):
    """A deal-bucket configuration that does not fit its game."""


class DealBuckets:
    """Per-deal codes and showdown ranks of a two-player `Holdem` game's rules (see the module doc).

    table: the `Buckets` of round 0 (`indexer="strength"`) or of every round (`"table"`);
    counts: per round the bucket count (`strength` rounds: > 0).
    """

    def __init__(self, rules, table: Buckets, counts, recall: str = "imperfect", indexer: str = "table",
                 seed: int = 0, sample: int = STRENGTH_SAMPLE, players: int = 2):
        counts = tuple(int(k) for k in counts)
        if indexer not in INDEXERS:
            raise DealBucketError(f"indexer must be one of {', '.join(INDEXERS)}, got {indexer!r}")
        if recall not in ("imperfect", "perfect"):
            raise DealBucketError(f"recall must be imperfect or perfect, got {recall!r}")
        if len(counts) != rules.num_rounds:
            raise DealBucketError(f"{len(counts)} bucket counts for {rules.num_rounds} rounds")
        tabled = rules.num_rounds if indexer == "table" else 1
        if len(table.rounds) < tabled:
            raise DealBucketError(f"the bucket tables cover {len(table.rounds)} rounds; indexer {indexer} needs "
                                  f"{tabled}")
        if indexer == "strength" and any(k < 1 for k in counts[1:]):
            raise DealBucketError(f"indexer strength: buckets {list(counts)} must be at least 1 after the first round")
        self.rules, self.table, self.recall, self.indexer = rules, table, recall, indexer
        self.counts, self.seed, self.sample_size = counts, int(seed), int(sample)
        self.deck = Deck(rules.num_ranks, rules.num_suits, rules.hole)
        self.hole, self.num_rounds, self.players = rules.hole, rules.num_rounds, int(players)
        self.board_ends = np.cumsum(rules.board_cards)          # board cards dealt by the end of round r
        self.held = self.players * self.hole                    # hole cards dealt
        self.num_cards = self.held + int(self.board_ends[-1])
        self._hand_masks = self.deck.hand_masks.astype(np.int64)
        self._tabled = tabled
        self.thresholds: list[np.ndarray] = []
        sizes = [rb.num_buckets for rb in table.rounds[:tabled]]
        if indexer == "strength":
            rng = np.random.default_rng([self.seed, 0x5157])
            cards = self._deal(rng, self.sample_size)
            for r in range(1, rules.num_rounds):
                self.thresholds.append(_thresholds(self._strength(cards, r).ravel(), counts[r], self.seed))
                sizes.append(len(self.thresholds[-1]) + 1)
        self.sizes = tuple(sizes)                   # buckets per round
        radix = np.cumprod(self.sizes) if recall == "perfect" else np.array(self.sizes)
        self.num_codes = int(radix.max())           # codes of any round are < num_codes

    def describe(self) -> dict:
        """What the codes depend on beyond the tables (`describe_indexer`)."""
        return describe_indexer(self.indexer, self.counts, self.seed, self.sample_size, self.players)

    # ---- deals --------------------------------------------------------------------------
    def _deal(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """int64 [n, 2h + b]: uniform deals without replacement (see the module doc)."""
        return np.argsort(rng.random((n, self.deck.size)), axis=1)[:, :self.num_cards].astype(np.int64)

    def _hand_rows(self, cards: np.ndarray) -> np.ndarray:
        """int64 [n, P]: each player's hand as a row of `Deck.hands`."""
        out = np.empty((len(cards), self.players), dtype=np.int64)
        size = self.deck.size
        for p in range(self.players):
            hole = np.sort(cards[:, p * self.hole:(p + 1) * self.hole], axis=1)
            if self.hole == 1:
                out[:, p] = hole[:, 0]
            else:                                   # lexicographic index of the pair (a < b)
                a, b = hole[:, 0], hole[:, 1]
                out[:, p] = a * size - a * (a + 1) // 2 + (b - a - 1)
        return out

    def _strength(self, cards: np.ndarray, r: int) -> np.ndarray:
        """float64 [n, P]: the players' immediate hand ranks on round r's board."""
        board = cards[:, self.held:self.held + int(self.board_ends[r])]
        masks = self.deck.card_masks(board).astype(np.int64)
        order = np.argsort(masks, kind="stable")         # equal boards side by side: ranked once
        out = np.empty((len(cards), self.players))
        fast_rank.ihr_boards(fast_rank.tables(), self.deck.hand_suits, self._hand_masks,
                             self.deck.suit_masks(board[order]), masks[order], self._hand_rows(cards[order]), out)
        out[order] = out.copy()
        return out

    def sample(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(cards, codes, ranks) of n deals drawn from `rng` (see the module doc)."""
        cards = self._deal(rng, n)
        return cards, self.codes(cards), self.ranks(cards)

    def codes(self, cards: np.ndarray) -> np.ndarray:
        """int64 [n, P, R]: each player's code on each round (see the module doc)."""
        n, h, players = len(cards), self.hole, self.players
        buckets = np.empty((n, players, self.num_rounds), dtype=np.int64)
        for r in range(self.num_rounds):
            if r < self._tabled:
                board = cards[:, self.held:self.held + int(self.board_ends[r])]
                for p in range(players):
                    buckets[:, p, r] = self.table.buckets(r, cards[:, p * h:(p + 1) * h], board)
            else:
                equity = self._strength(cards, r)
                buckets[:, :, r] = np.searchsorted(self.thresholds[r - 1], equity, side="right")
        if self.recall == "imperfect":
            return buckets
        codes = np.empty_like(buckets)
        acc = np.zeros((n, players), dtype=np.int64)
        for r in range(self.num_rounds):
            acc = acc * self.sizes[r] + buckets[:, :, r]
            codes[:, :, r] = acc
        return codes

    def hand_codes(self, board, r: int) -> np.ndarray:
        """int64 [N]: the code on round r of every hand of the deck (`Deck.hands` order) with
        `board` (the board cards in deal order, at least round r's), as `codes` gives a player
        holding it; -1 for a hand holding a board card."""
        board = np.asarray(board, dtype=np.int64)
        n = self.deck.num_hands
        seen = board[:int(self.board_ends[r])]
        ok = (self.deck.hand_masks & (self.deck.card_masks(seen[None])[0] if len(seen) else np.uint64(0))) == 0
        code = np.zeros(n, dtype=np.int64)
        rounds = range(r + 1) if self.recall == "perfect" else (r,)
        for k in rounds:
            b = board[:int(self.board_ends[k])]
            if k < self._tabled:
                bucket = self.table.board_buckets(k, b).astype(np.int64)
            else:
                out = np.zeros((1, n))
                fast_rank.ihr_boards(fast_rank.tables(), self.deck.hand_suits, self._hand_masks,
                                     self.deck.suit_masks(b[None]), self.deck.card_masks(b[None]).astype(np.int64),
                                     np.arange(n, dtype=np.int64)[None], out)
                bucket = np.searchsorted(self.thresholds[k - 1], out[0], side="right")
            code = code * self.sizes[k] + bucket if self.recall == "perfect" else bucket
        return np.where(ok, code, -1).astype(np.int64)

    def ranks(self, cards: np.ndarray) -> np.ndarray:
        """int64 [n, P]: each player's showdown rank (hole cards and the full board)."""
        h = self.hole
        board = self.deck.suit_masks(cards[:, self.held:])
        return np.stack([rank_cardsets(board | self.deck.suit_masks(cards[:, p * h:(p + 1) * h]))
                         for p in range(self.players)], axis=1)


def describe_indexer(indexer: str, counts, seed: int, sample: int = STRENGTH_SAMPLE, players: int = 2) -> dict:
    """What a `DealBuckets`' codes depend on beyond its tables (for fingerprints; `players`
    named only when not 2)."""
    out = {"indexer": indexer, "counts": [int(k) for k in counts], "sample": int(sample), "seed": int(seed)}
    return out | ({"players": int(players)} if players != 2 else {})


def _thresholds(values: np.ndarray, k: int, seed: int) -> np.ndarray:
    """float64 [k' - 1]: the midpoints between the sorted centres of a 1-D k-means of `values`
    (k' = k, or the number of distinct values when fewer)."""
    distinct = np.unique(values)
    k = min(k, len(distinct))
    if k <= 1:
        return np.zeros(0)
    # imported here: scikit-learn takes ~0.9 s to import, which other commands need not pay
    from sklearn.cluster import KMeans

    centres = KMeans(n_clusters=k, n_init=4, random_state=seed).fit(values[:, None]).cluster_centers_[:, 0]
    centres = np.sort(centres)
    return (centres[1:] + centres[:-1]) / 2
