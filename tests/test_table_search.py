"""Pluribus's real-time search at the table (`sog.agents.holdem.table.search`, `subgame_tree`, `subgame_cfr`):
the solver against an exact best response where the subgame is the whole game, the continuation
leaves' values against brute force, the blueprint reproduced by zero iterations, legal and
reproducible play, and the spec's bad options."""
from __future__ import annotations

import copy
import itertools

import numpy as np
import pytest

from sog.agents.holdem.table.agents import canonical
from sog.agents.holdem.table.search import SearchAgent, SearchSettings, search_root
from sog.agents.holdem.table.subgame_cfr import PICKS, SubgameCFR, leaf_utilities, profiles
from sog.agents.holdem.table.subgame_tree import SubgameTree, subgame_deals
from sog.eval.table.tournament import CallAgent, Table, TableError, play_match
from sog.games.api import CHANCE
from sog.multiplayer import load_game
from sog.multiplayer.best_response import Evaluator

HEADS_UP = ("holdem(betting=limit,numRounds=1,blind=5 10,raiseSize=10,firstPlayer=1,maxRaises=3,stack=1200 1200,"
            "numRanks=4,numSuits=2,numHoleCards=1,numBoardCards=0)")


def _first_decision(bt, node=0):
    while bt.kind[node] == CHANCE:
        node = int(bt.child[node, 0])
    return node


def _whole_game(table, root, rng):
    """(tree, SubgameCFR arguments) of a whole one-round game from its first decision: every deal,
    uniform beliefs, the uniform policy as the default."""
    bt, n = table.betting, table.players
    tree = SubgameTree(bt, root)
    uniform = np.ones((n, table.deck.num_hands))
    hands, weights, cards = subgame_deals(table, uniform, np.arange(n), np.zeros(0, np.int64), 0, 0, 16, 10**6,
                                          0.25, rng)
    default = table.legal(tree.nodes[tree.dec])[:, None, :] / bt.num_actions[tree.nodes[tree.dec]][:, None, None]
    default = np.broadcast_to(default, (len(tree.dec), table.deck.num_hands, table.width))
    picks = profiles(0, 16)
    term, cont = leaf_utilities(table, tree, cards, CallAgent(), np.zeros(0, np.int64), picks, 0)
    return tree, (tree, hands, weights, default, term, cont, np.zeros(0, np.int64), picks)


def _solve(table, root, iterations, rng):
    """SubgameCFR on every deal of a whole one-round game from its first decision, uniform beliefs."""
    tree, args = _whole_game(table, root, rng)
    solver = SubgameCFR(*args)
    solver.run(iterations)
    return tree, solver


def _policy(table, tree, strategy):
    """The OpenSpiel-keyed policy of a solved whole game: strategy float [Dn, N, K] per hand."""
    game, bt, deck = table.game, table.betting, table.deck
    local = {int(x): i for i, x in enumerate(tree.nodes)}
    policy = {}

    def walk(st, node):
        if st.is_terminal():
            return
        if st.is_chance():
            for a, _ in st.chance_outcomes():
                walk(st.child(a), int(bt.child[node, 0]))
            return
        p = st.current_player()
        x = tree.dec_of[local[node]]
        probs = strategy[x, deck.hand_index(list(st.hole[p]))]
        acts = bt.action[node, :bt.num_actions[node]]
        policy[st.information_state(p)] = [(int(a), float(q)) for a, q in zip(acts, probs)]
        for j, a in enumerate(acts):
            walk(st.child(int(a)), int(bt.child[node, j]))
    walk(game.initial_state(), 0)
    return policy


def test_whole_game_solve_has_near_zero_exploitability():
    """Two players, one betting round, every deal listed, terminal leaves: the subgame is the whole
    game, so linear CFR's average strategy must approach a Nash equilibrium (exact best response,
    `sog.multiplayer.best_response`), far below the uniform policy's NashConv."""
    table = Table(load_game(HEADS_UP, 2))
    root = _first_decision(table.betting)
    tree, solver = _solve(table, root, 2000, np.random.default_rng(0))
    assert len(solver.loc) == 8 * 7 and len(tree.cont) == 0        # every deal, no continuation leaf
    ev = Evaluator(table.game)
    solved = ev.nash_conv(_policy(table, tree, solver.average_strategy()))
    uniform = ev.nash_conv(_policy(table, tree, solver.default))
    print(solved, uniform)
    assert solved < 0.01 * uniform


# ---- on a four-player table with a random blueprint ------------------------------------------------
@pytest.fixture(scope="module")
def small():
    from test_table_eval import SMALL, _small_blueprint

    table = Table(load_game(SMALL, 4))
    return table, _small_blueprint(table, seed=2)[0]


