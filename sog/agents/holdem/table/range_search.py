"""Modicum's depth-limited search over every hand of both players at a two-player table (`search.ranges`).

Where the sampled-deal search (`sog.agents.holdem.table.search` on `sog.agents.holdem.table.subgame_cfr`) draws joint
hands, each hand meets about one hand of the other player, so in its subgame every player's hand
is known to the other: on the 8-card game of tests/test_holdem_blueprint_agent.py Modicum with 8
sampled joint hands lost 0.032 chips a hand to its blueprint where listing every deal won 0.012
(docs: Results). This search is the one of Brown, Sandholm and Amos (2018) instead: one
subgame over all N hands of both players (1326 on 52 cards), solved for every hand the searcher
may hold:

* the subgame (`TableSubgame`, as the end-game solver's): the root's betting round with the
  table's abstract actions, folds and showdowns valued by the poker protocol (O(N) a terminal),
  cut at its chance nodes (`sog.search.multivalued.at_chance`): where the next round's betting
  starts, and where an all-in's run-out follows, valued exactly (`showdown_matrix`: the mean sign
  of the hands' strengths over every run-out, kept per board);
* at each cut (leaf) the searcher's opponent picks, for each of its hands, one of the four
  continuation strategies (the blueprint; biased x5 toward fold, call, raise), the searcher
  playing its blueprint: the leaf choice is a decision of the solved game (`sog.search.multivalued`,
  alternating CFR+), so the searcher is robust to the opponent adapting beyond the leaf;
* leaf values: player 0's chips at leaf f under continuation c for hands (a, b) are
  U[f, c, a, b] = w [a, b share no card] V[f, c, key(a), key(b)] (`PairLeaves`; w the deal weight),
  V the mean of rollouts (`profile_rollouts`) over the deals of each key pair: where there are at
  most `exact` card-disjoint hand pairs every pair is listed with run-outs (key: the hand, each
  pair its own value), else `ranges` pairs are drawn uniformly, with their run-outs, and keyed by
  the blueprint's bucket on the root's round (key: the bucket code; an empty cell holds the
  leaf's mean). The same deals and random numbers serve the four continuations;
* root ranges: both players' beliefs (`SearchAgent.beliefs`, floored), as the sampled search's.

A leaf's counterfactual values need no [N, N] matrix: per key, the other player's range summed
over the hands sharing no card with the hand (inclusion-exclusion by card, as the poker
protocol's fold values), O(N K + C K^2) for K keys and C cards. The solve depends on (root,
board, searcher's seat) only, so it serves every hand the searcher holds and its strategy is
defined for every hand (`SearchAgent.every_hand`: LBR, AIVAT and the later rounds' beliefs).
"""
from __future__ import annotations

import collections
import itertools
import math

import numba
import numpy as np

from sog.agents.holdem.table.agents import CONTINUATIONS, TableError, sample_hands
from sog.agents.holdem.table.subgame import TableSubgame, TableSubgameError, chain_end
from sog.agents.holdem.table.subgame_cfr import profile_rollouts
from sog.agents.holdem.table.subgame_tree import complete_deals
from sog.games.api import DECISION
from sog.games.holdem import fast_rank
from sog.search.multivalued import solve_depth_limited

MAX_RUNOUTS = 20_000     # an all-in's run-outs valued exactly up to this many, else this many drawn
SHOWDOWNS_KEPT = 48      # showdown matrices kept (per board and cards to come; 7 MB each on 52 cards, float32),
                         # least recently used dropped: a tournament's lockstep batch has its hands' boards in flight


