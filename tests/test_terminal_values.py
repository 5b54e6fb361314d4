"""Terminal values without payoff matrices (`Game.terminal_values`, the poker protocol's
O(N log N) form): equal to the dense matrices' on random, sparse, one-hot and empty ranges,
ties included, and the solvers give the same results through either path."""
import json

import numpy as np
import pytest

from sog.games import load_game
from sog.games.api import TERMINAL, Game
from sog.games.traverse import public_states
from sog.search.cfr import CFRConfig, CFRSolver
from sog.search.full_tree import exploitability, full_tree
from sog.search.oracle import ExactValueFunction
from sog.search.tree import PublicTree, compile_tree

POKER = ["kuhn_poker", "leduc_poker"]


def terminals(game):
    return [p for p in public_states(game) if game.cached("kind", p) == TERMINAL]


def range_cases(rng, t, n):
    yield rng.random((t, 2, n))
    yield (rng.random((t, 2, n)) > 0.7).astype(float)      # sparse, some all zero
    one_hot = np.zeros((t, 2, n))
    one_hot[:, :, rng.integers(n)] = 1.0
    yield one_hot
    empty = rng.random((t, 2, n))
    empty[:, 0] = 0.0
    yield empty


@pytest.mark.parametrize("name", POKER)
def test_fast_terminal_values_equal_the_dense_ones(name):
    game = load_game(name)
    pubs = terminals(game)
    rng = np.random.default_rng(0)
    for ranges in range_cases(rng, len(pubs), game.spec.num_states):
        fast = game.terminal_values(pubs, ranges)
        dense = Game.terminal_values(game, pubs, ranges)
        np.testing.assert_allclose(fast, dense, rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", POKER)
def test_solvers_agree_through_either_path(name):
    results = []
    for dense in (True, False):
        game = load_game(name)
        game.dense_payoffs = dense
        ft = full_tree(game)
        assert (ft.ct.payoffs is None) == (not dense)
        solver = CFRSolver(ft.ct, config=CFRConfig("cfr", alternating=True))
        solver.iterate(50)
        oracle = ExactValueFunction(game, iterations=5)
        kids = [c.pub for c in game.cached("children", game.root())]
        ranges = np.tile(game.initial_ranges(), (len(kids), 1, 1))
        values, _ = oracle.evaluate(kids, ranges)
        results.append((exploitability(game, solver.average_policy()), values))
    assert results[0][0] == pytest.approx(results[1][0], abs=1e-12)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=0, atol=1e-12)


HOLDEM_TWO_CARDS = ("holdem(betting=limit,numRanks=5,numSuits=3,numHoleCards=2,numRounds=2,numBoardCards=0 3,"
                    "raiseSize=2 2,maxRaises=1 1)")


def test_holdem_two_card_hands_with_blockers_and_ties():
    """105 two-card hands on 3-card boards: per-card blocker sums and ties at every showdown."""
    game = load_game(HOLDEM_TWO_CARDS)
    pubs = terminals(game)[:600]
    rng = np.random.default_rng(1)
    for ranges in range_cases(rng, len(pubs), game.spec.num_states):
        np.testing.assert_allclose(game.terminal_values(pubs, ranges),
                                   Game.terminal_values(game, pubs, ranges), rtol=0, atol=1e-12)


def test_big_decks_never_build_payoff_matrices():
    game = load_game("holdem(betting=limit,numRanks=13,numSuits=4,numHoleCards=2,numRounds=4,"
                     "numBoardCards=0 3 1 1,blind=10 5,raiseSize=10 10 20 20,firstPlayer=2 1 1 1,"
                     "maxRaises=3 4 4 4)")
    assert game.spec.num_states == 1326 and not game.dense_payoffs
    pub = (1, 1, (0, 13, 26), 1, 1, (39,), 1, 1, (5,))      # a river: calls and checks, then the deal
    ct = compile_tree(PublicTree(game, [pub]).expand_all())
    assert ct.payoffs is None and len(ct.terminals) > 0
    ranges = np.where(game.possible_mask(pub), 1.0 / 1326, 0.0)
    solver = CFRSolver(ct, root_ranges=ranges[None], config=CFRConfig("cfr+", alternating=True))
    solver.iterate(20)
    assert np.isfinite(solver.average_policy()).all()


def test_bench_holdem_river(capsys):
    from launch.cli import main
    assert main(["bench", "holdem", "--iterations", "20", "--check-every", "10", "--threads", "2",
                 "--compare-threads"]) == 0
    out = json.loads(capsys.readouterr().out)
    fast = out["fast"]
    assert fast["nodes"] == 27 and fast["iterations"] == 20 and not fast["dense_payoffs"]
    assert 0 < fast["exploitability_pot_pct"] < 100 and fast["peak_rss_mb"] > 0 and fast["warmup_seconds"] > 0
    assert out["threads"] == 2 and out["one_thread_over_threads_seconds"] > 0
    assert out["one_thread"]["exploitability_mbb"] == fast["exploitability_mbb"]   # the same bits


@pytest.mark.slow
def test_bench_holdem_river_fast_and_dense_agree(capsys):
    """The dense path builds 17 payoff matrices of 1326 x 1326 (about 15 s)."""
    from launch.cli import main
    assert main(["bench", "holdem", "--iterations", "20", "--check-every", "10", "--dense"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["dense"]["dense_payoffs"]
    assert out["fast"]["exploitability_mbb"] == pytest.approx(out["dense"]["exploitability_mbb"], abs=1e-6)


def test_bench_holdem_refuses_a_bad_board(capsys):
    from launch.cli import main
    assert main(["bench", "holdem", "--board", "As As 7d 2c 9s"]) == 2
    assert "five distinct cards" in capsys.readouterr().err


def test_terminal_plans_are_found_again_by_identity(monkeypatch):
    """A solver passes the same tuples of terminals every pass: their plans are found again without
    the memo's hashing; another tuple (or a list) goes through the memo, and gets its own plan;
    past TERMINALS_BY_IDENTITY terminals in all, the tuples kept are dropped."""
    from sog.games import poker
    game = load_game("leduc_poker")
    pubs = tuple(terminals(game))
    looked_up = []
    memo = poker._bounded_memo
    monkeypatch.setattr(poker, "_bounded_memo",
                        lambda *a: (a[1] == "poker_terminal_plans" and looked_up.append(a[2])) or memo(*a))
    ranges = np.random.default_rng(2).random((len(pubs), 2, game.spec.num_states))
    first = game.terminal_values(pubs, ranges)
    for _ in range(3):
        np.testing.assert_array_equal(game.terminal_values(pubs, ranges), first)
    assert len(looked_up) == 1
    np.testing.assert_array_equal(game.terminal_values(list(pubs), ranges), first)
    np.testing.assert_array_equal(game.terminal_values(list(pubs), ranges), first)
    assert len(looked_up) == 3
    part = pubs[5:]
    np.testing.assert_array_equal(game.terminal_values(part, ranges[5:]), first[5:])
    assert len(looked_up) == 4 and game._terminal_plan(part) is not game._terminal_plan(pubs)
    for _ in range(2):                   # (a solver's blocks: several tuples, each found by identity)
        game.terminal_values(pubs, ranges)
        game.terminal_values(part, ranges[5:])
    assert len(looked_up) == 4
    monkeypatch.setattr(poker, "TERMINALS_BY_IDENTITY", len(pubs) + 1)   # room for one: then afresh
    game.terminal_values(pubs[1:], ranges[1:])
    game.terminal_values(pubs, ranges)
    assert len(looked_up) == 6
