"""Chess (`sog.games.chess`): OpenSpiel's rules cross-checked against the Chess
Programming Wiki's perft counts and python-chess, the public-tree API on random
games, and the 119 AlphaZero feature planes."""
from __future__ import annotations

import random

import chess as pychess
import numpy as np
import pytest

from sog.games import load_game
from sog.games.api import DECISION, TERMINAL
from sog.games.chess import Chess

# (FEN, perft(1..4)) from https://www.chessprogramming.org/Perft_Results
PERFT = {
    "start": ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
              (20, 400, 8902, 197281)),
    "kiwipete": ("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
                 (48, 2039, 97862, 4085603)),
    "position3": ("8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", (14, 191, 2812, 43238)),
    "position4": ("r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
                  (6, 264, 9467, 422333)),
    "position5": ("rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
                  (44, 1486, 62379, 2103487)),
    "position6": ("r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
                  (46, 2079, 89890, 3894594)),
}


def spiel_perft(state, depth: int) -> int:
    """Leaf count of OpenSpiel's move tree `depth` plies below `state`."""
    actions = state.legal_actions()
    if depth == 1:
        return len(actions)
    total = 0
    for a in actions:
        child = state.clone()
        child.apply_action(a)
        total += spiel_perft(child, depth - 1)
    return total


def python_chess_perft(board: pychess.Board, depth: int) -> int:
    if depth == 1:
        return board.legal_moves.count()
    total = 0
    for move in board.legal_moves:
        board.push(move)
        total += python_chess_perft(board, depth - 1)
        board.pop()
    return total


@pytest.mark.parametrize("name", PERFT)
def test_perft(name):
    fen, counts = PERFT[name]
    state = Chess(fen=fen).state(())
    for depth in (1, 2, 3, 4):
        assert spiel_perft(state, depth) == counts[depth - 1], (name, depth)
    assert python_chess_perft(pychess.Board(fen), 2) == counts[1]


@pytest.mark.slow
@pytest.mark.parametrize("name", PERFT)
def test_python_chess_perft_3(name):
    fen, counts = PERFT[name]
    assert python_chess_perft(pychess.Board(fen), 3) == counts[2]


def _san(text: str) -> str:
    return text.rstrip("+#")


def _python_chess_over(board: pychess.Board) -> bool:
    """python-chess's automatic ends as OpenSpiel applies them: mate, stalemate, insufficient
    material, threefold repetition, fifty moves without progress."""
    return (board.is_checkmate() or board.is_stalemate() or board.is_insufficient_material()
            or board.is_repetition(3) or board.halfmove_clock >= 100)


def _random_games_agree(n_games: int, max_plies: int, seed: int) -> int:
    """Random games through the game API, checked move by move against python-chess:
    legal moves (as SAN), the end of the game and its result. Returns plies checked."""
    rng = random.Random(seed)
    game = Chess()
    plies = 0
    for _ in range(n_games):
        pub, board = game.root(), pychess.Board()
        while True:
            over = _python_chess_over(board)
            assert (game.kind(pub) == TERMINAL) == over, board.fen()
            if over:
                outcome = board.outcome(claim_draw=True)
                black = 0.0 if outcome.winner is None else (1.0 if outcome.winner == pychess.BLACK else -1.0)
                assert game.utility(pub)[0, 0] == black, board.fen()
                break
            children = game.children(pub)
            ours = {_san(c.observation) for c in children}
            theirs = {_san(board.san(m)) for m in board.legal_moves}
            assert ours == theirs, board.fen()
            assert game.actor(pub) == (1 if board.turn == pychess.WHITE else 0)
            if len(pub) >= max_plies:
                break
            child = rng.choice(children)
            board.push_san(child.observation)
            pub = child.pub
            plies += 1
    return plies


def test_random_games_match_python_chess():
    assert _random_games_agree(n_games=6, max_plies=400, seed=0) > 300


@pytest.mark.slow
def test_random_games_match_python_chess_long():
    assert _random_games_agree(n_games=200, max_plies=1000, seed=1) > 20_000


def test_api_on_a_random_game():
    game = load_game("chess")
    spec = game.spec
    assert (spec.num_states, spec.num_actions, spec.feature_shape) == (1, 4674, (119, 8, 8))
    assert spec.perfect_information and spec.feature_size == 119 * 64
    rng = random.Random(3)
    pub = game.root()
    while game.kind(pub) == DECISION and len(pub) < 60:
        legal = game.legal_mask(pub)
        children = game.children(pub)
        assert legal.shape == (1, 4674) and legal.sum() == len(children)
        for child in children:
            (a,) = np.flatnonzero(child.actor_map[0] >= 0)
            assert legal[0, a] and child.pub == pub + (a,) and child.actor_map[0, a] == 0
            assert game.action_name(pub, a) == child.observation
        assert game.features(pub).shape == (119 * 64,)
        pub = rng.choice(children).pub
    fresh = Chess()                      # a history seen for the first time is replayed
    assert str(fresh.state(pub)) == str(game.state(pub))
    assert game.actor(pub) == len(pub) % 2 ^ 1                  # white (player 1) moves first


def test_features_after_e4_e5():
    game = Chess()
    names = {c.observation: c.pub for c in game.children(())}
    after_e4 = names["e4"]
    after_e5 = {c.observation: c.pub for c in game.children(after_e4)}["e5"]
    f = game.features(after_e5).reshape(119, 8, 8)       # white to move: board as is
    assert f[112].max() == 0 and np.all(f[113] == 2 / 512) and np.all(f[114:118] == 1)
    assert f[0, 3, 4] == 1 and f[0, 1, 4] == 0            # white pawn e4, left e2
    assert f[6, 4, 4] == 1 and f[6, 6, 4] == 0            # black pawn e5, left e7
    assert f[5, 0, 4] == 1 and f[11, 7, 4] == 1           # kings e1, e8
    assert f[14, 1, 4] == 0 and f[14 + 6, 6, 4] == 1       # one ply ago: black pawn on e7
    assert f[28, 1, 4] == 1 and f[28 + 6, 6, 4] == 1       # two plies ago: the start
    assert not f[42:112].any()                            # before the start
    g = game.features(after_e4).reshape(119, 8, 8)       # black to move: mirrored, swapped
    assert np.all(g[112] == 1)
    assert g[0, 1, 4] == 1 and g[6, 4, 4] == 1           # own pawn e7 (row 1), white's e4 (row 4)
    assert g[5, 0, 4] == 1 and g[11, 7, 4] == 1          # own king e8 on row 0


def test_repetition_planes():
    game = Chess()
    pub = ()
    for san in ["Nf3", "Nf6", "Ng1", "Ng8", "Nf3", "Nf6", "Ng1", "Ng8"]:
        pub = {c.observation: c.pub for c in game.children(pub)}[san]
    f = game.features(pub).reshape(119, 8, 8)
    # The start position, third time: the game is drawn (threefold repetition).
    assert game.kind(pub) == TERMINAL and game.utility(pub)[0, 0] == 0
    assert np.all(f[12] == 1) and np.all(f[13] == 1)
    assert np.all(f[14 * 4 + 12] == 1) and not f[14 * 4 + 13].any()   # 4 plies ago: twice
