"""Modicum (`sog.agents.table_modicum.ModicumAgent`) played in a two-player hold'em game through the
agent API (`modicum:CONFIG.yaml?...` in the two-player registry).

So that `sog tournament` (two players) seats Modicum against SoG, the blueprint it starts from
and the reference bots, in its blueprint's own game or in one alike but for its bets (HUNL with
the `sog` abstraction's f x pot bet). It is the end-game agent of `sog.agents.holdem_endgame`
(the blueprint's translation around the table agents: the real history read as the abstract
one by the pseudo-harmonic mapping, each abstract action played as the nearest real one) with
the table Modicum's three parts by round:

* before `search.first_round` (the flop): the blueprint, translated;
* in rounds [`search.first_round`, `endgame.first_round`): the depth-limited search
  (`sog.agents.table_search.SearchAgent`) at the table's decision the real history translates
  to, on the real board, for the hand the agent holds: its row over the abstract actions,
  played as the nearest real actions. A bet off the abstraction is translated on these rounds
  (Modicum searched below it; here the subgame and its leaves are the abstract ones);
* from `endgame.first_round` (the turn) on: full-range end-game solving, bets off the
  abstraction searched below the real decision (`off_tree="search"`) or translated
  (`HoldemEndgameAgent`).

A search on sampled deals solves for the hand it holds, so on the searched rounds the agent has
no strategy for every hand there: `strategy_table` is NaN (AIVAT then corrects only the other
rounds' and the other player's actions, and LBR asks the agent hand by hand); where the search
lists every deal (small games) it is the same for every hand held and the table is its strategy.
"""
from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np

from sog.agents.holdem_endgame import HoldemEndgameAgent
from sog.agents.table_modicum import ModicumAgent
from sog.games.holdem import betting as B
from sog.games.holdem.action_abstraction import BetSizes
from sog.games.holdem.game import Holdem


class HoldemModicumAgent(HoldemEndgameAgent):
    """`modicum` (a `ModicumAgent` at `table`, the table of `blueprint_game` with `bet_sizes`) played
    in `game`, off-tree bets from `endgame.first_round` on searched or translated (`off_tree`; module doc)."""

    name = "modicum"

    def __init__(self, game: Holdem, blueprint_game: Holdem, bet_sizes: BetSizes | None, table,
                 modicum: ModicumAgent, label: str = "modicum", off_tree: str = "search"):
        super().__init__(game, blueprint_game, bet_sizes, table, modicum.endgame, label, off_tree)
        self.modicum = modicum
        self._row = (None, None, None)          # (pub, slot, float [A]) of the latest search

    def _search_node(self, pub) -> tuple | None:
        """(`_abstract_decision(pub)`, the table's node) where the depth-limited search plays `pub`, else None."""
        decision = self._abstract_decision(pub)
        if decision is None:
            return None
        s = self.modicum.settings
        st_real, st_abs = decision[2], decision[3]
        if not s.search.first_round <= st_real.round < s.endgame.first_round:
            return None
        node = self.node_of.get(B.sequences(self.blueprint_game.rules, st_abs))
        return None if node is None else (decision, node)

    def search_row(self, pub, slot: int) -> np.ndarray | None:
        """float [A]: the depth-limited search's distribution for hand `slot` at decision `pub`, over
        the game's actions; None where the search does not play `pub` (module doc)."""
        if self._row[:2] == (pub, slot):
            return self._row[2]
        found = self._search_node(pub)
        if found is None:
            return None
        decision, node = found
        table, board = self.table, np.asarray(decision[4], dtype=np.int64)
        seat = int(table.betting.actor[node])
        cards = np.zeros(table.num_cards, np.int64)          # only its hole cards and the board are read
        cards[seat * table.hole:(seat + 1) * table.hole] = table.deck.hands[slot]
        cards[table.held:table.held + len(board)] = board
        probs = self.modicum.search.decide(table, node, cards, seat)
        row = self._in_game(pub, decision, probs)
        self._row = (pub, slot, row)
        return row

    def strategy_table(self, history: Sequence[Hashable]) -> np.ndarray:
        """float [N, A]: `HoldemEndgameAgent.strategy_table`; on the searched rounds the search's
        strategy for every hand where it lists every deal (`SearchAgent.every_hand`), else NaN (a
        search on sampled deals has no strategy for the hands it does not hold)."""
        found = self._search_node(history[-1])
        if found is None:
            return super().strategy_table(history)
        decision, node = found
        every = self.modicum.search.every_hand(self.table, node, decision[4])
        if every is None:
            return np.full((self.game.spec.num_states, self.game.spec.num_actions), np.nan)
        return self._in_game(history[-1], decision, every)

    def _distribution(self, history, slot, legal):
        row = self.search_row(history[-1], slot)
        return super()._distribution(history, slot, legal) if row is None else row

    def stats(self) -> dict:
        return {**super().stats(), "search": self.modicum.search.stats()}
