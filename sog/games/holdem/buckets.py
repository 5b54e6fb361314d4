"""Hand buckets per betting round: k-means over equity distributions, built once and cached.

Round r's information situations are (hole cards, board dealt by round r) up to suit
permutations (`sog.games.holdem.isomorphism`); bucketing maps each class to one of
`buckets[r]` buckets, and the abstract game treats a bucket's situations identically.
`buckets[r] = 0`, or at least the number of classes, is lossless (one bucket per class:
Pluribus's first round).

Features (distribution-aware abstraction, Johanson et al. 2013): before the last round,
the histogram (`bins` equal bins of [0, 1]) of the hand's final equity against a uniformly
random opponent hand over the rollouts of the rest of the board, pooled over the class's
hands on its canonical board; every rollout when there are at most `rollouts` per board
(exact), else `rollouts` uniform draws (seeded per round and board). On the last round
there is nothing left to roll out: the feature is the equity itself. The histogram enters
k-means as its cumulative distribution (the first `bins - 1` cumulative sums): scikit-
learn's KMeans is Euclidean, and the Euclidean distance between CDFs is the Cramer (L2)
distance, the L2 twin of the earth mover's distance between 1-D histograms (the L1
distance between CDFs); a mean of CDFs is a CDF, so the centroids stay distributions.
We chose this over potential-aware EMD clustering (Ganzfried and Sandholm 2014, the
Pluribus search abstraction): that one needs the next round's clusters as its ground
distance, a non-Euclidean k-means (not scikit-learn's), and builds the rounds in
reverse order; equity distributions already separate made hands from draws of equal
mean equity, which is the first-order gain over expected hand strength.

KMeans (scikit-learn, `random_state=seed`, classes weighted by their raw situations) is
deterministic for a configuration. Buckets are numbered by increasing mean equity.

Cost (measured on the 2-core development machine, load average 3.7 to 6.4; `sog buckets`
prints its build time): equities come from `equity.board_equities`, about 2,600 complete
52-card boards (all 1,326 hands each) per second. The 52-card preflop (169 classes, 2,000
sampled boards): 1.2 s of equities, then 0.02 s lossless or 2.7 s of k-means to 20
buckets. Small-deck flops: 6 ranks x 3 suits, 14,640 classes on 166 canonical flops, 0.7 s
+ 5.1 s of k-means to 50 buckets; 8 ranks x 4 suits, 99,792 classes on 400 flops, 19 s
+ 48 s to 200 buckets. Extrapolated, not run: the 52-card flop (1,755 canonical flops x
1,176 turn-river rollouts = 2.1M boards; 1,286,792 classes) about 10 minutes of equities
(10 flops took 3.2 s) and 10 to 20 minutes of k-means to 200 buckets (KMeans is ~linear in classes x buckets;
`KMEANS_RESTARTS` runs); the turn (63,193 canonical boards x 46 rivers = 2.9M boards,
55,190,538 classes) about 19 minutes of equities but 71M (board, hand) rows to unique,
1.8 GB of [C, 4] keys and an 8.8 GB [C, 20] histogram table: a big-memory machine, and
k-means would have to fit a sample of the classes and predict the rest (here it fits all
of them); the river (2,554,656
canonical boards, 2,428,287,420 classes, 17 minutes of equities) needs a perfect-hash
indexer of the classes (Waugh 2013) in place of the stored keys (78 GB): not implemented.

Files: `load_or_build(config, cache_dir)` keeps `buckets-<digest>.npz` per configuration
(the digest hashes the configuration and the format), so a changed configuration builds
a new file; a file that is not a bucket file, is damaged, or was built for another
configuration raises `BucketError` (a ValueError the CLI reports in one line).
"""
from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import sys
import time
import zipfile
from collections.abc import Sequence
from math import comb
from pathlib import Path

import numpy as np

from sog.errors import SogError
from sog.files import atomic_write
from sog.games.holdem.cards import Deck
from sog.games.holdem.equity import board_equities
from sog.games.holdem.isomorphism import (
    canonical_keys,
    lookup,
    situation_classes,
    split_groups,
)

FORMAT = 1
KMEANS_RESTARTS = 4


class BucketError(SogError, ValueError):
    """A bad bucket configuration, or a bucket file that cannot be used."""


