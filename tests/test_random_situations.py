"""Random situations (`actors.random_situations`) and the query solver's `solver.q_random`."""
import itertools

import numpy as np
import pytest

from actors.examples import example_schema
from actors.inference import InferenceClient
from actors.producers import LocalChannels, QuerySolverWorker
from actors.query_solver import RANDOM_SEED_TAG, QuerySolver
from actors.queue import QueryQueue
from actors.random_situations import dirichlet_strategy, random_situation, random_walk
from actors.replay import ReplayBuffer
from actors.selfplay import sample_count
from networks.batch import make_batch
from networks.cvpn import init_params
from networks.value_function import NetworkValueFunction
from sog.config import load_config, solver_search
from sog.games import load_game
from sog.games.api import CHANCE, DECISION, TERMINAL
from sog.search.cfr import full_policy, propagate_ranges
from sog.search.full_tree import full_tree
from sog.search.oracle import ExactValueFunction
from sog.search.settings import SearchSettings
from sog.seeding import derive_seed

SETTINGS = SearchSettings(simulations=10, per_phase=1.0)
FAST = ["kuhn_poker", "leduc_poker", "liars_dice(numdice=1,dice_sides=4)"]


def normalised(r):
    total = r.sum(-1, keepdims=True)
    return np.divide(r, total, out=np.zeros_like(r), where=total > 0)


@pytest.mark.parametrize("name", [*FAST, pytest.param("scotland_yard", marks=pytest.mark.slow)])
def test_walk_beliefs_are_the_reach_of_the_strategy_it_follows(name):
    """Driven by a fixed random strategy profile, the walk's ranges are that profile's reach
    probabilities, as the full tree's CFR range pass computes them (normalised per player)."""
    game = load_game(name)
    ft = full_tree(game)
    ct, lv = ft.ct, ft.levels
    rng = np.random.default_rng(1)
    legal = np.stack([game.legal_mask(pub) for pub in ft.decision_pubs])
    sigma = normalised(rng.random(legal.shape) * legal)                        # [m, N, A]
    reach = propagate_ranges(lv, full_policy(lv, sigma), game.initial_ranges()[None])
    node = {ct.pub(i): i for i in range(ct.num_nodes)}
    seen = set()
    for _ in range(40):
        path = random_walk(game, rng, SETTINGS, strategy=lambda pub, legal, rng: sigma[ft.row_of[pub]])
        for pub, ranges in path:
            np.testing.assert_allclose(ranges, normalised(reach[node[pub]]), atol=1e-12)
            seen.add(pub)
    inner = sum(game.kind(pub) != TERMINAL for pub in node)
    assert len(seen) >= min(inner, 20)


@pytest.mark.parametrize("name", [*FAST, "scotland_yard", "tic_tac_toe"])
def test_walk_steps_to_children_that_are_legal_non_terminal_and_possible(name):
    game = load_game(name)
    rng = np.random.default_rng(0)
    for _ in range(10):
        path = random_walk(game, rng, SETTINGS)
        assert path[0][0] == game.root() and len(path) >= 2
        for (pub, _), (nxt, ranges) in itertools.pairwise(path):
            kind = game.kind(pub)
            kids = [c.pub for c in game.children(pub)]
            assert kind in (DECISION, CHANCE) and nxt in kids and game.kind(nxt) != TERMINAL
            if kind == DECISION:
                assert game.child_actions(pub)[kids.index(nxt)].any()
            possible = game.possible_mask(nxt)
            assert (ranges[~possible] == 0).all() and np.allclose(ranges.sum(1), 1.0)
        last = path[-1][0]
        assert all(game.kind(c.pub) == TERMINAL for c in game.children(last)) or game.kind(last) == DECISION


def test_leduc_situations_reach_second_round_states_after_raises_with_diverse_beliefs():
    """The coverage the option is for: Leduc's second round after raises in both
    rounds, each time with other beliefs, both players' ranges mixed over several cards."""
    game = load_game("leduc_poker")
    rng = np.random.default_rng(0)
    draws = [random_situation(game, rng, SETTINGS) for _ in range(400)]
    deep = [(pub, r) for pub, r in draws if pub[1] >= 0 and 2 in pub[0] and 2 in pub[2]]
    assert len(deep) > 20 and len({pub for pub, _ in deep}) > 5
    assert len({tuple(np.round(r.ravel(), 6)) for _, r in deep}) == len(deep)
    assert all(((r > 0).sum(1) >= 2).all() for _, r in deep)


