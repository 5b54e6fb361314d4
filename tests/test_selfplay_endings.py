"""How self-play games end (Table S2's perfect-information settings): resignation below the
threshold except in the no-resignation games, greedy play after N moves, the move limit. On
tic-tac-toe with exact minimax values, so a resignation is checked against the true value."""
import itertools

import numpy as np
import pytest
from minimax_values import MinimaxValues

from actors.lockstep import run_lockstep
from actors.resign_calibration import calibrated_threshold
from actors.selfplay import SelfPlay
from sog.config import ConfigError, load_config
from sog.games import load_game
from sog.games.api import DECISION

GAMES = 12


@pytest.fixture(scope="module")
def ttt():
    game = load_game("tic_tac_toe")
    return game, MinimaxValues(game)


def play(ttt, *overrides):
    """GAMES self-play games of tic-tac-toe, SoG(10, 1) with exact leaf values: their dicts."""
    game, values = ttt
    cfg = load_config("tiny_kuhn", ["game=tic_tac_toe", "search.simulations=10", "solver.solvers=0",
                                    "selfplay.p_td1=1.0", *overrides])
    selfplay = SelfPlay(game, cfg, values, seed=0)
    games, _ = run_lockstep([selfplay._game(s) for s in range(GAMES)], values)
    return games


def test_a_losing_seat_resigns_and_loses(ttt):
    game, values = ttt
    games = play(ttt, "selfplay.epsilon=1.0", "selfplay.resign=true", "selfplay.p_no_resign=0.0")
    resigned = [g for g in games if g["end"] == "resigned"]
    assert resigned, "random play should reach lost positions"
    for g in resigned:
        p, pub = g["resigner"], g["pubs"][-1]            # the resigning search's position
        assert game.actor(pub) == p and game.kind(pub) == DECISION and g["resigned"] == 1
        assert values.values[pub] * (1 if p == 0 else -1) == -1.0     # truly lost for p
        assert g["outcome"] == (-1.0 if p == 0 else 1.0)               # p loses
        # the TD(1) targets carry the resignation's outcome
        assert g["values"][-1][p, 0] == pytest.approx(-g["ranges"][-1][1 - p].sum())
    for g in games:
        if g["end"] == "rules":
            assert g["resigner"] == -1 and g["resigned"] == 0
        assert (g["p0_wins"], g["p1_wins"]) == (int(g["outcome"] > 0), int(g["outcome"] < 0))


def test_no_resignation_games_play_on_and_count_wrong_resignations(ttt):
    games = play(ttt, "selfplay.epsilon=1.0", "selfplay.resign=true", "selfplay.p_no_resign=1.0")
    assert all(g["end"] == "rules" and g["no_resign_games"] == 1 for g in games)
    assert sum(g["would_resign"] for g in games) > 0
    for g in games:
        assert 0 <= g["false_resigns"] <= g["would_resign"] <= 2


def test_max_moves_ends_a_game_as_a_draw(ttt):
    games = play(ttt, "selfplay.max_moves=3")
    for g in games:
        assert (g["end"], g["outcome"], g["moves"], g["searches"], g["truncated"]) == ("max_moves", 0.0, 3, 3, 1)
        assert all(np.all(v == 0) for v in g["values"])                # TD(1) targets of a draw


def test_greedy_after_n_moves_plays_the_argmax(ttt):
    """With eps = 1 the mixed policy is uniform, so the argmax is the first legal move: after
    2 moves every game continues with the lowest free cell."""
    games = play(ttt, "selfplay.epsilon=1.0", "selfplay.greedy_after=2")
    openings = set()
    for g in games:
        pubs = g["pubs"]
        openings.add(pubs[2][:2])
        for before, after in itertools.pairwise(pubs[2:]):
            free = [a for a in range(9) if a not in before]
            assert after[-1] == free[0]
    assert len(openings) > 1                                          # the first 2 moves are drawn


def test_calibrated_threshold_keeps_false_resignations_within_the_rate():
    lowest = np.array([-0.99, -0.98, -0.95, -0.93, -0.5])
    lost = np.array([True, True, False, True, True])
    # the two lowest seats lost; a third resigner (-0.95) would make 1 in 3 wrong; -0.5 is above
    # the ceiling and never counts
    assert calibrated_threshold(lowest, lost, 0.05, -0.9) == -0.95
    assert calibrated_threshold(lowest, lost, 0.34, -0.9) == -0.9        # 1 in 4 wrong is within 34%
    assert calibrated_threshold(lowest, np.ones(5, bool), 0.05, -0.9) == -0.9
    # a tie cannot be split: resigning at -0.99 resigns both, one of them wrongly
    assert calibrated_threshold(np.array([-0.99, -0.99]), np.array([True, False]), 0.05, -0.9) == -0.99
    assert calibrated_threshold(np.array([-0.5]), np.array([False]), 0.05, -0.9) == -0.9


def test_workers_recalibrate_the_threshold_after_each_round(ttt):
    """Random play against exact values: seats valued -1 often survive the random opponent's
    blunders, so the calibrated threshold falls below the configured -0.9 to what the worker's
    records allow, and the round's stats report it."""
    game, values = ttt
    cfg = load_config("tiny_kuhn", ["game=tic_tac_toe", "search.simulations=10", "solver.solvers=0",
                                    "selfplay.p_td1=1.0", "selfplay.epsilon=1.0", "selfplay.resign=true", "selfplay.p_no_resign=1.0",
                                    f"selfplay.games_per_worker={GAMES}", "selfplay.resign_false_rate=0.05"])
    selfplay = SelfPlay(game, cfg, values, seed=0)
    thresholds = []
    for _ in range(3):
        produced = selfplay.play()
        thresholds.append(produced.stats["resign_threshold"])
    lowest, lost = (np.array(x) for x in zip(*selfplay.resign.records))
    assert len(lowest) == 3 * GAMES * 2
    assert thresholds[-1] == calibrated_threshold(lowest, lost.astype(bool), 0.05, -0.9)
    assert thresholds[-1] < -0.9
    wrong = (lowest < thresholds[-1]) & ~lost.astype(bool)
    assert wrong.sum() <= 0.05 * (lowest < thresholds[-1]).sum()


@pytest.mark.parametrize("overrides,words", [
    (["selfplay.resign=true"], ["selfplay.resign", "perfect-information"]),
    (["game=tic_tac_toe", "selfplay.resign_false_rate=1"], ["selfplay.resign_false_rate", "[0, 1)"]),
    (["game=tic_tac_toe", "selfplay.resign_false_rate=0.05", "selfplay.p_no_resign=0"],
     ["selfplay.resign_false_rate", "p_no_resign"]),
    (["game=tic_tac_toe", "selfplay.resign_threshold=0.5"], ["selfplay.resign_threshold", "[-1, 0)"]),
    (["game=tic_tac_toe", "selfplay.p_no_resign=2"], ["selfplay.p_no_resign", "[0, 1]"]),
    (["game=tic_tac_toe", "selfplay.max_moves=-1"], ["selfplay.max_moves", ">= 0"]),
])
def test_bad_ending_settings_name_the_key(overrides, words):
    with pytest.raises(ConfigError) as info:
        load_config("tiny_kuhn", overrides)
    assert all(w in str(info.value) for w in words), str(info.value)


def test_bad_ending_setting_is_one_line_and_exit_status_2(capsys):
    from launch.cli import main as cli_main
    rc = cli_main(["train", "--config", "tiny_kuhn", "--sync", "--set", "selfplay.resign=true"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "selfplay.resign" in err
