"""AIVAT: exactly unbiased for any value function (checked by enumerating every Kuhn game),
zero variance with the exact values of known agents, and on sampled Leduc matches its 95%
intervals cover the exact expected value with a large variance reduction."""
import numpy as np
import pytest

from sog.agents.policy_agents import RandomAgent, TabularAgent
from sog.eval.aivat import (
    WorldValues,
    aivat_estimate,
    aivat_match,
    equilibrium_policy,
    equilibrium_values,
    network_policy,
    network_world_values,
    play_recorded,
    policy_world_values,
    preserved,
    strategy_table,
)
from sog.eval.match import play_game, policy_pair_value
from sog.games import world as W
from sog.games.api import CHANCE, DECISION
from sog.policy import TabularPolicy


def perturbed(game, policy, mix=0.5, seed=0):
    rng = np.random.default_rng(seed)
    n, a = game.spec.num_states, game.spec.num_actions
    return TabularPolicy(game, {pub: (1 - mix) * policy.probs(pub) + mix * rng.dirichlet(np.ones(a), size=n)
                                for pub in policy.table})


def all_records(game, policies):
    """Every complete game (deal, chance, actions) with its probability, as play_recorded records
    whose strategy tables are the policies' full tables."""
    init = game.initial_ranges()
    root = game.root()
    joint = init[0][:, None] * init[1][None, :] * game.chance_weights(root)
    joint /= joint.sum()
    out = []

    def walk(world, prob, pubs, actions, actors, tables):
        kind = game.cached("kind", world.pub)
        if kind == CHANCE:
            for p, nxt in W.chance_outcomes(game, world):
                walk(nxt, prob * p, pubs + [nxt.pub], actions, actors, tables)
        elif kind == DECISION:
            actor = game.cached("actor", world.pub)
            table = policies[actor].probs(world.pub) * game.cached("possible_mask", world.pub)[actor][:, None]
            for a in W.legal_actions(game, world):
                p = table[world.slots[actor], a]
                if p > 0:
                    nxt = W.apply_action(game, world, int(a))
                    walk(nxt, prob * p, pubs + [nxt.pub], actions + [int(a)], actors + [actor], tables + [table])
        else:
            u = W.returns(game, world)
            out.append((prob, {"pubs": pubs, "history": actions, "actors": actors, "strategies": tables,
                               "full": [True] * len(actions), "deal": list(deal), "returns": [u, -u]}))

    for x, y in zip(*np.nonzero(joint)):
        deal = (int(x), int(y))
        walk(W.World(root, deal), joint[x, y], [root], [], [], [])
    return out


@pytest.mark.parametrize("known", [(False, False), (True, False), (False, True), (True, True)])
def test_exactly_unbiased_for_any_value_function_on_kuhn(kuhn, known):
    eq = equilibrium_policy(kuhn, 200)
    other = perturbed(kuhn, eq, 0.7, seed=1)
    exact = policy_pair_value(kuhn, eq, other)
    records = all_records(kuhn, (eq, other))
    assert sum(p for p, _ in records) == pytest.approx(1.0)
    assert sum(p * r["returns"][0] for p, r in records) == pytest.approx(exact)
    rng = np.random.default_rng(0)
    noise = WorldValues({pub: rng.normal(size=(3, 3)) * 3 for pub in equilibrium_values(kuhn, 10).table})
    for values in (noise, equilibrium_values(kuhn, 200)):
        mean = sum(p * aivat_estimate(kuhn, r, values, known) for p, r in records)
        assert mean == pytest.approx(exact, abs=1e-12)
    if known == (True, True):   # the pair's exact values: every single estimate is exact
        ests = [aivat_estimate(kuhn, r, policy_world_values(kuhn, eq, other), known) for _, r in records]
        assert np.allclose(ests, exact, atol=1e-12)


@pytest.mark.parametrize("known", [(True, False), pytest.param((True, True), marks=pytest.mark.slow)])
def test_exactly_unbiased_on_leduc_with_its_board_card(leduc, known):
    """Every Leduc game (5520 of them) enumerated: the expectation of AIVAT is the exact value."""
    eq = equilibrium_policy(leduc, 300)
    other = perturbed(leduc, eq, seed=5)
    records = all_records(leduc, (eq, other))
    values = equilibrium_values(leduc, 1000)
    mean = sum(p * aivat_estimate(leduc, r, values, known) for p, r in records)
    assert mean == pytest.approx(policy_pair_value(leduc, eq, other), abs=1e-12)


def test_recorded_play_is_play_game_and_records_strategies(leduc):
    eq = equilibrium_policy(leduc, 100)
    agents = (TabularAgent(leduc, eq), RandomAgent(leduc))
    for seed in range(20):
        rec, ref = play_recorded(leduc, agents, seed), play_game(leduc, agents, seed)
        assert rec["history"] == ref["history"] and rec["returns"] == ref["returns"] and rec["deal"] == ref["deal"]
        assert all(rec["full"]) and len(rec["strategies"]) == len(rec["history"])
        for j, table in enumerate(rec["strategies"]):
            pub = rec["pubs"][[i for i, p in enumerate(rec["pubs"]) if leduc.kind(p) == DECISION][j]]
            assert np.allclose(table.sum(1)[leduc.possible_mask(pub)[rec["actors"][j]]], 1.0)


