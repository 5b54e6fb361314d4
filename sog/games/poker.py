"""The poker protocol: what solvers and evaluators of poker agents (LBR, AIVAT reports in
mbb/hand, tournaments) need to know of a poker game, behind the game API.

A poker game derives from `Poker` and then `Game` (`class Leduc(Poker, Game)`) and names,
at every decision public state, which abstract actions fold, check / call and bet
(`betting`); at every terminal, who folded or the hands' showdown strengths and the
stake (`poker_terminal`); once, the cards of every private hand (`hand_cards`) and the
deal's chance weight of two disjoint hands (`deal_weight`). Its utilities are in chips
with a big blind of one chip, so 1000 x utility is mbb/hand (`MBB_PER_CHIP`). A new poker
game (hold'em) plugs into `sog.eval` and into the solvers' fast terminal values by
implementing this.

Terminal values without payoff matrices (`terminal_values`, which overrides the dense
default of `sog.games.api.Game`): with ranges r0, r1 the counterfactual value of hand i
sums the opponent's reach over the hands j that share no card with i, weighted by
player 0's utility. A fold's utility is the same for every pair, so the value is the
opponent's total reach less the reach of the hands that block i (per-card sums; a hand
of two cards is counted once for each, so the hand i itself is added back once): O(N).
At a showdown the hands are sorted by strength; prefix sums give the reach below and
above each strength, all of it and per card (the blockers), so the value is
stake x (reach below - reach above), the blocking hands taken out card by card: O(N log N
+ N C) for C cards. Hands hold one or two cards (every poker game here).
"""
from __future__ import annotations

import abc
import dataclasses
from collections.abc import Hashable, Mapping, Sequence

import numpy as np

MBB_PER_CHIP = 1000.0


@dataclasses.dataclass(frozen=True)
class Betting:
    """The roles of the legal actions at one decision public state.

    fold: the fold action id, or None where folding is not legal (nothing to call);
    call: the check / call action id;
    bets: {bet name: action id} of the bets legal here (names from `Poker.bet_names`).
    """

    fold: int | None
    call: int
    bets: Mapping[str, int]


@dataclasses.dataclass(frozen=True)
class PokerTerminal:
    """How a poker hand ended.

    fold_value: at a fold, player 0's utility (the same for every pair of hands); None at
      a showdown.
    stake: at a showdown, the chips each player put in (player 0 wins them, loses them or
      splits: utility stake x sign(strength_0 - strength_1)).
    strengths: at a showdown, float [N]: each hand's strength given the board (higher
      wins; equal splits; impossible hands arbitrary).
    board: at a showdown, a key of the board: showdowns with equal keys have equal
      strengths (and are evaluated together).
    """

    fold_value: float | None = None
    stake: float = 0.0
    strengths: np.ndarray | None = None
    board: Hashable = None


class Poker(abc.ABC):
    """Mixin for poker games, listed before `sog.games.api.Game` among the bases."""

    bet_names: tuple[str, ...] = ()
    """Every bet name `betting` may return, in a fixed order."""

    hand_cards: np.ndarray
    """int [N, h]: the card ids of each private hand (slot), h = 1 or 2."""

    deal_weight: float
    """`chance_weights` of two hands that share no card (those that share one weigh 0)."""

    @abc.abstractmethod
    def betting(self, pub: Hashable) -> Betting:
        """The action roles at decision public state `pub`."""

    @abc.abstractmethod
    def poker_terminal(self, pub: Hashable) -> PokerTerminal:
        """How the hand ended at terminal public state `pub`."""

    def terminal_values(self, pubs: Sequence, ranges: np.ndarray) -> np.ndarray:
        """float [T, 2, N]: `sog.games.api.Game.terminal_values` in O(N log N + N C) per
        terminal, batched: all folds at once, showdowns by board (see the module doc)."""
        ranges = np.asarray(ranges, dtype=np.float64)
        possible = np.stack([self.cached("possible_mask", pub) for pub in pubs]) if len(pubs) else \
            np.zeros(ranges.shape, dtype=bool)
        r = np.where(possible, ranges, 0.0)
        ends = [self.cached("poker_terminal", pub) for pub in pubs]
        incidence = self.memo(("poker_card_incidence",), lambda: _incidence(self.hand_cards))
        out = np.zeros(r.shape)
        folds = [t for t, e in enumerate(ends) if e.strengths is None]
        if folds:
            u = np.array([ends[t].fold_value for t in folds])[:, None]
            out[folds, 0] = u * _unblocked_reach(incidence, r[folds, 1])
            out[folds, 1] = -u * _unblocked_reach(incidence, r[folds, 0])
        boards: dict = {}
        for t, e in enumerate(ends):
            if e.strengths is not None:
                boards.setdefault(e.board, []).append(t)
        for ts in boards.values():
            strengths = ends[ts[0]].strengths
            stake = np.array([ends[t].stake for t in ts])[:, None]
            for p in (0, 1):
                out[ts, p] = stake * _showdown_margin(incidence, self.hand_cards, strengths, r[ts, 1 - p])
        return np.where(possible, self.deal_weight * out, 0.0)


def is_poker(game) -> bool:
    """Whether `game` follows the poker protocol."""
    return isinstance(game, Poker)


def _incidence(hands: np.ndarray) -> np.ndarray:
    """float [N, C]: 1 where hand (row) holds card (column)."""
    out = np.zeros((len(hands), int(hands.max()) + 1))
    out[np.arange(len(hands))[:, None], hands] = 1.0
    return out


def _unblocked_reach(incidence: np.ndarray, reach: np.ndarray) -> np.ndarray:
    """float [T, N]: the opponent's reach (float [T, N]) over the hands sharing no card with
    each hand. Per-card sums count a blocking hand once per shared card; only the hand
    itself shares two (h <= 2), so it is added back h - 1 times."""
    h = incidence[0].sum()
    blocked = (reach @ incidence) @ incidence.T - (h - 1) * reach
    return reach.sum(-1, keepdims=True) - blocked


def _showdown_margin(incidence: np.ndarray, hands: np.ndarray, strengths: np.ndarray,
                     reach: np.ndarray) -> np.ndarray:
    """float [T, N]: the opponent's unblocked reach (float [T, N]) below each hand's strength
    minus above it. A hand sharing both cards with hand i is i itself, of equal strength:
    in neither sum, so no correction."""
    order = np.argsort(strengths, kind="stable")
    ranked = strengths[order]
    below = np.searchsorted(ranked, strengths, side="left")     # number of strictly weaker hands
    upto = np.searchsorted(ranked, strengths, side="right")     # number of hands not stronger
    sorted_reach = reach[:, order]
    zero = np.zeros((len(reach), 1))
    cum = np.concatenate([zero, np.cumsum(sorted_reach, axis=1)], axis=1)            # [T, N + 1]
    per_card = np.cumsum(sorted_reach[:, :, None] * incidence[order][None], axis=1)  # [T, N, C]
    per_card = np.concatenate([np.zeros((len(reach), 1, incidence.shape[1])), per_card], axis=1)
    weaker = cum[:, below] - per_card[:, below[:, None], hands].sum(-1)
    stronger = (cum[:, -1:] - cum[:, upto]) - (per_card[:, -1][:, hands] - per_card[:, upto[:, None], hands]).sum(-1)
    return weaker - stronger
