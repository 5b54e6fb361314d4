"""Public chance nodes too wide to expand (HUNL's flop): the game's sampled chance, searches
that leave such a node a value-function leaf, query solves on sampled outcomes, and
re-solving that steps over the node."""
import numpy as np
import pytest

import sog.games.world as W
from actors.query_solver import QuerySolver
from sog.config import load_config
from sog.games import load_game
from sog.games.api import CHANCE, TERMINAL, Game
from sog.search.gtcfr import GTCFR, wide_chance
from sog.search.oracle import ExactValueFunction
from sog.search.resolve import ContinualResolver
from sog.search.settings import SearchSettings
from sog.search.tree import PublicTree

# 8 cards, one each, two board cards dealt at once after the first round: a 28-deal chance node
GAME = ("holdem(betting=limit,numRanks=4,numSuits=2,blind=2 1,firstPlayer=2 1,numHoleCards=1,"
        "numRounds=2,numBoardCards=0 2,raiseSize=2 4,maxRaises=2 2)")
TWO_DEALS = ("holdem(betting=nolimit,numRanks=3,numSuits=2,blind=1 1,stack=5 5,numHoleCards=1,"
             "numRounds=3,numBoardCards=0 1 1,bettingAbstraction=fcpa)")
LIMIT = 10


@pytest.fixture(scope="module")
def game():
    return load_game(GAME)


def _deal_node(game):
    """The chance node after both players call in the first round."""
    pub = game.root()
    while game.kind(pub) != CHANCE:
        pub = pub + (1,)
    return pub


@pytest.mark.parametrize("name", [GAME, TWO_DEALS])
def test_holdems_chance_methods_draw_as_the_enumerating_defaults(name):
    """Hold'em's chance methods build only the deals they need, with the draws of `Game`'s
    defaults over `children`, so seeded games are the same either way."""
    game = load_game(name)
    for seed in range(60):
        ours, theirs = np.random.default_rng(seed), np.random.default_rng(seed)
        world = W.deal(game, ours)
        theirs.bit_generator.state = ours.bit_generator.state
        while game.kind(world.pub) != TERMINAL:
            if game.kind(world.pub) == CHANCE:
                pub = world.pub
                a, b = game.sample_chance_child(pub, world.slots, ours), \
                    Game.sample_chance_child(game, pub, world.slots, theirs)
                assert (a.pub, a.prob) == (b.pub, b.prob) and np.array_equal(a.state_maps, b.state_maps)
                a, b = game.sample_chance_children(pub, 3, ours), Game.sample_chance_children(game, pub, 3, theirs)
                assert [(c.pub, c.prob) for c in a] == [(c.pub, c.prob) for c in b]
                kids = game.children(pub)
                assert game.chance_width(pub) == len(kids)
                assert np.array_equal(game.chance_child(pub, kids[-1].pub).state_maps, kids[-1].state_maps)
                world = W.sample_chance(game, world, ours)
            else:
                world = W.apply_action(game, world, int(ours.choice(W.legal_actions(game, world))))
            theirs.bit_generator.state = ours.bit_generator.state


def test_a_deal_that_is_not_an_outcome_is_refused(game):
    pub = _deal_node(game)
    for bad in [pub + ((0,),), pub + ((1, 0),), pub + ((0, 0),), pub + ((0, 99),)]:
        with pytest.raises(ValueError, match="not a chance outcome"):
            game.chance_child(pub, bad)


def test_hunl_samples_a_flop_without_building_the_others():
    game = load_game("hunl(betFraction=0.75)")
    pub = _deal_node(game)
    assert game.chance_width(pub) == 22100
    rng = np.random.default_rng(0)
    kids = game.sample_chance_children(pub, 16, rng)
    assert len({c.pub for c in kids}) == 16
    assert all(c.prob == pytest.approx(22100 / 16 / 17296) for c in kids)
    child = game.sample_chance_child(pub, (0, 1000), rng)
    held = set(game.deck.hands[0].tolist()) | set(game.deck.hands[1000].tolist())
    assert len(child.pub[-1]) == 3 and not held & set(child.pub[-1])
    assert ("children", pub) not in game._memo.get(("state_memo",), {})
    assert game.value_scale(pub) == 2.0 and game.value_scale(game.root()) == 1.5   # the pot, in big blinds
    assert wide_chance(game, SearchSettings(), pub)                  # the game's own limit
    assert not wide_chance(game, SearchSettings(chance_limit=30000), pub)
    turn = child.pub + (1, 1)
    assert game.kind(turn) == CHANCE and not wide_chance(game, SearchSettings(), turn)
    assert not wide_chance(load_game(GAME), SearchSettings(), _deal_node(load_game(GAME)))


