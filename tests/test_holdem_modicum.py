"""Modicum through the agent API (sog.agents.holdem.seats.modicum; `modicum:` in the two-player registry) and
the depth-limited search's root (sog.agents.holdem.table.search.search_root), on the 8-card two-round
no-limit game of tests/test_holdem_blueprint_agent.py and a blueprint of it trained by `sog blueprint`:
a search is rooted at the start of its betting round and its solution plays the round's later
decisions (below the blueprint's exact exploitability, where re-solving at every decision was
above it); the registry agent plays the blueprint, the search and the end-game solver each on its
rounds, has no strategy table on the searched rounds, plays a tournament with AIVAT, and its bad
options are one error."""
from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from test_holdem_blueprint_agent import GAME, TWIN, write_config
from test_table_endgame import exploitability

from launch.blueprint_agent import register_blueprint_agent
from launch.cli import main
from sog.agents.api import AgentError
from sog.agents.holdem.seats.endgame import HoldemEndgameAgent, off_tree
from sog.agents.holdem.seats.modicum import HoldemModicumAgent
from sog.agents.holdem.table.endgame import EndgameAgent, EndgameSettings, round_start
from sog.agents.holdem.table.modicum import RANGES, ModicumAgent, ModicumSettings
from sog.agents.holdem.table.search import SearchAgent, SearchSettings, search_root
from sog.agents.registry import make_agent
from sog.games import load_game
from sog.games.api import DECISION
from sog.search.full_tree import full_tree


@pytest.fixture(scope="module")
def config(tmp_path_factory):
    """A blueprint config of GAME, trained (1000 iterations, as the end-game registry test's)."""
    tmp = tmp_path_factory.mktemp("modicum")
    config = write_config(tmp, tmp / "out")
    assert main(["blueprint", "--config", config]) == 0
    register_blueprint_agent()
    return config


def _modicum(config, options: str, game=None) -> HoldemModicumAgent:
    agent = make_agent(f"modicum:{config}?{options}", game or load_game(GAME))
    assert isinstance(agent, HoldemModicumAgent)
    return agent


def test_search_roots(config):
    """Depth 0: the first decision of the node's round; depth d: the decision on its path a multiple
    of d actions below that, nearest the node (the node itself for d = 1)."""
    table = _modicum(config, "search.first_round=1").table
    bt = table.betting
    for node in np.flatnonzero(bt.kind == DECISION).tolist():
        start = round_start(table, node)
        chain = [node]
        while chain[-1] != start:
            chain.append(int(table.parent[chain[-1]]))
        m = len(chain) - 1
        assert search_root(table, node, 0) == start
        assert search_root(table, node, 1) == node
        assert search_root(table, node, 2) == chain[m % 2]


def test_a_search_rooted_at_the_round_start_plays_its_round_below_the_blueprint(config):
    """The last round searched at the blueprint's table: one search per (round start, board) (every
    deal listed: the same search whatever the searcher holds), whose solution plays every later
    decision of the round; the exact exploitability falls below the blueprint's (measured 269.9 ->
    227.3 mbb/hand; re-solving at each decision from the blueprint's beliefs gave 400.6)."""
    agent = _modicum(config, "search.first_round=1")
    table, bp = agent.table, agent.modicum.blueprint
    deals = np.array(list(itertools.permutations(range(table.deck.size), 3)), dtype=np.int64)
    search = SearchAgent(bp, SearchSettings(iterations=100, first_round=1))
    blueprint, searched = exploitability(table, deals, bp), exploitability(table, deals, search)
    assert searched < 0.9 * blueprint, (blueprint, searched)
    assert 0 < search.searches < search.decisions
    bt = table.betting
    node = next(n for n in np.flatnonzero((bt.kind == DECISION) & (bt.round == 1)).tolist()
                if round_start(table, n) != n and bt.actor[n] == bt.actor[round_start(table, n)])
    seat, deal = int(bt.actor[node]), deals[0].copy()
    fresh = SearchAgent(bp, SearchSettings(iterations=100, first_round=1))
    row = fresh.decide(table, node, deal, seat)
    first = fresh.decide(table, round_start(table, node), deal, seat)
    assert fresh.searches == 1 and fresh.decisions == 2
    assert row.sum() == pytest.approx(1.0) and first.sum() == pytest.approx(1.0)


