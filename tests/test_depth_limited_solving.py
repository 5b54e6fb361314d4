"""Depth-limited solving with multi-valued states (Brown, Sandholm and Amos 2018):
exact leaf values, the opponent's leaf choice, the bias and self-generative
continuation sets, the Figure 1 effect on Leduc (exploitability falls as k grows),
the nested-solving agent, and the MCCFR-vs-OpenSpiel benchmark command."""
from __future__ import annotations

import argparse
import itertools

import numpy as np
import pytest

from sog.agents import depth_limited as D
from sog.agents.api import AgentError
from sog.agents.registry import make_agent
from sog.eval import depth_limited_k as K
from sog.eval.match import play_match
from sog.games.api import CHANCE
from sog.search import multivalued as M
from sog.search.full_tree import (
    best_response_values,
    exploitability,
    full_tree,
    policy_value,
)


@pytest.fixture(scope="module")
def weak_blueprint(leduc):
    """30 iterations of public-tree CFR+: ~82 mbb/h, deliberately not an equilibrium."""
    return D.make_blueprint(leduc, "cfr", iterations=30)


def root_solve(game, cont, iterations=300):
    return M.solve_depth_limited(game, game.root(), game.initial_ranges(), cont, iterations)


# ---- the building blocks ---------------------------------------------------------------
def test_trunk_is_round_one_and_leaves_deal_the_board(leduc, weak_blueprint):
    sol = root_solve(leduc, M.bias_continuations(leduc, weak_blueprint, 0, 1), iterations=1)
    assert len(sol.leaf_pubs) == 5     # cc, bc, cbc, brc, cbrc
    assert all(leduc.kind(pub) == CHANCE and pub[1] == -1 for pub in sol.leaf_pubs)
    assert all(pub[1] == -1 for pub in sol.table())


@pytest.mark.parametrize("searcher", [0, 1])
def test_leaf_values_are_exact(leduc, weak_blueprint, searcher):
    """With one continuation the subgame's value of any trunk policy equals the full-game
    value of that policy composed with both blueprints below the leaves."""
    sol = root_solve(leduc, M.bias_continuations(leduc, weak_blueprint, searcher, 1))
    composed = M.compose(leduc, weak_blueprint, {0: sol, 1: sol})
    assert sol.root_values()[0] == pytest.approx(policy_value(leduc, composed), abs=1e-12)
    assert sol.root_values().sum() == pytest.approx(0.0, abs=1e-12)


def test_k1_solution_is_the_equilibrium_with_both_blueprints_frozen(leduc, weak_blueprint):
    """Independent check of the trunk solve: full-tree CFR with both players' rows below the
    depth limit frozen to the blueprint reaches the same game value."""
    sol = root_solve(leduc, M.bias_continuations(leduc, weak_blueprint, 0, 1), iterations=1000)
    ft = full_tree(leduc)
    below = np.array([pub[1] != -1 for pub in ft.decision_pubs])
    frozen = K._FrozenSolver(ft.ct, below, weak_blueprint, M.DEFAULT_CONFIG)
    frozen.iterate(1000)
    reference = policy_value(leduc, np.where(below[:, None, None], weak_blueprint, frozen.average_policy()))
    assert sol.root_values()[0] == pytest.approx(reference, abs=2e-4)
    assert sol.root_values(best_response=True).sum() / 2 < 1e-3      # solved within the subgame


def test_leaf_choice_is_an_opponent_decision(leduc, weak_blueprint):
    """A duplicated continuation changes nothing; more continuations can only help the
    opponent (the searcher's subgame value does not rise); the choice is a distribution
    per (leaf, opponent slot)."""
    cont = M.self_generative(leduc, weak_blueprint, 0, 4, iterations=300)
    values = [root_solve(leduc, cont.truncated(k), 1000).root_values()[0] for k in (1, 2, 3, 4)]
    assert all(b <= a + 2e-4 for a, b in itertools.pairwise(values)), values
    dup = M.Continuations(leduc, weak_blueprint, 0, [weak_blueprint, weak_blueprint])
    assert root_solve(leduc, dup, 1000).root_values()[0] == pytest.approx(values[0], abs=2e-4)
    sol = root_solve(leduc, cont)
    assert sol.leaf_choice.shape == (5, 6, 4)
    np.testing.assert_allclose(sol.leaf_choice.sum(-1), 1.0)


def test_best_response_policy_attains_the_best_response_value(leduc, weak_blueprint):
    ft = full_tree(leduc)
    for player in (0, 1):
        br = M.best_response_policy(leduc, weak_blueprint, player)
        mine = (ft.levels.dec_actor == player)[:, None, None]
        rows = ft.levels.dec_actor == player
        possible = ft.levels.legal_dec[rows].any(-1)      # impossible slots (the board card) are empty
        assert np.all(np.isclose(br[rows].max(-1)[possible], 1.0))
        value = policy_value(leduc, np.where(mine, br, weak_blueprint))
        expected = best_response_values(leduc, weak_blueprint)[player]
        assert (value if player == 0 else -value) == pytest.approx(expected, abs=1e-12)


