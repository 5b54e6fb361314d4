"""Full-range end-game solving at a two-player table, over a blueprint (`endgame:CONFIG.yaml?...`).

Modicum (Brown, Sandholm and Amos 2018, Appendix A) solves HUNL from the third betting round
(the turn) on to the end of the game with CFR+, over every hand of both players: unsafe
solving the first time, safe nested solving at each later subgame; before that it searches
depth-limited subgames. `EndgameAgent` is that end-game part, over a `sog blueprint`
(`BlueprintAgent`, which it plays before `first_round`):

1. at the first decision of a round r >= `first_round` (the round's start node s, the board b
   dealt so far) it solves the game below s (`sog.agents.holdem.table.subgame.TableSubgame`: the
   table's own abstract actions, every later board card, to the end of the hand) with
   `iterations` alternating CFR+ iterations over all hands (`sog.search.cfr.CFRSolver`: the
   row passes and the poker protocol's O(N) terminal values, 1326 hands on 52 cards);
2. the root ranges are both players' ranges at s by Bayes' rule along the public path from
   the agent's own per-hand strategy (`beliefs`): the blueprint's rows before `first_round`,
   each earlier solve's average policy at its round's decisions (both players': its model of
   the opponent too), then card removal by the board, plus `FLOOR` x uniform so that no
   possible hand has zero weight;
3. with `resolve` "safe" (default) the solve has DeepStack's Terminate / Follow gadget for the
   opponent (`sog.search.gtcfr.Gadget`, alpha `ALPHA` = 1), unless nobody has acted yet: its
   Terminate values are the opponent's counterfactual values at s under the strategy the agent
   had there before, i.e. the previous round's solve (its average policy, per unit of the
   agent's reach), or the blueprint in this subgame if no earlier round was solved (safe
   subgame solving from a blueprint: no opponent hand gains more than against the blueprint,
   up to convergence). Such a solve is the seat's own (the gadget is for the other seat), so
   solves are keyed by the seat whose view they are. "unsafe" solves at the beliefs alone
   (Modicum's first subgame); "none" solves once, at the first round >= `first_round`, and
   plays that solve's policy to the end of the hand;
4. it plays the average policy of the solve at every decision of round r (its own hand's row).

On a game small enough to enumerate (tests/test_table_endgame.py, the table's exact best
response), against a random blueprint (1551 mbb/hand): with `first_round` 0, "none" plays CFR+'s
average policy of the whole game, 244 / 5.8 / 0.11 mbb/hand at 10 / 100 / 1000 iterations;
re-solving the second round at each board gave 19.7 / 35.5 unsafe (other equilibria of the
subgame, which the first round does not fit) and 11.1 / 2.9 safe at 100 / 1000 iterations; with
`first_round` 1 (the blueprint, then the last round solved) 823 unsafe, 783 safe.

Every decision's distribution is defined for every hand (`hand_probs`), and the agent's range
along a path is Bayes' rule with it (`beliefs`): what LBR needs (`sog.eval.table.lbr`), unlike
the sampled-deal search (`sog.agents.holdem.table.search`). A solve depends only on (s, b), the seat
for a safe re-solve and the settings, so decisions are deterministic and cached (the round's
policy rows and the next round's Terminate values; with "none" the whole solve's average policy
in float32: at most `CACHE_BYTES` in all). A round whose game has more than `max_nodes` public
states (HUNL's turns after a limped or checked-down flop, deep-stacked: up to 56k on
hunl_small's tree) is played by the blueprint. `stats()`: solves, rounds too large to solve,
seconds and subgame nodes per solve, decisions solved.
"""
from __future__ import annotations

import collections
import dataclasses
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
from sog.agents.holdem.table.search import FLOOR, search_root
from sog.agents.holdem.table.subgame import TableSubgame, TableSubgameError, chain_end
from sog.games.api import CHANCE, DECISION
from sog.search.cfr import CFRConfig, CFRSolver, Levels, evaluate_entries
from sog.search.gtcfr import Gadget
from sog.search.tree import PublicTree, compile_tree

