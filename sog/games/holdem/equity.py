"""A hold'em hand's equity against a uniformly random opponent hand, vectorised.

`equity(deck, hand, board, board_total)` is P(win) + P(tie) / 2 of `hand` (card ids)
on the board dealt so far (`board`) against an opponent hand drawn uniformly from
the cards neither holds, the rest of the board (up to `board_total` cards) drawn
uniformly from what is left; hands are ranked as the game's showdowns rank them
(`cards.rank_cardsets`, the ACPC server's ranking), so it holds for any deck size.

Exact enumeration of every (rest of the board, opponent hand) pair when there are at
most `exact_limit` of them (small decks; on 52 cards the turn and the river), else
`samples` Monte Carlo draws from `rng`: pairs drawn without replacement from the
cards left (standard error at most 0.5 / sqrt(samples)). Both are numpy over all
pairs at once: no Python loop over runouts or hands.

`hand_equities(deck, hand, board, board_total)` is the same equity against each opponent
hand separately (float [N]): what the local best response (`sog.eval.holdem.lbr`) weighs
with the opponent's range.
"""
from __future__ import annotations

import itertools
from collections.abc import Sequence
from math import comb

import numba
import numpy as np

from sog.games.holdem.cards import Deck, rank_cardsets

EXACT_LIMIT = 100_000     # (runout, opponent hand) pairs enumerated before sampling instead
SAMPLES = 2_000
EXACT_RUNOUTS = 1_100     # `hand_equities`: runouts enumerated before sampling (52 cards: the flop's 1081)
RUNOUT_SAMPLES = 1_000    # `hand_equities`: runouts sampled beyond (52 cards: before the flop)
RANKS_PER_BATCH = 500_000  # `hand_equities`: hand ranks computed at once (bounds the temporaries)


def _score(hero: np.ndarray, opp: np.ndarray) -> np.ndarray:
    """float: 1 where the hero's rank is higher, 1/2 on ties, 0 below."""
    return (hero > opp) + 0.5 * (hero == opp)


def equity(deck: Deck, hand: Sequence[int], board: Sequence[int], board_total: int,
           rng: np.random.Generator | None = None, samples: int = SAMPLES,
           exact_limit: int = EXACT_LIMIT) -> float:
    """The equity of `hand` in [0, 1] (see the module docstring); `rng` is needed only when
    the pairs outnumber `exact_limit`."""
    hand, board, dead, left, k = _cards_left("equity", deck, hand, board, board_total)
    hero_suits = deck.suit_masks(np.array([hand], dtype=np.int64))[0]                       # [4]
    if comb(len(left), k) * deck.num_hands <= exact_limit:
        return _exact(deck, hero_suits, board, left, k, dead)
    if rng is None:
        raise ValueError("equity: Monte Carlo (too many runouts to enumerate) needs an rng")
    return _sampled(deck, hero_suits, board, left, k, rng, samples)


