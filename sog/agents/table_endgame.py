"""Full-range end-game solving at a two-player table, over a blueprint (`endgame:CONFIG.yaml?...`).

Modicum (Brown, Sandholm and Amos 2018, Appendix A) solves HUNL from the third betting round
(the turn) on to the end of the game with CFR+, over every hand of both players, re-solving
each new round; before that it searches depth-limited subgames. `EndgameAgent` is that
end-game part, over a `sog blueprint` (`BlueprintAgent`, which it plays before `first_round`):

1. at the first decision of a round r >= `first_round` (the round's start node s, the board b
   dealt so far) it solves the game below s (`sog.agents.table_subgame.TableSubgame`: the
   table's own abstract actions, every later board card, to the end of the hand) with
   `iterations` alternating CFR+ iterations over all hands (`sog.search.cfr.CFRSolver`: the
   row passes and the poker protocol's O(N) terminal values, 1326 hands on 52 cards);
2. the root ranges are both players' ranges at s by Bayes' rule along the public path from
   the agent's own per-hand strategy (`beliefs`): the blueprint's rows before `first_round`,
   each earlier solve's average policy at its round's decisions (both players': unsafe nested
   solving, as Modicum did on the turn's first subgame), then card removal by the board, plus
   `FLOOR` x uniform so that no possible hand has zero weight;
3. it plays the average policy of that solve at every decision of round r (its own hand's row),
   and solves afresh at the next round's start; with `resolve` off it plays the first solve's
   policy to the end of the hand (the solve covers it), and does not solve again.

With `first_round` 0 and `resolve` off the agent plays CFR+'s average policy of the whole game,
whose exploitability goes to 0 with the iterations (a test, on a game small enough to enumerate).
Unsafe re-solving does not: on that game re-solving the second round at the first solve's ranges
raised the exploitability from 17 to 34 mbb/hand at 100 / 1000 iterations (other equilibria of
the subgame, which the first round's strategy does not fit).

Every decision's distribution is defined for every hand (`hand_probs`), and the agent's range
along a path is Bayes' rule with it (`beliefs`): what LBR needs (`sog.eval.table_lbr`), unlike
the sampled-deal search (`sog.agents.table_search`). A solve depends only on (s, b) and the
settings, so decisions are deterministic and cached (the round's policy rows, not the tree:
at most `CACHE` solves). A round whose game has more than `max_nodes` public states (HUNL's
turns after a limped or checked-down flop, deep-stacked: up to 56k on hunl_small's tree) is
played by the blueprint. `stats()`: solves, rounds too large to solve, seconds and subgame nodes
per solve, decisions solved.
"""
from __future__ import annotations

import collections
import copy
import dataclasses
import time

import numpy as np

from sog.agents.table_agents import BlueprintAgent, TableAgent, TableError
from sog.agents.table_search import FLOOR
from sog.agents.table_subgame import TableSubgame, TableSubgameError
from sog.games.api import DECISION
from sog.search.cfr import CFRConfig, CFRSolver, Levels
from sog.search.tree import PublicTree, compile_tree

CACHE = 256          # solves whose round policies are kept (then the oldest is dropped)
SIZES = 1 << 16      # subgame sizes kept (then started afresh)


@dataclasses.dataclass(frozen=True)
class EndgameSettings:
    """`iterations` of alternating CFR+ a solve, from round `first_round` on (0 preflop, 2 the
    turn of hold'em: Modicum's), solving afresh at each later round's start unless `resolve` is off;
    a round whose game has more than `max_nodes` public states is played by the blueprint (on HUNL
    about 270 KB a public state while solving: 12,000 is about 3.3 GB)."""

    iterations: int = 200
    first_round: int = 2
    resolve: bool = True
    max_nodes: int = 12_000

    def __post_init__(self):
        if self.iterations < 1:
            raise TableError(f"endgame: iterations must be at least 1, got {self.iterations}")
        if self.first_round < 0:
            raise TableError(f"endgame: first_round must be at least 0, got {self.first_round}")
        if self.max_nodes < 1:
            raise TableError(f"endgame: max_nodes must be at least 1, got {self.max_nodes}")