class PairLeaves:
    """The payoff matrices U float [F, k, N, N] of a depth-limited subgame's leaves, applied without
    being held: U[f, c, a, b] = weight x [a, b share no card, neither a board card] x
    values[f, c, keys[a], keys[b]] (values float [F, k, K, K]: player 0's chips; keys int64 [N], -1
    for hands holding a board card; hand_cards int64 [N, h]; cards: the deck's size)."""

    def __init__(self, values: np.ndarray, keys: np.ndarray, hand_cards: np.ndarray, cards: int, weight: float):
        f, k, width = values.shape[:3]
        n = len(keys)
        self.shape = (f, k, n, n)
        self.values, self.weight, self.hole, self.hand_cards = values, float(weight), hand_cards.shape[1], hand_cards
        self.key, self.possible = np.maximum(keys, 0), keys >= 0
        onehot = np.zeros((n, width))
        onehot[np.flatnonzero(self.possible), self.key[self.possible]] = 1.0
        self.by_key = onehot                                                       # [N, K]
        holding = [np.flatnonzero((hand_cards == d).any(axis=1)) for d in range(cards)]
        self.holding = np.stack(holding)                     # int64 [C, M]: the hands holding card d
        self.holding_key = onehot[self.holding]              # [C, M, K]

    def pair_sums(self, y: np.ndarray, transpose: bool = False, summed: bool = False) -> np.ndarray:
        """float [F, k, N]: sum_b U[f, c, a, b] y[f, c, b] (`transpose`: sum_a U[f, c, a, b] y[f, c, a],
        indexed by b) for y float [F, k, N] (or [F, 1, N]: the same for every c); `summed`: float [F, N],
        its sum over c. Per key, y summed over the hands sharing no card with the hand (all, less those
        holding each of its cards, plus (h - 1) x its own)."""
        v = np.swapaxes(self.values, -1, -2) if transpose else self.values                   # [F, k, K, K]
        y = y * self.possible
        total = y @ self.by_key                                                              # [F, j, K]
        held = np.swapaxes(y[..., self.holding], 0, 2)                                       # [C, j, F, M]
        by_card = np.swapaxes(held @ self.holding_key[:, None], 0, 2)                        # [F, j, C, K]
        out = (v @ total[..., None])[..., 0][..., self.key]                                  # [F, k, N]
        blocked = by_card @ np.swapaxes(v, -1, -2)                                           # [F, k, C, K]
        for i in range(self.hole):
            out -= blocked[:, :, self.hand_cards[:, i], self.key]
        out += (self.hole - 1) * y * v[:, :, self.key, self.key]
        out = self.weight * out * self.possible
        return out.sum(axis=1) if summed else out


class ShowdownLeaves:
    """The payoff matrices U float [F, k, N, N] of leaves where the rest of the board is dealt and the
    hand shown down (an all-in's run-out): U[f, c, a, b] = stakes[f] x showdown[a, b] for every c
    (`showdown_matrix`: the deal weight, card removal and the mean sign over the run-outs)."""

    def __init__(self, stakes: np.ndarray, showdown: np.ndarray, k: int):
        self.stakes, self.showdown = np.asarray(stakes, dtype=np.float64), showdown
        self.shape = (len(self.stakes), k) + showdown.shape

    def pair_sums(self, y: np.ndarray, transpose: bool = False, summed: bool = False) -> np.ndarray:
        """`PairLeaves.pair_sums`: with `summed` or y [F, 1, N], one product a leaf (in the matrix's
        type: float32 from `showdown_matrix`)."""
        f, k, n = self.shape[:3]
        m = self.showdown if transpose else self.showdown.T
        if summed or y.shape[1] == 1:
            out = self.stakes[:, None] * (y.sum(axis=1).astype(m.dtype) @ m)
            return out if summed else np.broadcast_to(out[:, None], (f, k, n))
        return self.stakes[:, None, None] * (y.reshape(f * k, n).astype(m.dtype) @ m).reshape(f, k, n)


