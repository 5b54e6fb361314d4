"""A flat world-state tree of an n-player game, grown lazily as solvers meet its nodes.

Node ids are ints in creation order. Expanding a node creates all its children
at once, as consecutive ids `first[node] .. first[node] + len(actions[node]) - 1`
(child j follows `actions[node][j]`). Per node, in Python lists (a recursive
solver indexes them one node at a time; lists beat numpy scalars there):

  player[node]   0..n-1, CHANCE or TERMINAL
  depth[node]    actions (chance included) from the root
  first[node]    id of the first child; -1 until expanded (and at terminals)
  actions[node]  the legal actions, or the chance outcomes, in OpenSpiel's order
  cum[node]      chance nodes: cumulative outcome probabilities (tuple); else None
  row[node]      decision nodes: the information-set row; else -1
  prunable[node] decision nodes: `State.prunable()` (may a pruning solver skip actions here); else False
  utility[node]  terminals: tuple of n returns (chips); else None

Information sets get rows in the order they are met: `rows` maps an
information-state key (OpenSpiel's string) to its row; per row `row_key`,
`row_player` and `row_actions` (the legal actions, the columns of every
per-row table of width `num_actions`: column j is action `row_actions[r][j]`).
`expand_all()` builds the whole tree breadth first (used by the exact
best-response computation).
"""
from __future__ import annotations

import itertools

from sog.errors import SogError
from sog.multiplayer.api import CHANCE, TERMINAL, Game, State


class TreeTooLargeError(SogError, ValueError):
    """A full tree past the node limit asked for."""


class InconsistentGameError(SogError, ValueError):
    """Two histories of one information set disagree on the actor or the legal actions."""


class WorldTree:
    def __init__(self, game: Game):
        self.game = game
        self.num_players = game.num_players
        self.num_actions = game.num_actions
        self.player: list[int] = []
        self.depth: list[int] = []
        self.first: list[int] = []
        self.actions: list[tuple] = []
        self.cum: list = []
        self.row: list[int] = []
        self.prunable: list[bool] = []
        self.utility: list = []
        self._state: list = []          # the State of a node until it is expanded
        self.rows: dict[str, int] = {}
        self.row_key: list[str] = []
        self.row_player: list[int] = []
        self.row_actions: list[tuple] = []
        self._add(game.initial_state(), 0)

    @property
    def num_nodes(self) -> int:
        return len(self.player)

    @property
    def num_rows(self) -> int:
        return len(self.row_key)

    def _add(self, state: State, depth: int) -> None:
        p = state.current_player()
        self.player.append(p)
        self.depth.append(depth)
        self.first.append(-1)
        if p == TERMINAL:
            self.actions.append(())
            self.cum.append(None)
            self.row.append(-1)
            self.prunable.append(False)
            self.utility.append(tuple(float(x) for x in state.returns()))
            self._state.append(None)
            return
        self.utility.append(None)
        self._state.append(state)
        if p == CHANCE:
            outcomes = state.chance_outcomes()
            self.actions.append(tuple(a for a, _ in outcomes))
            self.cum.append(tuple(itertools.accumulate(q for _, q in outcomes)))
            self.row.append(-1)
            self.prunable.append(False)
            return
        actions = tuple(state.legal_actions())
        key = state.information_state(p)
        r = self.rows.get(key)
        if r is None:
            r = self.rows[key] = len(self.row_key)
            self.row_key.append(key)
            self.row_player.append(p)
            self.row_actions.append(actions)
        elif self.row_player[r] != p or self.row_actions[r] != actions:
            raise InconsistentGameError(f"information state {key!r}: actor or legal actions differ "
                                        "between its histories")
        self.actions.append(actions)
        self.cum.append(None)
        self.row.append(r)
        self.prunable.append(state.prunable())

    def expand(self, node: int) -> int:
        """Create the children of `node` (not a terminal; idempotent); returns `first[node]`."""
        if self.first[node] >= 0:
            return self.first[node]
        state = self._state[node]
        first = self.num_nodes
        depth = self.depth[node] + 1
        for a in self.actions[node]:
            self._add(state.child(a), depth)
        self.first[node] = first
        self._state[node] = None
        return first

    def expand_all(self, max_nodes: int | None = None) -> WorldTree:
        """Expand every node (breadth first from whatever exists); returns self. TreeTooLargeError
        once the tree would pass `max_nodes` (None: no limit)."""
        node = 0
        while node < self.num_nodes:
            if max_nodes is not None and self.num_nodes > max_nodes:
                raise TreeTooLargeError(f"{self.game!r} has more than {max_nodes:,} world states")
            if self.player[node] != TERMINAL and self.first[node] < 0:
                self.expand(node)
            node += 1
        return self