def _postflop_decision(table, agent, seed=0):
    """(node, cards row, seat) of a second-round decision reached by `agent`'s play."""
    cards = table.deal(np.random.default_rng(seed), 40)
    paths, _ = table.play(agent, agent, cards, np.arange(40), np.zeros(40, np.int64), np.random.default_rng(seed))
    bt = table.betting
    t, h = np.nonzero((bt.kind[paths] == 0) & (bt.round[paths] == 1) & (bt.folded[paths].sum(axis=-1) <= 1))
    node = int(paths[t[0], h[0]])
    return node, cards[h[0]], int(bt.actor[node])


def test_subgame_tree_is_the_round_below_the_node(small):
    table, _ = small
    bt = table.betting
    node = _first_decision(bt)
    for depth in (0, 1, 2):
        tree = SubgameTree(bt, node, depth)
        want, stack = set(), [(node, 0)]
        while stack:                                 # depth first, by hand
            x, d = stack.pop()
            want.add(x)
            if bt.kind[x] == 0 and bt.round[x] == bt.round[node] and (depth == 0 or d < depth):
                stack += [(int(c), d + 1) for c in bt.child[x, :bt.num_actions[x]]]
        assert sorted(tree.nodes.tolist()) == sorted(want) and len(set(tree.nodes.tolist())) == tree.size
        assert np.all(tree.dec_of[tree.dec] == np.arange(len(tree.dec))) and tree.dec[0] == 0
        inner = tree.kids[tree.dec]
        ok = inner >= 0
        assert np.array_equal(tree.nodes[inner[ok]], bt.child[tree.nodes[tree.dec]][ok])
        assert np.all(inner[ok] > np.repeat(tree.dec, ok.sum(axis=1)))          # parents first
        leaves = np.setdiff1d(np.arange(tree.size), tree.dec)
        assert np.array_equal(np.sort(np.concatenate([tree.term, tree.cont])), leaves)
        assert (bt.kind[tree.nodes[tree.term]] == 2).all() and (bt.kind[tree.nodes[tree.cont]] != 2).all()
    assert len(SubgameTree(bt, node, 1).cont) > 0 and len(SubgameTree(bt, node, 0).cont) > 0  # the flop's deal


def test_deals_follow_the_beliefs(small):
    """Listed deals carry the normalised product of the ranges over card-disjoint hands; sampled ones,
    importance-weighted, give the searcher's range back (its own hand drawn in `mix` of them)."""
    table, _ = small
    rng = np.random.default_rng(0)
    n, hands_n = table.players, table.deck.num_hands
    beliefs = rng.random((n, hands_n))
    board = np.array([3], np.int64)
    beliefs[:, (table.deck.hand_masks & table.deck.card_masks(board[None])[0]) != 0] = 0.0
    seats = np.array([0, 2, 3])
    hands, w, cards = subgame_deals(table, beliefs, seats, board, 2, 4, 64, 10**6, 0.25, rng)
    b = beliefs / beliefs.sum(axis=1, keepdims=True)
    want = {}
    for combo in itertools.product(range(hands_n), repeat=3):
        cs = [int(table.deck.hands[h, 0]) for h in combo]
        if len(set(cs)) == 3 and 3 not in cs:
            want[combo] = b[0, combo[0]] * b[2, combo[1]] * b[3, combo[2]]
    total = sum(want.values())
    got = {tuple(h): x for h, x in zip(hands[:, seats].tolist(), w)}
    assert got.keys() == want.keys() and all(abs(got[k] - want[k] / total) < 1e-12 for k in got)
    assert (hands[:, 1] == -1).all() and all(len(set(row)) == len(row) for row in cards.tolist())
    assert np.all(cards[:, 0] == table.deck.hands[hands[:, 0], 0]) and np.all(cards[:, table.held] == 3)
    hands, w, _ = subgame_deals(table, beliefs, seats, board, 2, 4, 40000, 0, 0.25, rng)
    share = np.bincount(hands[:, 2], weights=w, minlength=hands_n)
    exact = np.zeros(hands_n)
    for k, x in want.items():
        exact[k[1]] += x / total
    assert np.abs(share - exact).max() < 0.02 and 0.2 < (hands[:, 2] == 4).mean() < 0.4
    one = subgame_deals(table, beliefs, seats, board, 2, 4, 64, 10**6, 0.25, np.random.default_rng(5))
    three = subgame_deals(table, beliefs, seats, board, 2, 4, 64, 10**6, 0.25, np.random.default_rng(5), runouts=3)
    d, h = len(one[0]), table.hole     # runouts: each joint hand three times, a third of its weight, its own run-outs
    assert np.array_equal(three[0], np.tile(one[0], (3, 1))) and np.allclose(three[1], np.tile(one[1], 3) / 3)
    held = np.concatenate([np.arange(p * h, (p + 1) * h) for p in seats.tolist()])
    assert np.array_equal(three[2][:, held], np.tile(one[2][:, held], (3, 1))) and np.all(three[2][:, table.held] == 3)
    drawn = np.concatenate([np.arange(h, 2 * h), np.arange(table.held + 1, table.num_cards)])    # seat 1's, the rest
    assert not np.array_equal(three[2][:d, drawn], three[2][d:2 * d, drawn])
    assert all(len(set(row)) == len(row) for row in three[2].tolist())


