"""Go (`sog.games.go`): OpenSpiel's rules cross-checked against pgx's Go on random
9 x 9 games (legal moves, boards after every move so captures, ko, the end and the
Tromp-Taylor result with komi 7.5), the public-tree API and the 17 feature planes."""
from __future__ import annotations

import functools

import numpy as np
import pytest

from sog.games import load_game
from sog.games.api import DECISION, TERMINAL
from sog.games.go import Go

SIZE = 9


@functools.cache
def _pgx():
    """pgx's Go game (colour-indexed, no random player order) with jitted steps."""
    jax = pytest.importorskip("jax")
    pgx_go = pytest.importorskip("pgx._src.games.go")
    game = pgx_go.Game(size=SIZE, komi=7.5)

    @jax.jit
    def step(x, action):
        x = game.step(x, action)
        return x, game.legal_action_mask(x), game.is_terminal(x), game.rewards(x)

    @jax.jit
    def init():
        x = game.init()
        return x, game.legal_action_mask(x)

    return init, step


def _cross_check(n_games: int, seed: int) -> dict:
    """Random 9 x 9 games (uniform over OpenSpiel's legal moves, pass included) played in
    both implementations; asserts agreement move by move and returns counts of what the
    games exercised."""
    init, step = _pgx()
    game = Go(board_size=SIZE)
    rng = np.random.default_rng(seed)
    stats = {"moves": 0, "captures": 0, "ko": 0, "two_passes": 0, "move_limit": 0, "superko": 0,
             "black_wins": 0}
    for _ in range(n_games):
        pub, (x, legal) = game.root(), init()
        legal = np.asarray(legal)
        stones = 0
        while True:
            assert np.array_equal(game.legal_mask(pub)[0], legal), pub
            a = int(rng.choice(np.flatnonzero(legal)))
            pub = pub + (a,)
            x, legal, terminal, rewards = step(x, a)
            legal = np.asarray(legal)
            board = np.sign(np.asarray(x.board)).reshape(SIZE, SIZE)
            planes = game.position_planes(pub)
            assert np.array_equal(planes[0] - planes[1], board), pub
            n = int(np.abs(board).sum())
            stats["captures"] += n < stones + (a < SIZE * SIZE)
            stones = n
            stats["ko"] += int(x.ko) >= 0
            stats["moves"] += 1
            assert (game.kind(pub) == TERMINAL) == bool(terminal), pub
            if terminal:
                break
        ours, theirs = game.utility(pub)[0, 0], float(rewards[0])
        if bool(x.is_psk):     # positional superko: OpenSpiel draws, pgx: the mover loses
            stats["superko"] += 1
            assert ours == 0.0 and theirs == (-1.0 if len(pub) % 2 else 1.0)
        else:
            assert ours == theirs, pub
            stats["black_wins"] += ours > 0
            stats["two_passes" if pub[-2:] == (SIZE ** 2,) * 2 else "move_limit"] += 1
    return stats


def test_random_games_match_pgx():
    stats = _cross_check(n_games=6, seed=0)
    assert stats["captures"] > 0 and stats["moves"] > 500


@pytest.mark.slow
def test_random_games_match_pgx_long():
    stats = _cross_check(n_games=1000, seed=1)
    print(stats)
    assert stats["captures"] > 1000 and stats["ko"] > 0 and stats["two_passes"] > 0


def _play(game, moves):
    pub = game.root()
    for m in moves:
        assert game.legal_mask(pub)[0, m], (pub, m)
        pub = pub + (m,)
    return pub


def _point(row, col):
    return row * SIZE + col


PASS = SIZE * SIZE


def test_scoring_and_komi():
    game = Go()
    pub = _play(game, [_point(4, 4), PASS, PASS])
    assert game.kind(pub) == TERMINAL and game.utility(pub)[0, 0] == 1.0      # 81 - 7.5 > 0
    pub = _play(game, [PASS, _point(4, 4), PASS])
    assert game.kind(pub) == DECISION
    pub = _play(game, [PASS, _point(4, 4), PASS, PASS])
    assert game.utility(pub)[0, 0] == -1.0
    assert game.area_score(pub) == -81 - 7.5 and game.area_score(()) == -7.5


