"""Agents (sog.agents.policy_agents), agent specs (sog.agents.registry), head-to-head
play (sog.eval.match) and the `baselines` command (launch.baselines)."""
from __future__ import annotations

import argparse

import numpy as np
import pytest

from sog.agents import (
    Agent,
    AgentError,
    ISMCTSAgent,
    MCCFRAgent,
    RandomAgent,
    SmoothUCTAgent,
    TabularAgent,
    UCTAgent,
    make_agent,
    parse_spec,
    register,
    take_params,
)
from sog.eval.match import play_game, play_match, policy_pair_value
from sog.games import load_game
from sog.games.api import CHANCE, DECISION
from sog.games.world import IllegalActionError
from sog.policy import TabularPolicy
from sog.policy.files import save_policy
from sog.search.cfr import CFRSolver
from sog.search.full_tree import full_tree, tabular_from_array

GAMES = ["kuhn_poker", "leduc_poker", "liars_dice", "scotland_yard", "tic_tac_toe"]

# spec strings (budgets kept tiny) -> every agent kind on every game
AGENT_SPECS = ["random", "mccfr:outcome?iterations=20", "mccfr:external?iterations=1",
               "mccfr:pluribus?iterations=1", "uct?simulations=15", "smooth_uct?simulations=15",
               "ismcts?simulations=15&kind=max_value"]


@pytest.fixture(scope="module", params=GAMES)
def game(request):
    return load_game(request.param)


_games = {}


def _game(name):
    if name not in _games:
        _games[name] = load_game(name)
    return _games[name]


def _agent(spec, game):
    if spec == "tabular":
        return TabularAgent(game, TabularPolicy(game))  # uniform
    return make_agent(spec, game)


# ---- complete legal games, reproducibility ------------------------------------------
@pytest.mark.parametrize("spec", AGENT_SPECS + ["tabular"])
def test_agents_play_complete_legal_games(game, spec):
    agent = _agent(spec, game)
    assert isinstance(agent, Agent)
    opponent = RandomAgent(game)
    result = play_match(game, agent, opponent, games=2, seed=5)  # both seats
    assert result["n"] == 2 and [g["seat_a"] for g in result["games"]] == [0, 1]
    for g in result["games"]:
        assert g["actions"] > 0
        assert abs(g["returns"][0]) <= game.spec.max_utility and g["returns"][0] == -g["returns"][1]
    # The same seed gives the same actions, with fresh agents as with reused ones.
    a1 = play_game(game, (agent, opponent), seed=11)
    a2 = play_game(game, (_agent(spec, game), RandomAgent(game)), seed=11)
    a3 = play_game(game, (agent, opponent), seed=11)
    assert a1["history"] == a2["history"] == a3["history"]
    assert a1["returns"] == a2["returns"]
    assert a1["pubs"][0] == game.root() and len(a1["pubs"]) >= len(a1["history"]) + 1


@pytest.mark.parametrize("spec", ["random", "mccfr:outcome?iterations=20", "uct?simulations=15",
                                  "smooth_uct?simulations=15", "ismcts?simulations=15", "tabular"])
def test_strategy_is_a_distribution_over_legal_actions(spec):
    game = _game("leduc_poker")
    agent = _agent(spec, game)
    agent.reset(0, 3)
    rng = np.random.default_rng(0)
    for _ in range(5):
        g = play_game(game, (RandomAgent(game), RandomAgent(game)), seed=int(rng.integers(1 << 30)))
        for pub in g["pubs"]:
            if game.cached("kind", pub) != DECISION or game.cached("actor", pub) != 0:
                continue
            slot = int(np.flatnonzero(game.cached("possible_mask", pub)[0])[0])
            p = agent.strategy([pub], slot)
            legal = game.cached("legal_mask", pub)[slot]
            assert p.shape == (game.spec.num_actions,) and np.all(p >= 0)
            assert p.sum() == pytest.approx(1.0) and np.all(p[~legal] == 0)


