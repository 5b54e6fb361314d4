"""The fold / call LBR at a two-player table (`sog.eval.table.tournament`), against table agents: the blueprint, search, Modicum.

`sog.eval.holdem.lbr.HoldemLBR` exploits agents of the game API; a blueprint
(`sog.agents.holdem.table.agents.BlueprintAgent`, a `sog blueprint` file, MCCFR or the greedy /
average policy of a UCT config) plays at the table, inside the table's abstract betting tree.
`TableLBR` is the same LBR (Lisy and Bowling 2017, fold / call; the shared part is
`sog.eval.holdem.lbr.FoldCallLBR`) as a `TableAgent`, so `sog.eval.table.tournament.play_match` plays it
against the agent in both seats of every deal (duplicate deals, common random numbers). At each
of its decisions, holding hand x in seat s at betting node v on the board dealt so far:

1. the opponent's range, float [N] over the deck's N hands (`Deck.hands` order; HUNL: 1326):
   uniform, times card removal against x and the board, times, by Bayes' rule, the opponent's
   probability of each action it took along the public path to v, for every hand at once
   (`BlueprintAgent.beliefs`: the blueprint's row of (decision, the hand's bucket code on that
   round's board); `EndgameAgent.beliefs`: those rows before its first solved round, then its
   solves' rows for every hand). An agent whose strategy does not depend on its cards (`call`, `random`)
   leaves card removal only: its action probabilities are the same for every hand and cancel;
2. fold is worth minus the chips LBR has in (big blinds); calling / checking, both players
   then checking / calling to the showdown, stake x (2 e_y - 1) against hand y, the stake being
   what each has in after the call (the smaller: in two-player pots a player all-in for less
   wins or loses what it put in, as the table's showdown `sampled_kernels.terminal_utility`), e_y
   LBR's equity against y over the board's runouts (`sog.games.holdem.equity.hand_equities`:
   exact up to `exact_runouts` runouts, on 52 cards from the flop on; `samples` seeded Monte
   Carlo runouts before the flop), averaged over the range;
3. LBR folds where a fold slot exists (it is facing a bet) and folding is worth at least
   calling; otherwise it calls / checks. It never bets.

All of it is numpy over the N hands (the Python loop is over LBR's decisions and the path's
nodes). LBR is deterministic: its Monte Carlo runouts are seeded by `seed` and the cards it sees,
so its decision is a function of its information state (memoised per (node, hand, board)), and
a seed gives the same match bit for bit.

The opponent's range is its strategy for every hand (Bayes' rule above) for a blueprint, end-game
solving, call and random. Pluribus's real-time search (`sog.agents.holdem.table.search.SearchAgent`) and
Modicum (`sog.agents.holdem.table.modicum.ModicumAgent`, whose end-game solves are over every hand) have
one where their searches list every deal (small games: one search serves every hand). Where the
searches sample deals (HUNL's flop) a search's strategy for a hand y it does not hold is another
search, conditioned on y: the range would need 1326 searches of about a second at each of its
decisions. There LBR takes the agent's own model of its range, as its searches and solves start
from it (`beliefs`: the blueprint's rows at those decisions, then the solves' for every hand;
`floored`: a search may take an action its blueprint never takes, with any hand), and the report
says `opponent_range: model`.
LBR with a modelled range is still a strategy that plays the hands out, so its win rate is still
a lower bound on the agent's exploitability, only a looser one. Other agents are refused
(`LBRError`).

`table_lbr_match` plays `hands` hands (whole duplicate deals, whole lockstep batches) and reports
LBR's win rate in mbb/hand over duplicate deals with a Student-t 95% interval
(`sog.eval.table.tournament.estimates`' `duplicate`; also AIVAT's `duplicate_aivat`, whose value function
is the check-down value given both hands), hands/s and seconds per LBR decision, as
`sog.eval.lbr.lbr_match` does.
`table_lbr_paired` plays LBR against two agents on the same deals (one seed: the same cards and
action random numbers) and reports the difference of its win rates per deal with its own
interval: comparing end-game solving with the blueprint it starts from, most hands are played
alike by both, so the paired interval is far narrower than the two separate ones.

Measured (`sog lbr --config configs/blueprints/hunl_small.yaml`, this 2-core machine shared with
another CPU job, nice 19; blueprints trained by `sog blueprint` with that config; mbb/hand,
Student-t 95% interval over duplicate deals, AIVAT's in brackets):

    opponent                        hands  seed  LBR mbb/hand              AIVAT                  s / decision  hands/s
    blueprint, 50k iterations       2,000  0     +3,741 [+2,198, +5,283]   +3,240 [+2,211, +4,269]   0.096      3.3
    blueprint, 1M iterations        2,000  0       +967 [+394, +1,539]     +1,038 [+573, +1,503]     0.094      2.6
    blueprint, 1M iterations        6,000  1     +1,073 [+681, +1,465]     +1,122 [+789, +1,455]     0.085      2.9
    blueprint, 11.9M (60 minutes)   4,000  0       +303 [-115, +722]         +238 [-150, +625]       0.057      4.1
    random                            400  0    +24,623 [+16,589, +32,656] +21,436 [+15,838, +27,034] 0.070     4.4
    call                              400  0          0 (nobody bets; LBR never folds a small blind)  0.148      1.7

Paired (`table_lbr_paired`, `sog lbr --versus`; 2,000 hands, seed 0, the rows of each side as
alone): the end game solved from the river (`endgame:...?iterations=500&first_round=3`) minus its
blueprint: after 200k iterations -1,255 mbb/hand [-1,934, -576] (+201 against +1,456; seed 1:
-284.5 [-1,003, +434], +866 against +1,150; both seeds -770 [-1,264, -276]), after 4M -214
[-706, +279] (-226 against -12).

Setup (the 51,403-node betting tree, the blueprint's keys, the strength thresholds) 11 to 18 s.
On the 8-card game of the tests, exactly (every deal): against `sog blueprint`'s MCCFR
blueprints after 2k / 20k / 200k iterations LBR wins +49 / -70 / -98 mbb/hand where the exact
best response wins +551 / +149 / +51 (its exploitability): LBR, which never bets, is a loose
lower bound on small limit games; against uniform play +234 (best response +1,314).
"""
from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from sog.agents.holdem.table.agents import BlueprintAgent, CallAgent, TableAgent, UniformAgent
from sog.agents.holdem.table.endgame import EndgameAgent, floored
from sog.agents.holdem.table.modicum import ModicumAgent
from sog.agents.holdem.table.search import SearchAgent
from sog.eval.holdem.lbr import FoldCallLBR
from sog.eval.lbr import LBRError
from sog.eval.table.tournament import Table, estimates, interval, play_match
from sog.games.holdem.equity import EXACT_RUNOUTS, RUNOUT_SAMPLES
from sog.multiplayer.holdem import FOLD