@pytest.mark.slow          # five exact best responses (~40 s)
def test_modicum_is_less_exploitable_than_its_parts(config):
    """At the blueprint's table: both rounds searched (100 iterations; the second from beliefs that
    weigh the first by the search's strategy), the first round's leaves valued on 16 run-outs a joint
    hand is less exploitable than on one (a leaf valued on one run-out is noise the search fits),
    both below the blueprint; Modicum (the second round solved from such beliefs) is below the
    end-game solver alone. Measured (mbb/hand): blueprint 269.9; search 178.2 with one run-out, 134.5
    with 16 (210.6 and 179.0 with the second round's beliefs by the blueprint); end-game solver alone
    145.4; Modicum 154.6, 122.0, 101.6 with 1, 4, 16 run-outs."""
    agent = _modicum(config, "search.first_round=1")
    table, bp = agent.table, agent.modicum.blueprint
    deals = np.array(list(itertools.permutations(range(table.deck.size), 3)), dtype=np.int64)

    def search(runouts: int) -> SearchSettings:
        return SearchSettings(iterations=100, first_round=0, runouts=runouts)

    blueprint = exploitability(table, deals, bp)
    one, sixteen = (exploitability(table, deals, SearchAgent(bp, search(r))) for r in (1, 16))
    endgame = exploitability(table, deals, EndgameAgent(bp, EndgameSettings(300, 1)))
    modicum = exploitability(table, deals, ModicumAgent(bp, ModicumSettings(search(16), EndgameSettings(300, 1))))
    assert modicum < 0.8 * endgame < 0.8 * blueprint and sixteen < 0.95 * one < 0.9 * blueprint, \
        (blueprint, one, sixteen, endgame, modicum)


def test_a_round_too_large_for_the_endgame_solver_is_searched(config):
    """Where the end-game solver's game is too large (`endgame.max_nodes`), Modicum plays the blueprint
    there, or with `too_large=search` the depth-limited search (to the end of the round): at the table
    the same rows as the search alone, bit for bit; through the registry the search's strategy for
    every hand (every deal listed). Measured (mbb/hand, exact; both rounds searched, 1 / 16 run-outs):
    178.2 / 134.5, where the second round played by the blueprint gave 207.4 / 178.4 (the blueprint
    269.9); in HUNL it measured behind (`sog.agents.holdem.table.modicum`), hence not the default."""
    game = load_game(GAME)
    options = "search.first_round=0&endgame.first_round=1&search.iterations=20"
    agent = _modicum(config, options + "&endgame.max_nodes=1&too_large=search")
    default = _modicum(config, options + "&endgame.max_nodes=1")
    table, bp = agent.table, agent.modicum.blueprint
    search = SearchAgent(bp, SearchSettings(iterations=20, first_round=0, ranges=RANGES))     # Modicum's default
    bt = table.betting
    deals = np.array(list(itertools.permutations(range(table.deck.size), 3)), dtype=np.int64)[::5]
    second = np.flatnonzero((bt.kind == DECISION) & (bt.round == 1))[::3]
    for node in second.tolist():
        for deal in deals[:4]:
            seat = int(bt.actor[node])
            np.testing.assert_array_equal(agent.modicum.decide(table, node, deal, seat),
                                          search.decide(table, node, deal, seat))
            codes = bp.prepare(table, deal[None])
            np.testing.assert_array_equal(default.modicum.decide(table, node, deal, seat),
                                          bp.probs(table, np.array([node]), np.array([0]), np.array([seat]), codes)[0])
    assert agent.modicum.endgame.solves == 0 and agent.modicum.search.searches > 1
    pubs = [p for p in full_tree(game).decision_pubs if game.betting_state(p).round == 1][::9]
    on = [p for p in pubs if agent._search_node(p) is not None]
    assert len(on) > 5 and all(default._search_node(p) is None for p in on)
    for pub in on[:6]:
        decision, node = agent._search_node(pub)
        want = agent._in_game(pub, decision, search.every_hand(table, node, decision[4]))
        np.testing.assert_allclose(agent.strategy_table([pub]), want, atol=1e-12)


def _rows(agent, game, pubs) -> np.ndarray:
    """float [P, N, A]: the agent's `strategy` at each decision of `pubs` for every possible hand."""
    out = np.zeros((len(pubs), game.spec.num_states, game.spec.num_actions))
    for i, pub in enumerate(pubs):
        actor = game.actor(pub)
        agent.reset(actor, 0)
        for s in np.flatnonzero(game.cached("possible_mask", pub)[actor]).tolist():
            out[i, s] = agent.strategy([pub], s)
    return out


