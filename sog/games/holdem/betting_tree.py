"""The abstract betting tree of two-player hold'em: betting histories only, no cards.

A sampled-deal traverser (`sog.agents.holdem.blueprint.sampled_mccfr`) walks this tree once per sampled
deal: the cards decide only the players' buckets and the showdown, so one tree of
abstract actions serves every deal. It is enumerated once, from the betting rules
(`sog.games.holdem.betting`) and the action set of each history: the game's own legal
actions (limit, `fcpa`), or a bet-size abstraction's (`action_abstraction.abstract_actions`,
fullgame no-limit). Arrays, M nodes, K = the most actions of any decision node:

  kind        int8    [M]     DECISION / CHANCE / TERMINAL (`sog.games.api`)
  actor       int8    [M]     the acting player at decisions (0 elsewhere)
  round       int8    [M]     the betting round (ACPC: a chance node already has the next round)
  num_actions int64   [M]     the abstract actions of a decision (0 elsewhere)
  child       int64   [M, K]  decision: the child of action slot j < num_actions (-1 past it);
                              chance: column 0, the state once the round's cards are dealt
  action      int64   [M, K]  the game's action id of slot j (ascending in j)
  decision    int64   [M]     a dense index of the decision nodes (0..D-1; -1 elsewhere)
  spent       float64 [M, P]  chips each player has put in, in big blinds (P players)
  folded      bool    [M, P]  whether each player has folded
  depth       int64           the most edges from the root to a leaf

`history[d]` is the ACPC betting string of decision d, as `CardAbstraction.history`
writes it, so abstract keys agree with the world-tree blueprint's (`"<history>|<code>"`).
Games whose setup is a chance draw (the `sog` abstraction) have no single betting tree.
`sog.multiplayer.betting_tree` builds the same arrays for n-player hold'em.
"""
from __future__ import annotations

import numpy as np

from sog.errors import SogError
from sog.games.api import CHANCE, DECISION
from sog.games.holdem import betting as B
from sog.games.holdem.action_abstraction import BetSizes, abstract_actions

MAX_NODES = 5_000_000


class BettingTreeError(SogError, ValueError):
    """A game or action abstraction whose betting tree cannot be built."""


class BettingTree:
    """The enumerated abstract betting tree of `rules` under `bet_sizes` (see the module doc)."""

    def __init__(self, rules, bet_sizes: BetSizes | None = None, max_nodes: int = MAX_NODES):
        if len(rules.setups) != 1:
            raise BettingTreeError("the sog abstraction draws its setup at the root: no single betting tree")
        if bet_sizes is not None and (rules.limit or rules.abstraction != "fullgame"):
            raise BettingTreeError("bet sizes apply to fullgame no-limit games")
        if bet_sizes is None and not rules.limit and rules.abstraction == "fullgame":
            raise BettingTreeError("a fullgame no-limit game needs bet sizes")
        self.rules, self.bet_sizes = rules, bet_sizes
        self._enumerate(B.initial(rules), max_nodes, "use fewer bet sizes", rules.big_blind)

    def _node(self, st):
        """(kind, actor, chips spent [P], folded [P], history, actions, child states) of the state
        `st`: children per action at a decision, the deal at a chance node, none at a terminal;
        actor 0 and history None away from decisions."""
        rules = self.rules
        k = B.kind(rules, st)
        spent, folded = st.spent, (st.folded == 0, st.folded == 1)
        if k == DECISION:
            a = self._actions(st)
            return (k, B.actor(rules, st), spent, folded, B.sequences(rules, st), a,
                    [B.apply(rules, st, x) for x in a])
        children = [B.deal(st, B.cards_due(rules, st))] if k == CHANCE else []
        return k, 0, spent, folded, None, (), children

    def _enumerate(self, root, max_nodes: int, advice: str, big_blind: float) -> None:
        """Enumerate the tree below the state `root` depth-first (`_node` describes each state;
        a node's children get ascending ids by slot) into the tree's arrays (`_arrays`); more than
        `max_nodes` nodes raise a BettingTreeError ending in `advice`."""
        kind, actor, rnd, acts, kids, spent, folded, history = [], [], [], [], [], [], [], []
        stack = [(root, -1, 0, 0)]                   # (state, parent, slot, depth)
        max_depth = 0
        while stack:
            st, parent, slot, depth = stack.pop()
            node = len(kind)
            if node >= max_nodes:
                raise BettingTreeError(f"the abstract betting tree has more than {max_nodes:,} nodes; {advice}")
            if parent >= 0:
                kids[parent][slot] = node
            max_depth = max(max_depth, depth)
            k, who, chips, out, hist, a, children = self._node(st)
            kind.append(k)
            actor.append(who)
            rnd.append(st.round)
            spent.append(chips)
            folded.append(out)
            acts.append(a)
            kids.append([-1] * max(len(children), 1))
            if k == DECISION:
                history.append(hist)
            for j in reversed(range(len(children))):   # popped in ascending slot order
                stack.append((children[j], node, j, depth + 1))
        self._arrays(kind, actor, rnd, acts, kids, spent, folded, history, max_depth, big_blind)

    def _arrays(self, kind, actor, rnd, acts, kids, spent, folded, history, depth, big_blind) -> None:
        """The tree's arrays from per-node lists in creation order (see the module doc): kind,
        actor, round, action ids and children per node, chips in [P] and folded [P] per node, the
        decisions' histories, the depth, the big blind (chips)."""
        m = len(kind)
        width = max(1, max(len(a) for a in acts))
        self.kind = np.array(kind, dtype=np.int8)
        self.actor = np.array(actor, dtype=np.int8)
        self.round = np.array(rnd, dtype=np.int8)
        self.num_actions = np.array([len(a) for a in acts], dtype=np.int64)
        self.child = np.full((m, width), -1, dtype=np.int64)
        self.action = np.full((m, width), -1, dtype=np.int64)
        for i, (a, c) in enumerate(zip(acts, kids)):
            self.child[i, :len(c)] = c
            self.action[i, :len(a)] = a
        self.decision = np.cumsum(self.kind == DECISION) - 1
        self.decision[self.kind != DECISION] = -1
        self.spent = np.array(spent, dtype=np.float64) / big_blind
        self.folded = np.array(folded, dtype=bool)
        self.history = history
        self.depth = depth
        self.decision_node = np.flatnonzero(self.kind == DECISION)      # int64 [D]: node of decision d

    def _actions(self, st) -> tuple[int, ...]:
        if self.bet_sizes is None:
            return B.legal_actions(self.rules, st)
        return abstract_actions(self.rules, st, self.bet_sizes)

    @property
    def num_nodes(self) -> int:
        return len(self.kind)

    @property
    def num_decisions(self) -> int:
        return len(self.history)

    @property
    def width(self) -> int:
        """K: the most abstract actions at a decision."""
        return self.child.shape[1]