RESOLVE = ("safe", "unsafe", "none")
ALPHA = 1.0          # the gadget's weight on the Follow range: the re-solve concedes no opponent hand more
CACHE_BYTES = 1 << 30   # solves kept, least recently used dropped beyond this many bytes
SIZES = 1 << 16      # subgame sizes kept (then started afresh)


@dataclasses.dataclass(frozen=True)
class EndgameSettings:
    """`iterations` of alternating CFR+ a solve, from round `first_round` on (0 preflop, 2 the
    turn of hold'em: Modicum's), re-solving at each later round's start with `resolve` "safe" (a
    gadget) or "unsafe", or playing the first solve to the end of the hand ("none");
    a round whose game has more than `max_nodes` public states is played by the blueprint (on HUNL
    about 160 KB a public state at a solve's peak, `solve_subgame`: 12,000 is about 1.9 GB)."""

    iterations: int = 200
    first_round: int = 2
    resolve: str = "safe"
    max_nodes: int = 12_000

    def __post_init__(self):
        if self.iterations < 1:
            raise TableError(f"endgame: iterations must be at least 1, got {self.iterations}")
        if self.first_round < 0:
            raise TableError(f"endgame: first_round must be at least 0, got {self.first_round}")
        if self.resolve not in RESOLVE:
            raise TableError(f"endgame: resolve must be one of {', '.join(RESOLVE)}, got {self.resolve!r}")
        if self.max_nodes < 1:
            raise TableError(f"endgame: max_nodes must be at least 1, got {self.max_nodes}")


