"""Baselines from the papers: MCCFR (outcome / external / Pluribus), UCT and Smooth UCT,
IS-MCTS. Exploitability is measured exactly with `sog.search.full_tree`."""
from __future__ import annotations

import time

import numpy as np
import pytest

from sog.agents.sampling.common import decision_infostates
from sog.agents.sampling.ismcts import ISMCTS, ismcts_policy
from sog.agents.sampling.mccfr import ExternalSamplingMCCFR, OutcomeSamplingMCCFR, PluribusMCCFR
from sog.agents.sampling.uct import UCT, SmoothUCT
from sog.games import load_game
from sog.search.full_tree import exploitability

MCCFR = [OutcomeSamplingMCCFR, ExternalSamplingMCCFR, PluribusMCCFR]


def assert_legal_policy(game, policy):
    """Every stored row of a possible actor slot is a distribution over legal actions."""
    for pub, actor, slots in decision_infostates(game):
        if pub not in policy:
            continue
        raw = np.asarray(policy.table[pub])
        legal = game.cached("legal_mask", pub)
        assert raw.shape == legal.shape
        assert np.all(raw >= 0)
        assert np.all(raw[~legal] == 0), pub
        np.testing.assert_allclose(raw[slots].sum(axis=1), 1.0, atol=1e-9)


def same_policy(p, q):
    return p.table.keys() == q.table.keys() and all(np.array_equal(p.table[k], q.table[k]) for k in p.table)


# ---- MCCFR -------------------------------------------------------------------
@pytest.mark.parametrize("cls", MCCFR, ids=lambda c: c.__name__)
def test_mccfr_kuhn_converges(kuhn, cls):
    solver = cls(kuhn, seed=0)
    solver.run(200)
    early = exploitability(kuhn, solver.policy())
    solver.run(4000)
    assert solver.iterations == 4200
    late = exploitability(kuhn, solver.policy())
    assert_legal_policy(kuhn, solver.policy())
    assert late < early
    assert late < 0.05, late


@pytest.mark.parametrize("cls", MCCFR, ids=lambda c: c.__name__)
def test_mccfr_reproducible(kuhn, cls):
    a, b, c = cls(kuhn, seed=3), cls(kuhn, seed=3), cls(kuhn, seed=4)
    for s in (a, b, c):
        s.run(300)
    assert same_policy(a.policy(), b.policy())
    assert not same_policy(a.policy(), c.policy())


@pytest.mark.parametrize("cls", MCCFR, ids=lambda c: c.__name__)
def test_mccfr_leduc_improves(leduc, cls):
    solver = cls(leduc, seed=0)
    solver.run(300)
    early = exploitability(leduc, solver.policy())
    solver.run(2700)
    late = exploitability(leduc, solver.policy())
    assert_legal_policy(leduc, solver.policy())
    assert late < 0.8 * early, (early, late)
    if cls is not OutcomeSamplingMCCFR:  # outcome sampling is slower per iteration of progress
        assert late < 0.9, late  # ~0.65-0.7 chips after 3000 iterations; 0.24-0.29 after 10k


def test_pluribus_pruning_and_discounting(kuhn):
    # Low threshold so pruning happens within a short run; floor just below it.
    solver = PluribusMCCFR(kuhn, seed=0, prune_after=500, prune_threshold=-5.0, regret_floor=-6.0,
                           discount_interval=50, linear_until=2000)
    solver.run(3000)
    assert solver.pruned_traversals > 0.8 * 2 * 2500  # about 95% of the traversals after warm-up
    assert solver.skipped_actions > 0
    assert min(r.min() for r in solver.regrets.values()) >= -6.0
    assert exploitability(kuhn, solver.policy()) < 0.05
    # without the warm-up ending, nothing is pruned
    unpruned = PluribusMCCFR(kuhn, seed=0, prune_after=10**9)
    unpruned.run(500)
    assert unpruned.pruned_traversals == 0 and unpruned.skipped_actions == 0


def test_pluribus_linear_discount_factor(kuhn):
    # After iteration t = k * I (t < linear_until) all tables are scaled by k / (k + 1).
    solver = PluribusMCCFR(kuhn, seed=1, discount_interval=10, linear_until=100, prune_after=10**9)
    probe = PluribusMCCFR(kuhn, seed=1, discount_interval=10, linear_until=0, prune_after=10**9)
    solver.run(10)  # t = 10: discounted by 1/2 after the traversals
    probe.run(10)   # the same iterations (same seed) without any discount
    assert solver.regrets.keys() == probe.regrets.keys()
    for p in probe.regrets:
        np.testing.assert_allclose(solver.regrets[p], 0.5 * probe.regrets[p])
        np.testing.assert_allclose(solver.avg_sums[p], 0.5 * probe.avg_sums[p])


def test_run_by_seconds(kuhn):
    solver = ExternalSamplingMCCFR(kuhn, seed=0)
    t0 = time.perf_counter()
    done = solver.run(seconds=0.2)
    assert done > 0 and solver.iterations == done
    assert time.perf_counter() - t0 < 1.0
    assert solver.run(iterations=5, seconds=10) == 5
    with pytest.raises(ValueError):
        solver.run()


# ---- UCT / Smooth UCT -------------------------------------------------------------
def test_smooth_uct_kuhn_improves(kuhn):
    search = SmoothUCT(kuhn, seed=0)
    assert (search.c, search.engine.d) == (1.75, 0.001)  # the paper's Kuhn settings
    search.run(500)
    early = exploitability(kuhn, search.policy())
    search.run(29500)
    late = exploitability(kuhn, search.policy())
    assert_legal_policy(kuhn, search.policy())
    assert late < 0.5 * early and late < 0.03, (early, late)


