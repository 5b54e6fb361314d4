"""Sound self-play, the query solver and their producer steps (Ray-free), with a fresh CVPN and
the oracle."""
import dataclasses

import numpy as np
import pytest

from actors.examples import example_schema
from actors.inference import InferenceClient
from actors.producers import LocalChannels, QuerySolverWorker, SelfPlayWorker
from actors.query_solver import QuerySolver
from actors.queue import QueryQueue
from actors.replay import ReplayBuffer
from actors.selfplay import SelfPlay
from networks.cvpn import init_params
from networks.encoding import to_game_units, value_scales
from networks.value_function import NetworkValueFunction
from sog.config import ConfigError, load_config
from sog.games import load_game
from sog.search.oracle import ExactValueFunction


@pytest.fixture(scope="module")
def kuhn():
    cfg = load_config("tiny_kuhn", ["selfplay.p_td1=1.0", "selfplay.games_per_worker=3"])
    game = load_game(cfg.game)
    return cfg, game, NetworkValueFunction(game, cfg.network, init_params(game, cfg.network, 0))


def test_selfplay_produces_policy_and_td1_targets_and_queries(kuhn):
    cfg, game, vf = kuhn
    out = SelfPlay(game, cfg, vf, seed=0).play()
    schema = example_schema(game)
    assert set(out.examples) == set(schema)
    for k, (shape, dtype) in schema.items():
        assert out.examples[k].shape[1:] == shape and out.examples[k].dtype.str == dtype
    B = len(out.ids)
    assert out.stats["games"] == 3 and B == out.stats["searches"] >= 6
    assert len(set(out.ids.tolist())) == B
    # a policy target for the actor's possible slots, a distribution over legal actions
    pm = out.examples["policy_mask"]
    assert pm.any(axis=(1, 2)).all()
    pt = out.examples["policy_target"][pm]
    np.testing.assert_allclose(pt.sum(-1), 1.0, atol=1e-5)
    # TD(1) with p_td1 = 1: exactly the two realised slots carry a value target
    assert (out.examples["value_mask"].sum(axis=(1, 2)) == 2).all()
    assert np.abs(out.examples["value_target"][out.examples["value_mask"]]).max() <= 1.0 + 1e-6
    assert len(out.queries) > 0


def test_the_seats_share_one_initial_solve(kuhn, monkeypatch):
    """The first seat's search at the game's first public state is the other seat's initial solve:
    no game solves the opening a second time, and seat 1's first re-solve starts from seat 0's
    summary (its gadget's Terminate values are seat 0's averaged values there)."""
    from sog.search import resolve
    cfg, game, vf = kuhn
    initial, gadgets = [], []
    monkeypatch.setattr(resolve.ContinualResolver, "_initial_search",
                        lambda self, *a: initial.append(a) or pytest.fail("a second initial solve"))
    make_gadget = resolve.Gadget
    monkeypatch.setattr(resolve, "Gadget", lambda *a: gadgets.append(a) or make_gadget(*a))
    out = SelfPlay(game, cfg, vf, seed=0).play()
    assert not initial and out.stats["games"] == 3
    assert len(gadgets) == out.stats["searches"] - 3          # every search but each game's first
    resolver = resolve.ContinualResolver(game, None)
    root = game.root()
    assert resolver.is_initial([root], None) and not resolver.is_initial([root], resolve.Summary({}, {}))
    assert not resolver.is_initial([root, game.children(root)[0].pub], None)


def test_selfplay_is_seeded(kuhn):
    cfg, game, vf = kuhn
    a, b = (SelfPlay(game, cfg, vf, seed=3).play() for _ in range(2))
    assert np.array_equal(a.ids, b.ids)
    np.testing.assert_array_equal(a.examples["policy_target"], b.examples["policy_target"])


