"""Full-range end-game solving at a two-player table (`sog.agents.holdem.table.endgame`, its game
`sog.agents.holdem.table.subgame`), on the 8-card game of tests/test_table_lbr.py whose every deal
can be enumerated: the subgame's payoffs are the table's, the whole game solved through it is an
equilibrium by the table's own exact best response, the agent plays the range it reports (LBR's
Bayes rule hand by hand), end-game solving from the second round is less exploitable than the
blueprint it starts from, and LBR against it is at most the best response."""
from __future__ import annotations

import numpy as np
import pytest
from test_table_lbr import GAME, _config, _lbr, check_ranges, exact, random_blueprint
from test_table_lbr import deals as deals  # noqa: F401 - the enumerated deals fixture

from launch.cli import main
from sog.agents.holdem.table.endgame import EndgameAgent, EndgameSettings, round_start
from sog.agents.holdem.table.subgame import TableSubgame, TableSubgameError
from sog.eval.table.lbr import TableLBR
from sog.eval.table.tournament import Table, terminal_chips
from sog.games.api import CHANCE, DECISION, TERMINAL
from sog.multiplayer import load_game


@pytest.fixture(scope="module")
def table():
    return Table(load_game(GAME, 2))


def exploitability(table, deals, agent) -> float:
    """mbb/hand: the mean over both seats of the exact best response's value against `agent`."""
    return 1000 * float(np.mean([exact(table, deals, s, agent) for s in (0, 1)]))


def test_subgame_payoffs_and_deals_are_the_tables(table, deals):
    """Every terminal of the game below the first decision, on each full board, pays what the
    table's showdown and folds pay (`terminal_chips`) for every pair of disjoint hands; a chance
    node deals each card left with the same probability."""
    bt, deck = table.betting, table.deck
    start = round_start(table, int(np.flatnonzero(bt.kind == DECISION)[0]))
    game = TableSubgame(table, start, ())
    pubs, stack, checked = [], [game.root()], 0
    while stack:
        pub = stack.pop()
        pubs.append(pub)
        stack.extend(c.pub for c in game.children(pub))
        if game.kind(pub) == CHANCE:
            probs = [c.prob for c in game.children(pub)]
            assert len(set(probs)) == 1 and probs[0] == pytest.approx(1 / (deck.size - 4))
    for pub in pubs:
        if game.kind(pub) != TERMINAL or len(pub[1]) != table.board:
            continue
        u = game.utility(pub)
        rows = deals[(np.sort(deals[:, table.held:], axis=1) == np.array(pub[1])).all(axis=1)]
        ranks = table._ranks(rows, rows[:, None, table.held:])[:, 0, :]
        chips = np.zeros((len(rows), 2))
        terminal_chips(bt.spent, bt.folded, np.full(len(rows), pub[0]), ranks, chips)
        h0 = [deck.hand_index(r[:2].tolist()) for r in rows]
        h1 = [deck.hand_index(r[2:4].tolist()) for r in rows]
        assert np.allclose(u[h0, h1], chips[:, 0])
        checked += 1
    assert checked > 20
    with pytest.raises(TableSubgameError, match="not a decision"):
        TableSubgame(table, 0, ())


def test_whole_game_solved_through_the_subgame_is_an_equilibrium(table, deals):
    """With first_round 0 and no re-solving the agent plays CFR+'s average policy of the whole
    game: the table's exact best response (an independent walk of the betting tree over every
    deal) finds its exploitability falling towards 0."""
    bp = random_blueprint(table, 4)
    got = [exploitability(table, deals, EndgameAgent(bp, EndgameSettings(it, 0, resolve="none")))
           for it in (10, 100, 1000)]
    assert got[0] > got[1] > got[2] and got[2] < 0.5, got        # measured: 244.3, 5.76, 0.114 mbb/hand
    assert exploitability(table, deals, bp) > 1000


def test_safe_resolving_keeps_what_unsafe_resolving_loses(table, deals):
    """Solving the whole game, then re-solving the second round at each board: unsafe re-solving
    at the first solve's ranges picks other equilibria of the subgame, which the first round does
    not fit; the gadget's re-solve concedes no opponent hand more than the first solve did."""
    bp = random_blueprint(table, 4)
    unsafe = exploitability(table, deals, EndgameAgent(bp, EndgameSettings(300, 0, "unsafe")))
    safe = exploitability(table, deals, EndgameAgent(bp, EndgameSettings(300, 0, "safe")))
    assert safe < 0.25 * unsafe and safe < 6, (safe, unsafe)     # measured: 3.89 against 28.41 mbb/hand