@dataclasses.dataclass(frozen=True)
class BucketConfig:
    """What a bucketing depends on: the deck, the rounds' board cards and the clustering.

    board_cards: per round, the board cards it deals (the game's `numBoardCards`);
    buckets: per round, the bucket count (0: one per class), for the first rounds only
    when shorter (`hunl` with (0,) buckets the preflop alone); bins: histogram bins of
    [0, 1] equity; rollouts: the most board completions enumerated per canonical board
    (more: that many sampled); seed: k-means' random_state and the sampling seed.
    """

    num_ranks: int
    num_suits: int
    hole: int
    board_cards: tuple[int, ...]
    buckets: tuple[int, ...]
    bins: int = 20
    rollouts: int = 2000
    seed: int = 0

    def __post_init__(self):
        object.__setattr__(self, "board_cards", tuple(int(k) for k in self.board_cards))
        object.__setattr__(self, "buckets", tuple(int(k) for k in self.buckets))
        if not (1 <= self.num_ranks <= 13 and 1 <= self.num_suits <= 4):
            raise BucketError(f"buckets: a deck of {self.num_ranks} ranks x {self.num_suits} suits "
                              "(1..13 ranks, 1..4 suits)")
        if self.hole not in (1, 2):
            raise BucketError(f"buckets: {self.hole} hole cards (1 or 2 supported)")
        if not self.board_cards or any(k < 0 for k in self.board_cards):
            raise BucketError(f"buckets: board cards per round {list(self.board_cards)} must be counts, "
                              "one per round")
        if 2 * self.hole + sum(self.board_cards) > self.num_ranks * self.num_suits:
            raise BucketError("buckets: the hands and the board need more cards than the deck holds")
        if not 1 <= len(self.buckets) <= len(self.board_cards) or any(k < 0 for k in self.buckets):
            raise BucketError(f"buckets: {list(self.buckets)} must give one count >= 0 per round, for the "
                              f"first 1 to {len(self.board_cards)} rounds (0 is one bucket per class)")
        if self.bins < 2 or self.rollouts < 1:
            raise BucketError(f"buckets: bins={self.bins} must be at least 2 and rollouts={self.rollouts} "
                              "at least 1")

    @classmethod
    def for_game(cls, game, buckets: Sequence[int], **options) -> BucketConfig:
        """The configuration for a `Holdem` game's deck and rounds."""
        r = game.rules
        return cls(r.num_ranks, r.num_suits, r.hole, r.board_cards, tuple(buckets), **options)

    def to_json(self) -> str:
        return json.dumps({"format": FORMAT, **dataclasses.asdict(self)}, sort_keys=True)

    def digest(self) -> str:
        """16 hex digits of the SHA-256 of the configuration and the file format."""
        return hashlib.sha256(self.to_json().encode()).hexdigest()[:16]

    def describe(self) -> str:
        return (f"{self.num_ranks} ranks x {self.num_suits} suits, {self.hole} hole cards, board cards "
                f"{list(self.board_cards)}, buckets {list(self.buckets)}, bins {self.bins}, "
                f"rollouts {self.rollouts}, seed {self.seed}")


@dataclasses.dataclass(frozen=True)
class RoundBuckets:
    """One round's bucketing: keys int64 [C, S] (sorted canonical keys of the classes),
    buckets int32 [C] (in [0, num_buckets)), sizes int64 [C] (raw situations per class),
    equity float64 [C] (the class's mean final equity)."""

    keys: np.ndarray
    buckets: np.ndarray
    sizes: np.ndarray
    equity: np.ndarray

    @property
    def num_buckets(self) -> int:
        return int(self.buckets.max()) + 1


