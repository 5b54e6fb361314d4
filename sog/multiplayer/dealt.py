"""Kuhn and Leduc poker for n players as a betting skeleton and a deal, the form compiled solvers walk.

Betting never looks at the cards, so a game of `sog.multiplayer.kuhn` or `.leduc` is its
betting skeleton (the world-state tree with one fixed deal, each chance node dealing the lowest
card left) plus the deal. Chance node number s on a path deals card slot s: slots 0..n-1 are
the players' private cards, slot n the public card (Leduc). Skeleton arrays over its N nodes,
children consecutive (`first[v] .. first[v] + nkids[v] - 1`; one child at a chance node, which
stands for every card):

  kind     int8  [N]     CHANCE_NODE, DECISION_NODE or TERMINAL_NODE
  actor    int64 [N]     decisions: the acting player (0..n-1); else -1
  first    int64 [N]     first child (-1 at terminals)
  nkids    int64 [N]     children (legal actions at a decision, 1 at a chance node)
  slot     int64 [N]     chance nodes: the card slot dealt; else -1
  decision int64 [N]     decisions: index 0..M-1 among the decisions; else -1
  actions  int64 [N, K]  decisions: the legal action ids, increasing (-1 past nkids)
  stake    float [N, n]  terminals: chips each player put in (antes included)
  live     bool  [N, n]  terminals: the players who have not folded

A deal is `cards` int [n + 1] (-1: not dealt yet). An information state is (decision m, the
actor's code), code = private * (D + 1) + (public + 1, or 0 before the public card), D the
deck size, so its row in a table of C = D (D + 1) codes per decision is `m * C + code`. At a
terminal, the live players with the highest `ranks[private, public + ...]` (column D: no public
card) split the pot: returns = share - stake (chips).

`keys()` gives every reachable row's OpenSpiel information-state string (the history replayed
through the game's states with a deal giving the actor its code), so a table over rows is an
OpenSpiel tabular policy.
"""
from __future__ import annotations

import numpy as np

from sog.errors import SogError
from sog.multiplayer.api import CHANCE, TERMINAL, Game
from sog.multiplayer.kuhn import KuhnPoker
from sog.multiplayer.leduc import LeducPoker

CHANCE_NODE, DECISION_NODE, TERMINAL_NODE = 0, 1, 2
GAMES = (KuhnPoker, LeducPoker)


class NotDealtError(SogError, ValueError):
    """A game the skeleton form does not cover (only n-player Kuhn and Leduc)."""


def supports(game: Game) -> bool:
    """Whether `game` has the skeleton form (n-player Kuhn or Leduc poker)."""
    return isinstance(game, GAMES)


class DealtGame:
    """The betting skeleton, deck and showdown ranks of an n-player Kuhn or Leduc game."""

    def __init__(self, game: Game):
        if not supports(game):
            raise NotDealtError(f"{game!r}: the compiled solvers take kuhn_poker and leduc_poker only")
        self.game, self.num_players, self.deck_size = game, game.num_players, game.deck_size
        self.num_codes = self.deck_size * (self.deck_size + 1)
        self.ranks = np.ascontiguousarray(game.showdown_ranks(), dtype=np.int64)
        n, width = self.num_players, game.num_actions
        kind, actor, first, nkids, slot, decision, actions, stake, live = ([] for _ in range(9))
        self.parent, self.label = [], []        # label: the action, or -1 - slot for a deal
        self.sees_public = []                   # decisions: whether the public card is out
        states, dealt, depth = [game.initial_state()], [0], [0]
        num_decisions = 0
        self.parent.append(-1)
        self.label.append(0)
        v = 0
        while v < len(states):
            st, cur = states[v], states[v].current_player()
            first.append(-1)
            nkids.append(0)
            slot.append(-1)
            actor.append(-1)
            decision.append(-1)
            actions.append([-1] * width)
            stake.append([0.0] * n)
            live.append([False] * n)
            self.sees_public.append(dealt[v] > n)
            if cur == TERMINAL:
                kind.append(TERMINAL_NODE)
                s, alive = st.contributions()
                stake[v], live[v] = s.tolist(), alive.tolist()
            elif cur == CHANCE:
                kind.append(CHANCE_NODE)
                slot[v] = dealt[v]
                first[v], nkids[v] = len(states), 1
                states.append(st.child(st.chance_outcomes()[0][0]))
                dealt.append(dealt[v] + 1)
                depth.append(depth[v] + 1)
                self.parent.append(v)
                self.label.append(-1 - dealt[v])
            else:
                kind.append(DECISION_NODE)
                actor[v], decision[v] = cur, num_decisions
                num_decisions += 1
                legal = st.legal_actions()
                actions[v][:len(legal)] = legal
                first[v], nkids[v] = len(states), len(legal)
                for a in legal:
                    states.append(st.child(a))
                    dealt.append(dealt[v])
                    depth.append(depth[v] + 1)
                    self.parent.append(v)
                    self.label.append(int(a))
            states[v] = None
            v += 1
        self.kind = np.array(kind, dtype=np.int8)
        self.actor, self.first, self.nkids = (np.array(x, dtype=np.int64) for x in (actor, first, nkids))
        self.slot, self.decision = np.array(slot, dtype=np.int64), np.array(decision, dtype=np.int64)
        self.actions = np.array(actions, dtype=np.int64).reshape(len(kind), width)
        self.stake = np.array(stake, dtype=np.float64).reshape(len(kind), n)
        self.live = np.array(live, dtype=bool).reshape(len(kind), n)
        self.decision_node = np.flatnonzero(self.kind == DECISION_NODE)
        self.num_decisions = len(self.decision_node)
        self.num_rows = self.num_decisions * self.num_codes
        self.depth = max(depth)
        self._keys = None

    @property
    def num_nodes(self) -> int:
        return len(self.kind)

    def _history(self, v: int) -> list[int]:
        out = []
        while self.parent[v] >= 0:
            out.append(self.label[v])
            v = self.parent[v]
        return out[::-1]

    def keys(self) -> tuple[np.ndarray, list[str]]:
        """(int [R] rows, their R information-state strings): every reachable row (decision m,
        private c, public b != c once out), in row order."""
        if self._keys is None:
            rows, names = [], []
            d, n = self.deck_size, self.num_players
            for m, v in enumerate(self.decision_node.tolist()):
                history, p = self._history(v), int(self.actor[v])
                publics = range(d) if self.sees_public[v] else (-1,)
                for c in range(d):
                    for b in publics:
                        if b == c:
                            continue
                        cards = [-1] * (n + 1)
                        cards[p], cards[n] = c, b
                        spare = iter(x for x in range(d) if x not in cards)
                        cards = [x if x >= 0 else next(spare) for x in cards]
                        st = self.game.initial_state()
                        for step in history:
                            st = st.child(cards[-1 - step] if step < 0 else step)
                        rows.append(m * self.num_codes + c * (d + 1) + b + 1)
                        names.append(st.information_state(p))
            self._keys = (np.array(rows, dtype=np.int64), names)
        return self._keys

    def row_actions(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(int [R, K] legal action ids, -1 past the legal ones; int [R] their counts) of `rows`."""
        nodes = self.decision_node[rows // self.num_codes]
        return self.actions[nodes], self.nkids[nodes]