def test_each_round_is_played_by_its_part(config):
    """In the blueprint's own game: before search.first_round the blueprint agent's play, on the
    searched round the table search's row for the hand held at decisions on the abstract tree (bets
    off it are searched: a test of their own) (its strategy table's row: every deal is listed; NaN
    where deals are sampled; where the real history has no abstract decision every hand calls, as the
    blueprint agent plays it), from endgame.first_round on the end-game agent's whose beliefs weigh
    the searched round's actions by the search's strategy (every deal listed here), bit for bit."""
    game = load_game(GAME)
    pubs = full_tree(game).decision_pubs
    first = [p for p in pubs if game.betting_state(p).round == 0]
    second = [p for p in pubs if game.betting_state(p).round == 1][::7]
    blueprint = make_agent(f"blueprint:{config}", game)
    searched = _modicum(config, "search.first_round=1&endgame.first_round=9&search.iterations=20")
    np.testing.assert_array_equal(_rows(searched, game, first), _rows(blueprint, game, first))
    on = [p for p in second if searched._search_node(p) is not None and not off_tree(searched._abstract_decision(p))]
    assert len(on) > 12
    sampled = _modicum(config, "search.first_round=1&endgame.first_round=9&search.iterations=20&search.exact=0"
                       "&search.ranges=0")
    for pub in on[:12]:
        assert np.isnan(sampled.strategy_table([pub])).all()
        decision, node = searched._search_node(pub)
        actor = game.actor(pub)
        s = int(np.flatnonzero(game.cached("possible_mask", pub)[actor])[0])
        searched.reset(actor, 0)
        got = searched.strategy([pub], s)
        table = searched.table
        cards = np.zeros(table.num_cards, np.int64)
        cards[actor * table.hole:(actor + 1) * table.hole] = table.deck.hands[s]
        cards[table.held:table.held + len(decision[4])] = decision[4]
        own = SearchAgent(searched.modicum.blueprint, searched.modicum.settings.search)
        want = searched._in_game(pub, decision, own.decide(table, node, cards, actor)[:len(
            searched._abstract_actions(decision))])
        legal = game.cached("legal_mask", pub)[s]
        np.testing.assert_allclose(got, want * legal / (want * legal).sum(), atol=1e-12)
        np.testing.assert_allclose(searched.strategy_table([pub])[s], want, atol=1e-12)
    solved = _modicum(config, "search.first_round=0&endgame.first_round=1&endgame.iterations=50&search.iterations=5"
                      "&off_tree=search_endgame")       # off-tree solves from the translated path, as `endgame`
    plain = make_agent(f"endgame:{config}?first_round=1&iterations=50", game)    # the blueprint's beliefs
    bp, settings = solved.modicum.blueprint, solved.modicum.settings
    own = EndgameAgent(bp, settings.endgame)
    own.before = SearchAgent(bp, settings.search).every_hand         # beliefs by the first round's search
    endgame = HoldemEndgameAgent(game, solved.blueprint_game, solved.bet_sizes, solved.table, own)
    rows = _rows(solved, game, second)
    np.testing.assert_array_equal(rows, _rows(endgame, game, second))
    assert np.abs(rows - _rows(plain, game, second)).max() > 0.05
    assert solved.stats()["search"]["searches"] > 0


def test_off_tree_bets_searched_on_the_searched_round(config):
    """`off_tree=search` (the default): at a decision of the searched round whose real chips are off the
    abstraction the agent plays the search of a table of the real moves rooted at the round's start
    (`sog.agents.holdem.table.scripted_tree`), one search serving the round's later decisions its tree reaches, every
    deal listed (so a strategy for every hand); on-tree decisions are played as with
    `off_tree=search_endgame` (such decisions translated on this round); the exact exploitability is that
    of translating them (in this game translation errs little; measured in chips a hand, the end game
    solved for 100 iterations: blueprint 0.305, those of the searched round translated 0.139, none
    0.132; 0.126 and 0.127 at 300 iterations)."""
    from sog.search.full_tree import exploitability

    game = load_game(GAME)
    ft = full_tree(game)
    options = "search.first_round=0&endgame.first_round=1&endgame.iterations=100&search.runouts=4"
    agent = _modicum(config, options)
    plain = _modicum(config, options + "&off_tree=search_endgame")
    tables = np.stack([agent.strategy_table([pub]) for pub in ft.decision_pubs])
    translated = np.stack([plain.strategy_table([pub]) for pub in ft.decision_pubs])
    assert np.isfinite(tables).all()
    first = [i for i, p in enumerate(ft.decision_pubs) if game.betting_state(p).round == 0]
    away = [i for i in first if agent._search_node(ft.decision_pubs[i]) is not None
            and off_tree(agent._abstract_decision(ft.decision_pubs[i]))]
    spots = agent.stats()["off_tree_search"]["spots"]
    assert 0 < spots < len(away), (spots, len(away))
    on = [i for i in first if i not in away]
    np.testing.assert_allclose(tables[on], translated[on], atol=1e-12)
    assert not np.allclose(tables[away], translated[away])
    searched, translated = exploitability(game, tables), exploitability(game, translated)
    assert searched < 1.05 * translated, (searched, translated)
    with pytest.raises(AgentError, match="bad value 'search_endgame'"):
        make_agent(f"endgame:{config}?off_tree=search_endgame", game)