__all__ = ["TableLBR", "table_lbr_match", "table_lbr_paired"]

EQUITY_CACHE = 4096      # (hand, board) equity vectors (N floats each) kept: a lockstep batch has many hands in flight
MEMO = 1 << 16           # information states whose decision is kept
BATCH = 20               # deals per lockstep batch (a seeding unit; small: LBR decides one at a time anyway)
RANGED = (BlueprintAgent, EndgameAgent, SearchAgent, ModicumAgent)   # agents whose `beliefs` give a range


def refuse(opponent: TableAgent) -> None:
    """LBRError unless LBR can read `opponent`'s range over every hand (module doc)."""
    if not isinstance(opponent, (*RANGED, CallAgent, UniformAgent)):
        raise LBRError(f"{opponent.name}: LBR needs the opponent's range over every hand at a node (a blueprint, "
                       f"end-game solving, search, Modicum, call or random), not a {type(opponent).__name__}")


def range_kind(table: Table, opponent: TableAgent) -> str:
    """"strategy" where `opponent`'s range is Bayes' rule with its strategy for every hand, "model" where it
    is the agent's model of it (a search on sampled deals; module doc)."""
    search = opponent.search if isinstance(opponent, ModicumAgent) else opponent
    return "model" if isinstance(search, SearchAgent) and not search.lists_everywhere(table) else "strategy"