class EndgameAgent(OverBlueprint):
    """Full-range end-game solving over `blueprint` (module doc)."""

    def __init__(self, blueprint: BlueprintAgent, settings: EndgameSettings = EndgameSettings(),
                 label: str = "endgame"):
        super().__init__(blueprint, settings, label)
        self._solved: collections.OrderedDict = collections.OrderedDict()   # (s, board, seat) -> Solve
        self._bytes = 0                    # their nbytes
        self._size: dict = {}              # (s, board) -> public states of its game
        self.solves, self.seconds, self.nodes, self.decisions, self.too_large = 0, 0.0, 0, 0, 0
        self.before: Callable | None = None     # (table, node, board) -> float [N, K] or None: the play where
                                                # no solve plays, for every hand, where not the blueprint's

    def decide(self, table, node: int, cards: np.ndarray, seat: int) -> np.ndarray:
        """float64 [K]: its hand's row of `hand_probs` (`OverBlueprint.decide`)."""
        hand = table.deck.hand_index(cards[seat * table.hole:(seat + 1) * table.hole].tolist())
        self.decisions += 1
        return self.hand_probs(table, node, board_at(table, node, cards), seat)[hand]

    def hand_probs(self, table, node: int, board, seat: int) -> np.ndarray:
        """float64 [N, K]: the agent's distribution over decision `node`'s slots for every hand of
        the deck, on `board` (the board cards dealt at node), as the agent in `seat` sees it (a safe
        re-solve is seat's own: the actor's for its play; the other seat's model of it otherwise);
        zero rows for hands holding a board card. Where no solve plays node (before `first_round`, or
        its round's game too large): `before`'s rows where it is set and has them, else the blueprint's."""
        r = int(table.betting.round[node])
        board = np.asarray(canonical(table, board), dtype=np.int64)
        owner = self._owner(table, node, board) if r >= self.settings.first_round else None
        if owner is None:
            before = self.before(table, node, board) if self.before else None
            return before if before is not None else \
                self.blueprint.hand_probs(table, node, self.blueprint.cards.hand_codes(board, r))
        return self._solution(table, *owner, seat).policy(node, tuple(board.tolist()))

    def plays(self, table, node: int, board) -> bool:
        """Whether a solve plays decision `node` on `board` (the board cards dealt at node): from
        `first_round` on, where its round's game (or an earlier one's, `resolve` "none") is at most
        `max_nodes` public states."""
        board = np.asarray(canonical(table, board), dtype=np.int64)
        return int(table.betting.round[node]) >= self.settings.first_round and \
            self._owner(table, node, board) is not None

    def _owner(self, table, node: int, board: np.ndarray) -> tuple[int, tuple] | None:
        """(round start s, the board at s) of the solve that plays `node`: the round's own
        (with `resolve`) or the first on its path from `first_round` on, among those whose game has
        at most `max_nodes` public states; None if none has (the blueprint plays node)."""
        bt = table.betting
        if self.settings.resolve != "none":
            starts = [round_start(table, node)]
        else:
            path, _ = table.path(node)
            starts = [m for m in [*path.tolist(), node] if bt.kind[m] == DECISION
                      and bt.round[m] >= self.settings.first_round and round_start(table, m) == m]
        for start in starts:
            known = tuple(board[:table.levels[max(int(table.node_level[start]), 0)]].tolist())
            if (start, known) not in self._size:
                if len(self._size) >= SIZES:
                    self._size.clear()
                self._size[start, known] = TableSubgame(table, start, known).public_tree_size()
                if self._size[start, known] > self.settings.max_nodes:
                    self.too_large += 1
            if self._size[start, known] <= self.settings.max_nodes:
                return start, known
        return None

    def beliefs(self, table, path: np.ndarray, slots: np.ndarray, board, seat: int) -> np.ndarray:
        """float64 [2, N]: each seat's range over the deck's hands after the public betting path
        (`BlueprintAgent.beliefs`' arguments) by Bayes' rule from uniform with the per-hand strategy
        of the agent in `seat` (`hand_probs`: its own, and its model of the other seat's) at every
        decision, normalised; hands holding a board card have zero weight. board: the board dealt
        so far, in deal order."""
        return path_ranges(table, path, slots, board, lambda node, known: self.hand_probs(table, node, known, seat))

    def _solution(self, table, start: int, board: tuple, seat: int) -> Solve:
        """The solve rooted at `start` on `board` (`canonical`) that plays `seat`'s decisions, cached:
        with `resolve` "safe" it has a gadget for the other seat (`_terminate`), so it is seat's
        own, unless nobody has acted before start (the game's first decision: no range was chosen);
        an unsafe solve serves both seats."""
        path, slots = table.path(start)
        safe = self.settings.resolve == "safe" and bool((table.betting.kind[path] == DECISION).any())
        key = (start, board, seat if safe else -1)
        if key in self._solved:
            self._solved.move_to_end(key)
            return self._solved[key]
        t0 = time.perf_counter()
        ranges = floored(table, self.beliefs(table, path, slots, board, seat), board)

        def gadget(ct, lv) -> Gadget:
            terminate = self._terminate(table, start, board, seat, ct, lv, ranges)
            return Gadget(1 - seat, terminate, ranges[1 - seat], ranges[1 - seat] > 0, ALPHA)

        index, ct, lv, solver = solve_subgame(table, start, board, ranges, self.settings.iterations,
                                              gadget if safe else None)
        average, root_ranges = solver.average_entries(), solver.root_ranges
        del solver                          # (its arrays, before evaluate_entries makes its own)
        out = Solve(index, ct, lv, average)
        if self.settings.resolve != "none":
            nodes = round_nodes(table, start)
            nexts = next_starts(table, nodes)
            out.keep_only(nodes, board)
            if self.settings.resolve == "safe":
                reach, values = evaluate_entries(lv, average, root_ranges)
                out.keep_values(index, ct, nexts + nodes, reach, values)
        self._solved[key] = out
        self._bytes += out.nbytes
        while self._bytes > CACHE_BYTES and len(self._solved) > 1:
            self._bytes -= self._solved.popitem(last=False)[1].nbytes
        self.solves, self.nodes = self.solves + 1, self.nodes + ct.num_nodes
        self.seconds += time.perf_counter() - t0
        return out

    def _previous(self, table, start: int, board: tuple) -> tuple | None:
        """(start, board) of the solve of the round before start's, or None if that round was not
        solved (before `first_round`, too large) or start is the first decision."""
        path, _ = table.path(start)
        bt = table.betting
        before = path[bt.kind[path] == DECISION]
        if not len(before):
            return None
        last = int(before[-1])
        known = np.asarray(board, dtype=np.int64)[:table.levels[max(int(table.node_level[last]), 0)]]
        if bt.round[last] < self.settings.first_round:
            return None
        return self._owner(table, last, known)

    def _terminate(self, table, start: int, board: tuple, seat: int, ct, lv, ranges: np.ndarray) -> np.ndarray:
        """float [N]: the gadget's Terminate values for seat's opponent at start: its counterfactual
        values there in the previous round's solve (per unit of seat's reach: the re-solve's root
        ranges are normalised), or, if that round was not solved, under the blueprint in this
        subgame (`blueprint_entries`) at the re-solve's root ranges."""
        prev = self._previous(table, start, board)
        if prev is not None:
            reach, values = self._solution(table, *prev, seat).root_values[start, board]
            return values[1 - seat] / max(float(reach[seat]), 1e-300)
        _, values = evaluate_entries(lv, blueprint_entries(table, self.blueprint, ct, lv), ranges[None])
        return values[ct.roots[0], 1 - seat]

    def opponent_values(self, table, node: int, board, seat: int) -> np.ndarray | None:
        """float [N]: the counterfactual values of seat's opponent at decision `node` on `board` (as
        dealt) under the safe solve that plays it for seat, per unit of seat's reach (a gadget's
        Terminate values), or None if no safe solve plays node (blueprint rounds, too large, or
        `resolve` not "safe")."""
        if self.settings.resolve != "safe":
            return None
        owner = self._owner(table, node, np.asarray(canonical(table, board), dtype=np.int64))
        if owner is None:
            return None
        kept = self._solution(table, *owner, seat).root_values.get((node, owner[1]))
        if kept is None:
            return None
        reach, values = kept
        return values[1 - seat] / max(float(reach[seat]), 1e-300)

    def stats(self) -> dict:
        return {"solves": self.solves, "too_large": self.too_large,
                "seconds_per_solve": self.seconds / max(self.solves, 1),
                "subgame_nodes_per_solve": self.nodes / max(self.solves, 1), "decisions": self.decisions,
                "blueprint": self.blueprint.stats()}