def test_bias_continuations(leduc, weak_blueprint):
    cont = M.bias_continuations(leduc, weak_blueprint, 0, 7, factor=5.0)
    assert cont.k == 7 and cont.opponent == 1
    assert cont.labels[:4] == ["blueprint", "fold-biased x5", "call-biased x5", "raise-biased x5"]
    assert cont.labels[4] == "fold-biased x25"
    legal = full_tree(leduc).levels.legal_dec
    bp = weak_blueprint
    for action, strat in zip((0, 1, 2), cont.strategies[1:4]):
        np.testing.assert_allclose(strat.sum(-1)[legal.any(-1)], 1.0)
        assert np.all(strat[~legal] == 0)
        inside = legal[..., action] & (bp[..., action] > 1e-6) & (bp[..., action] < 1 - 1e-6)
        assert inside.any()
        assert np.all(strat[..., action][inside] > bp[..., action][inside])
    with pytest.raises(ValueError):
        M.bias_continuations(leduc, bp, 0, 0)


# ---- the paper's Figure 1 effect ---------------------------------------------------------
def test_exploitability_falls_as_k_grows(leduc, weak_blueprint):
    """Leduc, depth limit at the end of round 1, composed policy = each seat's depth-limited
    solution in round 1 and its blueprint below. Measured (300 CFR+ iterations per solve):
    bias 271 / 117 / 139 / 135 mbb/h, self-generative 271 / 221 / 89 / 79 for k = 1..4."""
    bias = [r["exploitability_mbb"] for r in
            K.exploitability_by_k(leduc, weak_blueprint, "bias", [1, 2, 3, 4], iterations=300)]
    gen = [r["exploitability_mbb"] for r in
           K.exploitability_by_k(leduc, weak_blueprint, "self_generative", [1, 2, 3, 4], iterations=300)]
    assert bias[0] == pytest.approx(gen[0])          # k = 1: the blueprint alone in both
    assert bias[0] > 200                             # the blueprint's values alone are exploitable
    assert max(bias[1:]) < 0.6 * bias[0]
    assert all(b < a for a, b in itertools.pairwise(gen)), gen
    assert gen[-1] < 0.35 * gen[0]


# ---- the nested-solving agent ------------------------------------------------------------
def test_agent_from_the_registry_plays_legal_games(leduc):
    spec = "depth_limited?blueprint=cfr&blueprint_iterations=30&k=2&iterations=100"
    agent = make_agent(spec, leduc)
    assert isinstance(agent, D.DepthLimitedAgent)
    assert (agent.k, agent.approach, agent.safety) == (2, "bias", "gadget")
    result = play_match(leduc, agent, make_agent("random", leduc), games=20, seed=3)
    assert result["n"] == 20
    agent.reset(0, 0)
    probs = agent.strategy([leduc.root()], 4)
    assert probs.sum() == pytest.approx(1.0) and probs[0] == 0      # no fold without a bet


@pytest.mark.parametrize("spec, message", [
    ("depth_limited?k=0", "k must be at least"),
    ("depth_limited?approach=greedy", "approach"),
    ("depth_limited?blueprint=magic", "blueprint"),
    ("depth_limited?safety=maybe", "safety"),
    ("depth_limited?gadget_alpha=2", "gadget_alpha"),
    ("depth_limited?depth=3", "unknown option"),
    ("depth_limited:/nonexistent/policy.json", "depth_limited"),
])
def test_agent_spec_errors(leduc, spec, message):
    with pytest.raises(AgentError, match=message):
        make_agent(spec, leduc)


def test_kuhn_agent_solves_the_whole_game(kuhn):
    """Kuhn has no public chance node: the subgame from the root is the whole game."""
    agent = D.DepthLimitedAgent(kuhn, blueprint="cfr", blueprint_iterations=50, iterations=300)
    assert 1000 * exploitability(kuhn, D.nested_policy(agent)) < 2.0


def test_safe_nested_solving_beats_unsafe(leduc, weak_blueprint):
    """Unsafe nested solving (the paper's) trusts Bayes-updated beliefs; in Leduc that is
    very exploitable (~1400 mbb/h here). The gadget keeps the agent near its blueprint."""
    expl = {}
    for safety in ("gadget", "unsafe"):
        agent = D.DepthLimitedAgent(leduc, k=2, blueprint_policy=weak_blueprint, iterations=200,
                                    safety=safety)
        expl[safety] = 1000 * exploitability(leduc, D.nested_policy(agent))
    blueprint = 1000 * exploitability(leduc, weak_blueprint)
    assert expl["gadget"] < 1.5 * blueprint
    assert expl["unsafe"] > 3 * expl["gadget"]