def test_continuation_leaf_values_are_the_expectation_over_profiles(small):
    """At depth-1 leaves with three choosers, the leaf value under the choosers' current pick
    strategies is sum over all 4^3 profiles of prod_i tau_i(pick_i) x the profile's rollout value;
    the additive model (1 + 3 x 3 profiles) gives the same values and pick regrets where the
    utilities are additive in the picks, and differs on the real, non-additive rollouts."""
    table, agent = small
    node, row, seat = _postflop_decision(table, agent)
    bt = table.betting
    tree = SubgameTree(bt, node, 1)
    rng = np.random.default_rng(1)
    seats = np.flatnonzero(~bt.folded[node])
    board = row[table.held:table.held + 2]
    beliefs = np.ones((table.players, table.deck.num_hands))
    beliefs[:, (table.deck.hand_masks & table.deck.card_masks(board[None])[0]) != 0] = 0.0
    hand = table.deck.hand_index(row[seat:seat + 1].tolist())
    hands, w, cards = subgame_deals(table, beliefs, seats, board, seat, hand, 8, 0, 0.25, rng)
    choosers = seats[:3]
    full, few = profiles(3, 64), profiles(3, 63)
    assert len(full) == 64 and len(few) == 10 and (few != 0).sum(axis=1).max() == 1
    term, cont = leaf_utilities(table, tree, cards, agent, choosers, full, 5)
    default = np.ones((len(tree.dec), table.deck.num_hands, table.width)) / table.width
    regrets = rng.normal(size=(3, len(tree.cont), table.deck.num_hands, PICKS))
    tau = np.maximum(regrets, 0)
    tau = np.where(tau.sum(-1, keepdims=True) > 0, tau / np.maximum(tau.sum(-1, keepdims=True), 1e-300), 0.0)
    tau[tau.sum(-1) == 0] = np.eye(PICKS)[0]
    rest = np.ones((len(tree.cont), len(hands), 3))
    row_of = {tuple(p): s for s, p in enumerate(full.tolist())}
    few_rows = [row_of[tuple(p)] for p in few.tolist()]

    def solved(utilities, picks):
        solver = SubgameCFR(tree, hands, w, default, term, utilities, choosers, picks)
        for i, c in enumerate(choosers):                    # per hand -> the solver's compact hand index
            u = solver.uniq[c]
            solver.leaf_regrets[i, :, :len(u)] = regrets[i][:, u]
        value = solver._leaves(rest, 1, solver.loc, utilities)
        return value, solver.leaf_regrets

    def exact(utilities):
        out = np.zeros((len(tree.cont), len(hands), table.players))
        for s, pick in enumerate(full):
            p = np.ones((len(tree.cont), len(hands)))
            for i, c in enumerate(choosers):
                p *= tau[i][:, hands[:, c], pick[i]]
            out += p[..., None] * utilities[:, :, s]
        return out
    value, _ = solved(cont, full)
    np.testing.assert_allclose(value, exact(cont), atol=1e-9)
    parts = rng.normal(size=(len(tree.cont), len(hands), 3, PICKS, table.players))
    additive = parts[:, :, 0, full[:, 0]] + parts[:, :, 1, full[:, 1]] + parts[:, :, 2, full[:, 2]]   # [Lc, D, S, n]
    joint_v, joint_r = solved(additive, full)
    model_v, model_r = solved(additive[:, :, few_rows], few)
    np.testing.assert_allclose(joint_v, exact(additive), atol=1e-9)
    np.testing.assert_allclose(model_v, joint_v, atol=1e-9)
    np.testing.assert_allclose(model_r, joint_r, atol=1e-9)
    model_v, _ = solved(cont[:, :, few_rows], few)
    assert np.abs(model_v - value).max() > 1e-3           # real rollouts: only an approximation


