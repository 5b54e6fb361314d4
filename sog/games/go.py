"""Go with OpenSpiel's rules (`go`): Tromp-Taylor area scoring, komi 7.5.

Player 0 is black and moves first; `board_size` 9 (default) or 19. Rules are
OpenSpiel's C++ `go` (through `sog.games.spiel_board`):

* legal moves: any empty point except suicide and the simple-ko point (the point
  of a single stone just captured by a single stone); pass is always legal;
* superko: a move other than pass that recreates an earlier whole-board position
  (positional superko) ends the game at once as a draw (0), OpenSpiel's rule;
  pgx ends it as a loss of the mover instead, strict Tromp-Taylor makes the move
  illegal (all agree wherever no position repeats, tests/test_go.py);
* the game ends after two consecutive passes, or after 2 * board_size^2 moves
  (162 on 9 x 9, 722 on 19 x 19, Table S2's limit), and is scored Tromp-Taylor:
  stones plus empty regions reaching only one colour, black minus white minus
  komi; +1 for the winner, -1 for the loser (0 only for an integral komi's tie).

A game hosted for an outside controller (`sog gtp`: GnuGo, a Go server) follows the
controller's rules: `move_limit=0` lifts the move limit (`move_limit=N` sets it to N moves),
and `superko="illegal"` makes a move that recreates an earlier position illegal for the
mover (strict Tromp-Taylor) instead of a draw: `legal_mask` leaves it out. Such a move puts
a stone on a point that the earlier position had a stone on, so on a point played before:
only those legal moves are tried on a copy of the state.

Score utility (`score_weight` w > 0, `score_scale` s points; KataGo's score term): a scored
game's utility for black is `(1 - w) * result + w * tanh(margin / s)`, `result` +-1 as above and
`margin` the Tromp-Taylor area score (`area_score`), so the winner still gets more than the
loser (the sign is the result's) and a lost position is worth more the fewer points it loses
by. Draws stay 0. Without it, weak self-play under komi 7.5 values every black position "lost"
(-1) and the value head gives the search no preference between black's moves (a go9_small
run without it: black passed from move 15 on); `configs/go9_small.yaml` trains with w = 0.5,
s = 20. Tournaments and Elo count the sign only, so a network trained with a score term plays
the plain game (`network_family` leaves w and s out).

Actions: board_size^2 + 1 (82 on 9 x 9): point = row * board_size + column as
OpenSpiel numbers them, then pass. `action_name` is OpenSpiel's (e.g. "B d4").

Features (Table S1, AlphaGo Zero's 17 planes, `spec.feature_shape`
(17, board_size, board_size)): planes 2t and 2t + 1 for t = 0..7 are the stones
of the player to move and of the opponent t plies ago (zeros before the start);
plane 16 is 1 when black is to move. Rows and columns follow OpenSpiel's point
numbering, as the actions do.
"""
from __future__ import annotations

import numpy as np

from sog.games.api import Capabilities, GameSpec
from sog.games.spiel_board import SpielBoardGame

HISTORY = 8
NUM_PLANES = 2 * HISTORY + 1
MAX_MOVE_LIMIT = 2 ** 31 - 1     # OpenSpiel's max_game_length of `move_limit=0` (no limit)


