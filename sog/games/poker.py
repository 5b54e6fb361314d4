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
of two cards is counted once for each, so the hand i itself is added back once): O(N h).
At a showdown the hands are sorted by strength once per board (`ShowdownPlan`); one sweep
up the order accumulates the reach of the strictly weaker hands, all of it and per card
(the blockers), and one sweep down that of the stronger, so the value is
stake x (reach below - reach above), the blocking hands taken out card by card: O(N h) per
terminal after the O(N log N) plan. Hands hold one or two cards. Both are numba loops
over a list of terminals (`_fold_values`, `_showdown_values`) that take eight terminals side
by side, one per lane (`sog.lanes`: compiled with LLVM's SLP vectoriser, each terminal's sums
the same, in the same order, as alone): no [T, N, h] temporaries. The terminals go in groups
with the same possible hands (`TerminalPlan.groups`), so that one test per hand serves all
lanes. On the hold'em turn subgame of `sog bench holdem` (7,352 terminals, 1326 hands) one
player's terminal values took 47.6 ms with four terminals side by side in scalar code, 30.9 ms
with eight (showdowns 35.5 -> 19.7 ms, folds 12.1 -> 11.2 ms; one thread), and 22 ms with the
groups (30-34 ms before, on a slower day of the same machine).
"""
from __future__ import annotations

import abc
import dataclasses
from collections.abc import Hashable, Mapping, Sequence

import numba
import numpy as np

from sog import lanes, threads
from sog.lanes import LANES, slp_njit

MBB_PER_CHIP = 1000.0
SHOWDOWN_PLANS = 4096        # boards whose showdown plans a game keeps (then starts afresh)
TERMINAL_PLANS = 64          # lists of terminals whose plans a game keeps (then starts afresh)
TERMINALS_BY_IDENTITY = 1 << 16  # ... and the terminals of the tuples it finds them by without hashing
MIN_TERMINALS_PER_THREAD = 32  # terminal values are split over `sog.threads` only into pieces of this many or more


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

    def opponent_reach(self, reach: np.ndarray) -> np.ndarray:
        """float [N]: `chance_weights @ reach` (reach float [N], a player's range) in O(N h): for
        each hand, the deal weight times the reach of the hands sharing none of its cards (the
        total less the per-card sums; a two-card hand itself is in both of its cards' sums)."""
        hands = self.hand_cards
        h = hands.shape[1]
        per_card = np.bincount(hands.ravel(), weights=np.repeat(reach, h), minlength=int(hands.max()) + 1)
        return float(self.deal_weight) * (reach.sum() - per_card[hands].sum(1) + (h - 1) * reach)

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
        ranges = np.ascontiguousarray(ranges, dtype=np.float64)
        out = np.zeros(ranges.shape)
        self.terminal_values_into(pubs, ranges, np.arange(len(pubs)), out)
        return out

    def terminal_values_into(self, pubs: Sequence, ranges: np.ndarray, at: np.ndarray, out: np.ndarray,
                             players: Sequence[int] = (0, 1), reach_at: np.ndarray | None = None) -> None:
        """`sog.games.api.Game.terminal_values_into`: `terminal_values` read from and written to
        the rows at (int [T]) of ranges and out (float [n, 2, N], C-contiguous), with no copies.
        With `sog.threads` set to k > 1, the folds and the boards' showdowns are cut into k
        pieces computed side by side (each terminal's values the same to the bit)."""
        plan = self._terminal_plan(pubs)
        at = np.asarray(at, dtype=np.int64)
        reach_at = np.stack([at, at], axis=1) if reach_at is None else np.asarray(reach_at, dtype=np.int64)
        hands, w = self.hand_cards, float(self.deal_weight)
        mask = np.zeros(2, dtype=np.bool_)
        mask[list(players)] = True

        def run(groups) -> None:
            for ts, utility, showdown, live in groups:
                if showdown is None:
                    _fold_values(ranges, at, reach_at, live, ts, utility, plan.hands, plan.adds, hands.shape[1],
                                 plan.num_cards, w, mask, out)
                else:
                    _showdown_values(ranges, at, reach_at, live, ts, utility, showdown.rank, showdown.bounds,
                                     showdown.hands, showdown.adds, plan.num_cards, w, mask, out)

        pieces = min(threads.parts(), max(len(pubs) // MIN_TERMINALS_PER_THREAD, 1), len(plan.groups))
        if pieces <= 1:
            run(plan.groups)
            return
        ends = np.cumsum([len(ts) for ts, *_ in plan.groups])       # (pieces of whole groups)
        cuts = [0, *(int(np.searchsorted(ends, ends[-1] * i / pieces)) for i in range(1, pieces)), len(plan.groups)]
        threads.run([lambda i=i: run(plan.groups[cuts[i]:cuts[i + 1]]) for i in range(pieces)])

    def _terminal_plan(self, pubs: Sequence) -> TerminalPlan:
        """The plan of the terminals pubs. A plan is found again without hashing when pubs is a
        tuple it was made for, the same object (a solver passes the same tuples every pass, its
        `Levels.terminal_pubs` or one per block of `Levels.block_terminals`: hashing and comparing
        the 7,352 terminals of the hold'em turn took 2.6 ms a pass). Tuples of up to
        TERMINALS_BY_IDENTITY terminals in all are kept (then it starts afresh), each with its plan."""
        by_identity = self.memo(("poker_terminal_plans_by_identity",), dict)
        entry = by_identity.get(id(pubs))          # (pubs, plan): pubs kept, so its id stays its own
        if entry is not None and entry[0] is pubs:
            return entry[1]
        key = tuple(pubs)
        plan = _bounded_memo(self, "poker_terminal_plans", key, TERMINAL_PLANS, lambda: TerminalPlan(self, key))
        if sum(len(kept) for kept, _ in by_identity.values()) + len(key) > TERMINALS_BY_IDENTITY:
            by_identity.clear()
        by_identity[id(pubs)] = (pubs, plan)
        return plan


class TerminalPlan:
    """What the terminal values of a list of T terminals need besides the ranges.

    groups: the terminals by kind and possible hands, each (terminal
    indices int [k], player 0's utility at a fold or the stake at a showdown float [k], None for
    folds or the board's `ShowdownPlan`, the hands possible at all k bool [2, N]): the folds of
    each possible set, then the showdowns of each board and possible set; num_cards: the cards
    the hands hold are 0 .. num_cards - 1; hands, adds int [N, 2]: the game's hands as
    `ShowdownPlan` has them (in slot order).
    """

    def __init__(self, game: Poker, pubs: tuple):
        possible = [game.cached("possible_mask", pub) for pub in pubs]     # bool [2, N] each
        ends = [game.cached("poker_terminal", pub) for pub in pubs]
        self.num_cards = int(game.hand_cards.max()) + 1
        self.hands, self.adds = _card_columns(game.hand_cards, self.num_cards)
        folds: dict = {}           # possible hands -> the folds there
        boards: dict = {}          # (board, possible hands) -> the showdowns there
        for t, e in enumerate(ends):
            if e.strengths is None:
                folds.setdefault(possible[t].tobytes(), []).append(t)
            else:
                boards.setdefault((e.board, possible[t].tobytes()), []).append(t)
        self.groups = [(np.array(ts, dtype=np.int64), np.array([ends[t].fold_value for t in ts], dtype=np.float64),
                        None, possible[ts[0]]) for ts in folds.values()]
        for (board, _), ts in boards.items():
            showdown = _bounded_memo(game, "poker_showdown_plans", board, SHOWDOWN_PLANS,
                                     lambda: ShowdownPlan(ends[ts[0]].strengths, game.hand_cards))
            stakes = np.array([ends[t].stake for t in ts], dtype=np.float64)
            self.groups.append((np.array(ts, dtype=np.int64), stakes, showdown, possible[ts[0]]))


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


class ShowdownPlan:
    """The sorting work of showdowns on one board, done once: rank int [N], each hand's place
    in the order of increasing strength; bounds int [G + 1]: the tie groups (equal strengths),
    sorted positions [bounds[g], bounds[g + 1]); hands int [N, 2]: the cards of the hands in
    that order, whose per-card sums a hand's margin subtracts, and adds int [N, 2]: the sums its
    reach is added to. Two-card hands: both are the hand's cards. One-card hands (C cards):
    the second column of hands is C (a sum that stays 0) and of adds C + 1 (a sum never read),
    so that the kernels are the same straight-line code for both (`_sweeps`, `_fold_values`)."""

    def __init__(self, strengths: np.ndarray, hand_cards: np.ndarray):
        ranks = np.unique(strengths, return_inverse=True)[1].reshape(-1)
        order = np.argsort(ranks, kind="stable")
        self.rank = np.empty_like(order)
        self.rank[order] = np.arange(len(order))
        ranked = ranks[order]
        self.bounds = np.flatnonzero(np.r_[True, ranked[1:] != ranked[:-1], True]).astype(np.int64)
        self.hands, self.adds = _card_columns(hand_cards[order], int(hand_cards.max()) + 1)


def _card_columns(hand_cards: np.ndarray, num_cards: int) -> tuple[np.ndarray, np.ndarray]:
    """(hands, adds) int [N, 2] of hands int [N, h] of C = num_cards cards (see `ShowdownPlan`)."""
    cards = np.ascontiguousarray(hand_cards, dtype=np.int64)
    if cards.shape[1] == 2:
        return cards, cards
    column = np.full(len(cards), num_cards, dtype=np.int64)
    return np.stack([cards[:, 0], column], axis=1), np.stack([cards[:, 0], column + 1], axis=1)


@numba.njit(cache=True, nogil=True, inline="always")
def _lanes_of(k0, terminals, at, values):
    """(rows, u): the rows at[t] of the terminals t in terminals[k0:k0 + LANES] and their
    values[k0:k0 + LANES], as lanes (int and float tuples); past the end of the list the last
    terminal is repeated (its values computed again and written again, the same)."""
    kb = min(LANES, len(terminals) - k0)
    j0, j1, j2, j3 = k0, k0 + min(1, kb - 1), k0 + min(2, kb - 1), k0 + min(3, kb - 1)
    j4, j5, j6, j7 = k0 + min(4, kb - 1), k0 + min(5, kb - 1), k0 + min(6, kb - 1), k0 + min(7, kb - 1)
    ts = (terminals[j0], terminals[j1], terminals[j2], terminals[j3], terminals[j4], terminals[j5],
          terminals[j6], terminals[j7])
    rows = (at[ts[0]], at[ts[1]], at[ts[2]], at[ts[3]], at[ts[4]], at[ts[5]], at[ts[6]], at[ts[7]])
    u = (values[j0], values[j1], values[j2], values[j3], values[j4], values[j5], values[j6], values[j7])
    return rows, u


@slp_njit(cache=True, nogil=True)
def _fold_values(ranges, at, reach_at, live, folds, fold_values, hands, adds, h, num_cards, weight, players, out):
    """out[at[t], p] (ranges, out float [n, 2, N]; the opponent o's reach in row reach_at[t, o]
    of ranges) of the players p in `players` (bool [2]) at
    the folds t = folds[k] (int [F]) with player 0's utility fold_values[k] and the same
    possible hands live (bool [2, N]): utility x deal weight x the opponent's reach over the
    hands sharing no card with each possible hand (hands of h cards, `TerminalPlan` hands and
    adds; 0 at impossible hands): its total less its per-card sums at the hand's cards, the
    hand itself (in each of its h cards' sums) added back h - 1 times. The folds go LANES at a
    time, one per lane (`sog.lanes`): the opponent's reach is gathered (0 at its impossible
    hands: one test of live for all lanes), one walk of the hands sums it in total and per card
    (card float [C + 2, LANES]), one more writes the value rows."""
    n = hands.shape[0]
    card = np.empty((num_cards + 2, LANES))
    x = np.empty((n, LANES))           # the opponent's reach [slot, lane]
    again = lanes.full(h - 1.0)
    for k0 in range(0, len(folds), LANES):
        rows, utility = _lanes_of(k0, folds, at, fold_values)
        for p in range(2):
            if not players[p]:
                continue
            o = 1 - p
            reach = _lanes_of(k0, folds, reach_at[:, o], fold_values)[0]
            card[:] = 0.0
            total = lanes.zeros()
            for i in range(n):
                lanes.store(x, i, _row_lanes(ranges, reach, o, i) if live[o, i] else lanes.zeros())
            for i in range(n):
                total = _add_hand(total, i, adds, lanes.load(x, i), card)
            u = lanes.mul(lanes.mul(utility, lanes.full(weight)), lanes.full(1.0 if p == 0 else -1.0))
            for i in range(n):
                v = lanes.add(lanes.sub(total, _blocking(i, hands, card)), lanes.mul(again, lanes.load(x, i)))
                _store_row_lanes(lanes.mul(u, v) if live[p, i] else lanes.zeros(), rows, p, i, out)


@slp_njit(cache=True, nogil=True)
def _showdown_values(ranges, at, reach_at, live, ts, stakes, rank, bounds, hands, adds, num_cards, weight, players,
                     out):
    """out[at[t], p] (ranges, out float [n, 2, N]; the opponent o's reach in row reach_at[t, o]
    of ranges) of the players p in `players` (bool [2]) at
    the showdowns t = ts[k] (int [k]) of one board (its `ShowdownPlan` rank, bounds, hands, adds:
    in strength order) with stakes[k] and the same possible hands live (bool [2, N]): stake x
    deal weight x (the opponent's reach over the unblocked strictly weaker hands - over the
    stronger ones); 0 at impossible hands. A hand sharing both cards with hand i is i itself,
    of equal strength: in neither sum. The showdowns go LANES at a time, one per lane
    (`sog.lanes`): the opponent's reach is gathered in strength order (0 at its impossible
    hands: one test of live for all lanes) and `_sweeps` takes the margins of all of them in
    one walk up and one down."""
    n = hands.shape[0]
    card = np.empty((num_cards + 2, LANES))
    margin = np.empty((n, LANES))      # [strength position, lane]
    x = np.empty((n, LANES))           # the opponent's reach, the same
    for k0 in range(0, len(ts), LANES):
        rows, stake = _lanes_of(k0, ts, at, stakes)
        u = lanes.mul(stake, lanes.full(weight))
        for p in range(2):
            if not players[p]:
                continue
            o = 1 - p
            reach = _lanes_of(k0, ts, reach_at[:, o], stakes)[0]
            for i in range(n):                     # (rows read in slot order)
                lanes.store(x, rank[i], _row_lanes(ranges, reach, o, i) if live[o, i] else lanes.zeros())
            _sweeps(bounds, hands, adds, x, card, margin)
            for i in range(n):                     # (rows written in slot order)
                v = lanes.mul(u, lanes.load(margin, rank[i])) if live[p, i] else lanes.zeros()
                _store_row_lanes(v, rows, p, i, out)


@numba.njit(cache=True, nogil=True, inline="always")
def _row_lanes(ranges, rows, o, i):
    """ranges[rows[k], o, i] for each lane k."""
    return (ranges[rows[0], o, i], ranges[rows[1], o, i], ranges[rows[2], o, i], ranges[rows[3], o, i],
            ranges[rows[4], o, i], ranges[rows[5], o, i], ranges[rows[6], o, i], ranges[rows[7], o, i])


@numba.njit(cache=True, nogil=True, inline="always")
def _store_row_lanes(v, rows, p, i, out):
    """out[rows[k], p, i] = v[k] for each lane k."""
    out[rows[0], p, i] = v[0]
    out[rows[1], p, i] = v[1]
    out[rows[2], p, i] = v[2]
    out[rows[3], p, i] = v[3]
    out[rows[4], p, i] = v[4]
    out[rows[5], p, i] = v[5]
    out[rows[6], p, i] = v[6]
    out[rows[7], p, i] = v[7]


@numba.njit(cache=True, nogil=True, inline="always")
def _sweeps(bounds, hands, adds, x, card, margin):
    """margin [N, LANES] (by strength position, lane) = the reach x [N, LANES] of the unblocked
    strictly weaker hands - of the stronger ones (`ShowdownPlan` bounds, hands, adds; card
    [C + 2, LANES] scratch): a walk up the tie groups sums the weaker hands' reach, in total and
    per card, one down the stronger's; each lane's sums in strength order, as one showdown alone."""
    card[:] = 0.0
    acc = lanes.zeros()
    for g in range(len(bounds) - 1):        # weaker hands, going up
        lo, hi = bounds[g], bounds[g + 1]
        for s in range(lo, hi):
            lanes.store(margin, s, _unblocked(acc, s, hands, card))
        for s in range(lo, hi):
            acc = _add_hand(acc, s, adds, lanes.load(x, s), card)
    card[:] = 0.0
    acc = lanes.zeros()
    for g in range(len(bounds) - 2, -1, -1):  # stronger hands, going down
        lo, hi = bounds[g], bounds[g + 1]
        for s in range(hi - 1, lo - 1, -1):
            lanes.store(margin, s, lanes.sub(lanes.load(margin, s), _unblocked(acc, s, hands, card)))
        for s in range(hi - 1, lo - 1, -1):
            acc = _add_hand(acc, s, adds, lanes.load(x, s), card)


@numba.njit(cache=True, nogil=True, inline="always")
def _unblocked(acc, s, hands, card):
    """acc less the per-card sums card [C + 2, LANES] at the two cards of the hand at strength
    position s."""
    return lanes.sub(lanes.sub(acc, lanes.load(card, hands[s, 0])), lanes.load(card, hands[s, 1]))


@numba.njit(cache=True, nogil=True, inline="always")
def _blocking(i, hands, card):
    """0.0 + the per-card sums card [C + 2, LANES] at the two cards of hand i (in a fold's slot order)."""
    return lanes.add(lanes.add(lanes.zeros(), lanes.load(card, hands[i, 0])), lanes.load(card, hands[i, 1]))


@numba.njit(cache=True, nogil=True, inline="always")
def _add_hand(acc, s, adds, xs, card):
    """acc + lanes xs, also added to card's sums [C + 2, LANES] at the two cards adds[s] of hand s."""
    a, b = adds[s, 0], adds[s, 1]
    lanes.store(card, a, lanes.add(lanes.load(card, a), xs))
    lanes.store(card, b, lanes.add(lanes.load(card, b), xs))
    return lanes.add(acc, xs)
