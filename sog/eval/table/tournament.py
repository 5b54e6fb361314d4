"""Evaluation at a poker table of 2 to 6 players: one candidate against copies of a reference.

Pluribus's 1H+5AI format: a candidate agent sits at an n-player hold'em
table (`sog.multiplayer.holdem.Holdem`, 2 to 6 players) with n - 1 copies of a reference
agent, and its win rate is reported in mbb/hand with a 95% interval.

Play. Every agent here plays inside the table's own action abstraction (limit, `fcpa`, or the
`pluribus` bet sizes a blueprint was trained on), so a hand is a walk down the game's abstract
betting tree (`sog.multiplayer.betting_tree.TableBettingTree`) for one deal: the cards decide
only the agents' information (their bucket codes) and the showdown. Hands are played in
lockstep, vectorised over a batch of hands: one step moves every unfinished hand one node
down (a chance node to its only child, a decision to the child of the slot its agent draws),
so the Python loop is per tree depth, not per hand; an agent answers, for a batch of
(decision node, deal, seat), its distribution over the node's action slots (`TableAgent`).

Seats and duplicate deals. Deal j is played n times, the candidate in seat 0, 1, ..., n - 1
and the reference in the others (the cards stay with the seats; the agents move), so over a
deal's n hands every seat's cards and position go to the candidate once. Decisions draw
their slot by inverse CDF from one uniform per (deal, step), shared by the deal's n hands
(common random numbers), so a candidate identical to the reference plays the same hand n
times and scores exactly zero on every deal (the chips sum to zero). Pluribus's "Control"
(the hand replayed with the reference in the human's seat, its score subtracted) and its
modest reduction (subtracting each hand's blueprint value given all private cards) both cancel
out over a deal's n rotations: the n controls of a deal are one game, whose chips sum to zero,
and so do the seats' values given the cards. The estimators below therefore use the
rotations and a value-based control variate.

Variance reduction (AIVAT, Burch et al. 2018, the terms Pluribus's supplement describes; our
value function). With v~(h) any function of the history and all cards, the terms
    chance node h, outcome o:       v~(h o) - E_o[v~(h o)]
    decision h, sampled slot a*:    v~(h a*) - sum_a sigma(a | h) v~(h a)
have mean zero given h whatever v~ is, as long as sigma is the distribution a* was drawn
from (every agent here reports it), so the candidate's chips minus their sum over the hand is
an unbiased estimate of its expected chips. Our v~ is the check-down value: the candidate's
share of the pots (side pots included, `sampled_kernels.terminal_utility`) if nobody bet again and
the board ran out to a showdown among the players still in, averaged over the run-outs of the
cards not yet dealt, given every player's hole cards. It is a martingale over deals
(E_o[v~(h o)] = v~(h)), so a chance term is v~(after) - v~(before); a round's board is one
chance event. Run-outs: every one where there are at most `enumerate_max` (52 cards, six
players: the flop's 666 turn-river pairs, the turn's 36 rivers, the river itself), else
`mc_runouts` drawn uniformly from a stream independent of the deal and the play (preflop: 5
of the 40 cards left), which keeps every term's mean zero. Before the hole cards v~ is 0:
averaged over deals each pot layer is shared evenly among the players paying into it (their
hands are exchangeable), so every seat's expected check-down chips are 0.

Estimators (`estimates`), from the per-deal, per-seat chips `raw[d, s]` and `aivat[d, s]`:
* `plain`: one hand per deal, the candidate in seat d mod n (independent deals, seats
  rotated), blocks of n consecutive deals as the independent units: no variance reduction;
* `plain_aivat`: the same hands, AIVAT values;
* `duplicate`: all n rotations of each deal (unit: the deal's mean);
* `duplicate_aivat`: the rotations and AIVAT together.
Each gives mbb/hand, its 95% interval (Student t over the units), the standard deviation per
unit and the hands it would take for an interval narrower than `target_width` mbb/hand.

Measured (configs/tournaments/sixmax.yaml, `--games 12000`; this 2-core machine under a load
average of about 10 from other jobs, at nice 19, so wall-clock rates are several times an
idle machine's): the sixmax_small blueprint after a 900-second `sog blueprint` run (173,648
iterations, 150 CPU seconds, 1.68M abstract sets, no snapshot yet, so after the first round
the current strategy), 12,000 deals (72,000 hands) a match, seed 0; mbb/hand, the 95%
half-width, and in brackets the hands a 95% interval narrower than 50 mbb/hand would take:

    candidate vs 5 x     plain               plain + AIVAT       duplicate           duplicate + AIVAT
    blueprint  call      +1882 ± 615 (7.2M)  +1093 ± 273 (1.4M)  +1139 ± 154 (2.7M)  +1033 ± 90 (935k)
    blueprint  random    +1384 ± 355 (2.4M)  +1030 ±  96 (177k)   +970 ± 115 (1.5M)  +1085 ± 29 (97k)
    call       blueprint -1204 ± 475 (4.3M)  -1608 ± 165 (519k)  -1659 ± 166 (3.2M)  -1725 ± 59 (396k)
    random     blueprint -1275 ± 329 (2.1M)  -1558 ±  87 (145k)  -1472 ± 110 (1.4M)  -1591 ± 31 (110k)
    blueprint  blueprint  +358 ± 280 (1.5M)    +44 ±  86 (141k)      0 ± 0               0 ± 0

(plain uses one hand per deal: 12,000 hands.) With 19,200 deals (115,200 hands; the first
12,000 deals the same) the intervals are narrower than 50 mbb/hand: blueprint vs 5 x random
+1065.2 ± 22.8, random vs 5 x blueprint -1585.5 ± 24.3 (duplicate + AIVAT; plain +1216.6 ±
282.8 and -1461.0 ± 255.6), 2,930 to 2,960 hands per CPU second with the AIVAT values
(39 CPU seconds a match; 1,123 and 925 hands/s wall at a load average of 9 to 11).
Rotations and AIVAT together cut the hands
needed 8 to 25 times. The blueprint met no row at 32% of its decisions against five
calling stations (multiway postflop spots its self-play never reached; played uniformly),
1.6% against random players, 0.7% against itself. Speed: the lockstep play alone 2,800 to
3,400 hands/s (wall, blueprint lookups included); with the AIVAT values 170 to 220 hands/s
(430 against itself, whose rotations share the per-(deal, node) values); setup 134 s wall
(the 725,026-node betting tree, the blueprint's 1.68M keys, the strength thresholds).

Other values: `play_match(values=...)` takes any v~ of (deal, node), every seat's at once;
`sog.eval.table.rollout_values` gives an agent's expected chips by rollouts (a blueprint's
self-play from the node: the betting still to come, not only the cards).

Randomness: deals, action uniforms, Monte Carlo run-outs and other values' draws (rollouts) of
batch b come from four streams seeded by `derive_seed(seed, b, tag)`, so a seed gives the same
deals and the same action draws to every match (common random numbers across matches), bit for
bit.
"""
from __future__ import annotations