class StackedLeaves:
    """Leaves of several kinds as one `choice_values` operator: parts [(int64 [F_i] rows, operator)]
    covering rows 0..F-1."""

    def __init__(self, parts: list, k: int, n: int):
        self.parts = [(rows, op) for rows, op in parts if len(rows)]
        self.shape = (sum(len(rows) for rows, _ in parts), k, n, n)

    def pair_sums(self, y: np.ndarray, transpose: bool = False, summed: bool = False) -> np.ndarray:
        """`PairLeaves.pair_sums`, each part's rows by its operator."""
        f, k, n = self.shape[:3]
        out = np.empty((f, n) if summed else (f, k, n))
        for rows, op in self.parts:
            out[rows] = op.pair_sums(y[rows], transpose, summed)
        return out


BLOCKED = 1 << 30         # a strength no hand has (`_showdown_sums`)


@numba.njit(cache=True, parallel=True)
def _showdown_sums(high, low, blocked, counting, sums, counts):
    """sums[a, b] = sum over the run-outs r holding no card of hand a of sign(strength of a - strength
    of b), 0 where r holds a card of b (high / low int32 [R, N]: the strengths, BLOCKED / -BLOCKED
    where r holds a card of the hand; blocked bool [R, N]); with `counting`, counts[a, b] the run-outs
    holding no card of either. A whole row at a time, branch-free, so that it runs in SIMD lanes."""
    runouts, n = high.shape
    for a in numba.prange(n):
        row = np.zeros(n, np.int32)
        met = np.zeros(n, np.int32)
        for r in range(runouts):
            if blocked[r, a]:
                continue
            s = high[r, a]
            hr, lr = high[r], low[r]
            for b in range(n):
                row[b] += np.int32(s > hr[b]) - np.int32(s < lr[b])
            if counting:
                for b in range(n):
                    met[b] += np.int32(hr[b] < BLOCKED)
        sums[a] = row
        counts[a] = met


def showdown_runouts(deck, board, k: int, rng: np.random.Generator) -> tuple[np.ndarray, bool]:
    """(int64 [R, k] the run-outs of k cards after `board`, whether they are all of them): every one,
    or MAX_RUNOUTS drawn where there are more."""
    board = {int(c) for c in board}
    left = np.array([c for c in range(deck.size) if c not in board], dtype=np.int64)
    if math.comb(len(left), k) <= MAX_RUNOUTS:
        return np.array(list(itertools.combinations(left.tolist(), k)), dtype=np.int64).reshape(-1, k), True
    return np.stack([rng.choice(left, k, replace=False) for _ in range(MAX_RUNOUTS)]), False


def showdown_matrix(deck, board: np.ndarray, k: int, weight: float, rng: np.random.Generator,
                    runouts: tuple[np.ndarray, bool] | None = None) -> np.ndarray:
    """float32 [N, N]: weight x the mean over the run-outs of k cards (`showdown_runouts`, or `runouts`
    given so) of sign(strength of a - strength of b), for hands a, b sharing no card with each other
    or `board`; 0 elsewhere: player 0's chips a unit of stake at an all-in's showdown. Where every
    run-out is listed, each such pair meets C(free - 2 hole, k) of them (free: the cards off the board)."""
    board = [int(c) for c in board]
    runouts, every = showdown_runouts(deck, board, k, rng) if runouts is None else runouts
    full = np.concatenate([np.tile(np.array(board, dtype=np.int64), (len(runouts), 1)), runouts], axis=1)
    suits = deck.hand_suits[None] | deck.suit_masks(full)[:, None]                                 # [R, N, 4]
    strengths = fast_rank.rank_sets(fast_rank.tables(), suits.reshape(-1, suits.shape[-1])).reshape(len(full), -1)
    blocked = (deck.card_masks(full)[:, None] & deck.hand_masks[None, :]) != 0                      # [R, N]
    n = deck.num_hands
    sums, counts = np.empty((n, n), np.int32), np.empty((n, n), np.int32)
    _showdown_sums(np.where(blocked, BLOCKED, strengths).astype(np.int32),
                   np.where(blocked, -BLOCKED, strengths).astype(np.int32), blocked, not every, sums, counts)
    met = max(math.comb(deck.size - len(board) - 2 * deck.hole, k), 1) if every else np.maximum(counts, 1)
    off_board = (deck.hand_masks & deck.card_masks(np.array([board], dtype=np.int64).reshape(1, -1))[0]) == 0
    disjoint = ((deck.hand_masks[:, None] & deck.hand_masks[None, :]) == 0) & off_board[:, None] & off_board
    return np.where(disjoint, weight * sums / met, 0.0).astype(np.float32)