class Buckets:
    """The bucketing of the rounds of a configuration (`build`, `load`, `load_or_build`):
    rounds[r] for r < len(config.buckets)."""

    def __init__(self, config: BucketConfig, rounds: Sequence[RoundBuckets]):
        self.config, self.rounds = config, tuple(rounds)
        self.deck = Deck(config.num_ranks, config.num_suits, config.hole)

    def _groups(self, r: int, boards: np.ndarray) -> list[np.ndarray]:
        sizes = self.config.board_cards[:r + 1]
        if boards.shape[1] != sum(sizes):
            raise ValueError(f"buckets: round {r} has {sum(sizes)} board cards, got {boards.shape[1]}")
        return split_groups(boards, sizes)

    def classes(self, r: int, holes: np.ndarray, boards: np.ndarray) -> np.ndarray:
        """int64 [M]: the class (row of `rounds[r].keys`) of each situation: holes int [M, hole],
        boards int [M, b] (round r's board in deal order)."""
        holes, boards = np.asarray(holes, dtype=np.int64), np.asarray(boards, dtype=np.int64)
        keys = canonical_keys(self.config.num_ranks, self.config.num_suits, [holes, *self._groups(r, boards)])
        found = lookup(keys, self.rounds[r].keys)
        if (found < 0).any():
            raise ValueError(f"buckets: round {r}: a hand shares a card with its board or is not of the deck")
        return found

    def bucket(self, r: int, hole: Sequence[int], board: Sequence[int]) -> int:
        """The bucket of one situation (board in deal order)."""
        return int(self.buckets(r, np.array([hole]), np.array([board]).reshape(1, -1))[0])

    def buckets(self, r: int, holes: np.ndarray, boards: np.ndarray) -> np.ndarray:
        """int32 [M]: the bucket of each situation (as `classes`)."""
        return self.rounds[r].buckets[self.classes(r, holes, boards)]

    def board_buckets(self, r: int, board: Sequence[int]) -> np.ndarray:
        """int32 [N]: the bucket of every hand of the deck (`Deck.hands` order) on round r's
        board, -1 for a hand holding a board card."""
        board = np.asarray(board, dtype=np.int64).reshape(1, -1)
        ok = (self.deck.hand_masks & (self.deck.card_masks(board)[0] if board.shape[1] else np.uint64(0))) == 0
        out = np.full(self.deck.num_hands, -1, dtype=np.int32)
        out[ok] = self.buckets(r, self.deck.hands[ok], np.repeat(board, ok.sum(), axis=0))
        return out


class _Progress:
    """A redrawn progress line on stderr (at most every half second), or nothing."""

    def __init__(self, enabled: bool, label: str, total: int):
        self.enabled, self.label, self.total, self.last = enabled, label, total, 0.0

    def update(self, done: int) -> None:
        now = time.monotonic()
        if self.enabled and (now - self.last >= 0.5 or done == self.total):
            self.last = now
            print(f"\r{self.label}: {done}/{self.total}", end="\n" if done == self.total else "",
                  file=sys.stderr, flush=True)


def _rollouts(left: np.ndarray, k: int, limit: int, rng: np.random.Generator) -> np.ndarray:
    """int64 [R, k]: every k-subset of `left` if at most `limit`, else `limit` uniform draws."""
    count = comb(len(left), k)
    if count <= limit:
        return np.array(list(itertools.combinations(left.tolist(), k)), dtype=np.int64).reshape(count, k)
    return left[np.argsort(rng.random((limit, len(left))), axis=1)[:, :k]]


def _round_features(config: BucketConfig, deck: Deck, r: int, progress: bool):
    """The classes of round r and their features: (classes, features float64 [C, F],
    mean equity float64 [C])."""
    sizes = config.board_cards[:r + 1]
    classes = situation_classes(deck, sizes)
    todo = sum(config.board_cards) - sum(sizes)
    c, bins = classes.num_classes, config.bins
    hist = np.zeros((c, bins))
    eq_sum, eq_count = np.zeros(c), np.zeros(c)
    bar = _Progress(progress, f"buckets round {r}: boards", len(classes.boards))
    all_cards = np.arange(deck.size)
    for i, board in enumerate(classes.boards):
        left = np.setdiff1d(all_cards, board)
        rng = np.random.default_rng([config.seed, r, i])
        completions = _rollouts(left, todo, config.rollouts, rng)
        full = np.concatenate([np.broadcast_to(board, (len(completions), len(board))), completions], axis=1)
        eq = board_equities(deck, full)                                                  # [R, N]
        hands = np.nonzero(classes.hand_class[i] >= 0)[0]
        eq = eq[:, hands]
        seen = ~np.isnan(eq)
        bin_of = np.minimum((np.where(seen, eq, 0) * bins).astype(np.int64), bins - 1)
        flat = (np.arange(len(hands))[None, :] * bins + bin_of)[seen]
        counts = np.bincount(flat, minlength=len(hands) * bins).reshape(len(hands), bins)
        cls = classes.hand_class[i, hands]
        np.add.at(hist, cls, counts)
        np.add.at(eq_sum, cls, np.where(seen, eq, 0).sum(0))
        np.add.at(eq_count, cls, seen.sum(0))
        bar.update(i + 1)
    mean_equity = eq_sum / eq_count
    if todo == 0:
        return classes, mean_equity[:, None], mean_equity
    cdf = np.cumsum(hist, axis=1) / hist.sum(1, keepdims=True)
    return classes, cdf[:, :-1], mean_equity


