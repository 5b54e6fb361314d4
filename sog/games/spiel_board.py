"""Perfect-information board games whose rules are OpenSpiel's C++ games (chess, Go).

The rules are not written here: every legal move, move application, terminal
check and return comes from the OpenSpiel state. Measured per call on random
positions (`sog bench rules`, this 2-core machine): expanding a node (copy the
state, apply a move, list the child's legal moves) costs 5.6 us in OpenSpiel
chess against 38 us in python-chess and 300 us in pgx (jitted, one state at a
time); Go 9 x 9 2.9 us against 170 us in pgx.

Public-tree mapping (`sog.games.api`, perfect information, as tic-tac-toe): N = 1
slot per player; the public state is the tuple of OpenSpiel actions played since
the start, so the public tree stays a tree (a transposition is a different public
state, and the history carries what the rules need: repetitions, ko). A decision
node's children are keyed by the move; `actor_map[0, a] = 0` for the child's move
a and -1 elsewhere (int8, one read-only array per action, shared), both state
maps are `[0]`. There are no chance nodes.

States: `state(pub)` is the OpenSpiel state after `pub`, kept for every prefix
reached, so a child costs one copy and one apply of its parent's state, and a
history seen for the first time is replayed from its longest known prefix. Self-play
meets ever new positions, so that table and `Game.cached`'s per-state values are
bounded (`STATE_MEMO` each, emptied when full): without the bound a Go 9 x 9
self-play worker grew from 1.3 to 4.5 GB in ten minutes.
"""
from __future__ import annotations

import abc
from collections.abc import Hashable

import numpy as np
import pyspiel

from sog.games.api import CHANCE_PLAYER, DECISION, TERMINAL, Child, Game

STATE_MEMO = 30_000        # OpenSpiel states, and per-state values of `cached`, kept at most (~12 KB
                            # a Go 9 x 9 position with its feature planes)
_STATE_MAPS = np.zeros((2, 1), dtype=np.int64)
_STATE_MAPS.setflags(write=False)


class SpielBoardGame(Game):
    """A two-player perfect-information OpenSpiel game without chance, seen through the
    public-tree API. Subclasses set `spec` and define `features` (and `position_planes`)."""

    colours: tuple[str, str]
    """Names of player 0 and player 1 (slot names)."""

    def __init__(self, spiel_name: str, params: dict):
        self._spiel_name = spiel_name
        self._params = params
        self.spiel_game = pyspiel.load_game(spiel_name, params)
        self.state_memo_limit = STATE_MEMO

    # ---- OpenSpiel states -----------------------------------------------
    def state(self, pub: tuple[int, ...]) -> pyspiel.State:
        """The OpenSpiel state after the moves `pub` (memoised, at most `STATE_MEMO` of them;
        do not modify it)."""
        if not pub:
            return self._root_state
        memo = self.memo(("states",), dict)
        found = memo.get(pub)
        if found is not None:
            return found
        k = len(pub) - 1
        while k > 0 and pub[:k] not in memo:
            k -= 1
        state = memo[pub[:k]] if k > 0 else self._root_state
        if len(memo) + len(pub) - k > STATE_MEMO:
            memo.clear()
        for i in range(k, len(pub)):
            state = state.clone()
            state.apply_action(pub[i])
            memo[pub[:i + 1]] = state
        return state

    @property
    def _root_state(self) -> pyspiel.State:
        return self.memo(("state", ()), self._new_state)

    def _new_state(self) -> pyspiel.State:
        """The OpenSpiel state at the root."""
        return self.spiel_game.new_initial_state()

    def _actor_map(self, action: int) -> np.ndarray:
        """int8 [1, A]: 0 at `action`, -1 elsewhere (shared, read-only)."""
        def build():
            amap = np.full((1, self.spec.num_actions), -1, dtype=np.int8)
            amap[0, action] = 0
            amap.setflags(write=False)
            return amap
        return self.memo(("actor_map", action), build)

    # ---- the public-tree API --------------------------------------------
    def root(self) -> Hashable:
        return ()

    def initial_ranges(self) -> np.ndarray:
        return np.ones((2, 1))

    def kind(self, pub) -> int:
        return TERMINAL if self.state(pub).is_terminal() else DECISION

    def actor(self, pub) -> int:
        state = self.state(pub)
        return CHANCE_PLAYER if state.is_terminal() else state.current_player()

    def legal_mask(self, pub) -> np.ndarray:
        mask = np.zeros((1, self.spec.num_actions), dtype=bool)
        state = self.state(pub)
        if not state.is_terminal():
            mask[0, state.legal_actions()] = True
        return mask

    def possible_mask(self, pub) -> np.ndarray:
        return np.ones((2, 1), dtype=bool)

    def children(self, pub) -> list[Child]:
        state = self.state(pub)
        if state.is_terminal():
            return []
        player = state.current_player()
        return [Child(pub + (a,), state.action_to_string(player, a), 1.0, self._actor_map(a),
                      _STATE_MAPS) for a in state.legal_actions()]

    def utility(self, pub) -> np.ndarray:
        return np.array([[self.state(pub).returns()[0]]])

    def action_name(self, pub, action: int) -> str:
        state = self.state(pub)
        return state.action_to_string(state.current_player(), action)

    def slot_name(self, pub, player: int, slot: int) -> str:
        return self.colours[player]

    def info_state_string(self, pub, player: int, slot: int) -> str:
        """OpenSpiel's for perfect-information games: the history of actions, e.g. '796, 1224'."""
        return ", ".join(str(a) for a in pub)

    def openspiel_name(self) -> str:
        if not self._params:
            return self._spiel_name
        args = ",".join(f"{k}={v}" for k, v in self._params.items())
        return f"{self._spiel_name}({args})"

    def render(self, pub) -> str:
        """OpenSpiel's text of the position (FEN for chess, the board for Go)."""
        return str(self.state(pub))

    # ---- features helpers -------------------------------------------------
    def history_planes(self, pub, steps: int) -> list[np.ndarray | None]:
        """`position_planes` of the last `steps` positions, newest first (None before the start)."""
        n = len(pub)
        return [self.cached("position_planes", pub[:n - t]) if t <= n else None
                for t in range(steps)]

    @abc.abstractmethod
    def position_planes(self, pub) -> np.ndarray:
        """float32 [P, H, W]: the planes of one position that the features stack over history."""