def test_zero_iterations_play_the_blueprint(small):
    """A search of 0 iterations plays the blueprint's distribution: the same chips, hand for hand."""
    table, agent = small
    a = play_match(table, SearchAgent(agent, SearchSettings(iterations=0, depth=1)), agent, 40, seed=3, batch=40)
    b = play_match(table, agent, agent, 40, seed=3, batch=40)
    assert np.array_equal(a.raw, b.raw) and np.array_equal(a.aivat, b.aivat)


def test_search_plays_legal_reproducible_and_searched_actions(small):
    """Searched distributions are over the node's legal slots, the same from a fresh agent, in any
    batch, and differ from the blueprint's."""
    table, agent = small
    settings = SearchSettings(iterations=30, depth=1, deals=24, exact=0, profiles=16, seed=4)
    search = SearchAgent(agent, settings)
    cards = table.deal(np.random.default_rng(9), 20)
    hd, hs = np.repeat(np.arange(20), 4), np.tile(np.arange(4), 20)
    paths, sigmas = table.play(search, agent, cards, hd, hs, np.random.default_rng(2))
    again = table.play(SearchAgent(agent, settings), agent, cards, hd, hs, np.random.default_rng(2))
    assert np.array_equal(paths, again[0]) and np.array_equal(sigmas, again[1])
    bt = table.betting
    t, h = np.nonzero(bt.kind[paths[:-1]] == 0)
    nodes = paths[t, h]
    rows = sigmas[t, h]
    assert np.allclose(rows.sum(axis=1), 1.0) and not (rows * (1 - table.legal(nodes))).any()
    assert search.searches > 5 and search.stats()["seconds_per_search"] > 0
    node, row, seat = _postflop_decision(table, agent)
    one = SearchAgent(agent, settings).decide(table, node, row, seat)
    assert np.array_equal(one, SearchAgent(agent, settings).decide(table, node, row, seat))
    codes = agent.prepare(table, row[None])
    blue = agent.probs(table, np.array([node]), np.array([0]), np.array([seat]), codes)[0]
    assert np.abs(one - blue).max() > 1e-3


def test_bad_search_settings(tmp_path, capsys):
    """Bad options of a search agent at a table: one line on stderr, exit status 2."""
    from test_table_eval import SMALL, _cli

    for kw, needle in (({"iterations": -1}, "iterations must be at least 0"), ({"deals": 0}, "deals"),
                       ({"mix": 1.0}, "mix"), ({"sample": -2}, "sample must be at least 0"),
                       ({"runouts": 0}, "runouts must be at least 1"),
                       ({"bucketed": 2}, "bucketed must be true or false"),
                       ({"ranges": -1}, "ranges must be at least 0")):
        with pytest.raises(TableError, match=needle):
            SearchSettings(**kw)
    for spec, needle in (("search:nowhere.yaml?iterations=-1", "iterations must be at least 0"),
                         ("search:nowhere.yaml?mix=1.5", "mix must be in [0, 1)"),
                         ("search:nowhere.yaml?sample=-1", "sample must be at least 0"),
                         ("search:nowhere.yaml?runouts=0", "runouts must be at least 1"),
                         ("search:nowhere.yaml?bucketed=2", "bad value '2' for 'bucketed' (expected true or false)"),
                         ("search:nowhere.yaml?ranges=-5", "ranges must be at least 0"),
                         ("search:nowhere.yaml?deals=many", "bad value 'many' for 'deals'"),
                         ("search:nowhere.yaml?speed=3", "unknown option 'speed'"),
                         ("search?iterations=5", "search:CONFIG.yaml[?file=PATH] names a blueprint config"),
                         ("search:nowhere.yaml?iterations=5", "nowhere.yaml")):
        text = (f"game: {SMALL}\nplayers: 4\nagents: {{call: call, s: '{spec}'}}\nmatches: [[s, call]]\n"
                "deals: 10\n")
        rc, out = _cli(tmp_path, capsys, text)
        err = out.err.strip().splitlines()
        assert rc == 2 and len(err) == 1 and needle in err[0], (spec, out.err)