import dataclasses
import functools
import itertools
import math
import time
from collections.abc import Callable

import numba
import numpy as np

from sog.agents.holdem.blueprint.sampled_kernels import terminal_utility
from sog.agents.holdem.table.agents import (  # noqa: F401 - the agents, re-exported
    BlueprintAgent,
    CallAgent,
    ContinuationAgent,
    TableAgent,
    TableError,
    UniformAgent,
)
from sog.games.api import CHANCE, DECISION, TERMINAL
from sog.games.holdem.cards import Deck, rank_cardsets
from sog.multiplayer.betting_tree import TableBettingTree
from sog.multiplayer.holdem import CALL
from sog.seeding import derive_seed

ENUMERATE_MAX = 1000         # run-outs enumerated up to this many, else sampled
MC_RUNOUTS = 256             # sampled run-outs (52 cards, six players: the preflop)
BATCH_DEALS = 120            # deals per lockstep batch (a seeding unit: results depend on it)
TARGET_WIDTH = 50.0          # mbb/hand: the interval width whose cost in hands is reported
DEAL_TAG, ACTION_TAG, RUNOUT_TAG, ROLLOUT_TAG = 1, 2, 3, 4
ESTIMATORS = ("plain", "plain_aivat", "duplicate", "duplicate_aivat")