def test_area_score_decides_finished_games():
    """The Tromp-Taylor margin (game records' RE) has the sign of OpenSpiel's result in
    random finished games that were scored (not ended by a repeated position)."""
    game, rng = Go(), np.random.default_rng(3)
    scored = 0
    for _ in range(30):
        pub = ()
        while game.kind(pub) == DECISION:
            legal = np.flatnonzero(game.legal_mask(pub)[0])
            stones = legal[legal != PASS]
            pub += (int(rng.choice(stones)) if len(stones) and rng.random() < 0.95 else PASS,)
        u = game.utility(pub)[0, 0]
        if u != 0:
            scored += 1
            assert np.sign(game.area_score(pub)) == u
    assert scored >= 20


def test_score_utility_keeps_the_result_and_orders_losses():
    """With a score term the utility has the result's sign, draws stay 0, and a loss by
    fewer points is worth more; the name round-trips, the network family is the plain game's,
    and bad weights or scales are refused."""
    game, plain = load_game("go(score_weight=0.5,score_scale=20)"), Go()
    assert game.spec.name == "go(score_weight=0.5,score_scale=20.0)"
    assert load_game(game.spec.name).spec.name == game.spec.name
    assert game.network_family == plain.spec.name == "go"
    big = _play(game, [PASS, _point(4, 4), PASS, PASS])                 # black loses by 88.5
    small = _play(game, [_point(0, 0), _point(4, 4), PASS, PASS])       # black loses by 7.5 + ...
    for pub in (big, small):
        u, r = game.utility(pub)[0, 0], plain.utility(pub)[0, 0]
        assert np.sign(u) == r == -1
        assert u == pytest.approx(-0.5 + 0.5 * np.tanh(game.area_score(pub) / 20))
    assert game.utility(big)[0, 0] < game.utility(small)[0, 0] < -0.5
    win = _play(game, [_point(4, 4), PASS, PASS])
    assert 0.5 < game.utility(win)[0, 0] <= 1.0
    assert load_game("go(board_size=19,score_weight=0.25)").network_family == "go(board_size=19,komi=7.5)"
    for bad in ("go(score_weight=1)", "go(score_weight=-0.1)", "go(score_scale=0)"):
        with pytest.raises(ValueError):
            load_game(bad)


def test_capture_and_simple_ko():
    game = Go()
    # Black surrounds (1, 1) on three sides, white surrounds (1, 2); black fills (1, 2) and
    # white captures it at (1, 1): black may not retake at once, but after a move elsewhere.
    moves = [_point(0, 1), _point(0, 2), _point(1, 0), _point(2, 2), _point(2, 1), _point(1, 3),
             _point(1, 2), _point(1, 1)]
    pub = _play(game, moves)
    planes = game.position_planes(pub)
    assert planes[0, 1, 2] == 0 and planes[1, 1, 1] == 1            # captured
    assert not game.legal_mask(pub)[0, _point(1, 2)]               # ko
    pub = _play(game, moves + [_point(8, 8), _point(8, 7)])
    assert game.legal_mask(pub)[0, _point(1, 2)]
    planes = game.position_planes(pub + (_point(1, 2),))
    assert planes[0, 1, 2] == 1 and planes[1, 1, 1] == 0            # retaken


def test_api_and_features():
    game = load_game("go")
    spec = game.spec
    assert (spec.num_actions, spec.feature_shape, spec.feature_size) == (82, (17, 9, 9), 17 * 81)
    assert load_game("go(board_size=19)").spec.num_actions == 362
    assert game.actor(()) == 0 and game.actor((0,)) == 1
    pub = _play(game, [_point(4, 4), _point(3, 3)])
    f = game.features(pub).reshape(17, 9, 9)
    assert np.all(f[16] == 1)                                     # black to move
    assert f[0, 4, 4] == 1 and f[1, 3, 3] == 1 and f[0].sum() == 1 and f[1].sum() == 1
    assert f[2, 4, 4] == 1 and f[3].sum() == 0                    # one ply ago: no white stone
    assert f[4:].sum() == 0 + f[16].sum()
    g = game.features(pub[:1]).reshape(17, 9, 9)                  # white to move
    assert np.all(g[16] == 0) and g[1, 4, 4] == 1 and g[0].sum() == 0
    children = game.children(pub)
    assert len(children) == game.legal_mask(pub).sum() == 80
    assert all(c.actor_map[0, c.pub[-1]] == 0 for c in children)


