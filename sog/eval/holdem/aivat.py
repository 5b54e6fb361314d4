"""AIVAT for hold'em of any size, with the check-down value function.

`sog.eval.aivat` needs world-state values at every public state of the full tree,
which only small hold'em decks allow. Here the value function is computed per world
state on demand instead:

    V(h, s0, s1) = player 0's expected return (big blinds) if from public state h on
                   both players only check / call to the showdown.

A player facing a bet calls, so the stake is the larger commitment capped by the
stacks, min(max spent, stack 0, stack 1) chips (the ACPC side pot of `Holdem.utility`:
an all-in player wins or loses only what it put in); at a fold the fold payoff. Then

    V(h, s0, s1) = stake(h) * E[sign(rank(s0 + board) - rank(s1 + board))]

with the expectation over every run-out of the board (the cards on neither the board
nor either hand, equally likely), enumerated and ranked at once with the game's
evaluator (`cards.rank_cardsets`): `CheckdownValues.showdown`. Every child of a
decision shares its board, so one enumeration values all of them; a chance node's
check-down value is by definition the average of its outcomes' (the same stake, the
run-outs split by the dealt cards), so E_c V(h c) = V(h).

The estimator of player 0's return from a `sog.eval.aivat.play_recorded` record:

    est = u0 - sum over the public chance events h -> h c of [V(h c) - V(h)]
             - sum over the recorded decisions h -> h a of [V(h a) - sum_a' sigma(a') V(h a')]

sigma the acting agent's recorded strategy row for its own slot (decisions without a
recorded strategy get no correction; a deterministic agent's corrections are zero).
Each correction has conditional mean zero given everything before it, whatever V is,
so the estimate is unbiased; so it stays when a correction is left out. A correction
is applied only when the run-outs it evaluates (`CheckdownValues.cost`: boards ranked
for both hands) are at most `max_boards` (50,000 by default). On 52 cards that keeps
the turn and river deals (990 + 44 and 44 + 1 boards) and every postflop decision
(flop: 1,081 boards), and leaves out the flop deal and the preflop decisions and setup
draw (C(48, 5) = 1,712,304 boards each). Unlike `sog.eval.aivat` the estimate does not
average over an agent's own possible hands (the paper's imaginary observations).
"""
from __future__ import annotations

import dataclasses
import functools
import itertools
from collections.abc import Hashable, Sequence
from math import comb

import numpy as np

from sog.games.api import CHANCE, DECISION, TERMINAL
from sog.games.holdem import Holdem
from sog.games.holdem.cards import rank_cardsets

__all__ = ["MAX_BOARDS", "CheckdownEstimate", "CheckdownValues", "checkdown_estimate"]

MAX_BOARDS = 50_000          # run-outs one correction may rank (each for both hands)
SHOWDOWN_CACHE = 4096        # (board, hands) showdown expectations kept


@functools.lru_cache(maxsize=64)
def _combinations(m: int, k: int) -> np.ndarray:
    """int64 [C(m, k), k]: every k-subset of range(m), in `itertools.combinations` order."""
    return np.array(list(itertools.combinations(range(m), k)), dtype=np.int64).reshape(comb(m, k), k)