def floored(table, ranges: np.ndarray, board) -> np.ndarray:
    """float64 [2, N]: `ranges` plus `FLOOR` x uniform over the hands possible on `board`, so that a
    solve holds every possible hand (a hand of range 0 gets values too)."""
    possible = table.possible(np.asarray(board, dtype=np.int64))
    return ranges + FLOOR * possible / possible.sum()


def solve_subgame(table, start: int, board: tuple, ranges: np.ndarray, iterations: int,
                  gadget_of: Callable | None = None) -> tuple:
    """(index, compiled tree, Levels, CFRSolver) after `iterations` alternating CFR+ iterations on
    the game below decision `start` of `table` on `board` (`canonical`), from root ranges float
    [2, N] (`floored`), with the gadget `gadget_of(ct, lv)` if given; index maps each public state
    to its node id in the public tree (`PublicTree.index`; `ct.pos_of` maps those to positions).

    Only the index outlives the public tree, and the compiled tree drops its edge table
    (`CompiledTree.release_edges`: the row passes never read it) before the solver's arrays are
    made. Measured on a turn subgame of hunl_small (27,105 public states, 1,029 legal entries each,
    one safe solve): 156 KB a public state at the peak, 4.96 GB peak RSS, where keeping the public
    tree and the edge table (and the solver's [E] temporaries, `sog.search.cfr.regret_matching_entries`,
    `RowTree._wide_layout`) took 310 KB and 9.0 GB."""
    try:
        game = TableSubgame(table, start, board)
    except TableSubgameError as e:
        raise TableError(str(e)) from None
    tree = PublicTree(game, [game.root()]).expand_all()
    ct = compile_tree(tree)
    index = tree.index
    del tree
    ct.release_edges()
    lv = Levels(ct)
    gadget = None if gadget_of is None else gadget_of(ct, lv)
    solver = CFRSolver(ct, root_ranges=ranges[None], config=CFRConfig("cfr+", alternating=True), levels=lv,
                       gadget=gadget)
    solver.iterate(iterations)
    return index, ct, lv, solver


