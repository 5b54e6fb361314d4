"""Modicum (`sog.agents.holdem.table.modicum.ModicumAgent`) played in a two-player hold'em game through the
agent API (`modicum:CONFIG.yaml?...` in the two-player registry).

So that `sog tournament` (two players) seats Modicum against SoG, the blueprint it starts from
and the reference bots, in its blueprint's own game or in one alike but for its bets (HUNL with
the `sog` abstraction's f x pot bet). It is the end-game agent of `sog.agents.holdem.seats.endgame`
(the blueprint's translation around the table agents: the real history read as the abstract
one by the pseudo-harmonic mapping, each abstract action played as the nearest real one) with
the table Modicum's three parts by round:

* before `search.first_round` (the flop): the blueprint, translated;
* in rounds [`search.first_round`, `endgame.first_round`): the depth-limited search
  (`sog.agents.holdem.table.search.SearchAgent`) at the table's decision the real history translates
  to, on the real board, for the hand the agent holds: its row over the abstract actions,
  played as the nearest real actions. A decision whose real chips are off the abstraction (a
  bet off it was made on the way) is searched (`off_tree="search"`, the default), as Pluribus
  searches an off-tree bet and Modicum handles it (or translated so: `off_tree` "search_endgame"
  or "translate"): the same search, rooted at the start of the
  round, at a table whose betting tree follows the real moves to the round, then offers the
  round's real moves beside the abstraction's actions (`sog.agents.holdem.table.scripted_tree.ScriptedTree`;
  the opponent's off-tree bet is one of its choices, its range there the solve's), then the
  abstraction's sizes as fractions of the real pot; the blueprint read on it by the
  pseudo-harmonic mapping for the rollouts (`ScriptedBlueprint`); the root's beliefs the agent's
  own model along the translated path (`EndgameAgent.beliefs`: the searches' strategy where they
  list every deal, else the blueprint's); the agent's own earlier decisions in the round frozen
  at what it played (`_frozen`). Its solution plays the round on while the real moves stay in
  its tree. The end-game solves below such rounds start from Bayes' rule along the real history
  with the agent's own strategy (`_root_beliefs`);
* from `endgame.first_round` (the turn) on: full-range end-game solving, bets off the
  abstraction searched below the real decision (`off_tree` "search" or "search_endgame") or
  translated (`HoldemEndgameAgent`); at a decision on the abstract tree whose round's game is
  too large for the solver (`endgame.max_nodes`), the blueprint, or with `too_large=search` the
  depth-limited search, as above.

On the 8-card fullgame game of tests/test_holdem_modicum.py (every raise size legal), the first
round searched and the second solved safely, exact exploitability in chips a hand (blueprint
0.305), every off-tree bet translated / those of the searched round translated ("search_endgame")
/ none ("search"): 100 iterations and 4 run-outs 0.151 / 0.126 / 0.127; 400 and 4 0.131 / 0.120 /
0.115; 100 and 16 0.136 / 0.122 / 0.113; with one pot-sized bet and all-in in the abstraction (a
blueprint of 2,000 iterations, 0.193) 0.129 / 0.112 / 0.112; with one pot-sized bet and no all-in
(0.355), 100 and 400 iterations, 0.188 / 0.155 / 0.160 and 0.185 / 0.149 / 0.153. With the last
round searched to the end of the game (`search.first_round=1`, `endgame.first_round=2`: no
end-game solver): 0.290 translated, 0.251 searched. So searching is level with translating on a
round an end-game solver follows and ahead on one that ends the game. Tried and not kept: rooted
at the real decision from the blueprint's beliefs with nothing frozen, 0.278 (0.167 from the
agent's beliefs); the end-game solves' beliefs along the translated path rather than the real one,
0.128 / 0.115 / 0.123, 0.114, 0.168 and 0.174; the replies to the real bet started from the
translated search's rows, 0.127 and 0.172. With the second round solved unsafely: 0.250 / 0.261 /
0.285 (why is open). These figures are the sampled-deal search's (`search.ranges=0`; the range
search is the default).

A search on sampled deals solves for the hand it holds, so on the searched rounds the agent has
no strategy for every hand there: `strategy_table` is NaN (AIVAT then corrects only the other
rounds' and the other player's actions, and LBR asks the agent hand by hand); where the search
lists every deal (small games) it is the same for every hand held and the table is its strategy,
and so for a range search (`search.ranges`, `sog.agents.holdem.table.range_search`) at any size.
"""
from __future__ import annotations