def _superko_reference(game: Go, pub: tuple) -> np.ndarray:
    """bool [A]: OpenSpiel's legal moves at `pub` less those whose board (by brute force:
    apply the move, compare the stones with every earlier position's) repeats an earlier one."""
    state = game.state(pub)
    mask = np.zeros(game.spec.num_actions, dtype=bool)
    mask[state.legal_actions()] = True
    seen = {game.position_planes(pub[:i]).tobytes() for i in range(len(pub) + 1)}
    for a in np.flatnonzero(mask[:PASS]):
        child = state.clone()
        child.apply_action(int(a))
        board = np.asarray(child.observation_tensor(0), dtype=np.float32)[:2 * PASS].reshape(2, SIZE, SIZE)
        mask[a] = board.tobytes() not in seen
    return mask


def test_hosted_rules_make_superko_illegal_and_lift_the_move_limit():
    """`move_limit=0, superko="illegal"` (the rules of a game hosted over GTP): the legal moves
    are the brute-force reference's at every position of random games that meet superko moves,
    and the games run past the default 162-move limit; networks of the plain game fit."""
    game = Go(move_limit=0, superko="illegal")
    assert game.spec.name == "go(move_limit=0,superko=illegal)" and game.network_family == "go"
    assert load_game("go(board_size=9,komi=7.5,move_limit=0,superko=illegal)").spec == game.spec
    banned, lengths = 0, []
    for seed in (103, 32):                    # random games with a superko move (found by search)
        rng, pub = np.random.default_rng(seed), ()
        while game.kind(pub) == DECISION:
            legal = game.legal_mask(pub)[0]
            assert np.array_equal(legal, _superko_reference(game, pub)), pub
            assert [c.pub[-1] for c in game.children(pub)] == np.flatnonzero(legal).tolist()
            banned += int((game.state(pub).legal_actions_mask()[:PASS + 1] > legal).sum())
            stones = np.flatnonzero(legal[:PASS])
            pub += (int(rng.choice(stones)) if len(stones) and rng.random() < 0.97 else PASS,)
        assert pub[-2:] == (PASS, PASS)
        lengths.append(len(pub))
    assert banned >= 2 and max(lengths) > 162
    assert Go(move_limit=170).kind(pub[:170]) == TERMINAL and Go().kind(pub[:162]) == TERMINAL
    for bad in ({"move_limit": -1}, {"superko": "loss"}):
        with pytest.raises(ValueError):
            Go(**bad)


def test_state_table_is_bounded_and_stays_right(monkeypatch):
    """Self-play meets ever new positions: the OpenSpiel states and the per-state values the
    game keeps are bounded, and a state rebuilt after the table was emptied is the same."""
    from sog.games import spiel_board
    monkeypatch.setattr(spiel_board, "STATE_MEMO", 40)
    game = Go(board_size=9)
    rng = np.random.default_rng(0)
    for _ in range(6):
        pub = ()
        while game.kind(pub) != TERMINAL and len(pub) < 30:
            pub = pub + (int(rng.choice(np.flatnonzero(game.legal_mask(pub)[0]))),)
            game.features(pub)
            fresh = game.spiel_game.new_initial_state()
            for a in pub:
                fresh.apply_action(a)
            assert str(game.state(pub)) == str(fresh)
    kept = sum(len(v) if isinstance(v, dict) else 1
               for k, v in game._memo.items() if k[0] != "actor_map")
    assert kept <= 2 * 40 + 3