def _cluster(features: np.ndarray, weights: np.ndarray, equity: np.ndarray, k: int, seed: int) -> np.ndarray:
    """int32 [C]: buckets numbered by increasing mean equity; one per class when k is 0 or
    at least the number of classes."""
    c = len(features)
    if k == 0 or k >= c:
        labels, k = np.arange(c), c
    else:
        # imported here: scikit-learn takes ~0.9 s to import, which every `sog` command would pay
        from sklearn.cluster import KMeans

        km = KMeans(n_clusters=k, n_init=KMEANS_RESTARTS, random_state=seed)
        labels = km.fit(features, sample_weight=weights.astype(np.float64)).labels_
    mass = np.bincount(labels, weights=weights, minlength=k)
    mean = np.bincount(labels, weights=weights * equity, minlength=k) / np.maximum(mass, 1)
    order = np.lexsort((np.arange(k), mean))                       # by mean equity, then label
    rank = np.empty(k, dtype=np.int32)
    rank[order] = np.arange(k, dtype=np.int32)
    return rank[labels]


def build(config: BucketConfig, progress: bool = True) -> Buckets:
    """Build the buckets of the configured rounds (see the module docstring), a progress line
    on stderr."""
    deck = Deck(config.num_ranks, config.num_suits, config.hole)
    rounds = []
    for r in range(len(config.buckets)):
        classes, features, equity = _round_features(config, deck, r, progress)
        buckets = _cluster(features, classes.sizes, equity, config.buckets[r], config.seed)
        rounds.append(RoundBuckets(classes.keys, buckets, classes.sizes, equity))
    return Buckets(config, rounds)


def save(buckets: Buckets, path: str | Path) -> None:
    """Write `buckets` to `path` (.npz, atomically)."""
    arrays = {"config": np.array(buckets.config.to_json())}
    for r, rb in enumerate(buckets.rounds):
        arrays.update({f"keys{r}": rb.keys, f"buckets{r}": rb.buckets, f"sizes{r}": rb.sizes,
                       f"equity{r}": rb.equity})
    atomic_write(path, lambda f: np.savez_compressed(f, **arrays))


def load(path: str | Path, config: BucketConfig | None = None) -> Buckets:
    """Read a bucket file; `config`: the configuration it must have been built for."""
    try:
        with np.load(path, allow_pickle=False) as z:
            data = {name: z[name] for name in z.files}
        stored = json.loads(str(data["config"]))
        if not isinstance(stored, dict) or stored.pop("format", None) != FORMAT:
            raise BucketError(f"{path}: not a bucket file of format {FORMAT}")
        file_config = BucketConfig(**stored)
        rounds = [RoundBuckets(data[f"keys{r}"], data[f"buckets{r}"], data[f"sizes{r}"], data[f"equity{r}"])
                  for r in range(len(file_config.buckets))]
    except BucketError:
        raise
    except (OSError, ValueError, TypeError, KeyError, EOFError, zipfile.BadZipFile) as e:
        raise BucketError(f"{path}: not a readable bucket file ({type(e).__name__}: {e})") from None
    if config is not None and file_config != config:
        raise BucketError(f"{path} was built for {file_config.describe()}; wanted {config.describe()}")
    for r, rb in enumerate(rounds):
        c, k = len(rb.keys), file_config.buckets[r]
        if (rb.keys.ndim != 2 or rb.keys.shape[1] != file_config.num_suits or rb.buckets.shape != (c,)
                or rb.sizes.shape != (c,) or rb.equity.shape != (c,) or c == 0
                or rb.buckets.min() < 0 or (k and rb.buckets.max() >= k)):
            raise BucketError(f"{path}: round {r}'s arrays are damaged")
    return Buckets(file_config, rounds)


def cache_path(config: BucketConfig, cache_dir: str | Path) -> Path:
    return Path(cache_dir) / f"buckets-{config.digest()}.npz"


def load_or_build(config: BucketConfig, cache_dir: str | Path, progress: bool = True) -> tuple[Buckets, bool]:
    """(the buckets of `config`, whether they were built now): read from `cache_dir` when
    built before, else built and written there."""
    path = cache_path(config, cache_dir)
    if path.exists():
        return load(path, config), False
    buckets = build(config, progress)
    Path(cache_dir).mkdir(parents=True, exist_ok=True)
    save(buckets, path)
    return buckets, True