class CheckdownValues:
    """The check-down value function V(h, s0, s1) of a hold'em game (see the module docstring).

    max_boards: the most run-outs a correction of `checkdown_estimate` may rank.
    """

    def __init__(self, game: Holdem, max_boards: int = MAX_BOARDS):
        if not isinstance(game, Holdem):
            raise TypeError(f"check-down values are for hold'em games, not {game.spec.name}")
        if max_boards < 0:
            raise ValueError(f"max_boards must be at least 0, got {max_boards}")
        self.game, self.max_boards = game, max_boards
        self.board_total = sum(game.rules.board_cards)
        self.showdown = functools.lru_cache(maxsize=SHOWDOWN_CACHE)(self._showdown)

    def _free(self, board: tuple[int, ...], s0: int, s1: int) -> np.ndarray:
        """int64 [m]: the cards on neither the board nor either hand."""
        deck = self.game.deck
        held = deck.card_masks(np.array([board], dtype=np.int64))[0] | deck.hand_masks[s0] | deck.hand_masks[s1]
        return np.flatnonzero(((held >> np.arange(deck.size, dtype=np.uint64)) & np.uint64(1)) == 0)

    def runouts(self, board: tuple[int, ...], s0: int, s1: int) -> int:
        """The number of run-outs completing `board` given both hands."""
        return comb(len(self._free(board, s0, s1)), self.board_total - len(board))

    def _showdown(self, board: tuple[int, ...], s0: int, s1: int) -> float:
        """E[sign(rank of s0's hand - rank of s1's)] in [-1, 1] over every run-out of `board`
        (sorted card ids) given hands s0, s1 (slots): int64 [R, k] run-outs ranked at once."""
        deck = self.game.deck
        free = self._free(board, s0, s1)
        runouts = free[_combinations(len(free), self.board_total - len(board))]                 # [R, k]
        suits = deck.suit_masks(runouts)                                                         # [R, 4]
        if board:
            suits = suits | deck.suit_masks(np.array([board], dtype=np.int64))
        r0 = rank_cardsets(suits | deck.hand_suits[s0])                                          # [R]
        r1 = rank_cardsets(suits | deck.hand_suits[s1])
        return float(np.sign(r0 - r1).mean())

    def stake(self, pub: Hashable) -> float:
        """Big blinds each player has in the pot once the other calls: min(max spent, stacks)."""
        st = self.game.betting_state(pub)
        return min(st.max_spent, *st.stacks) / self.game.big_blind

    def value(self, pub: Hashable, s0: int, s1: int) -> float:
        """V(pub, s0, s1): player 0's check-down return in big blinds (the average over the
        setups where the hand's setup is still to be drawn)."""
        game = self.game
        st = game.betting_state(pub)
        if st.setup is None:
            return float(np.mean([self.value(pub + (setup,), s0, s1) for setup in game.setups]))
        if st.folded >= 0:
            return (-st.spent[0] if st.folded == 0 else st.spent[1]) / game.big_blind
        return self.stake(pub) * self.showdown(game.board(pub), s0, s1)

    def cost(self, pub: Hashable, s0: int, s1: int) -> int:
        """Run-outs `value(pub, s0, s1)` ranks (0 at a fold)."""
        game = self.game
        st = game.betting_state(pub)
        if st.setup is None:
            return len(game.setups) * self.cost(pub + (game.setups[0],), s0, s1)
        return 0 if st.folded >= 0 else self.runouts(game.board(pub), s0, s1)


@dataclasses.dataclass(frozen=True)
class CheckdownEstimate:
    """value: the estimate of player 0's return (big blinds); applied / skipped: corrections
    made / left out for costing more than `max_boards` run-outs (a deterministic agent's
    decisions, whose corrections are zero, count as neither); boards: the run-outs the applied
    corrections rank (showdowns are memoised: a board two corrections share is ranked once)."""

    value: float
    applied: int
    skipped: int
    boards: int


def checkdown_estimate(game: Holdem, record: dict, values: CheckdownValues,
                       known: Sequence[bool] = (True, True)) -> CheckdownEstimate:
    """The AIVAT estimate of player 0's return from a `play_recorded` record with the
    check-down values (see the module docstring); known[p]: use player p's recorded
    strategies. Slots never change along a hold'em game, so both hands are `record["deal"]`."""
    pubs, actions, actors = record["pubs"], record["history"], record["actors"]
    strategies = record.get("strategies") or [None] * len(actions)
    slots = tuple(int(s) for s in record["deal"])
    est = float(record["returns"][0])
    applied = skipped = boards = 0
    j = 0
    for pub, nxt in itertools.pairwise(pubs):
        kind = game.kind(pub)
        if kind == CHANCE:
            cost = values.cost(pub, *slots) + values.cost(nxt, *slots)
            if cost > values.max_boards:
                skipped += 1
                continue
            est -= values.value(nxt, *slots) - values.value(pub, *slots)
        elif kind == DECISION:
            actor, action, table = actors[j], actions[j], strategies[j]
            j += 1
            if not known[actor] or table is None:
                continue
            probs = np.asarray(table[slots[actor]], dtype=np.float64)
            support = np.flatnonzero(probs > 0)
            if len(support) == 1 and support[0] == action:
                continue
            cost = values.cost(pub, *slots)
            if cost > values.max_boards:
                skipped += 1
                continue
            mean = sum(probs[a] * values.value(pub + (int(a),), *slots) for a in support)
            est -= values.value(pub + (action,), *slots) - mean
        elif kind == TERMINAL:
            raise ValueError(f"record continues after the terminal {pub!r}")
        applied += 1
        boards += cost
    return CheckdownEstimate(est, applied, skipped, boards)