def test_walks_are_reproducible_from_the_generator():
    game = load_game("leduc_poker")
    draw = [[random_situation(game, np.random.default_rng(seed), SETTINGS) for _ in range(3)]
            for seed in (5, 5, 6)]
    for (p, r), (q, s) in zip(draw[0], draw[1]):
        assert p == q and np.array_equal(r, s)
    assert any(p != q or not np.array_equal(r, s) for (p, r), (q, s) in zip(draw[0], draw[2]))


def test_dirichlet_strategy_is_a_distribution_over_legal_actions():
    legal = np.array([[True, False, True], [False, False, False], [True, True, True]])
    sigma = dirichlet_strategy(None, legal, np.random.default_rng(0))
    assert (sigma[~legal] == 0).all() and (sigma[legal] > 0).all()
    np.testing.assert_allclose(sigma.sum(1), [1, 0, 1])


def test_query_solver_solves_q_random_random_situations_per_query_as_targets():
    """q_random = 2: two random situations per popped query, solved and stored as targets like the
    popped query's (against the oracle: near its exact values); q_random = 0 leaves the popped
    query's example as it was (the random situations draw from a stream of their own)."""
    cfg = load_config("leduc", ["solver.q_random=2", "solver.search=50,1"])
    game = load_game(cfg.game)
    query = (game.root(), game.initial_ranges())
    leaves = ExactValueFunction(game, iterations=50, warm_start=False)    # answers that do not depend on the batch
    out = QuerySolver(game, cfg, leaves, seed=0).solve([query])
    assert out.stats["solves"] == 3 and out.stats["random_solves"] == 2 and len(out.ids) == 3
    vmask = out.examples["value_mask"]
    assert vmask[1:].any(axis=(1, 2)).all()
    assert not np.array_equal(out.examples["inputs"][1], out.examples["inputs"][2])
    # the random situations' targets, in network units, against exact values of the same beliefs
    rng = np.random.default_rng(derive_seed(0, RANDOM_SEED_TAG))
    assert sample_count(rng, 2) == 2
    situations = [random_situation(game, rng, solver_search(cfg)) for _ in range(2)]
    exact = ExactValueFunction(game, iterations=300)
    for k, (pub, ranges) in enumerate(situations, start=1):
        want = make_batch(game, [pub], ranges[None], exact.solve([pub], ranges[None])[0])
        np.testing.assert_array_equal(out.examples["inputs"][k], want["inputs"][0])
        np.testing.assert_allclose(out.examples["value_target"][k][vmask[k]],
                                   want["value_target"][0][vmask[k]], atol=0.05)
    plain = QuerySolver(game, load_config("leduc", ["solver.search=50,1"]), leaves, seed=0).solve([query])
    assert plain.stats["random_solves"] == 0 and len(plain.ids) == 1
    np.testing.assert_allclose(plain.examples["value_target"][0], out.examples["value_target"][0], atol=1e-6)


def test_leduc_config_loads_with_q_random():
    cfg = load_config("leduc", ["solver.q_random=0.5"])
    assert cfg.solver.q_random == 0.5 and load_config("leduc").solver.q_random == 0.0


def test_solver_step_counts_its_random_solves_and_delivers_their_examples():
    """The producer step (both runs call it) reports `random_solves`, the run's counter."""
    cfg = load_config("tiny_kuhn", ["solver.q_random=1"])
    game = load_game(cfg.game)
    replay = ReplayBuffer.from_config(example_schema(game), cfg.replay)
    queue = QueryQueue(cfg.solver.queue_size, game)
    queue.push([(game.root(), game.initial_ranges())] * 3)
    client = InferenceClient.in_process(NetworkValueFunction(game, cfg.network, init_params(game, cfg.network, 0)))
    stats = QuerySolverWorker(game, cfg, client, LocalChannels(replay, queue), seed=0).step(batch=3)
    assert stats["solves"] == 6 and stats["random_solves"] == 3 and len(replay) == stats["examples"] == 6
