"""Tic-tac-toe with OpenSpiel's rules (`tic_tac_toe`), a perfect-information game.

Player 0 is x and moves first, player 1 is o. Actions 0..8 are the cells in
row-major order (cell = 3 * row + column), as in OpenSpiel. Three in a row
wins (+1 for the winner, -1 for the loser); a full board without a line is a
draw (0).

Public-tree mapping (see `sog.games.api`, perfect information): N = 1 slot
per player, so every range is a scalar; the public state is the tuple of moves
so far (a history: transpositions are different public states, which keeps
the public tree a tree, 549,946 nodes in all, over 5,478 distinct positions).
A decision node's children are keyed by the move; `actor_map[0, a] = 0` for
the move a of the child and -1 elsewhere, and both state maps are `[0]`.
There are no chance nodes.

Features (`feature_size` 29): three 9-cell planes (x, o, empty) and the side
to move as a one-hot pair (x, o), all zero at terminals.
"""
from __future__ import annotations

import numpy as np

from sog.games.api import CHANCE_PLAYER, DECISION, TERMINAL, Child, Game, GameSpec

LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))
MARKS = "xo"


def _constant(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


# Shared read-only maps: one actor map per move, and the (trivial) state maps.
_ACTOR_MAPS = []
for _a in range(9):
    _m = np.full((1, 9), -1, dtype=np.int64)
    _m[0, _a] = 0
    _ACTOR_MAPS.append(_constant(_m))
_STATE_MAPS = _constant(np.zeros((2, 1), dtype=np.int64))


_LINE_MASKS = tuple(sum(1 << c for c in line) for line in LINES)


def _mask(moves) -> int:
    m = 0
    for a in moves:
        m |= 1 << a
    return m


def board(pub) -> list[int]:
    """[9] cells: -1 empty, 0 x, 1 o."""
    cells = [-1] * 9
    for i, a in enumerate(pub):
        cells[a] = i % 2
    return cells


def winner(pub) -> int | None:
    """0 (x) or 1 (o) if that player has three in a row, else None."""
    if len(pub) < 5:
        return None
    # Only the last mover can have completed a line.
    last = (len(pub) - 1) % 2
    m = _mask(pub[last::2])
    for line in _LINE_MASKS:
        if m & line == line:
            return last
    return None


def is_terminal(pub) -> bool:
    return len(pub) == 9 or winner(pub) is not None


class TicTacToe(Game):
    spec = GameSpec(name="tic_tac_toe", num_states=1, num_actions=9, feature_size=29,
                    max_utility=1.0, perfect_information=True)

    def root(self):
        return ()

    def initial_ranges(self):
        return np.ones((2, 1))

    def kind(self, pub):
        return TERMINAL if is_terminal(pub) else DECISION

    def actor(self, pub):
        return CHANCE_PLAYER if is_terminal(pub) else len(pub) % 2

    def legal_mask(self, pub):
        mask = np.zeros((1, 9), dtype=bool)
        if not is_terminal(pub):
            mask[0] = True
            mask[0, list(pub)] = False
        return mask

    def possible_mask(self, pub):
        return np.ones((2, 1), dtype=bool)

    def children(self, pub):
        if is_terminal(pub):
            return []
        taken = _mask(pub)
        mark = MARKS[len(pub) % 2]
        return [Child(pub + (a,), f"{mark}({a // 3},{a % 3})", 1.0, _ACTOR_MAPS[a], _STATE_MAPS)
                for a in range(9) if not taken >> a & 1]

    def utility(self, pub):
        w = winner(pub)
        return np.array([[0.0 if w is None else (1.0 if w == 0 else -1.0)]])

    def features(self, pub):
        f = np.zeros(29, dtype=np.float32)
        cells = np.array(board(pub))
        f[0:9] = cells == 0
        f[9:18] = cells == 1
        f[18:27] = cells < 0
        if not is_terminal(pub):
            f[27 + len(pub) % 2] = 1.0
        return f

    def action_name(self, pub, action):
        return f"{MARKS[len(pub) % 2]}({action // 3},{action % 3})"

    def slot_name(self, pub, player, slot):
        return MARKS[player]

    def info_state_string(self, pub, player, slot):
        """OpenSpiel's: the history, e.g. '4, 0'."""
        return ", ".join(str(a) for a in pub)

    def openspiel_name(self):
        return "tic_tac_toe"

    def render(self, pub) -> str:
        """The board as three lines of 'x', 'o' and '.' (OpenSpiel's observation string)."""
        cells = board(pub)
        chars = ["." if c < 0 else MARKS[c] for c in cells]
        return "\n".join("".join(chars[3 * r:3 * r + 3]) for r in range(3))