class EndgameAgent(TableAgent):
    """Full-range end-game solving over `blueprint` (module doc)."""

    def __init__(self, blueprint: BlueprintAgent, settings: EndgameSettings = EndgameSettings(),
                 label: str = "endgame"):
        self.blueprint = copy.copy(blueprint)           # its own lookup counters
        self.blueprint.lookups = self.blueprint.misses = 0
        self.settings, self.name = settings, label
        self._solved: collections.OrderedDict = collections.OrderedDict()   # (s, board) -> {node: [N, K]}
        self._size: dict = {}              # (s, board) -> public states of its game
        self.solves, self.seconds, self.nodes, self.decisions, self.too_large = 0, 0.0, 0, 0, 0

    def prepare(self, table, cards):
        return cards, self.blueprint.prepare(table, cards)

    def probs(self, table, nodes, deals, seats, ctx):
        cards, codes = ctx
        out = self.blueprint.probs(table, nodes, deals, seats, codes)
        for i in np.flatnonzero(table.betting.round[nodes] >= self.settings.first_round):
            node, deal, seat = int(nodes[i]), cards[deals[i]], int(seats[i])
            hand = table.deck.hand_index(deal[seat * table.hole:(seat + 1) * table.hole].tolist())
            out[i] = self.hand_probs(table, node, board_at(table, node, deal))[hand]
            self.decisions += 1
        return out

    def hand_probs(self, table, node: int, board) -> np.ndarray:
        """float64 [N, K]: the agent's distribution over decision `node`'s slots for every hand of
        the deck, on `board` (the board cards dealt at node); zero rows for hands holding a board card."""
        r = int(table.betting.round[node])
        board = np.asarray(board, dtype=np.int64)
        owner = self._owner(table, node, board) if r >= self.settings.first_round else None
        if owner is None:
            return self.blueprint.hand_probs(table, node, self.blueprint.cards.hand_codes(board, r))
        return self._solution(table, *owner).policy(node, tuple(sorted(board.tolist())))

    def _owner(self, table, node: int, board: np.ndarray) -> tuple[int, tuple] | None:
        """(round start s, the sorted board at s) of the solve that plays `node`: the round's own
        (with `resolve`) or the first on its path from `first_round` on, among those whose game has
        at most `max_nodes` public states; None if none has (the blueprint plays node)."""
        bt = table.betting
        if self.settings.resolve:
            starts = [round_start(table, node)]
        else:
            path, _ = table.path(node)
            starts = [m for m in [*path.tolist(), node] if bt.kind[m] == DECISION
                      and bt.round[m] >= self.settings.first_round and round_start(table, m) == m]
        for start in starts:
            known = tuple(sorted(board[:table.levels[max(int(table.node_level[start]), 0)]].tolist()))
            if (start, known) not in self._size:
                if len(self._size) >= SIZES:
                    self._size.clear()
                self._size[start, known] = TableSubgame(table, start, known).public_tree_size()
                if self._size[start, known] > self.settings.max_nodes:
                    self.too_large += 1
            if self._size[start, known] <= self.settings.max_nodes:
                return start, known
        return None

    def beliefs(self, table, path: np.ndarray, slots: np.ndarray, board) -> np.ndarray:
        """float64 [2, N]: each seat's range over the deck's hands after the public betting path
        (`BlueprintAgent.beliefs`' arguments) by Bayes' rule from uniform with the agent's own
        per-hand strategy (`hand_probs`) at every decision, normalised; hands holding a board card
        have zero weight. board: the board dealt so far, in deal order."""
        bt = table.betting
        out = np.ones((2, table.deck.num_hands))
        board = np.asarray(board, dtype=np.int64)
        for node, slot in zip(np.asarray(path).tolist(), np.asarray(slots).tolist()):
            if bt.kind[node] == DECISION:
                known = board[:table.levels[max(int(table.node_level[node]), 0)]]
                out[int(bt.actor[node])] *= self.hand_probs(table, node, known)[:, slot]
        out *= table.possible(board)
        total = out.sum(axis=1, keepdims=True)
        return out / np.where(total > 0, total, 1.0)

    def _solution(self, table, start: int, board: tuple) -> Solve:
        """The solve rooted at `start` on `board` (sorted), cached (with `resolve`, only its round's rows)."""
        key = (start, board)
        if key in self._solved:
            self._solved.move_to_end(key)
            return self._solved[key]
        t0 = time.perf_counter()
        path, slots = table.path(start)
        ranges = self.beliefs(table, path, slots, board)
        possible = table.possible(np.asarray(board, dtype=np.int64))
        ranges = ranges + FLOOR * possible / possible.sum()
        try:
            game = TableSubgame(table, start, board)
        except TableSubgameError as e:
            raise TableError(str(e)) from None
        tree = PublicTree(game, [game.root()]).expand_all()
        ct = compile_tree(tree)
        lv = Levels(ct)
        solver = CFRSolver(ct, root_ranges=ranges[None], config=CFRConfig("cfr+", alternating=True), levels=lv)
        solver.iterate(self.settings.iterations)
        out = Solve(tree, ct, lv, solver.average_entries())
        if self.settings.resolve:
            out.keep_only(round_nodes(table, start), board)
        self._solved[key] = out
        if len(self._solved) > CACHE:
            self._solved.popitem(last=False)
        self.solves, self.nodes = self.solves + 1, self.nodes + ct.num_nodes
        self.seconds += time.perf_counter() - t0
        return out

    def stats(self) -> dict:
        return {"solves": self.solves, "too_large": self.too_large,
                "seconds_per_solve": self.seconds / max(self.solves, 1),
                "subgame_nodes_per_solve": self.nodes / max(self.solves, 1), "decisions": self.decisions,
                "blueprint": self.blueprint.stats()}


