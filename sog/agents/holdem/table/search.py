"""Pluribus's real-time search as a table agent (`search:CONFIG.yaml?...` at a table).

At each of its decisions from round `first_round` on (by default after the first betting round),
`SearchAgent` plays its own hand's row of a depth-limited subgame's solution
(`sog.agents.holdem.table.subgame_tree.SubgameTree`: to the end of the round, or `depth` actions) over the
players still in. As in Pluribus's nested search the subgame is rooted at the start of the
current betting round (`search_root`; with a depth limit, at the latest decision a multiple of
`depth` actions below it), not at the current decision: it is solved the first time the agent
acts in it, for the hand it holds, and its later decisions in the round play the same solution,
so its own earlier actions there stay those of the strategy it plays (re-solving at every
decision from beliefs that model them by the blueprint is the nested unsafe search Pluribus's
supplement warns against: on the 8-card game of tests/test_holdem_modicum.py, the last round
searched, exact exploitability 400.6 mbb/hand re-solving at every decision, 227.3 from the
round's start, the blueprint 269.9). A search:

1. beliefs: each seat's range over the deck's hands by Bayes' rule along the public path to the
   root (`beliefs`): the strategy of the searches that played its decisions where they have one
   for every hand (every deal listed), else the blueprint's (`BlueprintAgent.beliefs`); floored at
   `FLOOR` x uniform (a hand the blueprint never plays that way, e.g. the searcher's own after its
   searched actions, keeps a weight);
2. deals: joint hands drawn from the ranges, or all of them on small games, with run-outs
   (`subgame_deals`);
3. leaves: rollouts of every profile of the four continuation strategies (`leaf_utilities`);
4. linear CFR for `iterations` iterations or `seconds` (`SubgameCFR`): the vector form over
   every deal, or with `sample` > 0 Monte Carlo linear CFR, each iteration on that many of the
   deals (for large subgames, many deals).

Where the deals are drawn, each hand meets about one hand of each other player, so in the subgame
every player's hand is known to the others: on the 8-card game of tests/test_holdem_blueprint_agent.py
Modicum with 8 sampled joint hands loses 0.032 chips a hand to its blueprint on average, exactly,
where listing every deal wins 0.012 (docs: Results). With `bucketed` every hand but the one
the searcher holds plays its blueprint bucket's row in the subgame, so an opponent's row meets
several of the searcher's hands; it is not measurably better at hunl_small yet. With `ranges` > 0
(two players) the search is instead Modicum's over every hand of both players
(`sog.agents.holdem.table.range_search`): one subgame a (root, board, seat), the opponent's continuation choice
per hand at the leaves, leaf values from rollouts over hand pairs (or bucket pairs); on that 8-card
game, both rounds searched, over search seeds 0 to 3, Modicum's exact exploitability 129 mbb/hand on
average and +14.6 against its blueprint (305 exploitable), 186 and +12.2 with drawn pairs by bucket,
where listing every deal gave 215 and -0.8 (docs: Results).

Before `first_round` it plays the blueprint. Every agent at the table plays inside its abstract
betting tree, so no bet is off the abstraction and Pluribus's first-round searches after
off-tree bets do not arise here. A search's random numbers are derived from `seed`, its root
and the cards the searcher sees (its hand, the board with each round's cards sorted), so
decisions are reproducible and do not depend on the batch they come in. Where the search lists
every deal (small games) it does not depend on the searcher's seat or hand at all: one search
per (root, board) serves every hand, and `every_hand` gives its strategy for every hand (the
beliefs Modicum's end-game solver starts from, `sog.agents.holdem.table.modicum`); a range search serves
every hand of its seat, and `every_hand` is the node's actor's. `stats()` reports
the searches, decisions, wall seconds per search, iterations and subgame nodes per search, the
rollouts' blueprint lookups, and for a range search the megabytes of showdown matrices it keeps.

Measured with the searches then rooted at every decision (configs/tournaments/sixmax_search.yaml
on the sixmax_small blueprint after 600 s of
training; this 2-core machine at load average 6 to 10, nice 19; README for the win rates): 100
iterations on 64 deals with 16 profiles, 73 to 93 subgame nodes, 1.3 s wall a search, at most
0.4 CPU s.
"""
from __future__ import annotations

import collections
import dataclasses
import math
import time
from collections.abc import Callable

import numpy as np

from sog.agents.holdem.table.agents import (
    BlueprintAgent,
    OverBlueprint,
    TableError,
    canonical,
    path_ranges,
)
from sog.agents.holdem.table.range_search import range_search
from sog.agents.holdem.table.subgame_cfr import SubgameCFR, leaf_utilities, profiles
from sog.agents.holdem.table.subgame_tree import SubgameTree, subgame_deals
from sog.games.api import DECISION
from sog.seeding import derive_seed