class RolloutContinuations:
    """The four continuation strategies of the searcher's opponent at a `TableSubgame`'s leaves, as
    `solve_depth_limited` asks for them (`k`, `searcher`, `opponent`, `labels`, `matrices(pubs)`:
    rollout means where the next round's betting starts, `PairLeaves`; exact showdown values where
    an all-in's run-out follows, `ShowdownLeaves`; module doc). showdowns: {(board, cards to come):
    `showdown_matrix`}, kept between searches; weight: the subgame's deal weight."""

    def __init__(self, table, blueprint, board: np.ndarray, root: int, seat: int, rollouts: int, exact: int,
                 rng: np.random.Generator, showdowns: collections.OrderedDict, weight: float):
        self.table, self.blueprint, self.board = table, blueprint, np.asarray(board, np.int64)
        self.weight = weight            # the deal weight of two disjoint hands (`TableSubgame.deal_weight`)
        self.searcher, self.opponent = int(seat), 1 - int(seat)
        self.labels, self.k = list(CONTINUATIONS), len(CONTINUATIONS)
        self.rollouts, self.exact, self.rng, self.showdowns = rollouts, exact, rng, showdowns
        self.round = int(table.betting.round[root])

    def matrices(self, pubs) -> StackedLeaves:
        bt, deck, weight = self.table.betting, self.table.deck, self.weight
        ends = [chain_end(bt, int(pub[0])) for pub in pubs]
        dealt = np.array([k for _, k in ends], dtype=np.int64)
        betting = np.array([bt.kind[end] == DECISION for end, _ in ends], dtype=bool)
        rows = np.flatnonzero(betting)
        parts = [(rows, self._rollout_leaves(np.array([pubs[i][0] for i in rows], dtype=np.int64), weight))]
        for k in sorted(set(dealt[~betting].tolist())):
            rows = np.flatnonzero(~betting & (dealt == k))
            stakes = np.array([bt.spent[ends[i][0]].min() for i in rows], dtype=np.float64)
            parts.append((rows, ShowdownLeaves(stakes, self._showdown(k, weight), self.k)))
        return StackedLeaves(parts, self.k, deck.num_hands)

    def _showdown(self, dealt: int, weight: float) -> np.ndarray:
        """`showdown_matrix` of this board and `dealt` cards to come, kept."""
        key = (tuple(self.board.tolist()), dealt)
        if key not in self.showdowns:
            self.showdowns[key] = showdown_matrix(self.table.deck, self.board, dealt, weight, self.rng)
            while len(self.showdowns) > SHOWDOWNS_KEPT:
                self.showdowns.popitem(last=False)
        self.showdowns.move_to_end(key)
        return self.showdowns[key]

    def _rollout_leaves(self, nodes: np.ndarray, weight: float) -> PairLeaves | None:
        """The leaves at betting nodes `nodes` (chance nodes opening a round), from rollouts."""
        if not len(nodes):
            return None
        table, deck = self.table, self.table.deck
        possible = table.possible(self.board)
        free = deck.size - len(self.board)
        if math.comb(free, table.hole) * math.comb(free - table.hole, table.hole) <= self.exact:
            hands = np.flatnonzero(possible)         # every pair, each its own key, with run-outs
            pairs = np.stack(np.meshgrid(hands, hands, indexing="ij"), axis=-1).reshape(-1, 2)
            pairs = pairs[(deck.hand_masks[pairs[:, 0]] & deck.hand_masks[pairs[:, 1]]) == 0]
            keys = np.where(possible, np.arange(deck.num_hands), -1)
            deals = np.tile(pairs, (max(1, math.ceil(self.rollouts / len(pairs))), 1))
        else:                                # drawn pairs, keyed by the blueprint's buckets
            keys = np.where(possible, self.blueprint.cards.hand_codes(self.board, self.round), -1)
            uniform = np.stack([possible, possible]) / possible.sum()
            deals = sample_hands(uniform, deck.hand_masks, self.rng, self.rollouts)
        width = int(keys.max()) + 1
        cards = complete_deals(table, deals, self.board, self.rng)
        picks = np.arange(self.k, dtype=np.int64)[:, None]
        chips = profile_rollouts(table, nodes, cards, self.blueprint, np.array([self.opponent]), picks,
                                 int(self.rng.integers(1 << 62)))[..., 0]                 # [F, D, k]
        cells = width * width
        cell = keys[deals[:, 0]] * width + keys[deals[:, 1]]                                      # [D]
        count = np.bincount(cell, minlength=cells)
        chips = np.swapaxes(chips, 1, 2)                                                          # [F, k, D]
        lanes = np.arange(len(nodes) * self.k)[:, None] * cells                          # one bincount for all
        sums = np.bincount((lanes + cell).ravel(), weights=chips.ravel(), minlength=len(lanes) * cells)
        values = np.where(count > 0, sums.reshape(len(nodes), self.k, cells) / np.maximum(count, 1),
                          chips.mean(axis=-1, keepdims=True))
        return PairLeaves(values.reshape(len(nodes), self.k, width, width), keys, deck.hands, deck.size, weight)


