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
over a list of terminals (`_fold_values`, `_showdown_values`), several terminals side by side
where they can: no [T, N, h] temporaries.
"""
from __future__ import annotations

import abc
import dataclasses
from collections.abc import Hashable, Mapping, Sequence

import numba
import numpy as np

from sog import threads

MBB_PER_CHIP = 1000.0
SHOWDOWN_PLANS = 4096        # boards whose showdown plans a game keeps (then starts afresh)
TERMINAL_PLANS = 64          # lists of terminals whose plans a game keeps (then starts afresh)
SHOWDOWN_BATCH = 4           # showdowns of one board evaluated side by side (`_showdown_values`; `_sweeps2` has 4 lanes)
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
                             players: Sequence[int] = (0, 1)) -> None:
        """`sog.games.api.Game.terminal_values_into`: `terminal_values` read from and written to
        the rows at (int [T]) of ranges and out (float [n, 2, N], C-contiguous), with no copies.
        With `sog.threads` set to k > 1, the folds and the boards' showdowns are cut into k
        pieces computed side by side (each terminal's values the same to the bit)."""
        plan = self._terminal_plan(tuple(pubs))
        at = np.asarray(at, dtype=np.int64)
        hands, w = self.hand_cards, float(self.deal_weight)
        mask = np.zeros(2, dtype=np.bool_)
        mask[list(players)] = True

        def folds(a: int, b: int) -> None:
            _fold_values(ranges, at, plan.possible, plan.folds[a:b], plan.fold_values[a:b], hands, plan.num_cards,
                         w, mask, out)

        def showdowns(boards) -> None:
            for ts, stakes, showdown in boards:
                _showdown_values(ranges, at, plan.possible, ts, stakes, showdown.rank, showdown.bounds,
                                 showdown.hands, plan.num_cards, w, mask, out)

        pieces = min(threads.parts(), max(len(pubs) // MIN_TERMINALS_PER_THREAD, 1))
        if pieces == 1:
            folds(0, len(plan.folds))
            showdowns(plan.showdowns)
            return
        # each piece: a run of folds (cut at multiples of four, `_four_folds`) and a run of boards
        fold_cuts = [4 * (len(plan.folds) // 4 * i // pieces) for i in range(pieces)] + [len(plan.folds)]
        ends = np.cumsum([len(ts) for ts, _, _ in plan.showdowns])
        board_cuts = [0, *(int(np.searchsorted(ends, ends[-1] * i / pieces)) for i in range(1, pieces)),
                      len(plan.showdowns)] if len(ends) else [0] * (pieces + 1)

        def piece(i: int) -> None:
            folds(fold_cuts[i], fold_cuts[i + 1])
            showdowns(plan.showdowns[board_cuts[i]:board_cuts[i + 1]])

        threads.run([lambda i=i: piece(i) for i in range(pieces)])

    def _terminal_plan(self, pubs: tuple) -> TerminalPlan:
        return _bounded_memo(self, "poker_terminal_plans", pubs, TERMINAL_PLANS,
                             lambda: TerminalPlan(self, pubs))


class TerminalPlan:
    """What the terminal values of a list of T terminals need besides the ranges.

    possible bool [T, 2, N]; folds int [F] and fold_values float [F] (player 0's utility);
    showdowns: per board (terminal indices int [k], stakes float [k], its `ShowdownPlan`);
    num_cards: the cards the hands hold are 0 .. num_cards - 1.
    """

    def __init__(self, game: Poker, pubs: tuple):
        n = len(game.hand_cards)
        self.possible = np.stack([game.cached("possible_mask", pub) for pub in pubs]) if pubs else \
            np.zeros((0, 2, n), dtype=bool)
        ends = [game.cached("poker_terminal", pub) for pub in pubs]
        self.num_cards = int(game.hand_cards.max()) + 1
        self.folds = np.array([t for t, e in enumerate(ends) if e.strengths is None], dtype=np.int64)
        self.fold_values = np.array([ends[t].fold_value for t in self.folds], dtype=np.float64)
        boards: dict = {}
        for t, e in enumerate(ends):
            if e.strengths is not None:
                boards.setdefault(e.board, []).append(t)
        self.showdowns = []
        for board, ts in boards.items():
            showdown = _bounded_memo(game, "poker_showdown_plans", board, SHOWDOWN_PLANS,
                                     lambda: ShowdownPlan(ends[ts[0]].strengths, game.hand_cards))
            stakes = np.array([ends[t].stake for t in ts], dtype=np.float64)
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


class ShowdownPlan:
    """The sorting work of showdowns on one board, done once: rank int [N], each hand's place
    in the order of increasing strength; bounds int [G + 1]: the tie groups (equal strengths),
    sorted positions [bounds[g], bounds[g + 1]); hands int [N, h]: the cards of the hands in
    that order."""

    def __init__(self, strengths: np.ndarray, hand_cards: np.ndarray):
        ranks = np.unique(strengths, return_inverse=True)[1].reshape(-1)
        order = np.argsort(ranks, kind="stable")
        self.rank = np.empty_like(order)
        self.rank[order] = np.arange(len(order))
        ranked = ranks[order]
        self.bounds = np.flatnonzero(np.r_[True, ranked[1:] != ranked[:-1], True]).astype(np.int64)
        self.hands = np.ascontiguousarray(hand_cards[order])


@numba.njit(cache=True, nogil=True)
def _opponent_reach(ranges, row, possible, t, o, hands, card):
    """The total reach of player o at terminal t (row `row` of ranges float [n, 2, N]) over its
    possible hands (possible bool [T, 2, N]); card float [C] set to the same per card. (A run
    of hands with the same first card adds to that card's sum in a register: the same sums, in
    the same order, without a store and load per hand.)"""
    card[:] = 0.0
    total = 0.0
    h = hands.shape[1]
    first, run = hands[0, 0], 0.0
    for i in range(hands.shape[0]):
        if hands[i, 0] != first:
            card[first] = run
            first = hands[i, 0]
            run = card[first]
        r = ranges[row, o, i]
        x = r if possible[t, o, i] else 0.0
        total += x
        run += x
        for j in range(1, h):
            card[hands[i, j]] += x
    card[first] = run
    return total


@numba.njit(cache=True, nogil=True)
def _fold_values(ranges, at, possible, folds, fold_values, hands, num_cards, weight, players, out):
    """out[at[t], p] (ranges, out float [n, 2, N]) of the players p in `players` (bool [2]) at
    the folds t = folds[k] (int [F]) with player 0's utility fold_values[k]: utility x deal
    weight x the opponent's reach over the hands sharing no card with each possible hand
    (hands int [N, h]); 0 at impossible hands. Hands of two cards go four folds at a time side
    by side (`_four_folds`: the same sums in the same order), the rest one at a time."""
    n, h = hands.shape
    card = np.empty(num_cards)
    card4 = np.empty((num_cards, 4))
    four = len(folds) - len(folds) % 4 if h == 2 else 0
    for k0 in range(0, four, 4):
        for p in range(2):
            if players[p]:
                _four_folds(ranges, at, possible, folds, fold_values, k0, hands, weight, p, card4, out)
    for k in range(four, len(folds)):
        t = folds[k]
        row = at[t]
        for p in range(2):
            if not players[p]:
                continue
            o = 1 - p
            total = _opponent_reach(ranges, row, possible, t, o, hands, card)
            u = fold_values[k] * weight * (1.0 if p == 0 else -1.0)
            for i in range(n):
                if possible[t, p, i]:
                    blocked = 0.0
                    for j in range(h):
                        blocked += card[hands[i, j]]
                    own = ranges[row, o, i] if possible[t, o, i] else 0.0   # hand i, counted h times
                    out[row, p, i] = u * (total - blocked + (h - 1) * own)
                else:
                    out[row, p, i] = 0.0


@numba.njit(cache=True, nogil=True, inline="always")
def _reach(ranges, row, o, i, possible, t):
    """Player o's reach of hand i at terminal t (row `row` of ranges), 0 where impossible (a select)."""
    r = ranges[row, o, i]
    return r if possible[t, o, i] else 0.0


@numba.njit(cache=True, nogil=True)
def _four_folds(ranges, at, possible, folds, fold_values, k0, hands, weight, p, card, out):
    """`_fold_values` of player p at the four folds folds[k0:k0 + 4] of two-card hands, side by
    side: one walk of the hands gathers the four opponent's totals (scalars s0 .. s3) and per-card
    sums (card float [C, 4]; a run of hands with the same first card in scalars q0 .. q3, as
    `_opponent_reach`), one more writes the four value rows; each fold's sums the same, in the
    same order, as alone."""
    n = hands.shape[0]
    o = 1 - p
    t0, t1, t2, t3 = folds[k0], folds[k0 + 1], folds[k0 + 2], folds[k0 + 3]
    w0, w1, w2, w3 = at[t0], at[t1], at[t2], at[t3]
    card[:] = 0.0
    s0 = s1 = s2 = s3 = 0.0
    first = hands[0, 0]
    q0 = q1 = q2 = q3 = 0.0
    for i in range(n):
        a, b = hands[i, 0], hands[i, 1]
        if a != first:
            card[first, 0], card[first, 1], card[first, 2], card[first, 3] = q0, q1, q2, q3
            first = a
            q0, q1, q2, q3 = card[a, 0], card[a, 1], card[a, 2], card[a, 3]
        x0 = _reach(ranges, w0, o, i, possible, t0)
        x1 = _reach(ranges, w1, o, i, possible, t1)
        x2 = _reach(ranges, w2, o, i, possible, t2)
        x3 = _reach(ranges, w3, o, i, possible, t3)
        s0 += x0
        s1 += x1
        s2 += x2
        s3 += x3
        q0 += x0
        q1 += x1
        q2 += x2
        q3 += x3
        card[b, 0] += x0
        card[b, 1] += x1
        card[b, 2] += x2
        card[b, 3] += x3
    card[first, 0], card[first, 1], card[first, 2], card[first, 3] = q0, q1, q2, q3
    sign = 1.0 if p == 0 else -1.0
    u0, u1 = fold_values[k0] * weight * sign, fold_values[k0 + 1] * weight * sign
    u2, u3 = fold_values[k0 + 2] * weight * sign, fold_values[k0 + 3] * weight * sign
    for i in range(n):              # value = u x (total - (0.0 + both cards' sums) + own), as one at a time
        a, b = hands[i, 0], hands[i, 1]
        v0 = u0 * (s0 - (0.0 + card[a, 0] + card[b, 0]) + _reach(ranges, w0, o, i, possible, t0))
        v1 = u1 * (s1 - (0.0 + card[a, 1] + card[b, 1]) + _reach(ranges, w1, o, i, possible, t1))
        v2 = u2 * (s2 - (0.0 + card[a, 2] + card[b, 2]) + _reach(ranges, w2, o, i, possible, t2))
        v3 = u3 * (s3 - (0.0 + card[a, 3] + card[b, 3]) + _reach(ranges, w3, o, i, possible, t3))
        out[w0, p, i] = v0 if possible[t0, p, i] else 0.0
        out[w1, p, i] = v1 if possible[t1, p, i] else 0.0
        out[w2, p, i] = v2 if possible[t2, p, i] else 0.0
        out[w3, p, i] = v3 if possible[t3, p, i] else 0.0


@numba.njit(cache=True, nogil=True)
def _showdown_values(ranges, at, possible, ts, stakes, rank, bounds, hands, num_cards, weight, players, out):
    """out[at[t], p] (ranges, out float [n, 2, N]) of the players p in `players` (bool [2]) at
    the showdowns t = ts[k] (int [k]) of one board (its `ShowdownPlan` rank, bounds, hands: in
    strength order) with stakes[k]: stake x deal weight x (the opponent's reach over the
    unblocked strictly weaker hands - over the stronger ones); 0 at impossible hands. A hand
    sharing both cards with hand i is i itself, of equal strength: in neither sum. The
    opponent's reach is gathered once in strength order (0 at its impossible hands); a sweep
    up the tie groups sums the weaker hands' (in total and per card), one down the stronger
    (`_sweeps`). The showdowns go SHOWDOWN_BATCH at a time, side by side, so that one walk of
    the hands serves them all; each one's sums are the same, in the same order, as alone."""
    n, h = hands.shape
    B = SHOWDOWN_BATCH
    card = np.empty((num_cards, B))
    margin = np.empty((n, B))      # [strength position, showdown of the batch]
    x = np.empty((n, B))           # the opponent's reach, the same
    rows = np.empty(B, dtype=np.int64)
    for k0 in range(0, len(ts), B):
        kb = min(B, len(ts) - k0)
        for p in range(2):
            if not players[p]:
                continue
            o = 1 - p
            x[:] = 0.0
            for k in range(kb):
                t = ts[k0 + k]
                rows[k] = at[t]
                for i in range(n):                     # (rows read in slot order; a select, no branch)
                    r = ranges[rows[k], o, i]
                    x[rank[i], k] = r if possible[t, o, i] else 0.0
            if h == 2:
                _sweeps2(bounds, hands, x, card, margin)
            else:
                _sweeps(bounds, hands, x, card, margin)
            for k in range(kb):
                t = ts[k0 + k]
                u = stakes[k0 + k] * weight
                for i in range(n):                     # (rows written in slot order)
                    out[rows[k], p, i] = u * margin[rank[i], k] if possible[t, p, i] else 0.0


@numba.njit(cache=True, nogil=True)
def _sweeps(bounds, hands, x, card, margin):
    """margin [N, B] (by strength position, showdown) = the reach x [N, B] of the unblocked
    strictly weaker hands - of the stronger ones (hands int [N, h] of any h; card [C, B] scratch)."""
    h = hands.shape[1]
    B = x.shape[1]
    acc = np.zeros(B)
    card[:] = 0.0
    for g in range(len(bounds) - 1):        # weaker hands, going up
        lo, hi = bounds[g], bounds[g + 1]
        for s in range(lo, hi):
            for k in range(B):
                v = acc[k]
                for j in range(h):
                    v -= card[hands[s, j], k]
                margin[s, k] = v
        for s in range(lo, hi):
            for k in range(B):
                acc[k] += x[s, k]
                for j in range(h):
                    card[hands[s, j], k] += x[s, k]
    card[:] = 0.0
    acc[:] = 0.0
    for g in range(len(bounds) - 2, -1, -1):  # stronger hands, going down
        lo, hi = bounds[g], bounds[g + 1]
        for s in range(hi - 1, lo - 1, -1):
            for k in range(B):
                v = acc[k]
                for j in range(h):
                    v -= card[hands[s, j], k]
                margin[s, k] = margin[s, k] - v
        for s in range(hi - 1, lo - 1, -1):
            for k in range(B):
                acc[k] += x[s, k]
                for j in range(h):
                    card[hands[s, j], k] += x[s, k]


@numba.njit(cache=True, nogil=True)
def _sweeps2(bounds, hands, x, card, margin):
    """`_sweeps` for hands of two cards and SHOWDOWN_BATCH = 4 showdowns: the same sums in the
    same order, with the four running totals in registers (scalars a0 .. a3, not an array that
    every step would store and load)."""
    a0 = a1 = a2 = a3 = 0.0
    card[:] = 0.0
    for g in range(len(bounds) - 1):        # weaker hands, going up
        lo, hi = bounds[g], bounds[g + 1]
        for s in range(lo, hi):
            a, b = hands[s, 0], hands[s, 1]
            margin[s, 0] = a0 - card[a, 0] - card[b, 0]
            margin[s, 1] = a1 - card[a, 1] - card[b, 1]
            margin[s, 2] = a2 - card[a, 2] - card[b, 2]
            margin[s, 3] = a3 - card[a, 3] - card[b, 3]
        a0, a1, a2, a3 = _add_group(lo, hi, 1, hands, x, card, a0, a1, a2, a3)
    card[:] = 0.0
    a0 = a1 = a2 = a3 = 0.0
    for g in range(len(bounds) - 2, -1, -1):  # stronger hands, going down
        lo, hi = bounds[g], bounds[g + 1]
        for s in range(hi - 1, lo - 1, -1):
            a, b = hands[s, 0], hands[s, 1]
            margin[s, 0] = margin[s, 0] - (a0 - card[a, 0] - card[b, 0])
            margin[s, 1] = margin[s, 1] - (a1 - card[a, 1] - card[b, 1])
            margin[s, 2] = margin[s, 2] - (a2 - card[a, 2] - card[b, 2])
            margin[s, 3] = margin[s, 3] - (a3 - card[a, 3] - card[b, 3])
        a0, a1, a2, a3 = _add_group(hi - 1, lo - 1, -1, hands, x, card, a0, a1, a2, a3)


@numba.njit(cache=True, nogil=True, inline="always")
def _add_group(start, stop, step, hands, x, card, a0, a1, a2, a3):
    """(a0, a1, a2, a3) + the reach x [N, 4] of the two-card hands at strength positions
    range(start, stop, step), each also added to its cards' sums card [C, 4]."""
    for s in range(start, stop, step):
        a, b = hands[s, 0], hands[s, 1]
        x0, x1, x2, x3 = x[s, 0], x[s, 1], x[s, 2], x[s, 3]
        a0 += x0
        a1 += x1
        a2 += x2
        a3 += x3
        card[a, 0] += x0
        card[a, 1] += x1
        card[a, 2] += x2
        card[a, 3] += x3
        card[b, 0] += x0
        card[b, 1] += x1
        card[b, 2] += x2
        card[b, 3] += x3
    return a0, a1, a2, a3
