"""CFR engine and exact best response, checked against OpenSpiel and known values."""
import functools

import numpy as np
import pyspiel
import pytest

from sog.games import load_game
from sog.games.api import CHANCE
from sog.search.cfr import (
    CFRConfig,
    CFRSolver,
    evaluate_policy,
    leaf_values,
    propagate_values,
    regret_matching,
    regret_matching_entries,
)
from sog.search.full_tree import best_response_values, exploitability, full_tree, policy_value, tabular_from_array
from sog.search.tree import FullSubtrees, PublicTree, compile_tree

# OpenSpiel's default Liar's Dice (six sides) takes it ~10 s a policy (its Python policy table
# and best response): the default run checks the four-sided game, the slow tier both
OPENSPIEL_GAMES = ["kuhn_poker", "leduc_poker", "liars_dice(numdice=1,dice_sides=4)",
                   pytest.param("liars_dice(numdice=1,dice_sides=6)", marks=pytest.mark.slow)]


@functools.cache
def game_and_tree(name):
    """(game, its full tree), built once per game for the tests that only read them."""
    game = load_game(name)
    return game, full_tree(game)


def random_policy(game, seed):
    ft = full_tree(game)
    rng = np.random.default_rng(seed)
    sigma = rng.random(ft.levels.legal_dec.shape) ** 3 * ft.levels.legal_dec
    return sigma / np.maximum(sigma.sum(-1, keepdims=True), 1e-300)


def openspiel_exploitability(game, sigma):
    from open_spiel.python import policy as os_policy

    from sog.policy.files import to_openspiel
    tabular = to_openspiel(tabular_from_array(game, sigma))
    os_game = pyspiel.load_game(game.openspiel_name())
    return pyspiel.exploitability(os_game, os_policy.python_policy_to_pyspiel_policy(tabular))


@pytest.mark.parametrize("name", OPENSPIEL_GAMES)
@pytest.mark.parametrize("seed", [0, 1])
def test_exploitability_of_random_policies_equals_openspiel(name, seed):
    game = load_game(name)
    sigma = random_policy(game, seed)
    assert exploitability(game, sigma) == pytest.approx(openspiel_exploitability(game, sigma), abs=1e-9)


@pytest.mark.parametrize("name", OPENSPIEL_GAMES)
def test_policy_value_equals_openspiel_expected_returns(name):
    from open_spiel.python import policy as os_policy

    from sog.policy.files import to_openspiel
    game = load_game(name)
    sigma = random_policy(game, 3)
    tabular = to_openspiel(tabular_from_array(game, sigma))
    os_game = pyspiel.load_game(game.openspiel_name())
    expected = pyspiel.expected_returns(os_game.new_initial_state(),
                                        os_policy.python_policy_to_pyspiel_policy(tabular), -1, True)
    assert policy_value(game, sigma) == pytest.approx(expected[0], abs=1e-9)


def test_leduc_game_value():
    game = load_game("leduc_poker")
    solver = CFRSolver(full_tree(game).ct, config=CFRConfig(alternating=True))
    solver.iterate(500)
    avg = solver.average_policy()
    assert policy_value(game, avg) == pytest.approx(-0.0856, abs=1e-3)
    br = best_response_values(game, avg)
    assert br[0] >= -0.0856 - 1e-3 and br[1] >= 0.0856 - 1e-3


@pytest.mark.parametrize("name", ["kuhn_poker", "leduc_poker", "liars_dice", "scotland_yard"])
@pytest.mark.parametrize("algorithm,alternating", [("cfr+", False), ("cfr+", True), ("dcfr", False),
                                                   ("cfr", True)])
def test_exploitability_falls(name, algorithm, alternating):
    game, tree = game_and_tree(name)
    solver = CFRSolver(tree.ct, config=CFRConfig(algorithm, alternating=alternating))
    curve = []
    for target in (4, 32, 128):
        solver.iterate(target - solver.iterations)
        curve.append(exploitability(game, solver.average_policy()))
    assert min(curve) >= -1e-12
    if algorithm != "cfr":      # vanilla CFR's average need not improve at every checkpoint
        assert curve[0] > curve[1] > curve[2]
    assert curve[2] < 0.5 * curve[0]


