"""The compiled n-player MCCFR (`sog.multiplayer.compiled`) on the betting skeleton of
`sog.multiplayer.dealt`: it draws the same samples and reaches the same tables as the world-state
solvers of `sog.multiplayer.mccfr`, bit for bit, for every setting; the skeleton's rows are the
world tree's information states; its NashConv is OpenSpiel's."""
from __future__ import annotations

import numpy as np
import pytest

from sog.multiplayer import KuhnPoker, LeducPoker
from sog.multiplayer.best_response import Evaluator
from sog.multiplayer.compiled import CompiledExternalSampling, CompiledOutcomeSampling
from sog.multiplayer.dealt import DealtGame
from sog.multiplayer.mccfr import (
    ExternalSamplingMCCFR,
    MCCFRConfigError,
    OutcomeSamplingMCCFR,
)
from sog.multiplayer.tree import WorldTree

SETTINGS = [{}, {"linear_until": 100, "discount_interval": 7}, {"averaging": "pluribus", "strategy_interval": 2},
            {"prune_after": 10, "prune_threshold": -1.0, "regret_floor": -2.0, "prune_prob": 0.3}, "outcome"]


@pytest.fixture(scope="module")
def skeletons():
    return {3: DealtGame(KuhnPoker(3)), "leduc": DealtGame(LeducPoker(3))}


@pytest.mark.parametrize("settings", SETTINGS, ids=str)
@pytest.mark.parametrize("which,iterations", [(3, 300), ("leduc", 25)])
def test_compiled_solvers_match_the_world_state_solvers_bit_for_bit(skeletons, which, iterations, settings):
    dealt = skeletons[which]
    game = dealt.game
    if settings == "outcome":
        ours, ref = CompiledOutcomeSampling(game, seed=4, dealt=dealt), OutcomeSamplingMCCFR(game, seed=4)
    else:
        ours, ref = CompiledExternalSampling(game, seed=4, dealt=dealt, **settings), ExternalSamplingMCCFR(
            game, seed=4, **settings)
    ours.run(iterations - 1)
    ours.iteration()
    ref.run(iterations)
    assert ours.iterations == ref.iterations == iterations
    for mine, theirs in ((ours.average_policy(), ref.average_policy()),
                         (ours.current_policy(), ref.current_policy())):
        assert set(theirs) <= set(mine)
        assert {k: mine[k] for k in theirs} == theirs
        assert all(len({q for _, q in mine[k]}) == 1 for k in set(mine) - set(theirs))   # unmet: uniform


def test_regrets_survive_the_tables_growing_during_a_traversal():
    """The world-state solver meets new information states below a decision; its regret
    update there lands in the grown table (player 0's first decisions get regrets at once)."""
    solver = ExternalSamplingMCCFR(LeducPoker(3), seed=4)
    solver.run(1)
    p0_first = [r for r, k in enumerate(solver.tree.row_key) if k.startswith("[Observer: 0]") and "Round1: ]" in k]
    assert p0_first and np.abs(solver.regret[p0_first]).sum() > 0


@pytest.mark.parametrize("game", [KuhnPoker(3), KuhnPoker(5), LeducPoker(2)], ids=repr)
def test_skeleton_rows_are_the_world_trees_information_states(game):
    rows, keys = DealtGame(game).keys()
    tree = WorldTree(game).expand_all()
    assert sorted(keys) == sorted(tree.row_key) and len(set(rows.tolist())) == len(rows)
    acts, counts = DealtGame(game).row_actions(rows)
    for r, key in enumerate(tree.row_key):
        i = keys.index(key)
        assert tuple(acts[i, :counts[i]]) == tree.row_actions[r]


def test_three_player_leduc_has_the_world_trees_25800_information_states(skeletons):
    _, keys = skeletons["leduc"].keys()
    assert len(keys) == len(set(keys)) == 25800


def test_compiled_nash_conv_is_openspiels():
    pyspiel = pytest.importorskip("pyspiel")
    game = KuhnPoker(4)
    solver = CompiledExternalSampling(game, seed=2)
    solver.run(3000)
    policy = solver.average_policy()
    ours = Evaluator(game).nash_conv(policy)
    assert ours == pytest.approx(pyspiel.nash_conv(pyspiel.load_game("kuhn_poker", {"players": 4}), policy),
                                 abs=1e-9)
    assert ours < Evaluator(game).nash_conv({}) / 3


def test_bad_settings_are_refused():
    with pytest.raises(MCCFRConfigError, match="prune_after"):
        CompiledExternalSampling(KuhnPoker(3), prune_after=-1)
    with pytest.raises(MCCFRConfigError, match="epsilon"):
        CompiledOutcomeSampling(KuhnPoker(3), epsilon=0.0)