def test_search_agent_plays_what_its_strategy_says():
    """strategy() then act() at one decision share one search; one-hot kinds play their action."""
    game = _game("kuhn_poker")
    agent = UCTAgent(game, simulations=200)
    agent.reset(0, 1)
    p = agent.strategy([()], 2)
    assert set(np.unique(p)) <= {0.0, 1.0}
    assert agent.act([()], 2) == int(np.argmax(p))
    assert agent.last_result.simulations == 200


def test_different_seeds_differ():
    game = _game("leduc_poker")
    agent = ISMCTSAgent(game, simulations=10)
    histories = {tuple(play_game(game, (agent, RandomAgent(game)), seed=s)["history"]) for s in range(8)}
    assert len(histories) > 1


def test_search_agents_defaults():
    kuhn, leduc = _game("kuhn_poker"), _game("leduc_poker")
    assert UCTAgent(kuhn).c == 2.0 and SmoothUCTAgent(kuhn).c == 1.75
    assert UCTAgent(leduc).c == 20.0 and SmoothUCTAgent(leduc).c == 18.0
    assert SmoothUCTAgent(leduc).searcher._smooth_kw["d"] == 0.002
    assert ISMCTSAgent(leduc).c == leduc.spec.max_utility
    assert UCTAgent(kuhn).kind == "max_visits" and SmoothUCTAgent(kuhn).kind == "visits"


def test_mccfr_agent_trains_once():
    game = _game("kuhn_poker")
    agent = MCCFRAgent(game, "external", iterations=50, seed=2)
    assert agent.solver.iterations == 0
    agent.reset(0, 0)
    assert agent.solver.iterations == 50
    agent.reset(1, 1)
    agent.act([(0,)], 1)
    assert agent.solver.iterations == 50
    again = MCCFRAgent(game, "external", iterations=50, seed=2)
    for pub in agent.policy.table:
        np.testing.assert_array_equal(agent.policy.probs(pub), again.policy.probs(pub))


# ---- misuse ------------------------------------------------------------------------------
def test_act_errors():
    game = _game("kuhn_poker")
    agent = RandomAgent(game)
    with pytest.raises(AgentError, match="reset"):
        agent.act([()], 0)
    agent.reset(0, 0)
    with pytest.raises(IllegalActionError, match="terminal"):
        agent.act([(), (0,), (0, 0)], 0)
    with pytest.raises(IllegalActionError, match="seat 0 but player 1"):
        agent.act([(), (0,)], 0)
    with pytest.raises(IllegalActionError, match="slot 5"):
        agent.act([()], 5)
    with pytest.raises(IllegalActionError, match="empty history"):
        agent.act([], 0)
    with pytest.raises(AgentError, match="player must be 0 or 1"):
        agent.reset(2, 0)
    search = UCTAgent(game, simulations=5)
    search.reset(1, 0)
    with pytest.raises(IllegalActionError, match="terminal"):
        search.act([(1, 1)], 0)
    with pytest.raises(AgentError, match="not kuhn_poker"):
        TabularAgent(game, TabularPolicy(_game("leduc_poker")))


def test_chance_node_error():
    game = _game("leduc_poker")
    pub = game.root()
    while game.cached("kind", pub) != CHANCE:        # check / call until the board is dealt
        pub = game.children(pub)[0].pub
    chance = [pub]
    agent = RandomAgent(game)
    agent.reset(0, 0)
    with pytest.raises(IllegalActionError, match="chance node"):
        agent.act([chance[0]], 0)


class _Cheater(Agent):
    def __init__(self, game):
        self.game = game

    def act(self, history, slot):
        return 7

    def __repr__(self):
        return "Cheater()"


def test_illegal_action_from_an_agent_is_named():
    game = _game("kuhn_poker")
    with pytest.raises(IllegalActionError, match=r"Cheater\(\).*illegal action 7 at \(\)"):
        play_game(game, (_Cheater(game), RandomAgent(game)), seed=0)