@pytest.mark.slow          # four agents' strategy at every decision (~30 s)
def test_searching_off_tree_bets_beats_translating_them(config):
    """Exact exploitability, chips a hand: with the first round searched and the second solved, every
    off-tree bet translated (0.151) is above searching them (0.127, Modicum's default; 0.126 searched
    on the second round only); with the last round searched to the end of the game (no end-game
    solver), searching them beats translating them: 0.251 against 0.290."""
    from sog.search.full_tree import exploitability

    game = load_game(GAME)
    ft = full_tree(game)

    def of(options: str) -> float:
        agent = _modicum(config, options)
        return exploitability(game, np.stack([agent.strategy_table([pub]) for pub in ft.decision_pubs]))

    first = "search.first_round=0&endgame.first_round=1&endgame.iterations=300&search.runouts=4"
    assert of(first) < 0.9 * of(first + "&off_tree=translate")
    last = "search.first_round=1&endgame.first_round=2"
    searched, translated = of(last), of(last + "&off_tree=search_endgame")
    assert searched < 0.9 * translated, (searched, translated)


def test_a_tournament_in_the_sog_twin_with_aivat(config, tmp_path):
    """In the f x pot twin (its bets off the abstraction, searched on every round) it plays legal actions
    through `sog tournament`, AIVAT on every deal."""
    tour = tmp_path / "t.yaml"
    tour.write_text(f"game: {TWIN}\nagents:\n  modicum: 'modicum:{config}?search.first_round=0&search.iterations=10"
                    f"&endgame.iterations=30'\n  blueprint: 'blueprint:{config}'\ngames_per_pair: 8\naivat: true\n"
                    "aivat_value: checkdown\n")
    assert main(["tournament", "--config", str(tour), "--out", str(tmp_path / "t"), "--quiet"]) == 0
    (pair,) = json.loads((tmp_path / "t" / "report.json").read_text())["pairs"]
    assert {pair["a"], pair["b"]} == {"modicum", "blueprint"} and pair["games"] == 8 and pair["aivat"]["n"] == 4


def test_bad_options_are_one_error(config, tmp_path, capsys):
    game = load_game(GAME)
    for options, needle in (("search.first_round=2&endgame.first_round=1", "must be below"),
                            ("iterations=5", "unknown option 'iterations'"),
                            ("endgame.resolve=maybe", "resolve"),
                            ("search.deals=0", "deals must be at least 1"),
                            ("off_tree=guess", "bad value 'guess' for 'off_tree'"),
                            ("too_large=maybe", "too_large")):
        with pytest.raises(AgentError, match=needle):
            make_agent(f"modicum:{config}?{options}", game)
    with pytest.raises(AgentError, match="needs a blueprint config"):
        make_agent("modicum", game)
    with pytest.raises(AgentError, match="two-player hold'em"):
        make_agent(f"modicum:{config}", load_game("kuhn_poker"))
    tour = tmp_path / "t.yaml"
    tour.write_text(f"game: {TWIN}\nagents:\n  m: 'modicum:{config}?search.deals=0'\n  call: call\ngames_per_pair: 2\n")
    capsys.readouterr()
    assert main(["tournament", "--config", str(tour), "--out", str(tmp_path / "t")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "deals must be at least 1" in err[0]


def test_lbr_refuses_it_where_its_searches_sample_deals(config, capsys):
    """LBR ranges its opponent by the strategy of every hand; a search on sampled deals has one only for
    the hand it holds (asking it hand by hand would be a search per hand): one line, exit status 2.
    Where the search lists every deal, or is the range search (the default), LBR plays it."""
    spec = f"modicum:{config}?search.first_round=0&search.iterations=5&endgame.iterations=20"
    capsys.readouterr()
    assert main(["lbr", "--game", TWIN, "--agent", spec + "&search.exact=0&search.ranges=0", "--hands", "4"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "has none" in err[0], err
    assert main(["lbr", "--game", TWIN, "--agent", spec, "--hands", "4"]) == 0