class Go(SpielBoardGame):
    colours = ("black", "white")
    capabilities = Capabilities(notation="gtp", record="sgf", protocol="gtp")

    def __init__(self, board_size: int = 9, komi: float = 7.5, score_weight: float = 0.0,
                 score_scale: float = 20.0, move_limit: int | None = None, superko: str = "draw"):
        board_size, komi = int(board_size), float(komi)
        score_weight, score_scale = float(score_weight), float(score_scale)
        if board_size not in (9, 13, 19):
            raise ValueError(f"board_size must be 9, 13 or 19, not {board_size}")
        if not 0.0 <= score_weight < 1.0:
            raise ValueError(f"score_weight must be in [0, 1), not {score_weight}")
        if not score_scale > 0.0:
            raise ValueError(f"score_scale must be > 0 points, not {score_scale}")
        default_limit = 2 * board_size ** 2
        move_limit = default_limit if move_limit is None else int(move_limit)
        if not 0 <= move_limit < MAX_MOVE_LIMIT:
            raise ValueError(f"move_limit must be in [0, {MAX_MOVE_LIMIT}) moves (0: none), not {move_limit}")
        if superko not in ("draw", "illegal"):
            raise ValueError(f"superko must be 'draw' or 'illegal', not {superko!r}")
        super().__init__("go", {"board_size": board_size, "komi": komi,
                                "max_game_length": move_limit or MAX_MOVE_LIMIT})
        self.size, self.komi = board_size, komi
        self.score_weight, self.score_scale = score_weight, score_scale
        self.move_limit, self.superko = move_limit, superko
        board = "" if (board_size, komi) == (9, 7.5) else f"board_size={board_size},komi={komi}"
        score = f"score_weight={score_weight},score_scale={score_scale}" if score_weight > 0.0 else ""
        hosted = ",".join(filter(None, ("" if move_limit == default_limit else f"move_limit={move_limit}",
                                        "" if superko == "draw" else f"superko={superko}")))
        args = ",".join(filter(None, (board, score, hosted)))
        self._family, name = f"go({board})" if board else "go", f"go({args})" if args else "go"
        self.spec = GameSpec(name=name, num_states=1, num_actions=board_size ** 2 + 1,
                             feature_size=NUM_PLANES * board_size ** 2, max_utility=1.0,
                             perfect_information=True,
                             feature_shape=(NUM_PLANES, board_size, board_size))

    @property
    def network_family(self) -> str:
        """The game without its score term: the features and moves are the same."""
        return self._family

    def legal_mask(self, pub) -> np.ndarray:
        """bool [1, A]: OpenSpiel's legal moves, less the superko moves if `superko="illegal"`."""
        mask = super().legal_mask(pub)
        if self.superko == "draw" or not pub:
            return mask
        points = self.size ** 2
        played = np.zeros(points + 1, dtype=bool)
        played[list(pub)] = True
        state = self.state(pub)
        for a in np.flatnonzero(mask[0, :points] & played[:points]).tolist():
            child = state.clone()
            child.apply_action(a)
            if child.is_terminal() and len(pub) + 1 != self.move_limit:
                mask[0, a] = False
        return mask

    def children(self, pub) -> list:
        """OpenSpiel's children at the moves of `legal_mask`."""
        children = super().children(pub)
        if self.superko == "draw" or not children:
            return children
        legal = self.cached("legal_mask", pub)[0]
        return [c for c in children if legal[c.pub[-1]]]

    def utility(self, pub) -> np.ndarray:
        """float [1, 1]: black's utility, OpenSpiel's result, with the score term if
        `score_weight` > 0 (module doc)."""
        result = super().utility(pub)
        if self.score_weight == 0.0 or result[0, 0] == 0.0:
            return result
        margin = self.area_score(pub)
        return (1.0 - self.score_weight) * result + self.score_weight * np.tanh(margin / self.score_scale)

    def public_tree_size(self) -> int:
        """A lower bound: the histories of four stones on distinct points, P (P - 1) (P - 2) (P - 4)
        for P = board_size^2 points. The first three stones can never be suicide (one needs at
        least two enemy neighbours), and the fourth is suicide on at most one point (a corner
        between the first player's two stones)."""
        points = self.size ** 2
        return points * (points - 1) * (points - 2) * (points - 4)

    def position_planes(self, pub) -> np.ndarray:
        """float32 [2, size, size]: black's stones, white's stones."""
        obs = np.asarray(self.state(pub).observation_tensor(0), dtype=np.float32)
        return obs[:2 * self.size ** 2].reshape(2, self.size, self.size)

    def area_score(self, pub) -> float:
        """Tromp-Taylor area score of the position after `pub`: black's points minus white's
        minus komi, a colour's points being its stones and the empty points that reach only
        its stones (flood fills over the board, vectorised by iterated dilation)."""
        black, white = self.position_planes(pub).astype(bool)
        empty = ~(black | white)

        def reaches(stones: np.ndarray) -> np.ndarray:
            seen = stones.copy()
            while True:
                grown = seen.copy()
                grown[1:] |= seen[:-1]
                grown[:-1] |= seen[1:]
                grown[:, 1:] |= seen[:, :-1]
                grown[:, :-1] |= seen[:, 1:]
                grown &= empty | stones
                if (grown == seen).all():
                    return grown & empty
                seen = grown

        to_black, to_white = reaches(black), reaches(white)
        points_black = black.sum() + (to_black & ~to_white).sum()
        points_white = white.sum() + (to_white & ~to_black).sum()
        return float(points_black - points_white) - self.komi

    def features(self, pub) -> np.ndarray:
        """float32 [17 * size^2]: the planes of the module doc, flattened."""
        mover = len(pub) % 2
        out = np.zeros((NUM_PLANES, self.size, self.size), dtype=np.float32)
        for t, planes in enumerate(self.history_planes(pub, HISTORY)):
            if planes is not None:
                out[2 * t] = planes[mover]
                out[2 * t + 1] = planes[1 - mover]
        out[2 * HISTORY] = mover == 0
        return out.reshape(-1)
