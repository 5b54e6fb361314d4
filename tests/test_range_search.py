"""The depth-limited search over every hand of both players (sog.agents.holdem.table.range_search; `search.ranges`):
its leaf operator against the dense payoff matrices it stands for, the leaf choice's values against
the dense ones, frozen decisions, one solve per (root, board, seat) serving every hand, and the exact
exploitability of Modicum with it on the 8-card game of tests/test_holdem_modicum.py."""
from __future__ import annotations

import itertools
from unittest import mock

import numpy as np
import pytest
import test_holdem_modicum
from test_holdem_blueprint_agent import GAME
from test_table_endgame import exploitability

from sog.agents.holdem.table.agents import TableError
from sog.agents.holdem.table.range_search import (
    PairLeaves,
    ShowdownLeaves,
    StackedLeaves,
    showdown_matrix,
    showdown_runouts,
)
from sog.agents.holdem.table.search import SearchAgent, SearchSettings
from sog.agents.registry import make_agent
from sog.eval.table.tournament import Table
from sog.games import load_game
from sog.games.api import DECISION
from sog.games.holdem.cards import Deck
from sog.multiplayer import load_game as load_table_game
from sog.search.multivalued import choice_values

config = test_holdem_modicum.config          # the fixture: a blueprint config of GAME, trained


def _dense(leaves: PairLeaves, values, keys, masks) -> np.ndarray:
    """float [F, k, N, N]: the payoff matrices `leaves` stands for, written out."""
    ok = keys >= 0
    compat = ((masks[:, None] & masks[None, :]) == 0) & ok[:, None] & ok[None, :]
    k = np.maximum(keys, 0)
    return leaves.weight * compat * values[:, :, k[:, None], k[None, :]]


def test_pair_leaves_apply_the_matrices_they_stand_for():
    """Two hole cards from 12, two board cards out, keys shared by several hands, with a showdown leaf
    stacked among them: pair_sums (transposed or not, one y for every continuation or one each, summed
    over them or not) equal the dense matrices' sums, and so do the leaf choice's values (both
    opponents)."""
    deck = Deck(4, 3, 2)
    rng = np.random.default_rng(0)
    masks = deck.hand_masks
    keys = np.where((masks & deck.card_masks(np.array([[0, 5]]))[0]) == 0, rng.integers(0, 7, deck.num_hands), -1)
    values = rng.normal(size=(3, 4, 7, 7))
    leaves = PairLeaves(values, keys, deck.hands, deck.size, 1.7)
    dense = _dense(leaves, values, keys, masks)
    assert dense.shape == leaves.shape and (keys < 0).sum() == 66 - 45       # the hands holding card 0 or 5
    showdown = rng.normal(size=(deck.num_hands, deck.num_hands))
    stacked = StackedLeaves([(np.array([0, 2, 3]), leaves), (np.array([1]), ShowdownLeaves([2.5], showdown, 4))],
                            4, deck.num_hands)
    dense = np.concatenate([dense[:1], np.broadcast_to(2.5 * showdown, (1, 4) + showdown.shape), dense[1:]])
    y = rng.random((4, 4, deck.num_hands))
    for transpose in (False, True):
        m = np.swapaxes(dense, -1, -2) if transpose else dense
        assert np.allclose(stacked.pair_sums(y, transpose), np.einsum("fcab,fcb->fca", m, y))
        assert np.allclose(stacked.pair_sums(y[:, :1], transpose), np.einsum("fcab,fb->fca", m, y[:, 0]))
        assert np.allclose(stacked.pair_sums(y, transpose, summed=True), np.einsum("fcab,fcb->fa", m, y))
    ranges = rng.random((4, 2, deck.num_hands)) * (keys >= 0)
    p = rng.dirichlet(np.ones(4), size=(4, deck.num_hands))
    for opponent in (0, 1):
        want, want_q = choice_values(dense, ranges, p, opponent)
        got, got_q = choice_values(stacked, ranges, p, opponent)
        assert np.allclose(got, want) and np.allclose(got_q, want_q)
        for op in (dense, stacked):        # one player's pass: its values only, q in the opponent's
            mine, q = choice_values(op, ranges, p, opponent, (opponent,))
            assert np.allclose(mine[:, opponent], want[:, opponent]) and np.allclose(q, want_q)
            assert not mine[:, 1 - opponent].any()
            theirs, q = choice_values(op, ranges, p, opponent, (1 - opponent,))
            assert np.allclose(theirs[:, 1 - opponent], want[:, 1 - opponent]) and q is None