class TableLBR(FoldCallLBR, TableAgent):
    """The fold / call LBR against `opponent` at a two-player `table` (module doc).

    exact_runouts / samples: `hand_equities`'s enumeration cap and Monte Carlo runouts; seed:
    the Monte Carlo draws' seed. `stats()`: decisions played, those computed (not memoised),
    and their seconds.
    """

    name = "lbr"

    def __init__(self, table: Table, opponent: TableAgent, exact_runouts: int = EXACT_RUNOUTS,
                 samples: int = RUNOUT_SAMPLES, seed: int = 0):
        if table.players != 2:
            raise LBRError(f"LBR plays heads-up: the table has {table.players} players")
        refuse(opponent)
        super().__init__(table.deck, table.board, exact_runouts, samples, seed, cache=EQUITY_CACHE)
        self.table, self.opponent = table, opponent
        self.modelled = range_kind(table, opponent) == "model"
        self._memo: dict = {}
        self.decisions = self.computed = 0
        self.seconds = 0.0

    def prepare(self, table, cards):
        return cards

    def probs(self, table, nodes, deals, seats, cards):
        """float64 [m, K]: one-hot on LBR's slot at each decision (`TableAgent`)."""
        out = np.zeros((len(nodes), table.width))
        t0 = time.perf_counter()
        for i, (node, deal, seat) in enumerate(zip(nodes.tolist(), deals.tolist(), seats.tolist())):
            out[i, self.decide(node, cards[deal], seat)] = 1.0
        self.decisions += len(nodes)
        self.seconds += time.perf_counter() - t0
        return out

    def seen(self, node: int, cards: np.ndarray, seat: int) -> tuple[int, tuple[int, ...]]:
        """(hand, board): LBR's hand (a row of `Deck.hands`) in `seat` of the deal `cards` (int64
        [2 h + b], `Table.deal`) and the board dealt by `node`."""
        t = self.table
        known = t.levels[max(int(t.node_level[node]), 0)]
        hand = t.deck.hand_index(cards[seat * t.hole:(seat + 1) * t.hole].tolist())
        return hand, tuple(int(c) for c in cards[t.held:t.held + known])

    def opponent_range(self, node: int, seat: int, hand: int, board: tuple[int, ...]) -> np.ndarray:
        """float [N]: the opponent's range at decision `node` (unnormalised), LBR in `seat` holding
        `hand` on `board`: card removal, and Bayes' rule over the path (`RANGED` agents' `beliefs`)."""
        t = self.table
        out = t.possible(np.array([*t.deck.hands[hand].tolist(), *board], dtype=np.int64))
        if isinstance(self.opponent, RANGED):
            path, slots = t.path(node)
            ranges = self.opponent.beliefs(t, path, slots, np.array(board, dtype=np.int64), 1 - seat)
            if self.modelled:                   # floored as the agent's searches and solves floor it
                ranges = floored(t, ranges, board)
            out = out * ranges[1 - seat]
        return out

    def action_values(self, node: int, hand: int, board: tuple[int, ...], opponent_range: np.ndarray,
                      seat: int) -> dict[int, float]:
        """{fold slot (facing a bet), call slot: LBR's expected return in big blinds} at `node`."""
        bt = self.table.betting
        call = int(self.table.call_slot[node])
        out = {}
        folds = np.flatnonzero(bt.action[node, :bt.num_actions[node]] == FOLD)
        if len(folds):
            out[int(folds[0])] = -float(bt.spent[node, seat])
        stake = float(bt.spent[bt.child[node, call]].min())
        out[call] = self.call_value(stake, hand, board, opponent_range, bt.history[bt.decision[node]])
        return out

    def decide(self, node: int, cards: np.ndarray, seat: int) -> int:
        """LBR's slot at decision `node` of deal `cards` in `seat`: call unless folding is legal and
        worth at least as much."""
        hand, board = self.seen(node, cards, seat)
        key = (node, hand, board)
        if key not in self._memo:
            if len(self._memo) >= MEMO:
                self._memo.clear()
            values = self.action_values(node, hand, board, self.opponent_range(node, seat, hand, board), seat)
            call = int(self.table.call_slot[node])
            fold = next((a for a in values if a != call), None)
            self._memo[key] = fold if self.folds(values.get(fold), values[call]) else call
            self.computed += 1
        return self._memo[key]

    def stats(self) -> dict:
        return {"decisions": self.decisions, "computed_decisions": self.computed, "seconds": self.seconds,
                "seconds_per_decision": self.seconds / max(self.decisions, 1)}


def table_lbr_match(table: Table, opponent: TableAgent, hands: int, seed: int = 0, batch: int = BATCH,
                    aivat: bool = True, progress: Callable[[int, int], None] | None = None,
                    lbr: TableLBR | None = None) -> dict:
    """LBR's win rate against `opponent` at a two-player table over `hands` hands: ceil(hands / 2)
    duplicate deals (LBR in both seats), rounded up to whole batches of min(batch, deals) deals.

    Returns dict(mbb_per_hand, ci95_mbb (Student t over deals), stderr_mbb, seat_mbb [LBR in
    seat 0, in seat 1], hands, deals, chips_per_hand (big blinds), seconds, hands_per_second,
    lbr_decisions, seconds_per_lbr_decision, bets [], aivat (the AIVAT estimate: mbb_per_hand,
    ci95_mbb; None without `aivat`), opponent_range (`range_kind`), opponent (its stats)).
    """
    return _summary(table, opponent, *_play(table, opponent, hands, seed, batch, aivat, progress, lbr), aivat)


