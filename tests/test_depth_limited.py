"""Depth-limited CFR with the exact oracle at the frontier (CFR-D style averaging)."""
import pytest

from sog.games import load_game
from sog.games.api import CHANCE
from sog.policy import TabularPolicy
from sog.search.cfr import CFRConfig, CFRSolver, evaluate_policy
from sog.search.depth_limited_cfr import DepthLimitedCFR
from sog.search.full_tree import exploitability, full_tree
from sog.search.oracle import ExactValueFunction


def test_oracle_values_at_the_root_are_the_game_value():
    game = load_game("leduc_poker")
    init = game.initial_ranges()
    values = ExactValueFunction(game, iterations=1000).solve([game.root()], init[None])[0]
    assert init[0] @ values[0, 0] == pytest.approx(-0.0856, abs=2e-3)
    assert init[1] @ values[0, 1] == pytest.approx(0.0856, abs=2e-3)


def test_kuhn_depth_limited_converges():
    game = load_game("kuhn_poker")
    curve = []
    dl = DepthLimitedCFR.to_depth(game, lambda pub: len(pub) >= 1, ExactValueFunction(game, iterations=200))
    for target in (25, 200):
        dl.iterate(target - dl.solver.iterations)
        curve.append(exploitability(game, dl.policy()))
    assert curve[1] < 0.7 * curve[0]
    assert curve[1] < 0.004


@pytest.mark.slow
def test_leduc_depth_limited_is_safe_where_naive_composition_is_not():
    """Trunk = round 1; the CFR-D composition is as exploitable as full-tree CFR+ after the
    same number of iterations, and far less than re-solving the frontier subgames at the
    trunk's final ranges without a gadget."""
    game = load_game("leduc_poker")
    oracle = ExactValueFunction(game, iterations=100)
    dl = DepthLimitedCFR.to_depth(game, lambda pub: game.kind(pub) == CHANCE, oracle, CFRConfig("cfr+"))
    dl.iterate(150)
    composed = exploitability(game, dl.policy())
    s, trunk = dl.solver, dl.trunk
    ranges, _ = evaluate_policy(s.levels, s.average_policy(), s.root_ranges,
                                  value_fn=lambda pubs, r: oracle.solve(pubs, r)[0])
    _, sub = ExactValueFunction(game, iterations=1000).solve([trunk.pub(p) for p in trunk.frontier],
                                                            ranges[trunk.frontier])
    naive = {trunk.pub(p): s.average_policy()[i] for i, p in enumerate(s.levels.dec)}
    naive.update({sub.ct.pub(p): sub.average_policy()[i] for i, p in enumerate(sub.levels.dec)})
    assert composed < exploitability(game, TabularPolicy(game, naive))
    # the same exploitability as full-tree CFR+ (simultaneous updates) after as many iterations
    full = CFRSolver(full_tree(game).ct, config=CFRConfig("cfr+"))
    full.iterate(150)
    reference = exploitability(game, full.average_policy())
    assert composed < 1.3 * reference < 0.04