def test_exact_values_of_both_known_agents_leave_no_variance(leduc):
    eq = equilibrium_policy(leduc, 300)
    other = perturbed(leduc, eq)
    a, b = TabularAgent(leduc, eq), TabularAgent(leduc, other)
    # a is player 0 in even games, player 1 in odd ones: the exact values of each seating
    m0 = aivat_match(leduc, a, b, 30, policy_world_values(leduc, eq, other), seed=3)
    m1 = aivat_match(leduc, a, b, 30, policy_world_values(leduc, other, eq), seed=3)
    assert np.allclose(m0["aivat_values"][0::2], policy_pair_value(leduc, eq, other))
    assert np.allclose(m1["aivat_values"][1::2], -policy_pair_value(leduc, other, eq))
    assert np.std(m0["values"]) > 1.0


@pytest.mark.parametrize("case", ["cfr_known_vs_unknown_perturbed", "cfr_vs_random_both_known"])
def test_leduc_intervals_cover_the_exact_value_with_less_variance(leduc, case):
    eq = equilibrium_policy(leduc, 1000)
    values = equilibrium_values(leduc, 1000)          # fixed before the games, the same for every match
    if case == "cfr_known_vs_unknown_perturbed":
        # plain games: the reduction is against the plain returns
        other, known, games, duplicate, min_reduction = perturbed(leduc, eq), (True, False), 1200, False, 3.0
        b = TabularAgent(leduc, other)
    else:
        # duplicate deals: the reduction comes on top of duplicate's
        other, known, games, duplicate, min_reduction = TabularPolicy(leduc), (True, True), 600, True, 10.0
        b = RandomAgent(leduc)
    exact = (policy_pair_value(leduc, eq, other) - policy_pair_value(leduc, other, eq)) / 2
    m = aivat_match(leduc, TabularAgent(leduc, eq), b, games, values, seed=11, known=known, duplicate=duplicate)
    lo, hi = m["aivat"]["ci95"]
    assert lo <= exact <= hi, (exact, m["aivat"])
    assert m["raw"]["ci95"][0] <= exact <= m["raw"]["ci95"][1]
    assert m["variance_reduction"] > min_reduction, m["variance_reduction"]


@pytest.mark.slow
def test_leduc_interval_coverage_over_many_matches(leduc):
    """20 independent matches of 300 games: the 95% intervals cover the exact value in most."""
    eq = equilibrium_policy(leduc, 1000)
    other = perturbed(leduc, eq, seed=4)
    values = equilibrium_values(leduc, 1000)
    exact = (policy_pair_value(leduc, eq, other) - policy_pair_value(leduc, other, eq)) / 2
    covered, reductions = 0, []
    for seed in range(20):
        m = aivat_match(leduc, TabularAgent(leduc, eq), TabularAgent(leduc, other), 300, values, seed=100 + seed,
                        known=(True, False))
        covered += m["aivat"]["ci95"][0] <= exact <= m["aivat"]["ci95"][1]
        reductions.append(m["variance_reduction"])
    assert covered >= 16 and np.median(reductions) > 3


def _fresh_vf(game):
    from networks.cvpn import init_params
    from networks.value_function import NetworkValueFunction
    from sog.config import NetworkConfig
    config = NetworkConfig(hidden=16, layers=1)
    return NetworkValueFunction(game, config, init_params(game, config, seed=1), buckets=(256,))


def test_network_policy_is_the_prior_at_the_ranges_it_induces(kuhn, leduc):
    from sog.search.cfr import evaluate_policy
    from sog.search.full_tree import full_tree
    for game in (kuhn, leduc):
        vf = _fresh_vf(game)
        policy = network_policy(game, vf)
        ft = full_tree(game)
        sigma = np.stack([policy.probs(pub) for pub in ft.decision_pubs])
        ranges, _ = evaluate_policy(ft.levels, sigma, game.initial_ranges()[None])
        pubs = ft.decision_pubs
        _, logits = vf.evaluate(pubs, ranges[ft.levels.dec])
        for i, pub in enumerate(pubs):
            actor = game.actor(pub)
            legal = game.legal_mask(pub)
            z = np.where(legal, logits[i, actor], -np.inf)
            prior = np.exp(z - z.max(axis=1, keepdims=True))
            prior /= prior.sum(axis=1, keepdims=True)
            ok = game.possible_mask(pub)[actor]
            assert np.allclose(policy.probs(pub)[ok], prior[ok], atol=1e-6)


def test_network_values_are_a_valid_aivat_value_function(kuhn):
    values = network_world_values(kuhn, _fresh_vf(kuhn))
    eq = equilibrium_policy(kuhn, 200)
    other = perturbed(kuhn, eq, seed=2)
    exact = policy_pair_value(kuhn, eq, other)
    records = all_records(kuhn, (eq, other))
    assert sum(p * aivat_estimate(kuhn, r, values, (True, False)) for p, r in records) == pytest.approx(exact)


def test_sog_agent_strategy_table_covers_every_slot_and_probes_leave_it_unchanged(kuhn):
    from sog.agents.sog_agent import SoGAgent
    from sog.search.oracle import ExactValueFunction
    from sog.search.settings import SearchSettings

    agent = SoGAgent(kuhn, ExactValueFunction(kuhn, iterations=20), SearchSettings(4, 1))
    agent.reset(0, seed=7)
    table, full = strategy_table(agent, (kuhn.root(),), 1)
    assert full and table.shape == (3, 2) and np.allclose(table.sum(1), 1)
    action = agent.act((kuhn.root(),), 1)
    # the same game with a hypothetical question asked in between
    agent.reset(0, seed=7)
    strategy_table(agent, (kuhn.root(),), 1)
    with preserved(agent):
        agent.strategy((kuhn.root(),), 2)
        agent.rng.random(5)
    assert agent.act((kuhn.root(),), 1) == action