def test_kuhn_converges_to_equilibrium():
    game = load_game("kuhn_poker")
    solver = CFRSolver(full_tree(game).ct, config=CFRConfig(alternating=True))
    solver.iterate(1000)
    assert exploitability(game, solver.average_policy()) < 2e-4
    assert policy_value(game, solver.average_policy()) == pytest.approx(-1 / 18, abs=1e-3)


def test_bad_config():
    with pytest.raises(ValueError, match="unknown CFR algorithm"):
        CFRConfig("cfr++")


def test_frontier_without_value_function_is_an_error():
    game = load_game("leduc_poker")
    trunk = compile_tree(PublicTree(game, [game.root()]).expand_all(stop=lambda p: game.kind(p) == CHANCE))
    with pytest.raises(ValueError, match="no value function"):
        CFRSolver(trunk).iterate(1)


@pytest.mark.parametrize("name", ["leduc_poker", "scotland_yard"])
def test_forests_indexed_from_full_subtrees_equal_freshly_compiled_ones(name):
    """`FullSubtrees` builds each subtree once and compiles forests by indexing: the same
    tree (nodes, edges, payoffs) as expanding and compiling the forest from scratch, with
    queried states inside earlier subtrees, new roots, ancestors and repeats."""
    game = load_game(name)
    subtrees = FullSubtrees(game)
    root = game.root()
    kids = [c.pub for c in game.cached("children", root)]
    grand = [c.pub for k in kids for c in game.cached("children", k)]
    for pubs in (grand[:3], kids, [root], grand[::-1], grand[:2] + grand[:2]):
        ct, nodes = subtrees.forest(pubs)
        ref = compile_tree(PublicTree(game, list(pubs)).expand_all())
        for field in ("num_nodes", "level_bounds", "kind", "actor", "parent", "legal", "possible", "roots",
                      "terminals", "payoffs", "frontier", "decision"):
            np.testing.assert_array_equal(getattr(ct, field), getattr(ref, field), err_msg=field)
        assert [ct.pub(i) for i in range(ct.num_nodes)] == [ref.pub(i) for i in range(ref.num_nodes)]
        assert [subtrees.tree.pubs[v] for v in nodes] == [ct.pub(i) for i in range(ct.num_nodes)]
        for d in range(1, ct.depth):   # the same edges, in any order within a depth
            key = lambda e: sorted(zip(e["src"], e["dst"], e["pol"], e["w"]))
            assert key(ct.edges[d]) == key(ref.edges[d])


@pytest.mark.parametrize("name", ["leduc_poker", "scotland_yard"])
def test_entry_form_matches_dense_form(name):
    """The solver's passes over legal entries give the dense forms' policies and values."""
    game, tree = game_and_tree(name)
    lv = tree.levels
    rng = np.random.default_rng(0)
    regrets = rng.normal(size=lv.legal_dec.shape) * lv.legal_dec
    regrets[:3] = -1.0                                          # no positive regret: uniform
    sigma = regret_matching(regrets, lv.legal_dec, lv.n_legal)
    np.testing.assert_allclose(lv.to_dense(regret_matching_entries(lv, lv.to_entries(regrets))), sigma)
    np.testing.assert_array_equal(lv.to_dense(lv.to_entries(sigma)), sigma)
    init = game.initial_ranges()[None]
    for best_response in (False, True):
        ranges, values = evaluate_policy(lv, sigma, init, best_response=best_response)
        # the actor's value at every decision node is sigma . q (or max over legal q) of its children
        _, q = propagate_values(lv, sigma, leaf_values(lv, ranges, None), best_response)
        own = values[lv.dec, lv.dec_actor]
        expect = np.where(lv.legal_dec, q, -np.inf).max(-1) if best_response else (sigma * q).sum(-1)
        possible = lv.legal_dec.any(-1)
        np.testing.assert_allclose(own[possible], expect[possible], atol=1e-12)
    assert lv.num_entries == lv.legal_dec.sum()
