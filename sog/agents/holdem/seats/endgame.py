"""Full-range end-game solving (`sog.agents.holdem.table.endgame.EndgameAgent`) played in a two-player
hold'em game through the agent API (`endgame:CONFIG.yaml?...` in the two-player registry).

So that `sog tournament` (two players) can seat the end-game solver against SoG, the blueprint it
starts from and the reference bots, in its blueprint's own game or in one alike but for its bets
(HUNL with the `sog` abstraction's f x pot bet). The agent is the blueprint agent's translation
(`sog.agents.holdem.seats.blueprint.HoldemBlueprintAgent`: the real history, read as the abstract one
by the pseudo-harmonic mapping, each abstract action played as the nearest real one) around the
end-game solver at the table of the blueprint's abstract game (`sog.eval.table.tournament.Table`): at each
decision every hand's distribution over the abstract actions is the solver's
(`EndgameAgent.hand_probs`, for the seat to act) at the table's decision of the same betting
string, on the real board.

**Off-tree bets are searched** (`off_tree="search"`, the default; Modicum, Appendix A): at a
decision of a solved round whose real chips are not those of the abstract decision it is read as
(a bet off the abstraction was made on the way, by either player), the agent solves the game below
the real decision itself, to the end of the hand: a table whose betting tree follows the real
moves to that decision (`sog.agents.holdem.table.scripted_tree`) and then the abstraction's bet sizes,
as fractions of the real pot. The root ranges are the solver's beliefs at the abstract decision
(Bayes' rule along the translated path, `EndgameAgent.beliefs`). With `resolve` "safe" the solve
has DeepStack's gadget for the opponent, its Terminate values the opponent's counterfactual values
at the abstract decision under the round's safe solve (`EndgameAgent.opponent_values`: searching
concedes no opponent hand more than translating did, up to convergence; where no safe solve plays
that decision it is translated); otherwise it is unsafe. A game larger than `max_nodes` public
states is translated. `off_tree="translate"` translates every decision. Solves are cached per
(real betting, board). On the 8-card fullgame game of the tests (every raise size legal), the last
round solved, exact exploitability in chips a hand: blueprint 0.305; safe 0.182 translated, 0.164
searched; unsafe 0.296 translated, 0.265 searched.
"""
from __future__ import annotations

import collections

import numpy as np

from sog.agents.holdem.seats.blueprint import HoldemBlueprintAgent, normalised
from sog.agents.holdem.table.agents import canonical
from sog.agents.holdem.table.endgame import ALPHA, EndgameAgent, Solve, floored, solve_subgame
from sog.agents.holdem.table.scripted_tree import ScriptedTree
from sog.agents.holdem.table.subgame import TableSubgame
from sog.games.api import DECISION
from sog.games.holdem import betting as B
from sog.games.holdem.action_abstraction import BetSizes
from sog.games.holdem.game import Holdem
from sog.search.gtcfr import Gadget

OFF_TREE = ("search", "translate")
SOLVES_KEPT = 256       # off-tree solves kept, least recently used dropped beyond


def off_tree(decision: tuple) -> bool:
    """Whether the real chips of a decision (`HoldemBlueprintAgent._abstract_decision`) are not those of
    the abstract decision it is read as (a bet off the abstraction was made on the way)."""
    st_real, st_abs = decision[2], decision[3]
    return (st_abs.spent, st_abs.max_spent) != (st_real.spent, st_real.max_spent)