def test_a_search_leaves_a_wide_chance_node_a_value_function_leaf(game):
    oracle = ExactValueFunction(game, iterations=20)

    def run(limit):
        search = GTCFR(game, oracle, settings=SearchSettings(60, 1, chance_limit=limit), seed=1)
        result = search.run()
        tree = search.tree
        chance = [v for v in range(tree.size) if tree.kind[v] == CHANCE]
        return tree, chance, {pub for pub, _ in result.queries}

    tree, chance, queried = run(LIMIT)
    assert chance and all(not tree.children[v] for v in chance)
    assert {tree.pubs[v] for v in chance} <= queried
    tree, chance, _ = run(0)
    assert any(len(tree.children[v]) == 28 for v in chance)


def _values_at(game, tree, ranges, oracle):
    """The root's values after one CFR pass of `tree` (its leaves answered by `oracle`)."""
    search = GTCFR(game, oracle, tree, ranges)
    search.regret_update(1)
    return search.values[tree.roots[0]].copy()


def test_sampled_outcomes_estimate_the_chance_nodes_values_without_bias(game):
    pub = _deal_node(game)
    oracle = ExactValueFunction(game, iterations=50, warm_start=False)    # a function of its query
    rng = np.random.default_rng(3)
    ranges = rng.random((2, game.spec.num_states))
    full = PublicTree(game, [pub])
    full.expand(0)
    exact = _values_at(game, full, ranges, oracle)
    every = PublicTree(game, [pub])
    every.expand_sample(0, 28, rng)
    np.testing.assert_allclose(_values_at(game, every, ranges, oracle), exact, rtol=1e-12, atol=1e-12)
    samples = []
    for seed in range(300):
        tree = PublicTree(game, [pub])
        assert len(tree.expand_sample(0, 4, np.random.default_rng(seed))) == 4
        samples.append(_values_at(game, tree, ranges, oracle))
    samples = np.array(samples)
    error = np.abs(samples.mean(0) - exact)
    assert (error <= 5 * samples.std(0) / np.sqrt(len(samples)) + 1e-12).all()
    with pytest.raises(ValueError, match="not a chance leaf"):
        every.expand_sample(0, 4, rng)


@pytest.mark.parametrize("samples", [28, 5])
def test_a_query_solver_solves_a_wide_chance_query_on_samples(game, samples):
    """With every outcome sampled the target is the exact value of the chance node's belief
    state; with 5 of 28 a finite estimate."""
    cfg = load_config("tiny_kuhn", ["game=" + GAME, "search.simulations=100", f"search.chance_limit={LIMIT}",
                                    f"search.chance_samples={samples}"])
    solver = QuerySolver(game, cfg, ExactValueFunction(game, iterations=50), seed=0)
    pub, ranges = _deal_node(game), game.initial_ranges()
    target = solver.solve([(pub, ranges)]).examples["value_target"][0] * game.value_scale(pub)  # network units
    exact = ExactValueFunction(game, iterations=500).solve([pub], ranges[None])[0][0]
    assert np.isfinite(target).all()
    if samples == 28:
        for i in (0, 1):
            assert ranges[i] @ target[i] == pytest.approx(ranges[i] @ exact[i], abs=0.02)


def test_re_solving_steps_over_a_wide_chance_node(game):
    """Below a wide deal the re-solve is rooted at the dealt outcome, its gadget given the value
    function's values at the carried ranges; no search tree holds a child of the deal. Player 0
    re-solves from its search before the deal; player 1, at its first decision after the deal,
    from its initial solve."""
    oracle = ExactValueFunction(game, iterations=20)
    resolver = ContinualResolver(game, oracle, SearchSettings(20, 1, chance_limit=LIMIT))
    deal = _deal_node(game)
    before = deal[:-1]                              # player 0's call that ends the first round
    assert game.actor(before) == 0 and wide_chance(game, resolver.settings, deal)
    _, prev = resolver.search(_path(before), 0, None, seed=0)
    outcome = game.children(deal)[5].pub
    assert game.actor(outcome) == 0 and game.actor(outcome + (1,)) == 1
    for player, history, previous in [(0, _path(outcome), prev), (1, _path(outcome + (1,)), None)]:
        calls = oracle.calls
        result, summary = resolver.search(history, player, previous, seed=1)
        held = list(summary.ranges)                 # every public state of the re-solve's tree
        assert held[0] == outcome and history[-1] in held and deal not in held
        assert not any(game.cached("kind", pub) == CHANCE for pub in held)
        assert outcome in [pub for pub, _ in result.queries] and oracle.calls > calls
        assert result.policy is not None and np.isfinite(result.policy).all()