def test_uct_policies_and_reproducibility(kuhn):
    a, b = UCT(kuhn, seed=7), UCT(kuhn, seed=7)
    assert a.c == 2.0
    a.run(3000)
    b.run(3000)
    assert a.iterations == 3000
    for kind in ("average", "greedy"):
        assert same_policy(a.policy(kind), b.policy(kind))
        assert_legal_policy(kuhn, a.policy(kind))
    greedy = a.policy("greedy")
    for arr in greedy.table.values():
        assert set(np.unique(arr)) <= {0.0, 0.5, 1.0}  # one-hot rows (0.5: unvisited, uniform)
    s1, s2 = SmoothUCT(kuhn, seed=7), SmoothUCT(kuhn, seed=7)
    s1.run(3000)
    s2.run(3000)
    assert same_policy(s1.policy(), s2.policy())
    assert not same_policy(a.policy(), s1.policy())


@pytest.mark.slow
def test_smooth_uct_beats_uct_on_kuhn(kuhn):
    """The paper's Kuhn result: Smooth UCT keeps approaching equilibrium, UCT stalls."""
    results = {}
    for cls in (UCT, SmoothUCT):
        search = cls(kuhn, seed=0)
        search.run(100_000)
        mid = exploitability(kuhn, search.policy())
        search.run(300_000)
        results[cls.__name__] = (mid, exploitability(kuhn, search.policy()))
    uct, smooth = results["UCT"], results["SmoothUCT"]
    assert smooth[1] < 0.7 * smooth[0], results        # still improving
    assert uct[1] > 0.7 * uct[0], results              # stalled
    assert uct[1] > 2.0 * smooth[1], results           # well above Smooth UCT


def test_smooth_uct_leduc_improves(leduc):
    search = SmoothUCT(leduc, seed=0)
    assert (search.c, search.engine.d) == (18.0, 0.002)
    search.run(5_000)
    early = exploitability(leduc, search.policy())
    search.run(95_000)
    late = exploitability(leduc, search.policy())
    assert late < 0.6 * early, (early, late)


# ---- IS-MCTS ---------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["visits", "max_visits", "max_value"])
def test_ismcts_kuhn_exploitable(kuhn, kind):
    policy = ismcts_policy(kuhn, 300, kind, seed=0)
    assert_legal_policy(kuhn, policy)
    n_info = sum(len(slots) for _, _, slots in decision_infostates(kuhn))
    assert n_info == 12 and len(policy.table) == 4
    if kind != "visits":
        assert all(set(np.unique(a)) <= {0.0, 1.0} for a in policy.table.values())
    expl = exploitability(kuhn, policy)
    assert 0.05 < expl < 0.6, expl  # clearly non-zero: determinization does not converge
    assert same_policy(policy, ismcts_policy(kuhn, 300, kind, seed=0))


def test_ismcts_search_uses_opponent_range(kuhn):
    searcher = ISMCTS(kuhn, seed=0)
    pub = (1,)  # player 0 bet; player 1 to act
    # holding the Queen: against a King calling loses 2 (fold loses 1); against a Jack it wins 2.
    vs_king = searcher.search(pub, 1, simulations=200, opponent_range=np.array([0.0, 0.0, 1.0]))
    vs_jack = searcher.search(pub, 1, simulations=200, opponent_range=np.array([1.0, 0.0, 0.0]))
    assert vs_king.simulations == 200 and vs_king.visits.sum() == 200
    np.testing.assert_allclose(vs_king.values, [-1.0, -2.0])
    np.testing.assert_allclose(vs_jack.values, [-1.0, 2.0])
    assert vs_king.policy("max_value").tolist() == [1.0, 0.0]
    assert vs_jack.policy("max_visits").tolist() == [0.0, 1.0]
    with pytest.raises(ValueError):
        searcher.search((0, 0), 1, simulations=1)  # terminal


def test_ismcts_leduc(leduc):
    policy = ismcts_policy(leduc, 20, "visits", seed=0, uct_c=10.0)
    assert_legal_policy(leduc, policy)
    expl = exploitability(leduc, policy)
    # SoG supplement Table S5, 10 simulations, C = 10: 1.74 chips (mvd); well above zero
    assert 0.8 < expl < 3.0, expl


def test_ismcts_leduc_table_s5(leduc):
    """Close to the supplement's Table S5 (100 simulations, C = 10: mvd 1213, mvis 1195, mval 1245 mbb)."""
    for kind in ("visits", "max_visits", "max_value"):
        expl = exploitability(leduc, ismcts_policy(leduc, 100, kind, seed=0, uct_c=10.0))
        assert 0.8 < expl < 1.6, (kind, expl)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["liars_dice", "scotland_yard"])
@pytest.mark.parametrize("cls", MCCFR, ids=lambda c: c.__name__)
def test_mccfr_converges_on_the_other_small_games(name, cls):
    """Liar's Dice 1x6 and the small Scotland Yard: exploitability falls with time
    (measured on 2 cores, 1 s -> 5 s: outcome / external / Pluribus 0.36 -> 0.19,
    0.12 -> 0.028, 0.12 -> 0.029 on Liar's Dice; 0.56 -> 0.33, 0.72 -> 0.26,
    0.85 -> 0.35 on Scotland Yard)."""
    game = load_game(name)
    solver = cls(game, seed=0)
    solver.run(seconds=1.0)
    early = exploitability(game, solver.policy())
    solver.run(seconds=4.0)
    assert exploitability(game, solver.policy()) < early