def test_producer_steps_deliver_what_their_stats_count(kuhn):
    """One self-play step and two solver steps into an in-process replay and queue (as the
    Ray-free run drives them); the stats count what arrived."""
    cfg, game, vf = kuhn
    client = InferenceClient.in_process(vf)
    replay = ReplayBuffer.from_config(example_schema(game), cfg.replay)
    queue = QueryQueue(cfg.solver.queue_size, game)
    channels = LocalChannels(replay, queue)
    s = SelfPlayWorker(game, cfg, client, channels, seed=0).step()
    assert s["games"] == 3 and s["examples"] == s["new_examples"] == len(replay) == s["searches"]
    assert s["queries_pushed"] == queue.pushed_total > 0 and s["network_queries"] == client.queries > 0
    assert s["seconds"] >= s["wait_inference"] + s["wait_push"] and s["version"] == vf.version
    split = [s[k] for k in ("search_tree", "search_cfr", "search_network", "search_merge")]
    # (clock pairs around pieces of a ~10 ms step: 10%, or 5 ms where a loaded machine
    # preempts between a piece's clocks)
    assert min(split) > 0 and abs(sum(split) - s["search_seconds"]) < max(0.1 * s["search_seconds"], 0.005)
    assert client.batch_sizes.counts() and sum(client.batch_sizes.counts().values()) == client.calls
    solver = QuerySolverWorker(game, cfg, client, channels, seed=1)
    waiting = len(queue)
    t = solver.step()                                   # a Ray solver's batch: games_per_worker
    assert t["solves"] == min(3, waiting) == queue.popped_total
    assert len(replay) == s["examples"] + t["examples"]
    assert t["recursive_pushed"] == queue.pushed_total - s["queries_pushed"]
    assert 0 < t["search_network"] < t["search_seconds"] and t["search_tree"] > 0
    rejected = queue.rejected_total
    rest = solver.step(batch=cfg.solver.queue_size)    # the Ray-free run passes its own batch
    assert rest["solves"] > 0 and len(queue) == rest["recursive_pushed"] - (queue.rejected_total - rejected)
    idle = solver.step(batch=0)
    assert idle["solves"] == idle["examples"] == 0 and idle["wait_queue"] == idle["seconds"]
    assert solver.batch == cfg.selfplay.games_per_worker              # solver.batch 0: as many as the games
    wide = dataclasses.replace(cfg, solver=dataclasses.replace(cfg.solver, batch=5))
    assert QuerySolverWorker(game, wide, client, channels, seed=2).batch == 5


def test_query_solver_targets_match_the_oracle_when_it_is_the_value_function():
    cfg = load_config("tiny_kuhn", ["search.simulations=200"])
    game = load_game(cfg.game)
    oracle = ExactValueFunction(game, iterations=200)
    root = game.root()
    r = game.initial_ranges()
    out = QuerySolver(game, cfg, ExactValueFunction(game, iterations=50), seed=0).solve([(root, r)])
    (target,) = [out.examples["value_target"][0]]
    exact = oracle.solve([root], r[None])[0][0]
    # value targets are stored in network units: cfv / (max_utility * opponent reach).
    # Player 1's equilibrium strategy is unique in Kuhn, so player 0's per-hand values are
    # too; player 0's equilibria form a family along which player 1's per-hand values move,
    # but its range-weighted value is the game value (1/18 chip).
    u = game.spec.max_utility
    np.testing.assert_allclose(target[0], exact[0] / u, atol=0.02)
    np.testing.assert_allclose(r[1] @ target[1], 1 / 18 / u, atol=0.005)
    np.testing.assert_allclose(target[1], exact[1] / u, atol=0.05)


def test_query_solver_best_response_targets_off_the_support(monkeypatch):
    """solver.off_support: best_response keeps the solve's averaged values where the query's owner
    reaches and puts its best-response values where it does not (range 0); the default keeps
    the averaged values everywhere."""
    from sog.search import gtcfr
    solves = []

    class Spy(gtcfr.GTCFR):
        def _setup(self, *args, **kwargs):
            super()._setup(*args, **kwargs)
            solves.append(self)

    monkeypatch.setattr("actors.query_solver.GTCFR", Spy)
    game = load_game("leduc_poker")
    r = game.initial_ranges()
    r[1, [0, 3]] = 0.0
    targets = {}
    for mode in ("average", "best_response"):
        cfg = load_config("leduc", [f"solver.off_support={mode}", "solver.search=6,1"])
        solves.clear()
        out = QuerySolver(game, cfg, ExactValueFunction(game, iterations=20), seed=0).solve([(game.root(), r)])
        (search,) = solves
        possible = game.possible_mask(game.root())[None]
        targets[mode] = to_game_units(out.examples["value_target"], r[None], possible,
                                      value_scales(game, [game.root()]))[0]
        averaged = search.average_values(search.root)
        want = averaged if mode == "average" else np.where(r > 0, averaged, search.best_response_values())
        np.testing.assert_allclose(targets[mode], want, atol=1e-5 * np.abs(want).max())
    off = r == 0
    assert not np.allclose(targets["average"][off], targets["best_response"][off])
    with pytest.raises(ConfigError, match="solver.off_support"):
        load_config("leduc", ["solver.off_support=exact"])


def test_query_solver_searches_with_the_solver_settings(monkeypatch):
    """solver.search sets the solves' S and C; the default is the search section's."""
    from sog.search import gtcfr
    seen = []

    class Spy(gtcfr.GTCFR):
        def _setup(self, *args, **kwargs):
            super()._setup(*args, **kwargs)
            seen.append(self.settings)

    game = load_game("kuhn_poker")
    r = game.initial_ranges()
    oracle = ExactValueFunction(game, iterations=20)
    for overrides, want in (([], (10, 1.0)), (["solver.search=20,0.5"], (20, 0.5))):
        cfg = load_config("tiny_kuhn", ["search.simulations=10", *overrides])
        seen.clear()
        monkeypatch.setattr("actors.query_solver.GTCFR", Spy)
        QuerySolver(game, cfg, oracle, seed=0).solve([(game.root(), r)])
        assert [(s.simulations, s.per_phase) for s in seen] == [want]
        assert seen[0].puct_c == cfg.search.puct_c