def _path(pub):
    """The public states from the root to `pub`."""
    return [pub[:k] for k in range(len(pub) + 1)]


@pytest.mark.slow
def test_hunl_small_trains_in_sync_mode(tmp_path):
    """HUNL self-play, query solves at flop chance nodes and learner steps, end to end: the
    flop is never expanded, so the run stays within a few GB (about 2.4 GB resident when
    measured over 8 minutes)."""
    from launch.train import train
    from sog.config import apply_overrides

    cfg = apply_overrides(load_config("hunl_small"), ["run.minutes=5", "run.max_steps=2", "replay.min_size=16",
                                                      "learner.batch_size=8", "selfplay.games_per_worker=2"])
    out = train(cfg, tmp_path / "run", sync=True, log=lambda *a, **k: None, tick_seconds=0.0)
    assert out["stop_reason"] == "max_steps" and out["steps"] == 2
    assert out["counters"]["searches"] > 0 and out["counters"]["solves"] > 0


@pytest.mark.slow
def test_leduc_search_agent_stepping_over_its_deal_stays_near_the_expanding_one():
    """Leduc with its board card made a wide chance node (chance_limit 2): the composed SoG(s, 1)
    policy with the 10-iteration oracle stays sound, its exploitability falling with s. Measured
    over seeds 0-7 (mbb/h): SoG(30, 1) 88.6 against 78.9 expanding the deal, SoG(100, 1) 44.0
    against 24.4 (seed 0: 94.3 and 68.3)."""
    from sog.eval.search_policy import search_exploitability

    game = load_game("leduc_poker")
    means = [search_exploitability(game, ContinualResolver(game, ExactValueFunction(game, iterations=10), SearchSettings(
        s, 1, alternating=True, chance_limit=2)), 1)["mean"] for s in (30, 100)]
    assert means[1] < means[0] < 0.12


def test_the_hunl_tournament_parses_and_an_untrained_sog_agent_plays_hunl_hands():
    """configs/tournaments/hunl.yaml: every agent but the trained checkpoint, the blueprint and the
    end-game solver over it (files a run makes) builds; the fresh SoG agent plays duplicate HUNL hands against the call bot (its
    searches leave the flop a network leaf, so a hand takes seconds and little memory), recorded
    with its search policies for the check-down AIVAT estimate (`sog.eval.holdem.aivat`)."""
    import math
    from pathlib import Path

    from launch.values import register_sog_agent
    from sog.agents.registry import make_agent
    from sog.eval.aivat import play_recorded
    from sog.eval.holdem.aivat import CheckdownValues, checkdown_estimate
    from sog.eval.tournament import load_config as load_tournament

    register_sog_agent()
    cfg = load_tournament(Path(__file__).resolve().parents[1] / "configs" / "tournaments" / "hunl.yaml")
    game = load_game(cfg.game)
    assert cfg.aivat and cfg.aivat_value == "checkdown" and game.spec.name == load_game("hunl").spec.name
    values = CheckdownValues(game)
    assert cfg.agents["blueprint"] == "blueprint:configs/blueprints/hunl_small.yaml"
    assert cfg.agents["endgame"].startswith("endgame:configs/blueprints/hunl_small.yaml?")
    agents = {name: make_agent(spec, game) for name, spec in cfg.agents.items()
              if name not in ("sog", "blueprint", "endgame")}
    for seat in (0, 1):
        seats = [agents["sog_fresh"], agents["call"]] if seat == 0 else [agents["call"], agents["sog_fresh"]]
        record = play_recorded(game, seats, seed=3)
        assert len(record["returns"]) == 2 and record["returns"][0] == -record["returns"][1]
        assert all(record["full"][j] for j, p in enumerate(record["actors"]) if p == seat)
        assert math.isfinite(checkdown_estimate(game, record, values).value)