def _brute_showdown(deck, board: tuple, runouts, weight: float) -> np.ndarray:
    """The showdown matrix by its definition, pair by pair."""
    strengths = [(set(r), deck.strengths(board + tuple(r))) for r in runouts]      # drawn ones may repeat
    want = np.zeros((deck.num_hands, deck.num_hands))
    for a, b in itertools.product(range(deck.num_hands), repeat=2):
        cards = set(deck.hands[a].tolist()) | set(deck.hands[b].tolist())
        if len(cards) < 2 * deck.hole or cards & set(board):
            continue
        signs = [np.sign(s[a] - s[b]) for r, s in strengths if not cards & r]
        want[a, b] = weight * np.mean(signs) if signs else 0.0
    return want


def test_showdown_matrix_is_the_mean_over_the_runouts():
    """Every pair of two-card hands from 12 cards, two on the board and two to come: the showdown
    matrix is the weight x the mean sign of the strengths over the run-outs holding neither hand's
    cards (brute force), antisymmetric, 0 where the hands or the board collide; drawn run-outs
    (MAX_RUNOUTS smaller) give the mean over the drawn ones (counted per pair), which estimates it."""
    deck, board = Deck(4, 3, 2), np.array([0, 5])
    got = showdown_matrix(deck, board, 2, 1.5, np.random.default_rng(0))
    left = [c for c in range(deck.size) if c not in board.tolist()]
    want = _brute_showdown(deck, (0, 5), itertools.combinations(left, 2), 1.5)
    assert np.allclose(got, want) and np.allclose(got, -got.T) and np.abs(want).sum() > 0
    with mock.patch("sog.agents.holdem.table.range_search.MAX_RUNOUTS", 40):         # of 45
        runouts, every = showdown_runouts(deck, board, 2, np.random.default_rng(0))
        drawn = showdown_matrix(deck, board, 2, 1.5, np.random.default_rng(0))
    assert not every and len(runouts) == 40
    assert np.allclose(drawn, _brute_showdown(deck, (0, 5), runouts.tolist(), 1.5))
    assert not np.allclose(drawn, want) and np.corrcoef(drawn.ravel(), want.ravel())[0, 1] > 0.7
    river = showdown_matrix(deck, np.array([0, 5, 7]), 1, 1.0, np.random.default_rng(0))    # one card to come
    left = [c for c in range(deck.size) if c not in (0, 5, 7)]
    assert np.allclose(river, _brute_showdown(deck, (0, 5, 7), [(c,) for c in left], 1.0))


def _modicum(config, options: str):
    return make_agent(f"modicum:{config}?{options}", load_game(GAME))


def test_range_search_serves_every_hand_and_cuts_the_blueprints_exploitability(config):
    """Both rounds searched over every hand of both players (every pair listed, 16 run-outs each):
    one search per (root, board, seat) plays every hand held, its strategy is defined for every hand,
    and Modicum's exact exploitability falls far below the blueprint's (measured 305.1 -> 87.2
    mbb/hand, search seed 0; the search on listed deals 144.0)."""
    agent = _modicum(config, "search.first_round=0&search.ranges=896")
    table, modicum = agent.table, agent.modicum
    search = modicum.search
    deals = np.array(list(itertools.permutations(range(table.deck.size), 3)), dtype=np.int64)
    blueprint, searched = exploitability(table, deals, modicum.blueprint), exploitability(table, deals, modicum)
    assert searched < 0.4 * blueprint, (blueprint, searched)
    bt = table.betting
    root = int(np.flatnonzero(bt.kind == DECISION)[0])
    searches = search.searches
    assert search.lists(table, root, ()) and search.lists_everywhere(table)
    rows = search.every_hand(table, root, ())
    assert rows.shape == (table.deck.num_hands, table.width) and np.allclose(rows[:, :bt.num_actions[root]].sum(1), 1)
    seat = int(bt.actor[root])
    for hand in range(table.deck.num_hands):
        cards = deals[(deals[:, seat] == hand)][0]
        assert np.allclose(search.decide(table, root, cards, seat), rows[hand])
    assert search.searches == searches