def table_lbr_paired(table: Table, first: TableAgent, second: TableAgent, hands: int, seed: int = 0,
                     batch: int = BATCH, aivat: bool = True,
                     progress: Callable[[int, int], None] | None = None,
                     lbrs: tuple[TableLBR, TableLBR] | None = None) -> dict:
    """LBR against `first` and against `second` on the same duplicate deals (one `seed`: the same
    cards and action random numbers), and the difference of LBR's win rates, first minus second,
    per deal: a paired estimate whose interval is much narrower than the two separate ones where
    the opponents play alike (end-game solving against the blueprint it starts from).

    Returns dict(first, second: `table_lbr_match`'s dicts; difference: mbb_per_hand, ci95_mbb,
    stderr_mbb, deals, and aivat: the same from AIVAT's values, None without `aivat`).
    """
    def half(i):
        return None if progress is None else (lambda done, total: progress(done + i * total, 2 * total))

    if lbrs is None:                                  # both refused (LBRError) before a hand
        lbrs = [TableLBR(table, agent, seed=seed) for agent in (first, second)]
    runs = [_play(table, agent, hands, seed, batch, aivat, half(i), lbr)
            for i, (agent, lbr) in enumerate(zip((first, second), lbrs))]
    a, b = runs[0][0], runs[1][0]

    def paired(chips_a, chips_b):
        est = interval(1000.0 * (chips_a - chips_b).mean(axis=1), chips_a.shape[1])
        return {"mbb_per_hand": est["mbb_per_hand"], "ci95_mbb": est["ci95"], "deals": est["units"],
                "stderr_mbb": _stderr(est)}

    difference = paired(a.raw, b.raw)
    difference["aivat"] = paired(a.aivat, b.aivat) if aivat else None
    return {"first": _summary(table, first, *runs[0], aivat), "second": _summary(table, second, *runs[1], aivat),
            "difference": difference}


def _play(table: Table, opponent: TableAgent, hands: int, seed: int, batch: int, aivat: bool,
          progress: Callable[[int, int], None] | None, lbr: TableLBR | None):
    """(the match of LBR against `opponent`, LBR, the batch, its seconds)."""
    if hands < 1:
        raise LBRError(f"hands must be at least 1, got {hands}")
    lbr = TableLBR(table, opponent, seed=seed) if lbr is None else lbr
    deals = -(-hands // 2)
    batch = min(batch, deals)
    t0 = time.perf_counter()
    result = play_match(table, lbr, opponent, deals, seed=seed, batch=batch, aivat=aivat, progress=progress)
    return result, lbr, batch, time.perf_counter() - t0


def _stderr(est: dict) -> float:
    """The standard error (mbb/hand) of `sog.eval.table.tournament.interval`'s mean; nan from one unit."""
    return est["sd_per_unit"] / np.sqrt(est["units"]) if est["units"] > 1 else float("nan")


def _summary(table: Table, opponent: TableAgent, result, lbr: TableLBR, batch: int, seconds: float,
             aivat: bool) -> dict:
    """`table_lbr_match`'s dict of a played match."""
    est = estimates(result)
    dup = est["duplicate"]
    stats = lbr.stats()
    out = {"game": repr(table.game), "hands": result.hands, "deals": len(result.raw), "batch_deals": batch,
           "bets": list(lbr.bets), "chips_per_hand": dup["mbb_per_hand"] / 1000, "mbb_per_hand": dup["mbb_per_hand"],
           "stderr_mbb": _stderr(dup),
           "ci95_mbb": dup["ci95"], "seat_mbb": (1000 * result.raw.mean(axis=0)).tolist(), "seconds": seconds,
           "hands_per_second": result.hands / seconds, "lbr_decisions": stats["decisions"],
           "lbr_computed_decisions": stats["computed_decisions"],
           "seconds_per_lbr_decision": stats["seconds"] / stats["decisions"] if stats["decisions"] else float("nan"),
           "aivat": ({"mbb_per_hand": est["duplicate_aivat"]["mbb_per_hand"], "ci95_mbb": est["duplicate_aivat"]["ci95"]}
                     if aivat else None),
           "opponent_range": range_kind(table, opponent), "opponent": opponent.stats()}
    return out