class HoldemEndgameAgent(HoldemBlueprintAgent):
    """`endgame` (an `EndgameAgent` at `table`, the table of `blueprint_game` with `bet_sizes`)
    played in `game`, off-tree bets searched or translated (`off_tree`; module doc)."""

    name = "endgame"

    def __init__(self, game: Holdem, blueprint_game: Holdem, bet_sizes: BetSizes | None, table,
                 endgame: EndgameAgent, label: str = "endgame", off_tree: str = "search"):
        super().__init__(game, blueprint_game, bet_sizes, endgame.blueprint.cards, {}, np.zeros((0, table.width)),
                         label)
        if off_tree not in OFF_TREE:
            raise ValueError(f"endgame: off_tree must be one of {', '.join(OFF_TREE)}, got {off_tree!r}")
        self.table, self.endgame, self.off_tree = table, endgame, off_tree
        bt = table.betting
        nodes = np.flatnonzero(bt.kind == DECISION).tolist()
        self.node_of = {bt.history[bt.decision[node]]: node for node in nodes}   # betting string -> node
        self._searched: collections.OrderedDict = collections.OrderedDict()    # (script, board) -> rows
        self.off_tree_solves = self.off_tree_decisions = self.off_tree_too_large = 0

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

    def _compute(self, pub, decision: tuple | None = None) -> tuple[np.ndarray, np.ndarray | None]:
        decision = self._abstract_decision(pub) if decision is None else decision
        if self.off_tree == "search" and decision is not None:
            searched = self._search(pub, decision)
            if searched is not None:
                return searched, np.ones(self.game.spec.num_states, dtype=bool)
        return super()._compute(pub, decision)

    def _search(self, pub, decision: tuple) -> np.ndarray | None:
        """float [N, A]: every hand's distribution at `pub` (its `_abstract_decision`) from a solve of the
        real subgame below it (module doc), or None where the decision is on the abstract tree,
        before the solved rounds, or its game is too large."""
        real, _, st_real, st_abs, board = decision
        if st_real.round < self.endgame.settings.first_round:
            return None
        node = self.node_of.get(B.sequences(self.blueprint_game.rules, st_abs))
        if node is None or not off_tree(decision):
            return None
        script = tuple(e for e in real if isinstance(e, int))
        rows = self._rows(script, board, node, pub)
        if rows is None:
            return None
        self.off_tree_decisions += 1
        tree, start, probs = rows
        return self._in_game_slots(pub, tree, start, probs)

    def _in_game_slots(self, pub, tree: ScriptedTree, node: int, probs: np.ndarray) -> np.ndarray:
        """float [..., A]: distributions over the slots of decision `node` of a scripted betting tree
        (float [..., >= its actions]) as distributions over the game's actions at `pub`: each slot's
        real move (fold, call, its raise-to chips) played as the game's action nearest it."""
        out = np.zeros(probs.shape[:-1] + (self.game.spec.num_actions,))
        for j, move in enumerate(tree.moves(node)):
            out[..., self._game_action(pub, move)] += probs[..., j]
        return out

    def _rows(self, script: tuple, board: tuple, node: int, pub) -> tuple | None:
        """(the scripted betting tree, its decision at the script's end, float [N, K]: every hand's
        average policy there) of the real subgame's solve, cached; None if it is too large."""
        key = (script, canonical(self.table, board))
        if key in self._searched:
            self._searched.move_to_end(key)
            return self._searched[key]
        table = type(self.table)(self.table.game, betting=ScriptedTree(self.table.game, script))
        start = table.betting.end_of_script(script)
        known = key[1]
        out = None
        seat = int(self.table.betting.actor[node])
        safe = self.endgame.settings.resolve == "safe"
        terminate = self.endgame.opponent_values(self.table, node, board, seat) if safe else None
        if safe and terminate is None:
            out = None
        elif TableSubgame(table, start, known).public_tree_size() > self.endgame.settings.max_nodes:
            self.off_tree_too_large += 1
        else:
            ranges = floored(table, self._root_beliefs(pub, node, board, seat), known)

            def gadget(ct, lv) -> Gadget:
                return Gadget(1 - seat, terminate, ranges[1 - seat], ranges[1 - seat] > 0, ALPHA)

            index, ct, lv, solver = solve_subgame(table, start, known, ranges, self.endgame.settings.iterations,
                                                  gadget if safe else None)
            probs = Solve(index, ct, lv, solver.average_entries()).policy(start, known)
            out = (table.betting, start, normalised(probs[:, :int(table.betting.num_actions[start])]))
            self.off_tree_solves += 1
        self._searched[key] = out
        while len(self._searched) > SOLVES_KEPT:
            self._searched.popitem(last=False)
        return out

    def _root_beliefs(self, pub, node: int, board: tuple, seat: int) -> np.ndarray:
        """float64 [2, N]: the ranges an off-tree solve at `pub` starts from: the end-game solver's beliefs
        at the abstract decision `node` it is read as (`EndgameAgent.beliefs` along the translated path)."""
        path, slots = self.table.path(node)
        return self.endgame.beliefs(self.table, path, slots, board, seat)

    def stats(self) -> dict:
        return {**super().stats(), "off_tree_solves": self.off_tree_solves,
                "off_tree_decisions": self.off_tree_decisions, "off_tree_too_large": self.off_tree_too_large,
                "endgame": self.endgame.stats()}