def hand_equities(deck: Deck, hand: Sequence[int], board: Sequence[int], board_total: int,
                  rng: np.random.Generator | None = None, samples: int = RUNOUT_SAMPLES,
                  exact_runouts: int = EXACT_RUNOUTS) -> np.ndarray:
    """float64 [N]: the equity in [0, 1] (P(win) + P(tie) / 2) of `hand` against each opponent
    hand y of `deck` on the board dealt so far (`board`), the rest of the board (up to
    `board_total` cards) still to come; NaN for a y sharing a card with `hand` or `board`.

    Runouts are the sets of the k = board_total - len(board) cards to come, drawn from the L
    cards in neither `hand` nor `board`; y's equity averages over the runouts that miss y's
    cards (given both hands they are equally likely). Exact enumeration of all C(L, k)
    runouts when there are at most `exact_runouts` (52 cards, two hole cards: the flop's
    C(47, 2) = 1081, the turn's 46, the river's one), else `samples` runouts drawn from `rng`
    (each a uniform k-set of the L cards, independently): y's equity is then the mean over
    the sampled runouts that miss y (before the flop about 81% of them; standard error at
    most 0.5 / sqrt(that count); 1/2 if none does). Work: C(L, k) or `samples` times N hand
    ranks (`rank_cardsets`, numpy, in batches of `RANKS_PER_BATCH`).
    """
    hand, board, dead, left, k = _cards_left("hand_equities", deck, hand, board, board_total)
    if comb(len(left), k) <= exact_runouts:
        runouts = _all_runouts(left, k)
    elif rng is None:
        raise ValueError("hand_equities: Monte Carlo (too many runouts to enumerate) needs an rng")
    elif samples < 1:
        raise ValueError(f"hand_equities: samples must be at least 1, got {samples}")
    else:
        runouts = left[np.argsort(rng.random((samples, len(left))), axis=1)[:, :k]]           # [S, k]
    hero_suits = deck.suit_masks(np.array([hand], dtype=np.int64))[0]                         # [4]
    n = deck.num_hands
    wins, counts = np.zeros(n), np.zeros(n)
    step = max(1, RANKS_PER_BATCH // n)
    for start in range(0, len(runouts), step):
        part = runouts[start:start + step]                                                     # [c, k]
        hero, opp = _rank_runouts(deck, hero_suits, board, part)                               # [c], [c, N]
        miss = (deck.hand_masks[None, :] & deck.card_masks(part)[:, None]) == 0                 # [c, N]
        wins += np.where(miss, _score(hero[:, None], opp), 0.0).sum(0)
        counts += miss.sum(0)
    dead_mask = deck.card_masks(np.array([dead], dtype=np.int64))[0]
    free = (deck.hand_masks & dead_mask) == 0
    return np.where(free, np.where(counts > 0, wins / np.maximum(counts, 1), 0.5), np.nan)


def _cards_left(who: str, deck: Deck, hand, board, board_total: int):
    """(hand, board as int lists, dead: their sorted cards, left: int [L] the other cards, k: the
    board cards to come), checked: ValueError naming `who` for cards that repeat or are not the
    deck's, a board longer than `board_total`, or too few cards left for a hand and the rest."""
    hand, board = [int(c) for c in hand], [int(c) for c in board]
    dead = sorted(set(hand) | set(board))
    if len(dead) != len(hand) + len(board) or not all(0 <= c < deck.size for c in dead):
        raise ValueError(f"{who}: hand {hand} and board {board} must be distinct cards of the deck")
    k = board_total - len(board)
    if k < 0:
        raise ValueError(f"{who}: the board {board} holds more than {board_total} cards")
    left = np.array([c for c in range(deck.size) if c not in dead], dtype=np.int64)
    if len(left) < deck.hole + k:
        raise ValueError(f"{who}: {len(left)} cards left cannot deal a hand of {deck.hole} and {k} board cards")
    return hand, board, dead, left, k


def _all_runouts(left: np.ndarray, k: int) -> np.ndarray:
    """int [C(L, k), k]: every k-set of the cards `left`, in `itertools.combinations` order."""
    return np.array(list(itertools.combinations(left.tolist(), k)), dtype=np.int64).reshape(comb(len(left), k), k)


def _rank_runouts(deck: Deck, hero_suits: np.ndarray, board: list[int], runouts: np.ndarray):
    """(hero int [C], opp int [C, N]): the ACPC ranks of the hero (suit masks [4]) and of every
    hand of the deck on `board` completed by each run-out (int [C, k])."""
    boards = np.concatenate([np.broadcast_to(np.array(board, dtype=np.int64), (len(runouts), len(board))),
                             runouts], axis=1)                                                    # [C, b]
    board_suits = deck.suit_masks(boards)                                                         # [C, 4]
    hero = rank_cardsets(board_suits | hero_suits)                                                # [C]
    opp = rank_cardsets((board_suits[:, None, :] | deck.hand_suits[None]).reshape(-1, 4))
    return hero, opp.reshape(len(runouts), deck.num_hands)


def _exact(deck: Deck, hero_suits: np.ndarray, board: list[int], left: np.ndarray, k: int, dead: list[int]) -> float:
    runouts = _all_runouts(left, k)                                                               # [C, k]
    hero, opp = _rank_runouts(deck, hero_suits, board, runouts)                                   # [C], [C, N]
    dead_mask = deck.card_masks(np.array([dead], dtype=np.int64))[0]
    taken = deck.card_masks(runouts) | dead_mask                                                  # [C]
    valid = (deck.hand_masks[None, :] & taken[:, None]) == 0                                      # [C, N]
    return float(_score(hero[:, None], opp)[valid].mean())


def _sampled(deck: Deck, hero_suits: np.ndarray, board: list[int], left: np.ndarray, k: int,
             rng: np.random.Generator, samples: int) -> float:
    if samples < 1:
        raise ValueError(f"equity: samples must be at least 1, got {samples}")
    need = deck.hole + k
    picks = np.argsort(rng.random((samples, len(left))), axis=1)[:, :need]   # a uniform draw in random order
    cards = left[picks]
    boards = np.concatenate([np.broadcast_to(np.array(board, dtype=np.int64), (samples, len(board))),
                             cards[:, deck.hole:]], axis=1)                                      # [M, b]
    board_suits = deck.suit_masks(boards)                                                        # [M, 4]
    hero = rank_cardsets(board_suits | hero_suits)
    opp = rank_cardsets(board_suits | deck.suit_masks(cards[:, :deck.hole]))
    return float(_score(hero, opp).mean())


def board_equities(deck: Deck, boards: np.ndarray) -> np.ndarray:
    """float64 [B, N]: the equity of every hand of `deck` on each complete board (int [B, b],
    all the board's cards) against a uniformly random opponent hand of the cards left, as
    `equity` defines it; NaN for a hand holding a board card. One or two hole cards.

    Per board: the hands' ACPC ranks (`rank_cardsets`), then one sweep up the strength
    order counting the opponents below and tied, the hands that share a card with the hero
    taken out card by card (`_sweep`, numba): O(N log N) per board, no [N, N] matrix.
    """
    if deck.hole not in (1, 2):
        raise ValueError(f"board_equities: hands of {deck.hole} cards (1 or 2 supported)")
    boards = np.asarray(boards, dtype=np.int64)
    out = np.empty((len(boards), deck.num_hands))
    chunk = max(1, 2_000_000 // deck.num_hands)          # boards per batch: ~2M hand ranks at once
    for start in range(0, len(boards), chunk):
        part = boards[start:start + chunk]
        board_suits = deck.suit_masks(part)                                                     # [b, 4]
        ranks = rank_cardsets((board_suits[:, None, :] | deck.hand_suits[None]).reshape(-1, 4))
        blocked = (deck.card_masks(part)[:, None] & deck.hand_masks[None, :]) != 0             # [b, N]
        _sweep(ranks.reshape(len(part), deck.num_hands), blocked, deck.hands, deck.size, out[start:start + chunk])
    return out


@numba.njit(cache=True)
def _sweep(ranks, blocked, hands, num_cards, out):
    """out[b, i]: (opponents below + ties / 2) / opponents, over the unblocked hands of board b."""
    n, h = hands.shape
    for b in range(ranks.shape[0]):
        card_total = np.zeros(num_cards, np.int64)
        valid = np.empty(n, np.int64)
        m = 0
        for i in range(n):
            if blocked[b, i]:
                out[b, i] = np.nan
            else:
                valid[m] = i
                m += 1
                for c in range(h):
                    card_total[hands[i, c]] += 1
        order = valid[:m][np.argsort(ranks[b, valid[:m]], kind="mergesort")]
        below_card = np.zeros(num_cards, np.int64)
        group_card = np.zeros(num_cards, np.int64)
        below, start = 0, 0
        while start < m:
            end = start
            while end < m and ranks[b, order[end]] == ranks[b, order[start]]:
                for c in range(h):
                    group_card[hands[order[end], c]] += 1
                end += 1
            size = end - start
            for j in range(start, end):
                i = order[j]
                wins, ties, opponents = below, size, m
                for c in range(h):
                    card = hands[i, c]
                    wins -= below_card[card]
                    ties -= group_card[card]
                    opponents -= card_total[card]
                if h == 2:          # the hero holds both its cards: counted twice above
                    ties += 1
                    opponents += 1
                out[b, i] = (wins + 0.5 * ties) / opponents
            for j in range(start, end):
                for c in range(h):
                    card = hands[order[j], c]
                    below_card[card] += 1
                    group_card[card] = 0
            below += size
            start = end
