"""Hold'em information abstraction: suit isomorphism (sog.games.holdem.isomorphism), board
equities (equity.board_equities) and hand buckets (sog.games.holdem.buckets)."""
from __future__ import annotations

import itertools
from math import comb

import numpy as np
import pytest

from launch.cli import main
from sog.games.holdem import Holdem
from sog.games.holdem.buckets import (
    BucketConfig,
    BucketError,
    build,
    cache_path,
    load,
    load_or_build,
    save,
)
from sog.games.holdem.cards import Deck
from sog.games.holdem.equity import board_equities, equity
from sog.games.holdem.isomorphism import (
    canonical_boards,
    canonical_keys,
    lookup,
    situation_classes,
    split_groups,
)

SMALL = {"numRanks": 6, "numSuits": 2, "numHoleCards": 2, "numRounds": 3, "numBoardCards": "0 3 1"}


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


# ---- buckets ----------------------------------------------------------------
@pytest.fixture(scope="module")
def small_game():
    return Holdem(**SMALL)


@pytest.fixture(scope="module")
def lossless(small_game):
    return build(BucketConfig.for_game(small_game, [0, 0, 0]), progress=False)


def test_lossless_buckets_are_the_suit_orbits(small_game, lossless):
    """One bucket per canonical class: the abstract game merges exactly the situations a
    suit permutation relates, so it is the real game."""
    deck = small_game.deck
    sizes = small_game.rules.board_cards
    for r in range(3):
        rb = lossless.rounds[r]
        assert sorted(rb.buckets.tolist()) == list(range(len(rb.keys)))          # a bijection on classes
        if r == 2:
            continue                                                             # 27,720 classes: rounds 0, 1 suffice
        raw = raw_situations(deck, sizes[1:r + 1])
        boards = np.concatenate(raw[1:], axis=1) if r else np.zeros((len(raw[0]), 0), dtype=np.int64)
        buckets = lossless.buckets(r, raw[0], boards)
        assert same_partition(buckets, orbit_labels(deck, raw))


def test_bucket_equity_is_the_exact_equity(small_game, lossless):
    deck = small_game.deck
    rng = np.random.default_rng(0)
    for _ in range(10):
        cards = rng.permutation(deck.size)[:6]
        hole, board = cards[:2], cards[2:]
        for r, b in ((1, board[:3]), (2, board)):
            cls = lossless.classes(r, hole[None], b[None])[0]
            assert lossless.rounds[r].equity[cls] == pytest.approx(equity(deck, hole, b, 4), abs=1e-12)
    per_hand = lossless.board_buckets(1, board[:3])
    assert (per_hand == -1).sum() == comb(deck.size, 2) - comb(deck.size - 3, 2)
    i = deck.hand_index(hole)
    assert per_hand[i] == lossless.bucket(1, hole, board[:3])


def test_kmeans_buckets_are_deterministic_and_ordered(small_game):
    config = BucketConfig.for_game(small_game, [4, 8, 8], bins=10, seed=3)
    a, b = build(config, progress=False), build(config, progress=False)
    for ra, rb in zip(a.rounds, b.rounds):
        assert (ra.buckets == rb.buckets).all()
        assert ra.num_buckets == len(np.unique(ra.buckets))
        mean = np.bincount(ra.buckets, ra.sizes * ra.equity) / np.bincount(ra.buckets, ra.sizes)
        assert (np.diff(mean) > 0).all()                                    # numbered by mean equity
    assert [r.num_buckets for r in a.rounds] == [4, 8, 8]


def test_bucket_config_errors(small_game):
    for bad in ([], [1, 2, 3, 4], [1, -1, 2]):
        with pytest.raises(BucketError, match="one count"):
            BucketConfig.for_game(small_game, bad)
    with pytest.raises(BucketError, match="bins"):
        BucketConfig.for_game(small_game, [1, 1, 1], bins=1)
    with pytest.raises(BucketError, match="hole cards"):
        BucketConfig(6, 4, 3, (0, 3), (0, 0))


def test_cache_builds_once_and_refuses_other_or_damaged_files(small_game, tmp_path):
    config = BucketConfig.for_game(small_game, [3, 5, 5], bins=8)
    first, built = load_or_build(config, tmp_path, progress=False)
    again, rebuilt = load_or_build(config, tmp_path, progress=False)
    assert built and not rebuilt
    assert all((x.buckets == y.buckets).all() and (x.keys == y.keys).all() for x, y in zip(first.rounds, again.rounds))
    other = BucketConfig.for_game(small_game, [3, 5, 6], bins=8)
    assert cache_path(other, tmp_path) != cache_path(config, tmp_path)
    with pytest.raises(BucketError, match="was built for"):
        load(cache_path(config, tmp_path), other)
    path = cache_path(config, tmp_path)
    path.write_bytes(path.read_bytes()[:200])
    with pytest.raises(BucketError, match="not a readable bucket file"):
        load_or_build(config, tmp_path, progress=False)
    np.savez(tmp_path / "stray.npz", x=np.zeros(3))
    with pytest.raises(BucketError):
        load(tmp_path / "stray.npz")
    damaged = build(config, progress=False)
    damaged.rounds[1].buckets[0] = 99
    save(damaged, tmp_path / "damaged.npz")
    with pytest.raises(BucketError, match="damaged"):
        load(tmp_path / "damaged.npz", config)


def test_cli_buckets(tmp_path, capsys):
    game = "holdem(numRanks=6,numSuits=2,numHoleCards=2,numRounds=2,numBoardCards=0 3)"
    assert main(["buckets", "--game", game, "--buckets", "4,6", "--cache-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert '"built": true' in out and '"classes": 36' in out
    next(tmp_path.glob("buckets-*.npz")).write_bytes(b"not a zip")
    assert main(["buckets", "--game", game, "--buckets", "4,6", "--cache-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("sog buckets: error:") and "not a readable bucket file" in err[-1]
    assert main(["buckets", "--game", game, "--buckets", "4,6,8", "--cache-dir", str(tmp_path)]) == 2
    assert main(["buckets", "--game", game, "--buckets", "0", "--cache-dir", str(tmp_path)]) == 0   # preflop only
    assert '"rounds": [{"classes": 36, "buckets": 36}]' in capsys.readouterr().out
