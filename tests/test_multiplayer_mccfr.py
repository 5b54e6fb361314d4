"""N-player external-sampling MCCFR (`sog.multiplayer.mccfr`) and the exact n-player NashConv
(`sog.multiplayer.best_response`): our NashConv agrees with OpenSpiel's `pyspiel.nash_conv` on
the same policy dict, NashConv falls with iterations, runs are seeded, pruning and linear
weighting do what Algorithm 1 of Pluribus says."""
from __future__ import annotations

import numpy as np
import pytest

from sog.multiplayer import KuhnPoker, LeducPoker
from sog.multiplayer.best_response import Evaluator
from sog.multiplayer.mccfr import ExternalSamplingMCCFR, MCCFRConfigError
from sog.multiplayer.policy import completed, policy_table

pyspiel = pytest.importorskip("pyspiel")


def _random_policy(tree, seed):
    rng = np.random.default_rng(seed)
    out = {}
    for r, key in enumerate(tree.row_key):
        w = rng.random(len(tree.row_actions[r]))
        out[key] = list(zip(tree.row_actions[r], w / w.sum()))
    return out


@pytest.mark.parametrize("game", [KuhnPoker(2), KuhnPoker(3), KuhnPoker(4), LeducPoker(2)], ids=repr)
def test_nash_conv_matches_openspiel_on_random_policies(game):
    ev = Evaluator(game)
    os_game = pyspiel.load_game(game.name, game.openspiel_params())
    for seed in range(2):
        policy = _random_policy(ev.tree, seed)
        assert ev.nash_conv(policy) == pytest.approx(pyspiel.nash_conv(os_game, policy), abs=1e-9)


@pytest.mark.parametrize("kwargs", [{}, {"linear_until": 10**6, "discount_interval": 50},
                                    {"averaging": "pluribus"}])
def test_mccfr_on_three_player_kuhn(kwargs):
    game = KuhnPoker(3)
    ev = Evaluator(game)
    os_game = pyspiel.load_game("kuhn_poker", {"players": 3})
    solver = ExternalSamplingMCCFR(game, seed=1, **kwargs)
    curve = []
    for n in (30, 300, 3000):
        solver.run(n - solver.iterations)
        policy = completed(ev.tree, solver.average_policy())
        curve.append(ev.nash_conv(policy))
        assert curve[-1] == pytest.approx(pyspiel.nash_conv(os_game, policy), abs=1e-9)
    assert curve[0] > curve[1] > curve[2] and curve[2] < 0.15, curve


def test_values_of_an_equilibrium_sum_to_zero_and_improvements_are_nonnegative():
    game = KuhnPoker(3)
    ev = Evaluator(game)
    solver = ExternalSamplingMCCFR(game, seed=0)
    solver.run(500)
    policy = completed(ev.tree, solver.average_policy())
    assert abs(ev.values(policy).sum()) < 1e-12
    assert np.all(ev.improvements(policy) >= -1e-12)


def test_runs_are_seeded():
    game = LeducPoker(3)
    a, b, c = (ExternalSamplingMCCFR(game, seed=s, linear_until=100, discount_interval=10) for s in (5, 5, 6))
    for s in (a, b, c):
        s.run(60)
    assert a.average_policy() == b.average_policy()
    assert a.tree.num_rows == b.tree.num_rows
    assert a.average_policy() != c.average_policy()


def test_tables_grow_with_the_information_sets_met():
    solver = ExternalSamplingMCCFR(LeducPoker(3), seed=0)
    solver.run(20)
    rows = solver.tree.num_rows
    assert 64 < rows < 25800 and len(solver.regret) >= rows and solver.regret.shape[1] == 3
    assert set(solver.average_policy()) == set(solver.tree.rows)


def test_pruning_skips_very_negative_actions_unless_they_end_the_game():
    game = KuhnPoker(3)
    ev = Evaluator(game)
    solver = ExternalSamplingMCCFR(game, seed=0, prune_after=200, prune_threshold=-1.0, regret_floor=-2.0,
                                   prune_prob=0.05)
    solver.run(2000)
    assert solver.skipped_actions > 0
    assert 0.9 * 1800 * 3 < solver.pruned_traversals < 1800 * 3
    assert solver.regret[:solver.tree.num_rows].min() >= -2.0
    assert ev.nash_conv(completed(ev.tree, solver.average_policy())) < 0.2


def test_linear_weighting_discounts_regrets_and_sums():
    game = KuhnPoker(3)
    plain = ExternalSamplingMCCFR(game, seed=3)
    linear = ExternalSamplingMCCFR(game, seed=3, linear_until=3, discount_interval=2)
    plain.run(2)
    linear.run(2)
    # no discount after t = 1 (odd), so both draw the same samples in t = 2 from the same regrets;
    # after t = 2 < linear_until, k = t / 2 = 1 and d = k / (k + 1) = 1 / 2
    rows = plain.tree.num_rows
    np.testing.assert_allclose(linear.regret[:rows], plain.regret[:rows] / 2)
    np.testing.assert_allclose(linear.avg[:rows], plain.avg[:rows] / 2)


def test_bad_settings_are_refused():
    with pytest.raises(MCCFRConfigError, match="averaging"):
        ExternalSamplingMCCFR(KuhnPoker(3), averaging="full")
    with pytest.raises(MCCFRConfigError, match="regret_floor"):
        ExternalSamplingMCCFR(KuhnPoker(3), prune_threshold=-5, regret_floor=-1)
    with pytest.raises(ValueError, match="outside"):
        tree = Evaluator(KuhnPoker(3)).tree
        policy_table(tree, {tree.row_key[0]: [(5, 1.0)]})


@pytest.mark.slow
def test_nash_conv_matches_openspiel_on_three_player_leduc():
    """Minutes: the full 3-player Leduc tree has 1.8M nodes; pyspiel.nash_conv takes ~3 minutes."""
    game = LeducPoker(3)
    solver = ExternalSamplingMCCFR(game, seed=0, linear_until=10**6, discount_interval=10)
    solver.run(200)
    ev = Evaluator(game)
    policy = completed(ev.tree, solver.average_policy())
    ours = ev.nash_conv(policy)
    assert ours == pytest.approx(pyspiel.nash_conv(pyspiel.load_game("leduc_poker", {"players": 3}), policy),
                                 abs=1e-9)
    assert ours < ev.nash_conv(completed(ev.tree, {}))   # better than uniform play