def round_start(table, node: int) -> int:
    """The first decision of `node`'s betting round on its path (node itself if it is)."""
    return search_root(table, node, 0)


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
    """A solve's average policy read per table decision: `policy(node, board)` is float64 [N, K]
    (zero rows for impossible hands). It keeps, per decision row of the solved tree, its entries'
    (slot, action) places (int16 or int32) and average probabilities (float32: 6 bytes an entry);
    `keep_only` reduces it to the rows of some decisions."""

    def __init__(self, index: dict, ct, lv, average: np.ndarray):
        n, k = ct.num_states, ct.num_actions
        self.shape = n, k
        self.index, self.pos_of, self.dec = index, ct.pos_of, lv.dec
        self.row_start = np.searchsorted(lv.ent_row, np.arange(len(lv.dec) + 1))
        local = lv.ent_dec - lv.ent_row.astype(np.int64) * (n * k)
        self.place = local.astype(np.int16 if n * k < 2**15 else np.int32)
        self.average = average.astype(np.float32)
        self._rows: dict | None = None
        self.root_values: dict = {}      # (next round's start, board) -> (reach [2], values float32 [2, N])

    def policy(self, node: int, board: tuple) -> np.ndarray:
        if self._rows is not None:
            return self._rows[node, board]
        n, k = self.shape
        row = int(np.searchsorted(self.dec, self.pos_of[self.index[node, board]]))
        lo, hi = self.row_start[row], self.row_start[row + 1]
        dense = np.zeros(n * k)
        dense[self.place[lo:hi]] = self.average[lo:hi]
        return dense.reshape(n, k)

    def keep_only(self, nodes: list[int], board: tuple) -> None:
        """Keep the rows of `nodes` on `board` and drop the rest (a cached solve of one round)."""
        self._rows = {(node, board): self.policy(node, board) for node in nodes}
        self.index = self.pos_of = self.dec = self.row_start = self.place = self.average = None

    def keep_values(self, index: dict, ct, starts: list[int], reach: np.ndarray, values: np.ndarray) -> None:
        """Keep, at every public state (s, board) of the solved tree with s in `starts` (the next
        round's first decisions, and the round's own), both players' total reach and counterfactual
        values there (`evaluate_entries` of the average policy: reach, values [n, 2, N]): the
        Terminate values of the next round's safe re-solves (`EndgameAgent._terminate`) and of
        searches below a real decision (`EndgameAgent.opponent_values`)."""
        starts = set(starts)
        for pub, node in index.items():
            if pub[0] in starts:
                pos = ct.pos_of[node]
                self.root_values[pub] = (reach[pos].sum(axis=1), values[pos].astype(np.float32))

    @property
    def nbytes(self) -> int:
        kept = sum(v.nbytes for _, v in self.root_values.values())
        if self._rows is not None:
            return kept + sum(r.nbytes for r in self._rows.values())
        arrays = self.place.nbytes + self.average.nbytes + self.row_start.nbytes + self.pos_of.nbytes
        return kept + arrays + 100 * len(self.index)         # (the index: about 100 bytes a public state)


def next_starts(table, nodes: list[int]) -> list[int]:
    """The first decisions of the next betting round below the decisions `nodes` of a round
    (after one chain of chance nodes)."""
    bt, out = table.betting, []
    for node in nodes:
        for child in bt.child[node, :bt.num_actions[node]].tolist():
            if bt.kind[child] == CHANCE:
                end, _ = chain_end(bt, child)
                if bt.kind[end] == DECISION:
                    out.append(end)
    return out


def blueprint_entries(table, blueprint: BlueprintAgent, ct, lv) -> np.ndarray:
    """float [E]: the blueprint's policy over the legal entries of a `TableSubgame` tree (`lv` of
    its compiled tree `ct`): each decision row's `BlueprintAgent.hand_probs` on its board."""
    n, k = ct.num_states, ct.num_actions
    dense = np.zeros((len(lv.dec), n, k))
    codes: dict = {}
    bt = table.betting
    for i, pos in enumerate(lv.dec.tolist()):
        node, board = ct.pub(pos)
        r = int(bt.round[node])
        if (board, r) not in codes:
            codes[board, r] = blueprint.cards.hand_codes(np.asarray(board, dtype=np.int64), r)
        dense[i] = blueprint.hand_probs(table, node, codes[board, r])
    return dense.reshape(-1)[lv.ent_dec]