FLOOR = 1e-6
SEARCH_TAG = 4
SOLVES_KEPT = 64       # searches kept (by `SearchAgent._solve`'s key), least recently used dropped beyond
MINIMUM = {"iterations": 0, "seconds": 0, "deals": 1, "exact": 0, "profiles": 1, "depth": 0, "first_round": 0,
           "sample": 0, "runouts": 1, "ranges": 0, "seed": 0}


@dataclasses.dataclass(frozen=True)
class SearchSettings:
    """A search's budget and sampling (`search:...?key=value`): `iterations` of linear CFR (at
    most: `seconds` > 0 also stops it), `deals` sampled deals (or every combination where there
    are at most `exact`), `profiles` continuation profiles (all 4^c up to it), `depth` actions
    below the root (0: to the end of the round), `first_round` the first round searched, `mix`
    the share of deals giving the searcher its own hand, `sample` the deals each iteration draws from
    them (Monte Carlo linear CFR for large subgames; 0: every deal every iteration), `runouts` the
    run-outs (rest of the board, rollouts) per joint hand where the subgame has continuation
    leaves, `bucketed` (true) where the deals are drawn: every hand but the one it holds plays by its
    blueprint bucket in the subgame (one row per bucket code of the root's round and seat, starting
    from, or frozen at, the row of one of its hands: a hand met on few deals is not seen by the
    other players), `ranges` > 0 two players: the search over every hand of both (`sog.agents.holdem.table.range_search`,
    that many rollouts a leaf and continuation, every hand pair listed where there are at most `exact`;
    `deals`, `mix`, `profiles`, `sample`, `runouts` and `bucketed` are the sampled search's; 0: the deals
    above), `seed`."""

    iterations: int = 100
    seconds: float = 0.0
    deals: int = 64
    exact: int = 4096
    profiles: int = 16
    depth: int = 0
    first_round: int = 1
    mix: float = 0.25
    sample: int = 0
    runouts: int = 1
    bucketed: bool = False
    ranges: int = 0
    seed: int = 0

    def __post_init__(self):
        for key, low in MINIMUM.items():
            if getattr(self, key) < low:
                raise TableError(f"search: {key} must be at least {low}, got {getattr(self, key)}")
        if not isinstance(self.bucketed, bool):
            raise TableError(f"search: bucketed must be true or false, got {self.bucketed!r}")
        if not 0.0 <= self.mix < 1.0:
            raise TableError(f"search: mix must be in [0, 1), got {self.mix}")


