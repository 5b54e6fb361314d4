"""The poker protocol: what solvers and evaluators of poker agents (LBR, AIVAT reports in
mbb/hand, tournaments) need to know of a poker game, behind the game API.

A poker game derives from `Poker` and then `Game` (`class Leduc(Poker, Game)`) and names,
at every decision public state, which abstract actions fold, check / call and bet
(`betting`); at every terminal, who folded or the hands' showdown strengths and the
stake (`poker_terminal`); once, the cards of every private hand (`hand_cards`) and the
deal's chance weight of two disjoint hands (`deal_weight`). Its utilities are in big
blinds (Kuhn's and Leduc's chips: their unit bet is one chip), so 1000 x utility is
mbb/hand (`MBB_PER_CHIP`). A new poker
game (hold'em) plugs into `sog.eval` and into the solvers' fast terminal values by
implementing this.

Terminal values without payoff matrices (`terminal_values`, which overrides the dense
default of `sog.games.api.Game`): with ranges r0, r1 the counterfactual value of hand i
sums the opponent's reach over the hands j that share no card with i, weighted by
player 0's utility. A fold's utility is the same for every pair, so the value is the
opponent's total reach less the reach of the hands that block i (per-card sums; a hand
of two cards is counted once for each, so the hand i itself is added back once): O(N).
At a showdown the hands are sorted by strength once per board (`ShowdownPlan`); prefix
sums give the reach below and above each strength, all of it and, over the hands holding
each card, per card (the blockers), so the value is stake x (reach below - reach above),
the blocking hands taken out card by card: O(N h) per terminal after the O(N log N) plan.
Hands hold one or two cards.
"""
from __future__ import annotations

import abc
import dataclasses
from collections.abc import Hashable, Mapping, Sequence

import numpy as np

MBB_PER_CHIP = 1000.0
SHOWDOWN_PLANS = 4096        # boards whose showdown plans a game keeps (then starts afresh)
TERMINAL_PLANS = 64          # lists of terminals whose plans a game keeps (then starts afresh)


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
        """float [T, 2, N]: `sog.games.api.Game.terminal_values` in O(N h) per terminal after
        one sort per board, batched: all folds at once, showdowns by board (see the module
        doc). What depends on `pubs` alone is planned once per list of terminals."""
        plan = self._terminal_plan(tuple(pubs))
        r = np.where(plan.possible, ranges, 0.0)
        out = np.zeros(r.shape)
        if len(plan.folds):
            f = plan.folds
            out[f, 0] = plan.fold_values * _unblocked_reach(plan.incidence, r[f, 1])
            out[f, 1] = -plan.fold_values * _unblocked_reach(plan.incidence, r[f, 0])
        for ts, stakes, showdown in plan.showdowns:
            for p in (0, 1):
                out[ts, p] = stakes * _showdown_margin(showdown, self.hand_cards, r[ts, 1 - p])
        out *= self.deal_weight
        out[~plan.possible] = 0.0
        return out

    def _terminal_plan(self, pubs: tuple) -> TerminalPlan:
        return _bounded_memo(self, "poker_terminal_plans", pubs, TERMINAL_PLANS,
                             lambda: TerminalPlan(self, pubs))