# ---- specs ---------------------------------------------------------------------------
def test_parse_spec():
    assert parse_spec("random") == ("random", None, {})
    assert parse_spec("mccfr:outcome?seconds=5") == ("mccfr", "outcome", {"seconds": "5"})
    assert parse_spec("sog:/tmp/x.ckpt?s=100&c=1") == ("sog", "/tmp/x.ckpt", {"s": "100", "c": "1"})


def test_make_agent_kinds(tmp_path):
    game = _game("kuhn_poker")
    assert isinstance(make_agent("random", game), RandomAgent)
    a = make_agent("mccfr:outcome?iterations=10&epsilon=0.5&seed=3", game)
    assert isinstance(a, MCCFRAgent) and a.solver.epsilon == 0.5 and a.iterations == 10
    assert make_agent("mccfr:pluribus?iterations=10&prune_after=5", game).solver.prune_after == 5
    a = make_agent("uct?simulations=1000&c=1.4", game)
    assert isinstance(a, UCTAgent) and a.c == 1.4 and a.simulations == 1000
    a = make_agent("smooth_uct?simulations=50&d=0.01&kind=average", game)
    assert isinstance(a, SmoothUCTAgent) and a.kind == "visits"
    a = make_agent("ismcts?seconds=0.01", game)
    assert isinstance(a, ISMCTSAgent) and a.simulations is None and a.seconds == 0.01
    # a tabular policy file
    ft = full_tree(game)
    solver = CFRSolver(ft.ct)
    solver.iterate(50)
    path = tmp_path / "kuhn.json"
    save_policy(tabular_from_array(game, solver.average_policy()), path)
    a = make_agent(f"tabular:{path}", game)
    assert isinstance(a, TabularAgent)
    a.reset(0, 0)
    np.testing.assert_allclose(a.strategy([()], 0), solver.average_policy()[0][0], atol=1e-9)


@pytest.mark.parametrize("spec,message", [
    ("alphazero", "unknown agent kind 'alphazero'"),
    ("", "empty agent spec"),
    ("Random", "bad agent kind"),
    ("random:x", "takes no ':' argument"),
    ("random?x=1", "unknown option 'x'"),
    ("uct?simulation=10", "unknown option 'simulation'; known options: c, kind, seconds, simulations"),
    ("uct?simulations=ten", "bad value 'ten' for 'simulations' \\(expected an integer\\)"),
    ("uct?simulations=1.5", "expected an integer"),
    ("uct?c=abc", "bad value 'abc' for 'c' \\(expected a number\\)"),
    ("uct?simulations=0", "simulations must be at least 1"),
    ("uct?simulations", "not key=value"),
    ("uct?c=1&c=2", "given twice"),
    ("ismcts?kind=best", "expected one of visits"),
    ("mccfr", "needs a variant"),
    ("mccfr:chance?iterations=5", "needs a variant"),
    ("mccfr:outcome", "needs a budget"),
    ("mccfr:external?epsilon=0.1&iterations=5", "unknown option 'epsilon'"),
    ("mccfr:outcome?iterations=-1", "iterations must be at least 0"),
    ("tabular", "needs a policy file"),
    ("tabular:/nonexistent/policy.json", "cannot read policy file"),
])
def test_make_agent_errors(spec, message):
    with pytest.raises(AgentError, match=message):
        make_agent(spec, _game("kuhn_poker"))


def test_register_a_kind():
    game = _game("kuhn_poker")

    def factory(game, arg, params):
        kw = take_params("test_kind", params, {"bias": float})
        agent = RandomAgent(game)
        agent.arg, agent.bias = arg, kw.get("bias")
        return agent

    register("test_kind", factory)
    register("test_kind", factory)  # the same factory again is fine
    a = make_agent("test_kind:foo?bias=0.5", game)
    assert (a.arg, a.bias) == ("foo", 0.5)
    with pytest.raises(AgentError, match="already registered"):
        register("test_kind", lambda g, a, p: RandomAgent(g))
    with pytest.raises(AgentError, match="bad value 'x' for 'bias'"):
        make_agent("test_kind?bias=x", game)
    register("test_kind2", lambda g, a, p: "not an agent")
    with pytest.raises(AgentError, match="not an Agent"):
        make_agent("test_kind2", game)