# ---- the table ---------------------------------------------------------------------------------------
class Table:
    """An n-player hold'em game's betting tree, deck and check-down run-outs (module doc)."""

    def __init__(self, game, betting: TableBettingTree | None = None, enumerate_max: int = ENUMERATE_MAX,
                 mc_runouts: int = MC_RUNOUTS):
        self.game, self.rules = game, game.rules
        self.players = game.num_players
        self.betting = bt = TableBettingTree(game) if betting is None else betting
        self.width = bt.child.shape[1]
        self.deck = Deck(self.rules.num_ranks, self.rules.num_suits, self.rules.hole)
        self.hole = self.rules.hole
        self.held = self.players * self.hole
        self.levels = tuple(sorted({int(x) for x in game.board_due}))   # board cards known, per level
        self.board = self.levels[-1]
        self.num_cards = self.held + self.board
        if self.num_cards > self.deck.size:
            raise TableError(f"{self.players} players need {self.num_cards} cards; the deck has {self.deck.size}")
        self.enumerate_max, self.mc_runouts = int(enumerate_max), int(mc_runouts)
        self.big_blind = float(max(self.rules.blinds))
        calls = bt.action == CALL
        self.call_slot = np.argmax(calls, axis=1).astype(np.int64)
        self.parent, self.parent_slot = self._parents()
        self.node_level = self._node_levels()

    def legal(self, nodes: np.ndarray) -> np.ndarray:
        """float64 [m, K]: 1 on each node's action slots."""
        return (np.arange(self.width)[None, :] < self.betting.num_actions[nodes][:, None]).astype(np.float64)

    def _parents(self) -> tuple[np.ndarray, np.ndarray]:
        """(parent, parent_slot) int64 [M]: each node's parent and the slot leading to it (-1 / 0 at
        the root)."""
        bt = self.betting
        parent, slot = np.full(len(bt.kind), -1, dtype=np.int64), np.zeros(len(bt.kind), dtype=np.int64)
        r, j = np.nonzero(bt.child >= 0)
        parent[bt.child[r, j]], slot[bt.child[r, j]] = r, j
        return parent, slot

    def _node_levels(self) -> np.ndarray:
        """int64 [M]: per node, the index in `levels` of the board known there (the last complete
        round's board: a chance chain counts once it is dealt), -1 before the hole cards are."""
        bt = self.betting
        m = len(bt.kind)
        parent = self.parent
        dealt = np.zeros(m, dtype=np.int64)
        has = parent >= 0
        step = (bt.kind[np.maximum(parent, 0)] == CHANCE) & has
        for _ in range(int(bt.depth) + 1):              # parents come before children: depth passes settle it
            dealt = np.where(has, dealt[np.maximum(parent, 0)] + step, 0)
        board = dealt - self.held
        level = np.searchsorted(np.array(self.levels), board, side="right") - 1
        return np.where(board >= 0, level, -1).astype(np.int64)

    def path(self, node: int) -> tuple[np.ndarray, np.ndarray]:
        """(path, slots) int64 [T]: the nodes from the root to node's parent and the slot each took."""
        path, slots = [], []
        while self.parent[node] >= 0:
            path.append(self.parent[node])
            slots.append(self.parent_slot[node])
            node = self.parent[node]
        return np.array(path[::-1], np.int64), np.array(slots[::-1], np.int64)

    def possible(self, cards: np.ndarray) -> np.ndarray:
        """float64 [N]: 1 on the deck's hands holding none of `cards` (int [k]: a board, dead cards)."""
        if not len(cards):
            return np.ones(self.deck.num_hands)
        return ((self.deck.hand_masks & self.deck.card_masks(np.asarray(cards)[None])[0]) == 0).astype(np.float64)

    # ---- deals -------------------------------------------------------------------------------------
    def deal(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """int64 [n, n_players h + b]: uniform deals, seat 0's hole cards first, then the board."""
        return np.argsort(rng.random((n, self.deck.size)), axis=1)[:, :self.num_cards].astype(np.int64)

    def _masks(self, sets: np.ndarray) -> np.ndarray:
        """int64 [..., 4]: per set of distinct cards (int64 [..., k]) and suit, the mask of its ranks."""
        bits = np.left_shift(np.int64(1), self.deck.rank[sets])
        suit = self.deck.suit[sets]
        return np.stack([np.where(suit == s, bits, 0).sum(axis=-1) for s in range(4)], axis=-1)

    def _ranks(self, cards: np.ndarray, boards: np.ndarray) -> np.ndarray:
        """int64 [D, R, n]: each seat's showdown rank on boards (int64 [D, R, b]) of deals `cards`."""
        d, r, _ = boards.shape
        board = self._masks(boards)                                               # [D, R, 4]
        out = np.empty((d, r, self.players), dtype=np.int64)
        for p in range(self.players):
            hole = self._masks(cards[:, p * self.hole:(p + 1) * self.hole])      # [D, 4]
            out[:, :, p] = rank_cardsets((board | hole[:, None, :]).reshape(d * r, 4)).reshape(d, r)
        return out

    def runouts(self, cards: np.ndarray, rng: np.random.Generator,
                boards: list[np.ndarray | None] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(ranks int64 [D, Rtot, n], offsets int64 [L + 1]): per deal, the showdown ranks of every
        seat on each level's run-outs (level i's are rows offsets[i]..offsets[i+1]; the last level
        is the dealt board). `boards[i]` (int64 [D, R, b], optional) imposes level i's run-outs."""
        per, offsets = [], [0]
        dealt_board = cards[:, self.held:]
        for i, known in enumerate(self.levels):
            draw = self.board - known
            if boards is not None and boards[i] is not None:
                full = boards[i]
            elif draw == 0:
                full = dealt_board[:, None, :]
            else:
                extra = self.completions(cards, self.held + known, self.enumerate_max, self.mc_runouts, rng)
                known_cards = np.broadcast_to(dealt_board[:, None, :known], extra.shape[:2] + (known,))
                full = np.concatenate([known_cards, extra], axis=2)
            per.append(self._ranks(cards, full))
            offsets.append(offsets[-1] + full.shape[1])
        return np.concatenate(per, axis=1), np.array(offsets, dtype=np.int64)

    def completions(self, cards: np.ndarray, known: int, enumerate_max: int, samples: int,
                    rng: np.random.Generator) -> np.ndarray:
        """int64 [D, R, num_cards - known]: per deal (a row of `cards`), the cards that complete its
        first `known` (hole cards, then board) from the rest of the deck: every completion in
        increasing order (R their count) where there are at most `enumerate_max`, else `samples`
        drawn uniformly from `rng`."""
        draw = self.num_cards - known
        seen = np.zeros((len(cards), self.deck.size), dtype=bool)
        seen[np.arange(len(cards))[:, None], cards[:, :known]] = True
        rest = np.nonzero(~seen)[1].reshape(len(cards), -1)         # [D, deck - known], increasing
        left = rest.shape[1]
        count = math.comb(left, draw)
        if count <= enumerate_max:
            idx = np.array(list(itertools.combinations(range(left), draw)), dtype=np.int64).reshape(count, draw)
            return rest[:, idx]
        idx = np.argsort(rng.random((len(cards), samples, left)), axis=2)[:, :, :draw]
        return np.take_along_axis(rest[:, None, :], idx, axis=2)

    # ---- play --------------------------------------------------------------------------------------
    def play(self, candidate: TableAgent, reference: TableAgent, cards: np.ndarray, hand_deal: np.ndarray,
             hand_seat: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Play hands i = 0..H-1 in lockstep: deal hand_deal[i] (a row of `cards`), the candidate in
        seat hand_seat[i], the reference elsewhere; at each step one uniform per deal (shared by its
        hands) draws the slot. Returns (paths int64 [T + 1, H]: each hand's node per step, the
        terminal repeated once reached; sigmas float64 [T, H, K]: the distribution each decision
        was drawn from, zero at other steps)."""
        groups = ((candidate, lambda dec, seat: seat == hand_seat[dec]),
                  (reference, lambda dec, seat: seat != hand_seat[dec]))
        return self._walk(groups, cards, hand_deal, np.zeros(len(hand_deal), dtype=np.int64), rng)

    def _walk(self, groups, cards, hand_deal, start, rng):
        """`play` from nodes `start` (int64 [H]), each decision answered by the first of `groups`
        ((agent, which(dec, seat) -> bool mask)) whose mask holds."""
        bt = self.betting
        ctx = [agent.prepare(self, cards) for agent, _ in groups]
        node = np.asarray(start, dtype=np.int64).copy()
        paths, sigmas = [node], []
        while True:
            kind = bt.kind[node]
            if np.all(kind == TERMINAL):
                break
            u = rng.random(len(cards))[hand_deal]
            nxt = node.copy()
            chance = kind == CHANCE
            nxt[chance] = bt.child[node[chance], 0]
            sigma = np.zeros((len(node), self.width))
            dec = np.flatnonzero(kind == DECISION)
            if len(dec):
                seat = bt.actor[node[dec]].astype(np.int64)
                for (agent, which), c in zip(groups, ctx):
                    sel = which(dec, seat)
                    if sel.any():
                        sigma[dec[sel]] = agent.probs(self, node[dec[sel]], hand_deal[dec[sel]], seat[sel], c)
                nxt[dec] = bt.child[node[dec], sample_slots(sigma[dec], u[dec])]
            paths.append(nxt)
            sigmas.append(sigma)
            node = nxt
        return np.stack(paths), (np.stack(sigmas) if sigmas else np.zeros((0, len(node), self.width)))

    def rollout(self, agents, cards: np.ndarray, start: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """float64 [D, n]: every seat's chips (big blinds) when deal d (a row of `cards`) is played
        on from node start[d] by agents[p] in seat p (a profile: one agent a seat), the slot drawn
        as `play` does: the rollouts that value a depth-limited subgame's leaves under a profile of
        continuation strategies (`sog.agents.holdem.table.agents.ContinuationAgent`)."""
        if len(agents) != self.players:
            raise TableError(f"{len(agents)} agents for {self.players} seats")
        deals = np.arange(len(cards))
        groups = [(agent, lambda dec, seat, p=p: seat == p) for p, agent in enumerate(agents)]
        paths, _ = self._walk(groups, cards, deals, start, rng)
        ranks = self._ranks(cards, cards[:, None, self.held:])[:, 0, :]
        out = np.zeros((len(cards), self.players))
        terminal_chips(self.betting.spent, self.betting.folded, paths[-1], ranks, out)
        return out

    def values(self, paths: np.ndarray, sigmas: np.ndarray, hand_deal: np.ndarray, hand_seat: np.ndarray,
               ranks: np.ndarray, offsets: np.ndarray, value_fn: Callable[[np.ndarray], np.ndarray] | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
        """(raw, aivat) float64 [H] in big blinds: each hand's chips for the candidate's seat and
        the same less its AIVAT terms (module doc), from `play`'s record and `runouts` (the dealt
        board's ranks decide the chips). `value_fn(keys)` gives the terms' values (float64 [k, n],
        every seat's, at the `value_keys`; `sog.eval.table.rollout_values`), else the check-down."""
        bt = self.betting
        hand_deal, hand_seat = hand_deal.astype(np.int64), hand_seat.astype(np.int64)
        hand, key, weight = _aivat_terms(bt.kind, bt.child, bt.num_actions, self.node_level, paths, sigmas, hand_deal)
        keys, at = np.unique(key, return_inverse=True)
        vals = (_checkdown_values(keys, bt.kind, bt.spent, bt.folded, self.node_level, ranks, offsets)
                if value_fn is None else value_fn(keys))
        raw = _final_chips(bt.spent, bt.folded, paths, hand_deal, hand_seat, ranks, offsets)
        corr = np.bincount(hand, weights=weight * vals[at.ravel(), hand_seat[hand]], minlength=len(raw))
        return raw, raw - corr

    def value_keys(self, paths: np.ndarray, sigmas: np.ndarray, hand_deal: np.ndarray) -> np.ndarray:
        """int64 [k], sorted and distinct: the (deal, node) pairs d x M + n (M betting nodes) whose
        values the AIVAT terms of `play`'s record read."""
        bt = self.betting
        _, key, _ = _aivat_terms(bt.kind, bt.child, bt.num_actions, self.node_level, paths, sigmas,
                                 hand_deal.astype(np.int64))
        return np.unique(key)


def sample_slots(sigma: np.ndarray, u: np.ndarray) -> np.ndarray:
    """int64 [m]: per row the slot at which sigma's cumulative sum first exceeds u x its total
    (never a slot of probability zero)."""
    cum = np.cumsum(sigma, axis=1)
    slot = (cum <= (u * cum[:, -1])[:, None]).sum(axis=1)
    return np.minimum(slot, sigma.shape[1] - 1).astype(np.int64)


@numba.njit(cache=True)
def _add_utilities(spent, folded, n, ranks, w, out):
    """out[q] += w x the payoff of every seat q at node n were it a showdown on `ranks` (big
    blinds; `sampled_kernels.terminal_utility` for all seats at once: the ACPC server's valueOfState)."""
    players = spent.shape[1]
    standing, total = 0, 0.0
    for q in range(players):
        total += spent[n, q]
        out[q] -= w * spent[n, q]
        if not folded[n, q]:
            standing += 1
    if standing == 1:
        for q in range(players):
            if not folded[n, q]:
                out[q] += w * total
        return
    prev = 0.0
    while True:
        level = np.inf
        for q in range(players):
            if prev < spent[n, q] < level:
                level = spent[n, q]
        if level == np.inf:
            return
        amount, best, winners = 0.0, -1, 0
        for q in range(players):
            amount += min(spent[n, q], level) - min(spent[n, q], prev)
            if not folded[n, q] and spent[n, q] >= level:
                if ranks[q] > best:
                    best, winners = ranks[q], 1
                elif ranks[q] == best:
                    winners += 1
        for q in range(players):
            if not folded[n, q] and spent[n, q] >= level and ranks[q] == best:
                out[q] += w * amount / winners
        prev = level


@numba.njit(cache=True)
def terminal_chips(spent, folded, nodes, ranks, out):
    """out[h] = every seat's chips at terminal nodes[h] with showdown ranks ranks[h]."""
    for h in range(len(nodes)):
        _add_utilities(spent, folded, nodes[h], ranks[h], 1.0, out[h])


@numba.njit(cache=True)
def _aivat_terms(kind, child, num_actions, level, paths, sigmas, hand_deal):
    """(hand, key, weight): the AIVAT terms of `play`'s record as weighted values, hand h's
    correction being the sum over its entries of weight x v~(key)[its seat], key d x M + n the
    (deal, node): a chance step that deals a round's board +1 after, -1 before; a decision +1 at
    the slot taken, -sigma(a) at every slot a drawn from (module doc)."""
    steps, hands = paths.shape
    m = kind.shape[0]
    size = hands * max(steps, 1) * (child.shape[1] + 2)
    hand, key, weight = np.empty(size, np.int64), np.empty(size, np.int64), np.empty(size)
    k = 0
    for h in range(hands):
        d = hand_deal[h]
        for t in range(steps - 1):
            n = paths[t, h]
            if kind[n] == TERMINAL:
                break
            nn = paths[t + 1, h]
            if kind[n] == CHANCE and level[nn] == level[n] and kind[nn] != TERMINAL:
                continue
            hand[k], key[k], weight[k] = h, d * m + nn, 1.0
            k += 1
            if kind[n] == CHANCE:
                hand[k], key[k], weight[k] = h, d * m + n, -1.0
                k += 1
                continue
            for j in range(num_actions[n]):
                if sigmas[t, h, j] > 0.0:
                    hand[k], key[k], weight[k] = h, d * m + child[n, j], -sigmas[t, h, j]
                    k += 1
    return hand[:k], key[:k], weight[:k]


@numba.njit(cache=True)
def _checkdown_values(keys, kind, spent, folded, level, ranks, offsets):
    """float64 [k, n]: every seat's check-down value (big blinds, module doc) at each (deal, node)
    key d x M + n: the chips at a terminal (the dealt board), the mean over the level's run-outs
    elsewhere, 0 before the hole cards."""
    m = kind.shape[0]
    out = np.zeros((len(keys), spent.shape[1]))
    for i in range(len(keys)):
        d, n = keys[i] // m, keys[i] % m
        if kind[n] == TERMINAL:
            _add_utilities(spent, folded, n, ranks[d, offsets[-2]], 1.0, out[i])
        elif level[n] >= 0:
            lo, hi = offsets[level[n]], offsets[level[n] + 1]
            for r in range(lo, hi):
                _add_utilities(spent, folded, n, ranks[d, r], 1.0 / (hi - lo), out[i])
    return out


@numba.njit(cache=True)
def _final_chips(spent, folded, paths, hand_deal, hand_seat, ranks, offsets):
    """float64 [H]: each hand's chips for its candidate seat at its last node (the dealt board)."""
    out = np.empty(paths.shape[1])
    for h in range(paths.shape[1]):
        out[h] = terminal_utility(spent, folded, paths[-1, h], ranks[hand_deal[h], offsets[-2]], hand_seat[h])
    return out


# ---- matches -----------------------------------------------------------------------------------------
@dataclasses.dataclass
class MatchResult:
    """A candidate against copies of a reference: per deal d and candidate seat s its chips
    (big blinds), raw and AIVAT-corrected, and the time spent."""

    candidate: str
    reference: str
    raw: np.ndarray           # float64 [D, n]
    aivat: np.ndarray         # float64 [D, n]
    play_seconds: float
    value_seconds: float
    stats: dict

    @property
    def hands(self) -> int:
        return int(self.raw.size)


def play_match(table: Table, candidate: TableAgent, reference: TableAgent, deals: int, seed: int = 0,
               batch: int = BATCH_DEALS, aivat: bool = True,
               progress: Callable[[int, int], None] | None = None, cpu_seconds: float = 0.0,
               values: Callable | None = None, done: dict | None = None,
               on_batch: Callable[[int, dict], None] | None = None) -> MatchResult:
    """`deals` deals (rounded up to whole batches), each played with the candidate in every seat
    (module doc); AIVAT values unless `aivat` is False (then `aivat` repeats `raw`): the
    check-down's, or `values(table, cards, keys, rng=...)`'s (`Table.values`' value_fn, given the
    batch's deals and a stream of its own; `sog.eval.table.rollout_values`). With `cpu_seconds` > 0
    the match stops after the batch in which its CPU time passes that (the result holds the
    batches played). Resuming: `done` maps batches already played to their records (`on_batch`'s,
    of the same match and seed), which are taken as they are (and their CPU seconds counted);
    `on_batch(b, record)` gets each batch played now, record {"raw", "aivat": float64 [batch, n],
    "cpu_seconds", "play_seconds", "value_seconds"}, so that a match stopped midway loses only
    the batch in flight (`launch.table`: a batch's result does not depend on the others)."""
    if deals < 1:
        raise TableError(f"deals must be at least 1, got {deals}")
    n = table.players
    batches = -(-deals // batch)
    raw, cv = np.empty((batches * batch, n)), np.empty((batches * batch, n))
    play_s = value_s = spent = 0.0
    done = done or {}
    for b in range(batches):
        record = done.get(b)
        if record is None:
            record = _play_batch(table, candidate, reference, b, batch, seed, aivat, values)
            if on_batch is not None:
                on_batch(b, record)
        raw[b * batch:(b + 1) * batch], cv[b * batch:(b + 1) * batch] = record["raw"], record["aivat"]
        play_s, value_s = play_s + record["play_seconds"], value_s + record["value_seconds"]
        spent += record["cpu_seconds"]
        if progress is not None:
            progress((b + 1) * batch, batches * batch)
        if 0 < cpu_seconds <= spent:
            raw, cv = raw[:(b + 1) * batch], cv[:(b + 1) * batch]
            break
    stats = {"candidate": candidate.stats(), "reference": reference.stats()}
    return MatchResult(candidate.name, reference.name, raw, cv, play_s, value_s, stats)


def _play_batch(table: Table, candidate: TableAgent, reference: TableAgent, b: int, batch: int, seed: int,
                aivat: bool, values: Callable | None) -> dict:
    """Batch b of `play_match`: its deals played and valued (the record `on_batch` gets)."""
    n = table.players
    hand_deal, hand_seat = np.repeat(np.arange(batch), n), np.tile(np.arange(n), batch)
    t0, cpu = time.perf_counter(), time.process_time()
    cards = table.deal(np.random.default_rng(derive_seed(seed, b, DEAL_TAG)), batch)
    paths, sigmas = table.play(candidate, reference, cards, hand_deal, hand_seat,
                               np.random.default_rng(derive_seed(seed, b, ACTION_TAG)))
    t1 = time.perf_counter()
    if aivat:
        ranks, offsets = table.runouts(cards, np.random.default_rng(derive_seed(seed, b, RUNOUT_TAG)))
    else:
        dealt = cards[:, None, table.held:]         # every level valued on the dealt board: unused
        ranks, offsets = table.runouts(cards, None, [dealt] * (len(table.levels) - 1) + [None])
    value_fn = None
    if aivat and values is not None:
        stream = np.random.default_rng(derive_seed(seed, b, ROLLOUT_TAG))
        value_fn = functools.partial(values, table, cards, rng=stream)
    r, c = table.values(paths, sigmas, hand_deal, hand_seat, ranks, offsets, value_fn)
    return {"raw": r.reshape(batch, n), "aivat": (c if aivat else r).reshape(batch, n),
            "cpu_seconds": time.process_time() - cpu, "play_seconds": t1 - t0,
            "value_seconds": time.perf_counter() - t1}


# ---- estimators -----------------------------------------------------------------------------------------
def interval(units: np.ndarray, hands_per_unit: int, target_width: float = TARGET_WIDTH) -> dict:
    """The mean of i.i.d. units (mbb/hand each) with its 95% Student-t interval, the standard
    deviation per unit and the hands a 95% interval narrower than `target_width` would take
    (normal quantile: 2 x 1.96 x sd / sqrt(units) < width)."""
    from scipy.stats import t as student_t

    units = np.asarray(units, dtype=np.float64)
    k = len(units)
    mean = float(units.mean()) if k else float("nan")
    sd = float(units.std(ddof=1)) if k > 1 else float("nan")
    half = float(student_t.ppf(0.975, k - 1) * sd / math.sqrt(k)) if k > 1 else float("nan")
    need = (2 * 1.959963984540054 * sd / target_width) ** 2 if k > 1 else float("nan")
    return {"mbb_per_hand": mean, "ci95": [mean - half, mean + half], "half_width": half, "units": k,
            "hands": k * hands_per_unit, "sd_per_unit": sd,
            "hands_for_target": None if math.isnan(need) else math.ceil(need) * hands_per_unit}


def estimates(result: MatchResult, target_width: float = TARGET_WIDTH) -> dict:
    """The four estimators of the module doc (mbb/hand) from a match's chips."""
    n = result.raw.shape[1]
    out = {}
    for name, chips in (("", result.raw), ("_aivat", result.aivat)):
        mbb = 1000.0 * chips
        blocks = len(mbb) // n
        diag = mbb[np.arange(blocks * n), np.arange(blocks * n) % n]
        out["plain" + name] = interval(diag.reshape(blocks, n).mean(axis=1), n, target_width)
        out["duplicate" + name] = interval(mbb.mean(axis=1), n, target_width)
    return {k: out[k] for k in ESTIMATORS}