def test_monte_carlo_linear_cfr_samples_deals_and_still_solves():
    """`sample`: each iteration runs on a uniform sample of the deals with weights scaled by D / k
    (Monte Carlo linear CFR). Sampling every deal is the full iteration bit for bit; half of them
    still drives the whole one-round game's NashConv far below uniform, and the sample follows
    the seed."""
    table = Table(load_game(HEADS_UP, 2))
    tree, args = _whole_game(table, _first_decision(table.betting), np.random.default_rng(0))
    full, same = SubgameCFR(*args), SubgameCFR(*args, sample=len(args[1]), seed=3)
    full.run(50)
    same.run(50)
    assert np.array_equal(same.regrets, full.regrets) and np.array_equal(same.average, full.average)
    ev = Evaluator(table.game)
    uniform = ev.nash_conv(_policy(table, tree, full.default))
    averages = []
    for seed in (0, 1):
        mc = SubgameCFR(*args, sample=len(args[1]) // 2, seed=seed)
        mc.run(2000)
        averages.append(mc.average.copy())
        solved = ev.nash_conv(_policy(table, tree, mc.average_strategy()))
        assert solved < 0.01 * uniform
    assert not np.array_equal(averages[0], averages[1])


def test_frozen_decisions_play_their_rows_and_the_rest_is_solved(small):
    """`fixed` rows (a searcher's own earlier actions in the round, Pluribus's frozen strategy): the
    search plays them at their decision, for every hand its deals give the actor, and still solves the
    decisions below."""
    table, agent = small
    settings = SearchSettings(iterations=30, deals=24, exact=0, seed=4)
    node, row, seat = _postflop_decision(table, agent)
    bt = table.betting
    root = search_root(table, node)
    legal = table.legal(np.array([root]))[0]
    rows = np.tile(legal / legal.sum(), (table.deck.num_hands, 1))
    free, frozen = SearchAgent(agent, settings), SearchAgent(agent, settings, fixed={root: rows})
    hand = table.deck.hand_index(row[seat * table.hole:(seat + 1) * table.hole].tolist())
    board = np.array(canonical(table, row[table.held:table.held + table.levels[int(table.node_level[root])]]))
    solved = frozen._solve(table, root, board, seat, hand)
    x = solved.at[root]
    u = solved.uniq[int(solved.actor[x])]
    np.testing.assert_allclose(solved.average[x, :len(u)], rows[u], atol=1e-12)
    mine = free._solve(table, root, board, seat, hand)
    assert np.abs(mine.average[x, :len(u)] - rows[u]).max() > 1e-3
    below = [solved.at[int(c)] for c in bt.child[root, :bt.num_actions[root]] if int(c) in solved.at]
    assert below and any(np.abs(solved.average[y] - mine.average[y]).max() > 1e-6 for y in below)


class Coarse:
    """Bucket cards whose hand codes are another's divided by three."""

    def __init__(self, cards):
        self.cards = cards

    def __getattr__(self, name):
        return getattr(self.cards, name)

    def hand_codes(self, board, rnd):
        codes = self.cards.hand_codes(board, rnd)
        return np.where(codes >= 0, codes // 3, codes)


def test_bucketed_search_shares_rows_by_bucket_but_the_held_hand(small):
    """`bucketed`: where deals are drawn, every hand but the held one plays one row per blueprint
    bucket in the subgame (keys N + code), the held hand its own; keys equal to the hands are the
    unbucketed solver bit for bit."""
    table, agent = small
    node, row, seat = _postflop_decision(table, agent)
    agent = copy.copy(agent)              # its table's lossless codes merged in threes: buckets of several hands
    agent.cards = Coarse(agent.cards)
    hand = table.deck.hand_index(row[seat * table.hole:(seat + 1) * table.hole].tolist())
    root = search_root(table, node)
    board = np.array(canonical(table, row[table.held:table.held + table.levels[int(table.node_level[root])]]))
    plain = SearchAgent(agent, SearchSettings(iterations=30, deals=24, exact=0, seed=4))._solve(
        table, root, board, seat, hand)
    solved = SearchAgent(agent, SearchSettings(iterations=30, deals=24, exact=0, seed=4, bucketed=True))._solve(
        table, root, board, seat, hand)
    n, codes = table.deck.num_hands, plain.codes
    for p, (u, keys) in enumerate(zip(plain.uniq, solved.uniq)):
        want = {n + int(codes[h]) for h in u.tolist() if not (p == seat and h == hand)} | (
            {hand} if p == seat else set())
        assert set(keys.tolist()) == want and len(keys) <= len(u)
    x = solved.at[root]
    assert np.allclose(solved.hand_row(x, hand).sum(), 1.0)
    assert any(len(k) < len(u) for u, k in zip(plain.uniq, solved.uniq))       # some bucket holds two hands
    heads_up = Table(load_game(HEADS_UP, 2))
    _, args = _whole_game(heads_up, _first_decision(heads_up.betting), np.random.default_rng(0))
    a, b = SubgameCFR(*args), SubgameCFR(*args, keys=args[1].copy())
    a.run(20)
    b.run(20)
    assert np.array_equal(a.average, b.average) and np.array_equal(a.regrets, b.regrets)