import collections
import time
from collections.abc import Hashable, Sequence

import numpy as np

from sog.agents.holdem.seats.endgame import OFF_TREE, HoldemEndgameAgent, off_tree
from sog.agents.holdem.table.agents import bayes_ranges, canonical
from sog.agents.holdem.table.modicum import ModicumAgent
from sog.agents.holdem.table.scripted_tree import ScriptedBlueprint, ScriptedTree
from sog.agents.holdem.table.search import SearchAgent
from sog.games.api import DECISION
from sog.games.holdem import betting as B
from sog.games.holdem.action_abstraction import BetSizes
from sog.games.holdem.game import Holdem

MODICUM_OFF_TREE = (*OFF_TREE, "search_endgame")
SPOTS_KEPT = 64     # off-tree searches kept (their tables and solutions), least recently used dropped beyond


class HoldemModicumAgent(HoldemEndgameAgent):
    """`modicum` (a `ModicumAgent` at `table`, the table of `blueprint_game` with `bet_sizes`) played
    in `game`, off-tree bets searched or translated (`off_tree`; module doc)."""

    name = "modicum"

    def __init__(self, game: Holdem, blueprint_game: Holdem, bet_sizes: BetSizes | None, table,
                 modicum: ModicumAgent, label: str = "modicum", off_tree: str = "search"):
        if off_tree not in MODICUM_OFF_TREE:
            raise ValueError(f"modicum: off_tree must be one of {', '.join(MODICUM_OFF_TREE)}, got {off_tree!r}")
        super().__init__(game, blueprint_game, bet_sizes, table, modicum.endgame, label,
                         "search" if off_tree == "search_endgame" else off_tree)
        self.searched_off_tree = off_tree == "search"
        self.modicum = modicum
        self._row = (None, None, None)          # (pub, slot, float [A]) of the latest search
        self._spots: collections.OrderedDict = collections.OrderedDict()   # (moves, board) -> (table, root, search)
        self.off_tree_searches, self.off_tree_build_seconds = 0, 0.0     # spots made, seconds making their tables

    def _search_node(self, pub) -> tuple | None:
        """(`_abstract_decision(pub)`, the table's node) where the depth-limited search plays `pub`, else
        None: in rounds [search.first_round, endgame.first_round), and after them with `too_large=search` at
        decisions on the abstract tree whose round's game is too large for the solver (`EndgameAgent.plays`)."""
        decision = self._abstract_decision(pub)
        if decision is None:
            return None
        s = self.modicum.settings
        st_real, st_abs = decision[2], decision[3]
        if st_real.round < s.search.first_round:
            return None
        node = self.node_of.get(B.sequences(self.blueprint_game.rules, st_abs))
        if node is None or (st_real.round >= s.endgame.first_round
                            and (s.too_large != "search" or off_tree(decision)
                                 or self.modicum.endgame.plays(self.table, node, decision[4]))):
            return None
        return decision, node

    def _searched_at(self, pub, found: tuple | None = None) -> tuple | None:
        """(table, node, search, in_game): where the depth-limited search plays `pub` (None: it does
        not), the `SearchAgent.decide` arguments and the map of its rows to the game's actions: at the
        blueprint's table and the decision the real history translates to, or off the abstraction
        (`off_tree` "search") at a table of the real moves (`_off_tree_spot`). found: `_search_node(pub)`
        where the caller has it."""
        found = self._search_node(pub) if found is None else found
        if found is None:
            return None
        decision, node = found
        spot = self._off_tree_spot(pub, decision) if self.searched_off_tree and off_tree(decision) else None
        if spot is None:
            return self.table, node, self.modicum.search, lambda p: self._in_game(pub, decision, p)
        (table, _, search), at = spot
        return table, at, search, lambda p: self._in_game_slots(pub, table.betting, at, p)

    def _off_tree_spot(self, pub, decision: tuple) -> tuple | None:
        """((table, root, search), node): the search that plays the off-tree decision at `pub` (its
        `_abstract_decision`) at `node`: one kept whose tree holds this round's real moves (its solution
        plays the round on, as at the blueprint's table), else a new one (module doc): its table's
        betting tree the real moves, those of this round added to the abstraction's actions there,
        rooted at the round's start, the agent's own earlier decisions in the round frozen
        (`_frozen`); None where the real moves reach no decision of their tree (kept too: translated)."""
        real, board = decision[0], canonical(self.table, decision[4])
        moves = tuple(e for e in real if isinstance(e, int))
        in_round = len(real) - 1 - max((i for i, e in enumerate(real) if not isinstance(e, int)), default=-1)
        before = len(moves) - in_round
        if self._spots.get((moves, board), ()) is None:
            return None
        for k in range(in_round + 1):
            key = (moves[:len(moves) - k], board)
            spot = self._spots.get(key)
            if spot is not None:
                at = spot[0].betting.follow(spot[1], moves[before:])
                if at is not None and spot[0].betting.kind[at] == DECISION:
                    self._spots.move_to_end(key)
                    return spot, at
        t0 = time.perf_counter()
        tree = ScriptedTree(self.table.game, moves, before)
        root = tree.end_of_script(moves[:before])
        at = None if root is None else tree.follow(root, moves[before:])
        if at is None or tree.kind[at] != DECISION or tree.kind[root] != DECISION:
            self._keep((moves, board), None)
            return None
        table = type(self.table)(self.table.game, betting=tree)
        seat = int(tree.actor[at])

        def along(table, path, slots, known):           # the agent's model of both seats' play on the way
            return self.modicum.endgame.beliefs(table, path, slots, known, seat)

        blueprint = ScriptedBlueprint(self.modicum.blueprint, tree, self.table, along)
        fixed = self._frozen(pub, table, blueprint, root, seat, in_round, np.asarray(board, np.int64))
        self._keep((moves, board), (table, root, SearchAgent(blueprint, self.modicum.settings.search,
                                                             self.modicum.search.name, fixed, blueprint.beliefs)))
        self.off_tree_searches += 1
        self.off_tree_build_seconds += time.perf_counter() - t0
        return self._spots[(moves, board)], at

    def _frozen(self, pub, table, blueprint, root: int, seat: int, in_round: int, board: np.ndarray) -> dict:
        """{node: float [N, K]}: at each of `seat`'s decisions in this round before `pub` (the nodes of
        `table`'s scripted tree from `root` on), every hand's probability of the action it took there as
        the agent played it (`_played`), the rest of each row the blueprint's other actions scaled to
        fill it: Pluribus's frozen own strategy, so the search's model of the agent's range is what it
        played."""
        bt, game = table.betting, self.game
        where = [i for i, e in enumerate(pub) if not isinstance(e, B.Setup)]      # real[j] is pub[where[j]]
        real = self.real_history(pub)
        codes = self.modicum.blueprint.cards.hand_codes(board, int(bt.round[root]))
        node, out = root, {}
        for j in range(len(real) - in_round, len(real)):
            pre, x = pub[:where[j]], int(real[j])
            if game.actor(pre) == seat:
                p = self._played(pre)[:, pub[where[j]]]
                rows = blueprint.hand_probs(table, node, codes)
                k = bt.follow_slot(node, x)
                rest = rows * (np.arange(rows.shape[1]) != k)
                total = rest.sum(axis=1, keepdims=True)
                legal = table.legal(np.array([node]))[0] * (np.arange(rows.shape[1]) != k)
                rest = np.where(total > 0, rest / np.where(total > 0, total, 1.0), legal / max(legal.sum(), 1.0))
                out[node] = rest * (1.0 - p)[:, None]
                out[node][:, k] = p
            node = bt.follow(node, (x,))
        return out

    def _root_beliefs(self, pub, node: int, board: tuple, seat: int) -> np.ndarray:
        """`HoldemEndgameAgent._root_beliefs`; with `off_tree` "search", Bayes' rule along the real history
        with the agent's own strategy at each decision (`_played`: its model of both seats), as the
        searches of the real moves played the earlier rounds."""
        if not self.searched_off_tree:
            return super()._root_beliefs(pub, node, board, seat)
        game = self.game
        steps = ((game.actor(pub[:i]), self._played(pub[:i])[:, event]) for i, event in enumerate(pub)
                 if isinstance(event, int) and game.kind(pub[:i]) == DECISION)
        return bayes_ranges(2, self.table.possible(np.asarray(board, np.int64)), steps)

    def _played(self, pub) -> np.ndarray:
        """float [N, A]: every hand's distribution at decision `pub` as the agent plays it (`strategy_table`),
        or where that is NaN (a search on sampled deals) its model of it: the translated end-game or
        blueprint rows (`HoldemEndgameAgent.strategy_table`)."""
        rows = self.strategy_table([pub])
        return rows if np.isfinite(rows).all() else HoldemEndgameAgent.strategy_table(self, [pub])

    def _keep(self, key: tuple, spot: tuple | None) -> None:
        self._spots[key] = spot
        while len(self._spots) > SPOTS_KEPT:
            self._spots.popitem(last=False)

    def search_row(self, pub, slot: int) -> np.ndarray | None:
        """float [A]: the depth-limited search's distribution for hand `slot` at decision `pub`, over
        the game's actions; None where the search does not play `pub` (module doc)."""
        if self._row[:2] == (pub, slot):
            return self._row[2]
        found = self._searched_at(pub)
        if found is None:
            return None
        table, node, search, in_game = found
        board = np.asarray(self._abstract_decision(pub)[4], dtype=np.int64)
        seat = int(table.betting.actor[node])
        cards = np.zeros(table.num_cards, np.int64)          # only its hole cards and the board are read
        cards[seat * table.hole:(seat + 1) * table.hole] = table.deck.hands[slot]
        cards[table.held:table.held + len(board)] = board
        row = in_game(search.decide(table, node, cards, seat))
        self._row = (pub, slot, row)
        return row

    def strategy_table(self, history: Sequence[Hashable]) -> np.ndarray:
        """float [N, A]: `HoldemEndgameAgent.strategy_table`; on the searched rounds the search's
        strategy for every hand where it lists every deal or is a range search (`SearchAgent.every_hand`),
        else NaN (a search on sampled deals has no strategy for the hands it does not hold)."""
        found = self._search_node(history[-1])
        if found is None:
            return super().strategy_table(history)
        if not self.modicum.search.lists(self.table, found[1], found[0][4]):     # (the same at a table of real moves)
            return np.full((self.game.spec.num_states, self.game.spec.num_actions), np.nan)
        table, node, search, in_game = self._searched_at(history[-1], found)
        every = search.every_hand(table, node, self._abstract_decision(history[-1])[4])
        if every is None:
            return np.full((self.game.spec.num_states, self.game.spec.num_actions), np.nan)
        return in_game(every)

    def _distribution(self, history, slot, legal):
        row = self.search_row(history[-1], slot)
        return super()._distribution(history, slot, legal) if row is None else row

    def stats(self) -> dict:
        kept = [spot[2] for spot in self._spots.values() if spot is not None]
        searches = sum(x.searches for x in kept)
        return {**super().stats(), "search": self.modicum.search.stats(),
                "off_tree_search": {"spots": self.off_tree_searches, "build_seconds": self.off_tree_build_seconds,
                                    "kept": len(kept), "searches_kept": searches,
                                    "decisions_kept": sum(x.decisions for x in kept),
                                    "seconds_per_search_kept": sum(x.seconds for x in kept) / max(searches, 1)}}