class RangeSolved:
    """A range search's solution read as `table_search.Solved` is: `at` {decision node: node}, every
    hand's rows float64 [N, K] at each decision of the subgame (`hand_row`, `every_hand`), `codes`
    the hands' bucket codes on the root's round, `iterations` and `nodes` (public states) of the solve."""

    def __init__(self, solution, codes: np.ndarray):
        self.rows = {int(pub[0]): rows for pub, rows in solution.table().items()}
        self.at = {node: node for node in self.rows}
        self.codes, self.iterations, self.nodes = codes, solution.iterations, solution.ct.num_nodes

    def hand_row(self, x: int, hand: int) -> np.ndarray:
        return self.rows[x][hand]

    def every_hand(self, x: int, blueprint) -> np.ndarray:
        """Its rows at x for every hand (`blueprint`, the rows for hands without a strategy, unused)."""
        return self.rows[x]


def range_search(table, blueprint, root: int, board: np.ndarray, ranges: np.ndarray, seat: int, settings,
                 fixed: dict, rng: np.random.Generator, showdowns: collections.OrderedDict) -> RangeSolved:
    """The range search rooted at decision `root` on `board` (canonical) for the player in `seat`
    (module doc): root ranges float [2, N] (positive on every possible hand), `settings` a
    `SearchSettings` (iterations, seconds, ranges: rollouts a leaf, exact), `fixed` {node: float
    [N, K]} rows its decisions there play throughout, `showdowns` the showdown matrices kept
    (`RolloutContinuations`)."""
    if table.players != 2:
        raise TableError(f"search: ranges searches a two-player table, not {table.players} players")
    try:
        game = TableSubgame(table, root, tuple(board.tolist()))
    except TableSubgameError as e:
        raise TableError(str(e)) from None
    conts = RolloutContinuations(table, blueprint, board, root, seat, settings.ranges, settings.exact, rng, showdowns,
                                 game.deal_weight)
    key = tuple(board.tolist())
    solution = solve_depth_limited(game, game.root(), ranges, conts, settings.iterations,
                                   fixed={(node, key): rows for node, rows in fixed.items()},
                                   seconds=settings.seconds)
    return RangeSolved(solution, blueprint.cards.hand_codes(board, int(table.betting.round[root])))