def search_root(table, node: int, depth: int = 0) -> int:
    """The root of the search that plays decision `node` (Pluribus's nested search): the first
    decision of node's betting round on its path, or with a depth limit (`depth` > 0) the
    decision on that path a multiple of `depth` actions below it nearest node (node itself when
    `depth` is 1)."""
    bt, parent = table.betting, table.parent
    chain = [int(node)]                # node, then its decision ancestors of the same round
    while parent[chain[-1]] >= 0 and bt.kind[parent[chain[-1]]] == DECISION and \
            bt.round[parent[chain[-1]]] == bt.round[node]:
        chain.append(int(parent[chain[-1]]))
    m = len(chain) - 1
    return chain[m - (m // depth) * depth if depth > 0 else m]


class Solved:
    """One search's solution: `at` {decision node: x} over the subgame's decisions, `actor` int64 [Dn],
    `uniq` per seat int64 [H_p] the hands (rows of `Deck.hands`) its deals give that seat (with
    `bucketed`, N + the bucket code of each but the searcher's held hand), `average`
    float64 [Dn, H, K] the average strategy of x's actor holding uniq[actor][h], `codes` int64 [N]
    the hands' bucket codes on the root's round (the blueprint's rows where a hand has no deal)."""

    def __init__(self, tree, solver: SubgameCFR, codes: np.ndarray):
        self.at = {int(n): x for x, n in enumerate(tree.nodes[tree.dec].tolist())}
        self.actor = tree.actor[tree.dec].astype(np.int64)
        self.uniq, self.average, self.codes = solver.uniq, solver.average_strategy(), codes

    def hand_row(self, x: int, hand: int) -> np.ndarray | None:
        """float64 [K]: decision x's average strategy for its actor holding `hand`; None if no deal gives it."""
        u = self.uniq[int(self.actor[x])]
        j = int(np.searchsorted(u, hand))
        return self.average[x, j] if j < len(u) and u[j] == hand else None

    def every_hand(self, x: int, blueprint: Callable[[], np.ndarray]) -> np.ndarray:
        """float64 [N, K]: decision x's average strategy for every hand of its actor, the blueprint's rows
        (`blueprint()`: float [N, K]) for hands no deal gives it."""
        u = self.uniq[int(self.actor[x])]
        out = np.array(blueprint(), dtype=np.float64)
        ok = u >= 0
        out[u[ok]] = self.average[x, :len(u)][ok]
        return out


class SearchAgent(OverBlueprint):
    """Pluribus's depth-limited search over `blueprint` (a `BlueprintAgent`; module doc). `fixed`:
    {decision node: float [N, K]}, rows its searches play at those decisions rather than solve them
    (a searcher's own earlier actions in the round, frozen); `beliefs`: the function of the root's
    beliefs (`beliefs`' arguments) in place of its own (a search at a table of the real moves,
    `sog.agents.holdem.seats.modicum`)."""

    def __init__(self, blueprint: BlueprintAgent, settings: SearchSettings = SearchSettings(), label: str = "search",
                 fixed: dict | None = None, beliefs: Callable | None = None):
        super().__init__(blueprint, settings, label)
        self.fixed = fixed or {}        # {decision node: float [N, K]}: rows its searches play there, not solve
        self.root_beliefs = beliefs or self.beliefs     # (table, path, slots, board) -> float [P, N]
        self.searches, self.seconds, self.iterations, self.nodes, self.decisions = 0, 0.0, 0, 0, 0
        self._solved: collections.OrderedDict = collections.OrderedDict()   # `_solve`'s key -> Solved
        self._showdowns: collections.OrderedDict = collections.OrderedDict()   # range searches' showdown values

    def decide(self, table, node: int, cards: np.ndarray, seat: int) -> np.ndarray:
        """float64 [K]: the searched distribution over node's slots (`OverBlueprint.decide`): the row at
        `node` of the search rooted at `search_root` for seat's hand, solved the first time it is met."""
        t0 = time.perf_counter()
        known = table.levels[max(int(table.node_level[node]), 0)]
        board = np.array(canonical(table, cards[table.held:table.held + known]), dtype=np.int64)
        hand = table.deck.hand_index(cards[seat * table.hole:(seat + 1) * table.hole].tolist())
        solved = self._solve(table, search_root(table, node, self.settings.depth), board, seat, hand)
        x = solved.at[node]
        row = solved.hand_row(x, hand)
        if row is None:
            row = self.blueprint.hand_probs(table, node, solved.codes)[hand]
        self.decisions += 1
        self.seconds += time.perf_counter() - t0
        return row

    def every_hand(self, table, node: int, board) -> np.ndarray | None:
        """float64 [N, K]: the strategy of decision node's actor for every hand of the deck from the search
        of node's round (the search each seat runs there; the blueprint's rows for hands none of its
        deals gives) where that search lists every deal, so that it is the same whatever the searcher
        holds; None where it samples deals or node is not in a searched round. board: the board cards
        dealt at node."""
        bt = table.betting
        if bt.round[node] < self.settings.first_round or not self.lists(table, node, board):
            return None
        root = search_root(table, node, self.settings.depth)
        solved = self._solve(table, root, np.array(canonical(table, board), dtype=np.int64), int(bt.actor[node]), 0)
        return solved.every_hand(solved.at[node], lambda: self.blueprint.hand_probs(table, node, solved.codes))

    def lists(self, table, node: int, board) -> bool:
        """Whether the search that plays decision `node` on `board` (the board cards dealt at node) lists
        every deal (`every_hand` has its strategy for every hand), without running it."""
        board = np.array(canonical(table, board), dtype=np.int64)
        return self._listed(table, search_root(table, node, self.settings.depth), board)

    def lists_everywhere(self, table) -> bool:
        """Whether every search it runs at a table of all players still in lists every deal (`lists`): its
        first searched round's, with the fewest board cards, does. Then `beliefs` is its range."""
        r = min(self.settings.first_round, len(table.game.board_due) - 1)
        return self._fits(math.comb(table.deck.size - int(table.game.board_due[r]), table.hole), table.players)

    def beliefs(self, table, path: np.ndarray, slots: np.ndarray, board: np.ndarray, seat: int | None = None
                ) -> np.ndarray:
        """float64 [P, N]: `BlueprintAgent.beliefs` (each seat's range along the public path, by Bayes'
        rule) with its own strategy at the decisions of searched rounds where it has one for every
        hand (`every_hand`: the searches that played them, as Pluribus updates its beliefs by the
        strategy it computed), the blueprint's at the others. The same whichever `seat` asks. Where
        the searches sample deals this is the agent's model of its range, not its range (its
        strategy for a hand it does not hold is another search)."""
        def rows_at(node: int, known: np.ndarray) -> np.ndarray:
            rows = self.every_hand(table, node, known)
            if rows is None:
                codes = self.blueprint.cards.hand_codes(known, int(table.betting.round[node]))
                rows = self.blueprint.hand_probs(table, node, codes)
            return rows
        return path_ranges(table, path, slots, board, rows_at)

    def _listed(self, table, root: int, board: np.ndarray) -> bool:
        """Whether the search at `root` has a strategy for every hand: a range search (`ranges`), or one
        that lists every deal (`subgame_deals` with `exact`: its floored beliefs are positive on every
        hand sharing no board card)."""
        return self._fits(int(table.possible(board).sum()), int((~table.betting.folded[root]).sum()))

    def _fits(self, hands: int, players: int) -> bool:
        """Whether `players` ranges of `hands` hands each have at most `exact` combinations (listed), or
        the searches are range searches."""
        return self.settings.ranges > 0 or float(hands) ** players <= self.settings.exact

    def _solve(self, table, root: int, board: np.ndarray, seat: int, hand: int) -> Solved:
        """The search rooted at `root` on `board` for `seat` holding `hand`, kept: one per (root, board)
        where it lists every deal (the same for every seat and hand), one per (root, seat, board) for a
        range search (`ranges`), else per (root, seat, hand, board)."""
        listed = self._listed(table, root, board)
        key = (root, seat, -1, *board.tolist()) if self.settings.ranges else \
            (root, *board.tolist()) if listed else (root, seat, hand, *board.tolist())
        if key in self._solved:
            self._solved.move_to_end(key)
        else:
            self._solved[key] = self._search(table, root, board, seat, hand, listed)
            while len(self._solved) > SOLVES_KEPT:
                self._solved.popitem(last=False)
        return self._solved[key]

    def _search(self, table, root: int, board: np.ndarray, seat: int, hand: int, listed: bool) -> Solved:
        """The search rooted at `root` (module doc); its random numbers are the same for every seat and
        hand where it lists every deal or is a range search."""
        s, bt = self.settings, table.betting
        path, slots = table.path(root)
        beliefs = self.root_beliefs(table, path, slots, board)
        possible = table.possible(board)
        beliefs = beliefs + FLOOR * possible / possible.sum()
        who = table.deck.num_hands if listed else hand          # (no hand has that index)
        rng = np.random.default_rng(derive_seed(s.seed, SEARCH_TAG, root, who, *board.tolist()))
        if s.ranges:
            solved = range_search(table, self.blueprint, root, board, beliefs, seat, s, self.fixed, rng,
                                  self._showdowns)
            self.searches, self.nodes, self.iterations = (self.searches + 1, self.nodes + solved.nodes,
                                                          self.iterations + solved.iterations)
            return solved
        tree = SubgameTree(bt, root, s.depth)
        stack = bt.spent[root] * table.big_blind < np.asarray(table.rules.stacks, dtype=np.float64)
        inside = np.flatnonzero(~bt.folded[root])
        choosers = np.flatnonzero(~bt.folded[root] & stack)
        runouts = s.runouts if len(tree.cont) else 1          # terminal leaves only: every run-out the same
        hands, weights, deal_cards = subgame_deals(table, beliefs, inside, board, seat, hand, s.deals, s.exact,
                                                   s.mix, rng, runouts)
        picks = profiles(len(choosers), s.profiles)
        term, cont = leaf_utilities(table, tree, deal_cards, self.blueprint, choosers, picks,
                                    int(rng.integers(1 << 62)))
        codes = self.blueprint.cards.hand_codes(board, int(bt.round[root]))
        at = tree.nodes[tree.dec].tolist()
        bp = np.stack([self.fixed[x] if x in self.fixed else self.blueprint.hand_probs(table, x, codes) for x in at])
        keys = None
        if s.bucketed and not listed:
            keys = np.where(hands >= 0, table.deck.num_hands + codes[np.maximum(hands, 0)], -1)
            keys[hands[:, seat] == hand, seat] = hand
        solver = SubgameCFR(tree, hands, weights, bp, term, cont, choosers, picks, s.sample,
                            int(rng.integers(1 << 62)) if s.sample else 0, np.array([x in self.fixed for x in at]),
                            keys)
        self.iterations += solver.run(s.iterations, s.seconds)
        self.searches, self.nodes = self.searches + 1, self.nodes + tree.size
        return Solved(tree, solver, codes)

    def stats(self) -> dict:
        return {"searches": self.searches, "decisions": self.decisions,
                "seconds_per_search": self.seconds / max(self.searches, 1),
                "iterations_per_search": self.iterations / max(self.searches, 1),
                "subgame_nodes_per_search": self.nodes / max(self.searches, 1), "blueprint": self.blueprint.stats(),
                **({"showdown_matrices_mb": sum(m.nbytes for m in self._showdowns.values()) / 2 ** 20}
                   if self.settings.ranges else {})}