def test_endgame_solving_is_less_exploitable_than_its_blueprint(table, deals):
    """Solving the second round for every hand at the blueprint's ranges, re-solved at each board,
    halves a random blueprint's exploitability; safely (a gadget whose Terminate values are the
    opponent's values under the blueprint) a little more than unsafely."""
    bp = random_blueprint(table, 4)
    agent = EndgameAgent(bp, EndgameSettings(100, 1))
    before, after = exploitability(table, deals, bp), exploitability(table, deals, agent)
    unsafe = exploitability(table, deals, EndgameAgent(bp, EndgameSettings(100, 1, "unsafe")))
    assert after < unsafe < 0.6 * before, (before, after, unsafe)      # measured: 1551.3, 782.6, 823.2
    stats = agent.stats()
    assert stats["solves"] > 0 and stats["decisions"] > 0 and stats["subgame_nodes_per_solve"] > 1
    capped = EndgameAgent(bp, EndgameSettings(100, 1, max_nodes=1))     # every round too large: the blueprint
    assert exploitability(table, deals, capped) == pytest.approx(before, abs=1e-9)
    assert capped.stats()["solves"] == 0 and capped.stats()["too_large"] > 0


def test_plays_the_range_it_reports(table):
    """At LBR's decisions of played hands, the end-game agent's range (`beliefs`, what LBR reads)
    is Bayes' rule with the distributions it plays, hand by hand; the distribution it plays for a
    deal is its row for every hand; decisions do not depend on the batch."""
    agent = EndgameAgent(random_blueprint(table, 1), EndgameSettings(50, 1))
    assert check_ranges(table, agent, first_round=1) > 10
    fresh = EndgameAgent(random_blueprint(table, 1), EndgameSettings(50, 1))
    nodes = np.flatnonzero((table.betting.kind == DECISION) & (table.betting.round == 1))[:3]
    deal = table.deal(np.random.default_rng(2), 1)
    for node in nodes.tolist():
        actor = int(table.betting.actor[node])
        one = fresh.probs(table, np.array([node]), np.array([0]), np.array([actor]), fresh.prepare(table, deal))[0]
        hand = table.deck.hand_index(deal[0, 2 * actor:2 * actor + 2].tolist())
        assert np.allclose(one, agent.hand_probs(table, node, deal[0, table.held:table.held + 1], actor)[hand])


def test_lbr_against_endgame_solving_is_at_most_the_best_response(table, deals):
    agent = EndgameAgent(random_blueprint(table, 4), EndgameSettings(100, 1))
    lbr = TableLBR(table, agent)
    for seat in (0, 1):
        assert exact(table, deals, seat, agent, lbr) <= exact(table, deals, seat, agent) + 1e-9


def test_bad_settings_are_one_line(tmp_path, capsys):
    bp = _config(tmp_path, "bp")
    for spec, needle in ((f"endgame:{bp}?iterations=0", "iterations must be at least 1"),
                         (f"endgame:{bp}?depth=2", "unknown option 'depth'"),
                         (f"endgame:{bp}?resolve=maybe", "resolve"),
                         (f"endgame:{bp}", "no blueprint file")):
        rc, out = _lbr(capsys, "--config", bp, "--agent", spec)
        err = out.err.strip().splitlines()
        assert rc == 2 and len(err) == 1 and needle in err[0], (spec, out.err)
    assert main(["lbr", "--config", "configs/blueprints/sixmax_small.yaml", "--agent", "call"]) == 2


def test_refused_at_a_table_of_more_players(tmp_path):
    from launch.console import UserError
    from launch.table import make_table_agent
    from sog.multiplayer.holdem import Holdem

    three = Table(Holdem(3, betting="limit", numRounds=1, blind="10 5 0", raiseSize="10", firstPlayer="3",
                         maxRaises="1", numRanks=4, numSuits=2, numHoleCards=1, numBoardCards="0"))
    with pytest.raises(UserError, match="two-player; the table has 3 players"):
        make_table_agent("eg", f"endgame:{_config(tmp_path, 'bp')}", three)
    with pytest.raises(TableSubgameError, match="two players"):
        TableSubgame(three, int(np.flatnonzero(three.betting.kind == DECISION)[0]), ())
