"""Chess with OpenSpiel's rules (`chess`), a perfect-information game.

Players are OpenSpiel's: player 0 is black, player 1 is white, and white moves
first (utilities are black's, as OpenSpiel's returns). `Chess(fen=...)` starts from
a FEN position instead of the standard one (planes before it are zeros). Rules, legality and the end of the game are
OpenSpiel's C++ `chess` (through `sog.games.spiel_board`): checkmate wins (+1 /
-1); stalemate, threefold repetition, the fifty-move rule and insufficient
material draw (0), all applied automatically (no claims). Cross-checked against
python-chess and the Chess Programming Wiki's perft counts (tests/test_chess.py).

Actions: OpenSpiel's 4,674 chess actions: AlphaZero's 8 x 8 x 73 move encoding
(from square x move type: 56 queen moves, 8 knight moves, 9 underpromotions),
taken from the side to move's point of view, plus two ids OpenSpiel keeps for
other board sizes (never legal here). `action_name` is the move in SAN.

Features (Table S1, AlphaZero's 119 planes of 8 x 8, `spec.feature_shape`
(119, 8, 8)), from the side to move's point of view (for black the board is
mirrored rank-wise and the colours swapped), rows are ranks (row 0 = the mover's
first rank), columns files a..h:

* planes 14t .. 14t + 13 for t = 0..7 (the position t plies ago, zeros before
  the start): the mover's pawn, knight, bishop, rook, queen, king, the
  opponent's six in the same order, then "this position has occurred at least
  twice" and "at least three times";
* plane 112: colour (1 when black is to move);
* plane 113: plies played (since the start or the FEN) / 512 (Table S2's move limit);
* planes 114-117: castling rights: the mover's king side, queen side, the
  opponent's king side, queen side;
* plane 118: the no-progress (fifty-move) counter / 101, as OpenSpiel scales it.
"""
from __future__ import annotations

import numpy as np

from sog.games.api import Capabilities, GameSpec
from sog.games.spiel_board import SpielBoardGame

HISTORY = 8
POSITION_PLANES = 14
NUM_PLANES = HISTORY * POSITION_PLANES + 7
PLY_SCALE = 512.0

# OpenSpiel's observation planes: (white, black) x (K, Q, R, B, N, P) interleaved, then
# empty, repetitions (count - 1) / 2, side to move (1 white), no-progress counter / 101, castling
# white queen side (a-file rook), white king side, black queen side, black king side.
_WHITE_PIECES = [10, 8, 6, 4, 2, 0]          # P, N, B, R, Q, K
_BLACK_PIECES = [11, 9, 7, 5, 3, 1]
_REPETITIONS, _WHITE_TO_MOVE, _NO_PROGRESS, _CASTLING = 13, 14, 15, 16
# Position planes of the opponent's point of view: colours swapped, repetitions kept.
_SWAP = np.r_[6:12, 0:6, 12:14]
# Castling planes (own king side, own queen side, opponent king side, queen side), by
# whether black is to move.
_CASTLING_ORDER = (np.array([1, 0, 3, 2]), np.array([3, 2, 1, 0]))


class Chess(SpielBoardGame):
    colours = ("black", "white")
    capabilities = Capabilities(notation="uci", record="pgn", protocol="uci")

    def __init__(self, fen: str | None = None):
        super().__init__("chess", {})
        self.fen = fen
        self.spec = GameSpec(name="chess" if fen is None else f"chess(fen={fen})", num_states=1,
                             num_actions=self.spiel_game.num_distinct_actions(),
                             feature_size=NUM_PLANES * 64, max_utility=1.0,
                             perfect_information=True, feature_shape=(NUM_PLANES, 8, 8))

    @property
    def network_family(self) -> str:
        """"chess" from any start: the features and moves are the standard game's, so its
        networks play a FEN position (a UCI host's game, `sog.games.board_moves`)."""
        return "chess"

    def public_tree_size(self) -> int | None:
        """From the standard start, a lower bound: the histories of at most five plies
        (perft(0..5) = 1 + 20 + 400 + 8,902 + 197,281 + 4,865,609, the Chess Programming
        Wiki's counts, checked to depth 4 in tests/test_chess.py); None from a FEN."""
        return 5_072_213 if self.fen is None else None

    def _new_state(self):
        return self.spiel_game.new_initial_state(*([] if self.fen is None else [self.fen]))

    def _observation(self, pub) -> np.ndarray:
        """float32 [20, 8, 8]: OpenSpiel's observation planes (rows ranks 1..8, columns files a..h)."""
        return np.asarray(self.state(pub).observation_tensor(0), dtype=np.float32).reshape(20, 8, 8)

    def position_planes(self, pub) -> np.ndarray:
        """float32 [14, 8, 8] from white's point of view: white's P, N, B, R, Q, K, black's six,
        occurred at least twice, at least three times."""
        obs = self._observation(pub)
        planes = np.empty((POSITION_PLANES, 8, 8), dtype=np.float32)
        planes[0:6] = obs[_WHITE_PIECES]
        planes[6:12] = obs[_BLACK_PIECES]
        count = round(float(obs[_REPETITIONS, 0, 0]) * 2) + 1
        planes[12] = count >= 2
        planes[13] = count >= 3
        return planes

    def features(self, pub) -> np.ndarray:
        """float32 [119 * 64]: the planes of the module doc, flattened."""
        obs = self._observation(pub)
        black = int(obs[_WHITE_TO_MOVE, 0, 0] == 0)
        out = np.zeros((NUM_PLANES, 8, 8), dtype=np.float32)
        for t, planes in enumerate(self.history_planes(pub, HISTORY)):
            if planes is not None:
                out[POSITION_PLANES * t:POSITION_PLANES * (t + 1)] = (
                    planes[_SWAP, ::-1] if black else planes)
        base = HISTORY * POSITION_PLANES
        out[base] = black
        out[base + 1] = len(pub) / PLY_SCALE
        out[base + 2:base + 6] = obs[_CASTLING + _CASTLING_ORDER[black]]
        out[base + 6] = obs[_NO_PROGRESS]
        return out.reshape(-1)
