"""Tic-tac-toe through the public-tree API: lockstep with OpenSpiel over every
history, tree size, exact minimax values, and (slow) full-tree CFR+."""
from __future__ import annotations

import importlib.util
import pathlib

import numpy as np
import pyspiel
import pytest

from sog.eval.minimax import minimax_value, minimax_values
from sog.games import load_game
from sog.games.api import DECISION, TERMINAL
from sog.games.tic_tac_toe import board
from sog.games.world import (
    IllegalActionError,
    World,
    apply_action,
    kind,
    legal_actions,
    returns,
)

OPENSPIEL_HISTORIES = 549_946    # nodes of OpenSpiel's tic-tac-toe game tree
DISTINCT_POSITIONS = 5_478       # distinct boards reachable in play (terminals included)


@pytest.fixture(scope="module")
def game():
    return load_game("tic_tac_toe")


@pytest.fixture(scope="module")
def os_game():
    return pyspiel.load_game("tic_tac_toe")


def test_spec(game, os_game):
    spec = game.spec
    assert spec.perfect_information and spec.num_states == 1
    assert spec.num_actions == os_game.num_distinct_actions() == 9
    assert game.openspiel_name() == "tic_tac_toe"
    assert load_game(game.openspiel_name()).spec == spec
    f = game.features((4, 0))
    assert f.shape == (spec.feature_size,) and f.dtype == np.float32
    assert f[4] == 1 and f[9 + 0] == 1 and f[18:27].sum() == 7 and f[27] == 1 and f[28] == 0


def _lockstep(os_game, first_moves=None) -> dict:
    """Walk OpenSpiel's histories (those starting with `first_moves`, or all) against our
    world states: kind, actor, legal actions, information-state strings, action names,
    boards and terminal returns. Returns node, terminal and distinct-position counts."""
    game = load_game("tic_tac_toe")  # a fresh game: its caches go with it
    counts = {"nodes": 1, "terminals": 0}
    positions = {tuple(board(()))}

    def walk(state, w: World):
        k = kind(game, w)
        where = state.history_str()
        if state.is_terminal():
            assert k == TERMINAL, where
            counts["terminals"] += 1
            r = returns(game, w)
            assert state.returns() == [r, -r], where
            assert legal_actions(game, w).size == 0
            return
        assert k == DECISION, where
        actor = game.cached("actor", w.pub)
        assert state.current_player() == actor, where
        legal = legal_actions(game, w).tolist()
        assert state.legal_actions() == legal, where
        for p in (0, 1):
            assert game.info_state_string(w.pub, p, 0) == state.information_state_string(p), where
        assert game.render(w.pub) == state.observation_string(0), where
        for a in legal:
            if first_moves is not None and not w.pub and a not in first_moves:
                continue
            assert game.action_name(w.pub, a) == state.action_to_string(actor, a), where
            child = apply_action(game, w, a)
            counts["nodes"] += 1
            positions.add(tuple(board(child.pub)))
            walk(state.child(a), child)

    walk(os_game.new_initial_state(), World(game.root(), (0, 0)))
    counts["positions"] = len(positions)
    return counts


def test_lockstep_with_openspiel_after_centre_opening(os_game):
    """Every history after the centre opening (the slow test below walks them all)."""
    counts = _lockstep(os_game, first_moves=(4,))
    assert counts["nodes"] == 1 + _os_tree_size(os_game.new_initial_state().child(4))


@pytest.mark.slow
def test_lockstep_with_openspiel_every_history(os_game):
    counts = _lockstep(os_game)
    assert counts["nodes"] == OPENSPIEL_HISTORIES == _os_tree_size(os_game.new_initial_state())
    assert counts["terminals"] == 255_168
    assert counts["positions"] == DISTINCT_POSITIONS


def _os_tree_size(state) -> int:
    if state.is_terminal():
        return 1
    return 1 + sum(_os_tree_size(state.child(a)) for a in state.legal_actions())


def test_illegal_moves(game):
    w = World((4,), (0, 0))
    with pytest.raises(IllegalActionError, match="illegal action 4"):
        apply_action(game, w, 4)  # occupied
    done = World((0, 3, 1, 4, 2), (0, 0))  # x wins on the top row
    assert kind(game, done) == TERMINAL and returns(game, done) == 1.0
    with pytest.raises(IllegalActionError):
        apply_action(game, done, 5)


def test_minimax(game, os_game):
    from open_spiel.python.algorithms import minimax as os_minimax

    values = minimax_values(game)
    # one public state per OpenSpiel history, over 5,478 distinct positions
    assert len(values) == OPENSPIEL_HISTORIES
    assert len({tuple(board(pub)) for pub in values}) == DISTINCT_POSITIONS
    assert values[()] == 0.0  # tic-tac-toe is a draw
    assert values[(0, 1)] == 1.0  # x corner, o edge next to it: x wins
    rng = np.random.default_rng(0)
    for _ in range(30):
        state = os_game.new_initial_state()
        for _ in range(int(rng.integers(1, 6))):
            if state.is_terminal():
                break
            state.apply_action(int(rng.choice(state.legal_actions())))
        pub = tuple(state.history())
        if state.is_terminal():
            assert values[pub] == state.returns()[0]
            continue
        expected, _ = os_minimax.alpha_beta_search(os_game, state, maximizing_player_id=0)
        assert values[pub] == expected, pub
    # below a position
    assert minimax_value(game, (4,)) == 0.0


def test_minimax_needs_perfect_information():
    with pytest.raises(ValueError, match="perfect-information"):
        minimax_values(load_game("kuhn_poker"))


def _api_checks():
    """The generic game-API checks of tests/test_games_api.py (capped breadth-first walk)."""
    path = pathlib.Path(__file__).with_name("test_games_api.py")
    spec = importlib.util.spec_from_file_location("_sog_games_api_checks", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generic_api_checks(game):
    checks = _api_checks()
    checks.test_spec_and_root(game)
    checks.test_every_public_state(game)
    checks.test_info_state_strings_unique(game)


@pytest.mark.slow
def test_cfr_plus_solves_tic_tac_toe():
    """Full-tree CFR+ (549,946 public states; ~25 s to build the tree) reaches ~0 exploitability."""
    from sog.search.cfr import CFRSolver
    from sog.search.full_tree import exploitability, full_tree, policy_value

    game = load_game("tic_tac_toe")
    solver = CFRSolver(full_tree(game).ct)
    solver.iterate(200)
    avg = solver.average_policy()
    expl = exploitability(game, avg)
    assert expl < 2e-3, expl
    assert abs(policy_value(game, avg)) < 2e-3