# ---- matches ------------------------------------------------------------------------
def test_equilibrium_beats_random_on_kuhn():
    game = _game("kuhn_poker")
    solver = CFRSolver(full_tree(game).ct)
    solver.iterate(300)
    eq = tabular_from_array(game, solver.average_policy())
    uniform = TabularPolicy(game)
    # exact: a's expected return as player 0 and as player 1, averaged over seats
    exact = 0.5 * (policy_pair_value(game, eq, uniform) - policy_pair_value(game, uniform, eq))
    assert exact > 0.1
    result = play_match(game, TabularAgent(game, eq), RandomAgent(game), games=3000, seed=0)
    assert result["mean"] > 0
    low, high = result["ci95"]
    assert low < exact < high, (exact, result["ci95"])
    assert low > 0  # significantly positive
    assert result["stderr"] > 0 and high - low == pytest.approx(2 * 1.959964 * result["stderr"])
    # deterministic for a seed
    again = play_match(game, TabularAgent(game, eq), RandomAgent(game), games=3000, seed=0)
    assert again["returns"] == result["returns"]


def test_match_deterministic_and_seeded():
    game = _game("leduc_poker")
    r1 = play_match(game, RandomAgent(game), RandomAgent(game), games=20, seed=4)
    r2 = play_match(game, RandomAgent(game), RandomAgent(game), games=20, seed=4)
    r3 = play_match(game, RandomAgent(game), RandomAgent(game), games=20, seed=5)
    assert r1["returns"] == r2["returns"] and r1["games"] == r2["games"]
    assert r1["returns"] != r3["returns"]
    with pytest.raises(ValueError):
        play_match(game, RandomAgent(game), RandomAgent(game), games=0)


def test_policy_pair_value_matches_policy_value():
    from sog.search.full_tree import policy_value
    game = _game("leduc_poker")
    solver = CFRSolver(full_tree(game).ct)
    solver.iterate(5)
    p = tabular_from_array(game, solver.average_policy())
    assert policy_pair_value(game, p, p) == pytest.approx(policy_value(game, p))


# ---- the baselines command ------------------------------------------------------------------
def test_baselines_command_on_kuhn():
    from launch import baselines
    parser = argparse.ArgumentParser()
    baselines.add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["baselines", "--game", "kuhn_poker", "--budget", "0.05"])
    assert args.func is baselines.run
    result = args.func(args)
    rows = {r["name"]: r for r in result["baselines"]}
    assert list(rows) == list(baselines.BASELINES)
    for r in rows.values():
        assert 0 <= r["exploitability"] < 1.0 and r["iterations"] >= 1
        assert r["exploitability_mbb"] == pytest.approx(1000 * r["exploitability"])
    assert result["best"] in rows
    import json
    json.dumps(result)
    only = baselines.run(argparse.Namespace(game="kuhn_poker", budget=0.02, only="uct,external", seed=1))
    assert [r["name"] for r in only["baselines"]] == ["uct", "external"]


@pytest.mark.parametrize("only,budget,game,message", [
    ("uct,foo", 0.1, "kuhn_poker", "unknown baseline"),
    (None, 0.0, "kuhn_poker", "budget must be positive"),
    (None, 0.1, "nochess", "unknown game"),
])
def test_baselines_command_errors(only, budget, game, message):
    from launch import baselines
    from launch.cli import UserError
    with pytest.raises(UserError, match=message):
        baselines.run(argparse.Namespace(game=game, budget=budget, only=only, seed=0))


@pytest.mark.parametrize("game", ["chess", "go", "go(board_size=19)"])
def test_baselines_refuse_board_games_before_running(game):
    """Chess and Go know their full trees are too large for the exact best response that ends
    every baseline: refused at once (not after the samplers ran and filled the memory)."""
    from launch import baselines
    from sog.search.tree import TreeTooLarge
    with pytest.raises(TreeTooLarge, match="at least"):
        baselines.run(argparse.Namespace(game=game, budget=0.1, only=None, seed=0))
