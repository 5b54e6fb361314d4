"""N-player Kuhn and Leduc (`sog.multiplayer`) against OpenSpiel's `kuhn_poker(players=n)` and
`leduc_poker(players=n)` on random playouts: at every state the player to move, the chance
outcomes and probabilities, the legal actions, every player's information-state string, and at
the end the returns."""
from __future__ import annotations

import numpy as np
import pytest

from sog.multiplayer import (
    CHANCE,
    TERMINAL,
    KuhnPoker,
    LeducPoker,
    PlayersError,
    UnknownGameError,
    load_game,
)
from sog.multiplayer.api import MAX_PLAYERS

pyspiel = pytest.importorskip("pyspiel")

PLAYOUTS = {2: 500, 3: 2000, 4: 2000}   # two players: also checked through sog.games


def _check_playouts(game, playouts: int, seed: int) -> int:
    """Play `playouts` random games in both implementations in lockstep; returns states seen."""
    os_game = pyspiel.load_game(game.name, game.openspiel_params())
    rng = np.random.default_rng(seed)
    seen = 0
    for _ in range(playouts):
        ours, theirs = game.initial_state(), os_game.new_initial_state()
        while True:
            seen += 1
            player = ours.current_player()
            expected = theirs.current_player()
            assert player == (TERMINAL if theirs.is_terminal() else expected), (ours, str(theirs))
            for p in range(game.num_players):
                assert ours.information_state(p) == theirs.information_state_string(p), (ours, p)
            if player == TERMINAL:
                np.testing.assert_allclose(ours.returns(), theirs.returns(), rtol=0, atol=1e-12)
                assert abs(ours.returns().sum()) < 1e-9
                break
            if player == CHANCE:
                outcomes = ours.chance_outcomes()
                assert [a for a, _ in outcomes] == [a for a, _ in theirs.chance_outcomes()]
                np.testing.assert_allclose([p for _, p in outcomes],
                                           [p for _, p in theirs.chance_outcomes()], rtol=1e-12)
                actions = [a for a, _ in outcomes]
            else:
                actions = list(ours.legal_actions())
                assert actions == list(theirs.legal_actions())
                assert np.all(ours.returns() == 0)
            a = int(actions[rng.integers(len(actions))])
            ours, theirs = ours.child(a), theirs.child(a)
    return seen


@pytest.mark.parametrize("players", [2, 3, 4])
def test_kuhn_matches_openspiel(players):
    assert _check_playouts(KuhnPoker(players), PLAYOUTS[players], seed=players) > PLAYOUTS[players]


@pytest.mark.parametrize("players", [2, 3, 4])
def test_leduc_matches_openspiel(players):
    assert _check_playouts(LeducPoker(players), PLAYOUTS[players], seed=10 + players) > PLAYOUTS[players]


@pytest.mark.parametrize("players", [5, 6])
def test_more_players_match_openspiel(players):
    _check_playouts(KuhnPoker(players), 300, seed=players)
    _check_playouts(LeducPoker(players), 300, seed=players)


def test_states_are_immutable():
    root = LeducPoker(3).initial_state()
    s = root.child(0).child(1).child(2)
    before = s.information_state(0)
    s.child(1).child(2).child(0)
    assert s.information_state(0) == before and root.current_player() == CHANCE


@pytest.mark.parametrize("bad", [1, 7, 0, -2, 2.5, "3", True])
def test_bad_player_counts_are_refused(bad):
    for cls in (KuhnPoker, LeducPoker):
        with pytest.raises(PlayersError, match="players"):
            cls(bad)
    assert issubclass(PlayersError, ValueError) and MAX_PLAYERS == 6


def test_load_game():
    assert load_game("leduc_poker", 3).num_players == 3
    with pytest.raises(UnknownGameError, match="liars_dice"):
        load_game("liars_dice", 3)


def test_illegal_moves_are_refused():
    s = LeducPoker(3).initial_state().child(0).child(1).child(2)
    with pytest.raises(ValueError, match="not legal"):
        s.child(0)          # nothing to call: no fold
    with pytest.raises(ValueError, match="deck"):
        LeducPoker(3).initial_state().child(0).child(0)
    k = KuhnPoker(3).initial_state()
    with pytest.raises(ValueError, match="deck"):
        k.child(1).child(1)
    with pytest.raises(ValueError, match="not legal"):
        k.child(1).child(2).child(3).child(2)
    with pytest.raises(ValueError, match="not legal"):
        k.child(1).child(2).child(3).child(0).child(0).child(0).child(0)   # after the end
