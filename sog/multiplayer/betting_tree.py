"""The abstract betting tree of n-player hold'em (`sog.multiplayer.holdem.Holdem`), cards left out.

The same arrays as the two-player `sog.games.holdem.betting_tree.BettingTree` (see there),
with P = the game's players, so the sampled-deal traverser (`sog.agents.holdem.blueprint.sampled_mccfr`)
walks either. Betting never looks at the cards, so the tree is enumerated from the game's
states with one fixed deal (each chance node deals the lowest card left); the game deals a
card per chance node, so chance nodes come in chains (the hole cards before the first
decision, then each round's board cards). A decision's history is its betting sequences,
rounds joined by '|' (raises written with their raise-to chips in no-limit).
"""
from __future__ import annotations

from sog.games.api import CHANCE, DECISION, TERMINAL
from sog.games.holdem import betting as B
from sog.games.holdem.betting_tree import MAX_NODES, BettingTree, BettingTreeError
from sog.multiplayer import api
from sog.multiplayer.holdem import Holdem


class TableBettingTree(BettingTree):
    """The enumerated betting tree of an n-player `Holdem` game (its own action abstraction:
    limit, fcpa or pluribus bet sizes)."""

    def __init__(self, game: Holdem, max_nodes: int = MAX_NODES):
        if game.abstraction == "fullgame" and not game.rules.limit:
            raise BettingTreeError("fullgame no-limit has a raise per chip: use bettingAbstraction=pluribus")
        self.game, self.rules, self.bet_sizes = game, game.rules, game.bet_sizes
        self._enumerate(game.initial_state(), max_nodes, "use fewer bet sizes or players", max(game.rules.blinds))

    def _node(self, st):
        """`BettingTree._node` for an n-player state (chance deals the lowest card left)."""
        cur = st.current_player()
        k = CHANCE if cur == api.CHANCE else TERMINAL if cur == api.TERMINAL else DECISION
        spent, folded = list(st.spent), list(st.folded)
        if k == DECISION:
            a = st.legal_actions()
            history = "|".join("".join(m[0] + (str(m[1]) if m[1] else "") for m in moves)
                               for moves in st.moves[:st.round + 1])
            return k, cur, spent, folded, history, a, [st.child(x) for x in a]
        return k, 0, spent, folded, None, (), [st.child(st.deck[0])] if k == CHANCE else []

    def moves(self, node: int) -> list[int]:
        """The real move of each action slot of decision `node`: fold 0, call 1, or its raise-to chips."""
        actor, bb = int(self.actor[node]), max(self.rules.blinds)
        return [a if a <= B.CALL else round(float(self.spent[self.child[node, j], actor]) * bb)
                for j, a in enumerate(self.action[node, :int(self.num_actions[node])].tolist())]