def test_frozen_decisions_play_their_rows(config):
    """`fixed` rows at the root: the solved average policy there is those rows, not without them."""
    agent = _modicum(config, "search.first_round=0")
    table, bp = agent.table, agent.modicum.blueprint
    root = int(np.flatnonzero(table.betting.kind == DECISION)[0])
    n, k = table.deck.num_hands, table.width
    fixed = np.zeros((n, k))
    fixed[:, 1] = 1.0
    settings = SearchSettings(iterations=50, ranges=896, first_round=0)
    solved = SearchAgent(bp, settings, fixed={root: fixed})._solve(table, root, np.zeros(0, np.int64), 0, 0)
    assert np.allclose(solved.rows[root], fixed)
    free = SearchAgent(bp, settings)._solve(table, root, np.zeros(0, np.int64), 0, 0)
    assert not np.allclose(free.rows[root], fixed)


def test_range_search_refuses_more_players():
    """A range search at a four-player table is a TableError (bad `ranges` values: test_table_search)."""
    from test_table_eval import SMALL, _small_blueprint

    table = Table(load_table_game(SMALL, 4))
    agent = _small_blueprint(table, seed=2)[0]
    root = int(np.flatnonzero(table.betting.kind == DECISION)[0])
    with pytest.raises(TableError, match="two-player"):
        SearchAgent(agent, SearchSettings(ranges=64, first_round=0))._solve(table, root, np.zeros(0, np.int64), 0, 0)


def test_bench_modicum_times_both_searches_on_the_same_spots(config, capsys):
    """`sog bench modicum`: the range search and the sampled-deal search on the same spots (distinct ones),
    the ratios; bad input is one line and exit status 2."""
    import json

    from launch.cli import main

    capsys.readouterr()
    rounds = "search.first_round=1&endgame.first_round=2&search.iterations=20"        # (the second round's)
    assert main(["bench", "modicum", "--config", config, "--searches", "2",
                 "--options", f"search.ranges=896&{rounds}", "--reference", f"search.ranges=0&{rounds}"]) == 0
    out = json.loads(capsys.readouterr().out)
    for name in ("candidate", "reference"):
        assert out[name]["searches"] == 2 and out[name]["iterations_per_search"] == 20
        assert out[name]["cpu_seconds"]["mean"] > 0 and out[name]["nodes_per_search"] > 1
    assert out["candidate"]["showdown_matrices_mb"] == out["reference"]["showdown_matrices_mb"] == 0
    assert "showdown_matrix_seconds" not in out          # (the last round: no card to come, no all-in run-out)
    assert out["wall_seconds_ratio"] > 0 and out["cpu_seconds_ratio"] > 0 and out["peak_rss_mb"] > 0
    for argv, needle in ((["--config", config, "--searches", "0"], "--searches must be at least 1"),
                         (["--searches", "2"], "needs --config"),
                         (["--config", config, "--options", "search.ranges=-1"], "ranges must be at least 0")):
        assert main(["bench", "modicum", *argv]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and needle in err[0], err


def test_modicum_searches_ranges_by_default(config):
    """`modicum:` (spec and settings) searches with the range search unless `search.ranges=0`."""
    from sog.agents.holdem.table.modicum import RANGES, ModicumSettings

    assert ModicumSettings().search.ranges == RANGES
    assert _modicum(config, "search.iterations=5").modicum.settings.search.ranges == RANGES
    sampled = _modicum(config, "search.ranges=0&search.deals=8").modicum.settings.search
    assert sampled.ranges == 0 and sampled.deals == 8