def round_start(table, node: int) -> int:
    """The first decision of `node`'s betting round on its path (node itself if it is)."""
    bt, parent = table.betting, table.parent
    while parent[node] >= 0 and bt.kind[parent[node]] == DECISION and bt.round[parent[node]] == bt.round[node]:
        node = int(parent[node])
    return int(node)


def board_at(table, node: int, deal: np.ndarray) -> np.ndarray:
    """int64 [b]: the board cards dealt at `node` of the deal `deal` (`Table.deal`'s row)."""
    known = table.levels[max(int(table.node_level[node]), 0)]
    return deal[table.held:table.held + known]


def round_nodes(table, start: int) -> list[int]:
    """The table's decisions of start's betting round below it (start included)."""
    bt = table.betting
    out, stack = [], [start]
    while stack:
        node = stack.pop()
        if bt.kind[node] == DECISION:
            out.append(node)
            stack.extend(int(c) for c in bt.child[node, :bt.num_actions[node]])
    return out


class Solve:
    """A solve's average policy (entries [E] of `lv`) read per table decision: `policy(node,
    board)` is float64 [N, K] (zero rows for impossible hands), memoised."""

    def __init__(self, tree, ct, lv, average: np.ndarray):
        self.index, self.pos_of, self.dec = tree.index, ct.pos_of, lv.dec
        self.ent_row, self.ent_dec, self.average = lv.ent_row, lv.ent_dec, average
        self.shape = ct.num_states, ct.num_actions
        self._rows: dict = {}

    def policy(self, node: int, board: tuple) -> np.ndarray:
        key = (node, board)
        if key not in self._rows:
            n, k = self.shape
            row = int(np.searchsorted(self.dec, self.pos_of[self.index[key]]))
            lo, hi = np.searchsorted(self.ent_row, [row, row + 1])
            dense = np.zeros(n * k)
            dense[self.ent_dec[lo:hi] - row * n * k] = self.average[lo:hi]
            self._rows[key] = dense.reshape(n, k)
        return self._rows[key]

    def keep_only(self, nodes: list[int], board: tuple) -> None:
        """Keep the rows of `nodes` on `board` and drop the tree's arrays (a cached solve of one round)."""
        for node in nodes:
            self.policy(node, board)
        self.index = self.pos_of = self.dec = self.ent_row = self.ent_dec = self.average = None