class TerminalPlan:
    """What the terminal values of a list of T terminals need besides the ranges.

    possible bool [T, 2, N]; folds int [F] and fold_values float [F, 1] (player 0's
    utility); showdowns: per board (terminal indices, stakes float [k, 1], its
    `ShowdownPlan`); incidence float [N, C] (hand holds card).
    """

    def __init__(self, game: Poker, pubs: tuple):
        n = len(game.hand_cards)
        self.possible = np.stack([game.cached("possible_mask", pub) for pub in pubs]) if pubs else \
            np.zeros((0, 2, n), dtype=bool)
        ends = [game.cached("poker_terminal", pub) for pub in pubs]
        self.incidence = game.memo(("poker_card_incidence",), lambda: _incidence(game.hand_cards))
        self.folds = np.array([t for t, e in enumerate(ends) if e.strengths is None], dtype=np.int64)
        self.fold_values = np.array([ends[t].fold_value for t in self.folds], dtype=np.float64)[:, None]
        boards: dict = {}
        for t, e in enumerate(ends):
            if e.strengths is not None:
                boards.setdefault(e.board, []).append(t)
        self.showdowns = []
        for board, ts in boards.items():
            showdown = _bounded_memo(game, "poker_showdown_plans", board, SHOWDOWN_PLANS,
                                     lambda: ShowdownPlan(game.hand_cards, ends[ts[0]].strengths))
            stakes = np.array([ends[t].stake for t in ts], dtype=np.float64)[:, None]
            self.showdowns.append((np.array(ts, dtype=np.int64), stakes, showdown))


def _bounded_memo(game, name: str, key, limit: int, build):
    """`build()` kept under `key` in the game's memo table `name` of at most `limit` entries
    (emptied when full: these plans are cheap to rebuild, unbounded they would grow with
    every board or tree a long run sees)."""
    table = game.memo((name,), dict)
    value = table.get(key)
    if value is None:
        if len(table) >= limit:
            table.clear()
        value = table[key] = build()
    return value


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


class ShowdownPlan:
    """The sorting work of showdowns on one board, done once (shapes: N hands of h cards,
    C cards, each card held by M hands).

    order int [N]: hands by increasing strength; below / upto int [N]: how many hands are
    strictly weaker than / not stronger than each hand. members int [C, M]: the hands
    holding each card, by increasing strength; card_below / card_upto int [N, h]: for each
    hand and each of its cards, how many of that card's members are strictly weaker / not
    stronger than the hand.
    """

    def __init__(self, hands: np.ndarray, strengths: np.ndarray):
        n, h = hands.shape
        ranks = np.unique(strengths, return_inverse=True)[1].reshape(-1)        # dense ranks [N]
        self.order = np.argsort(ranks, kind="stable")
        ranked = ranks[self.order]
        self.below = np.searchsorted(ranked, ranks, side="left")
        self.upto = np.searchsorted(ranked, ranks, side="right")
        num_cards = int(hands.max()) + 1
        by_card = np.argsort(hands[self.order].reshape(-1), kind="stable")      # card-major, weak first
        self.members = self.order[by_card // h].reshape(num_cards, -1)           # [C, M]
        m = self.members.shape[1]
        top = int(ranks.max()) + 2
        keys = (np.arange(num_cards)[:, None] * top + ranks[self.members]).reshape(-1)   # sorted
        query = hands * top + ranks[:, None]                                     # [N, h]
        self.card_below = np.searchsorted(keys, query, side="left") - hands * m
        self.card_upto = np.searchsorted(keys, query, side="right") - hands * m


def _showdown_margin(plan: ShowdownPlan, hands: np.ndarray, reach: np.ndarray) -> np.ndarray:
    """float [T, N]: the opponent's unblocked reach (float [T, N]) below each hand's strength
    minus above it. A hand sharing both cards with hand i is i itself, of equal strength:
    in neither sum, so no correction."""
    t = len(reach)
    cum = np.concatenate([np.zeros((t, 1)), np.cumsum(reach[:, plan.order], axis=1)], axis=1)  # [T, N+1]
    card_cum = np.concatenate([np.zeros((t,) + plan.members.shape[:1] + (1,)),
                               np.cumsum(reach[:, plan.members], axis=2)], axis=2)            # [T, C, M+1]
    weaker = cum[:, plan.below] - card_cum[:, hands, plan.card_below].sum(-1)
    card_total = card_cum[:, hands, -1]
    stronger = (cum[:, -1:] - cum[:, plan.upto]) - (card_total - card_cum[:, hands, plan.card_upto]).sum(-1)
    return weaker - stronger