def test_agent_acts_from_its_nested_solves(leduc, weak_blueprint):
    """The agent's strategy at a round-2 decision is its round-2 solve's, whose root ranges
    come from its round-1 solve (card removal of the board applied)."""
    agent = D.DepthLimitedAgent(leduc, k=2, blueprint_policy=weak_blueprint, iterations=100)
    agent.reset(1, 0)
    root = leduc.root()
    history = [root, ((1,), -1, ()), ((1, 1), -1, ()), ((1, 1), 0, ()), ((1, 1), 0, (1,))]
    sol = agent.solution(history)
    assert sol.ct.pub(sol.ct.roots[0]) == ((1, 1), 0, ())
    assert sol.root_ranges[0, 1, 0] == 0           # the board card is nobody's
    first = agent.solution(history[:2])
    assert first.ct.pub(first.ct.roots[0]) == root
    np.testing.assert_allclose(agent.strategy(history, 3), agent.policy_rows(history)[3])


# ---- slow: the full tables -----------------------------------------------------------------
@pytest.mark.slow
def test_figure1_effect_with_mccfr_and_exact_blueprints(leduc):
    """MCCFR blueprint (external sampling, 20,000 iterations, ~186 mbb/h) and a near-exact
    one (CFR+, 1000 iterations, ~0.25 mbb/h): self-generative continuations drive the
    composed exploitability down to the all-strategies limit; biased ones cut it from k = 1."""
    for kind, iterations in (("external", 20000), ("cfr", 1000)):
        bp = D.make_blueprint(leduc, kind, iterations=iterations)
        limit = 1000 * exploitability(leduc, K.frozen_limit(leduc, bp, 2000))
        gen = [r["exploitability_mbb"] for r in
               K.exploitability_by_k(leduc, bp, "self_generative", range(1, 9), iterations=1000)]
        bias = [r["exploitability_mbb"] for r in
                K.exploitability_by_k(leduc, bp, "bias", range(1, 5), iterations=1000)]
        assert gen[0] > 300
        assert all(b < a + 0.5 for a, b in itertools.pairwise(gen)), gen
        assert gen[-1] < limit + 0.05 * gen[0], (gen, limit)
        assert bias[3] < 0.8 * bias[0], bias


@pytest.mark.slow
def test_nested_agent_with_an_mccfr_blueprint(leduc):
    agent = make_agent("depth_limited?k=4&approach=self_generative&blueprint_iterations=20000", leduc)
    blueprint = 1000 * exploitability(leduc, agent.blueprint)
    nested = 1000 * exploitability(leduc, D.nested_policy(agent))
    assert nested < blueprint


# ---- the MCCFR benchmark command --------------------------------------------------------
def _bench_args(*argv):
    from launch import bench_mccfr
    parser = argparse.ArgumentParser()
    bench_mccfr.add_parser(parser.add_subparsers(dest="command"))
    return parser.parse_args(["bench-mccfr", *argv])


def test_bench_mccfr_on_kuhn():
    args = _bench_args("--game", "kuhn_poker", "--seconds", "0.4", "--checkpoints", "2",
                       "--variants", "outcome,external,pluribus")
    result = args.func(args)
    assert [r["variant"] for r in result["rows"]] == ["outcome", "external", "pluribus"]
    for row in result["rows"][:2]:
        for side in ("sog", "openspiel"):
            assert row[side]["iterations"] > 0 and len(row[side]["curve"]) == 2
            assert row[side]["seconds"] == pytest.approx(0.4, abs=0.2)
            assert 0 <= row[side]["exploitability_mbb"] < 1000
        assert row["exploitability_ratio"] > 0 and row["iterations_ratio"] > 0
    assert result["rows"][2]["openspiel"] is None


@pytest.mark.parametrize("argv, message", [
    (("--seconds", "0"), "--seconds"),
    (("--seconds", "1", "--variants", "cfr"), "unknown MCCFR variant"),
    (("--seconds", "1", "--game", "chess960"), "unknown game"),
    (("--seconds", "1", "--game", "chess"), "at least"),
    (("--seconds", "1", "--checkpoints", "0"), "--checkpoints"),
])
def test_bench_mccfr_user_errors(argv, message):
    """Each is one line and exit 2 in the CLI (UserError; TreeTooLarge for a game too large
    for the exact exploitability the benchmark reports)."""
    from launch.cli import UserError
    from sog.search.tree import TreeTooLarge
    args = _bench_args(*argv)
    with pytest.raises((UserError, TreeTooLarge), match=message):
        args.func(args)
