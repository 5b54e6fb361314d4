"""Full-range end-game solving (`sog.agents.table_endgame.EndgameAgent`) played in a two-player
hold'em game through the agent API (`endgame:CONFIG.yaml?...` in the two-player registry).

So that `sog tournament` (two players) can seat the end-game solver against SoG, the blueprint it
starts from and the reference bots, in its blueprint's own game or in one alike but for its bets
(HUNL with the `sog` abstraction's f x pot bet). The agent is the blueprint agent's translation
(`sog.agents.holdem_blueprint.HoldemBlueprintAgent`: the real history, read as the abstract one
by the pseudo-harmonic mapping, each abstract action played as the nearest real one) around the
end-game solver at the table of the blueprint's abstract game (`sog.eval.table.Table`): at each
decision every hand's distribution over the abstract actions is the solver's
(`EndgameAgent.hand_probs`, for the seat to act) at the table's decision of the same betting
string, on the real board. An opponent's bet off the abstraction is so translated, not searched:
the subgame of the next round starts from the translated pot.
"""
from __future__ import annotations

import numpy as np

from sog.agents.holdem_blueprint import HoldemBlueprintAgent, normalised
from sog.agents.table_endgame import EndgameAgent
from sog.games.api import DECISION
from sog.games.holdem.action_abstraction import BetSizes
from sog.games.holdem.game import Holdem


class HoldemEndgameAgent(HoldemBlueprintAgent):
    """`endgame` (an `EndgameAgent` at `table`, the table of `blueprint_game` with `bet_sizes`)
    played in `game` (module doc)."""

    name = "endgame"

    def __init__(self, game: Holdem, blueprint_game: Holdem, bet_sizes: BetSizes | None, table,
                 endgame: EndgameAgent, label: str = "endgame"):
        super().__init__(game, blueprint_game, bet_sizes, endgame.blueprint.cards, {}, np.zeros((0, table.width)),
                         label)
        self.table, self.endgame = table, endgame
        bt = table.betting
        nodes = np.flatnonzero(bt.kind == DECISION).tolist()
        self.node_of = {bt.history[bt.decision[node]]: node for node in nodes}   # betting string -> node

    def _abstract_probs(self, history_key: str, r: int, k: int, board: tuple) -> tuple[np.ndarray, np.ndarray]:
        """`HoldemBlueprintAgent._abstract_probs` from the end-game solver: its distribution at the
        table's decision of `history_key`, for every hand (a hand holding a board card: uniform)."""
        n = self.game.spec.num_states
        node = self.node_of.get(history_key)
        if node is None:
            return np.full((n, k), 1.0 / k), np.zeros(n, dtype=bool)
        seat = int(self.table.betting.actor[node])
        probs = self.endgame.hand_probs(self.table, node, np.asarray(board, dtype=np.int64), seat)
        return normalised(probs[:, :k]), np.ones(n, dtype=bool)

    def stats(self) -> dict:
        return {**super().stats(), "endgame": self.endgame.stats()}
