"""Hold'em: hand ranking against OpenSpiel's showdowns, parameters and errors, names,
the poker protocol, features and the `sog solve` policy file read by OpenSpiel.
(The game walked node by node against universal_poker: tests/test_holdem_openspiel.py.)"""
from __future__ import annotations

import json
import pathlib
import pickle

import numpy as np
import pyspiel
import pytest
from open_spiel.python import policy as os_policy

from sog.games import UnknownGameError, load_game
from sog.games.api import DECISION
from sog.games.holdem.cards import Deck, rank_tables
from sog.games.traverse import decision_states, public_states
from sog.policy.files import load_policy, to_openspiel

SMALL_LIMIT = ("holdem(betting=limit,numRanks=3,numSuits=2,blind=2 1,firstPlayer=2 1,numHoleCards=1,"
               "numRounds=2,numBoardCards=0 1,raiseSize=2 4,maxRaises=2 2)")
SMALL_FULLGAME = ("holdem(betting=nolimit,bettingAbstraction=fullgame,numRanks=3,numSuits=2,blind=2 1,"
                  "firstPlayer=2 1,stack=9 7,numHoleCards=1,numRounds=2,numBoardCards=0 1)")
SMALL_FCPA = ("holdem(betting=nolimit,numRanks=3,numSuits=2,blind=1 1,stack=5 5,numHoleCards=1,"
              "numRounds=3,numBoardCards=0 1 1)")


@pytest.mark.parametrize("ranks,suits,hole,boards", [
    (13, 4, 2, (0, 3, 1, 1)),   # hold'em: 7 cards
    (6, 3, 2, (0, 3)),          # 5 cards: flushes, full houses, straights
    (5, 2, 2, (0, 3)),          # 5 cards: the straight flush 6-high, straights
    (4, 3, 3, (0, 1)),          # 4 cards, three hole cards
    (13, 4, 1, (0, 2)),         # 3 cards
    (3, 2, 1, (0,)),            # 1 card
])
def test_hand_ranking_matches_openspiel_showdowns(ranks, suits, hole, boards):
    """Random deals called down to a showdown in OpenSpiel: its winner is the stronger hand by
    `Deck.strengths`, ties split."""
    rounds = len(boards)
    per_round = " ".join(["1"] * rounds) + (" " if rounds == 1 else "")
    os_game = pyspiel.load_game(
        f"universal_poker(betting=limit,numPlayers=2,numRounds={rounds},blind=1 1,raiseSize={per_round},"
        f"maxRaises={' '.join(['0'] * rounds)}{' ' if rounds == 1 else ''},firstPlayer={per_round},"
        f"numSuits={suits},numRanks={ranks},numHoleCards={hole},"
        f"numBoardCards={' '.join(map(str, boards))}{' ' if rounds == 1 else ''})")
    deck = Deck(ranks, suits, hole)
    rng = np.random.default_rng(ranks * 100 + suits * 10 + hole)
    outcomes = set()
    for _ in range(300):
        cards = rng.permutation(deck.size)[:2 * hole + sum(boards)].tolist()
        state, dealt = os_game.new_initial_state(), iter(cards)
        while not state.is_terminal():
            state.apply_action(next(dealt) if state.is_chance_node() else 1)
        strength = deck.strengths(tuple(sorted(cards[2 * hole:])))
        ours = np.sign(strength[deck.hand_index(cards[:hole])] - strength[deck.hand_index(cards[hole:2 * hole])])
        assert np.sign(state.returns()[0]) == ours, cards
        outcomes.add(int(ours))
    assert outcomes == {-1, 0, 1} or (ranks, suits, hole) == (13, 4, 2)


def test_ranking_tables_are_the_acpc_servers():
    """Our rebuilt lookup tables equal the ACPC server's evalHandTables shipped with OpenSpiel."""
    import re
    src = pathlib.Path(pyspiel.__file__).parent / "open_spiel/games/universal_poker/acpc/project_acpc_server"
    path = src / "evalHandTables"
    if not path.exists():
        pytest.skip("OpenSpiel's sources are not installed")
    acpc = {m.group(1): np.array([int(x) for x in m.group(3).split(",") if x.strip()])
            for m in re.finditer(r"static const \w+ (\w+)\[ (\d+) \] = \{([^}]*)\}", path.read_text())}
    names = {"anySuitVal": "any_suit", "oneSuitVal": "one_suit", "pairOtherVal": "pair_other",
             "tripsOtherVal": "trips_other", "topBit": "top_bit", "quadsVal": "quads", "tripsVal": "trips",
             "pairsVal": "pairs", "twoPairOtherVal": "two_pair_other"}
    ours = rank_tables()
    for theirs, mine in names.items():
        np.testing.assert_array_equal(ours[mine], acpc[theirs], err_msg=theirs)


@pytest.mark.parametrize("params,message", [
    ("foo=1", "unknown parameter 'foo'"),
    ("numRanks=2,numSuits=2,numHoleCards=2", "more cards than the deck"),
    ("numRanks=2,numSuits=2,numBoardCards=0 3", "more cards than the deck"),
    ("stack=50 1200", "player 0's stack 50 is smaller than its blind 100"),
    ("numPlayers=3", "only two players"),
    ("betting=pot", "betting='pot'"),
    ("betting=limit,bettingAbstraction=fullgame", "limit betting has one raise size"),
    ("bettingAbstraction=fchpa", "bettingAbstraction='fchpa'"),
    ("blind=1 x", "not a list of integers"),
    ("numRounds=3", "numBoardCards='0 1' needs a value for each of the 3 rounds"),
    ("numRounds=5", "numRounds=5"),
    ("firstPlayer=3 1", "firstPlayer"),
    ("blind=0 0", "at least 1 chip"),
])
def test_bad_parameters_name_the_problem(params, message):
    with pytest.raises(UnknownGameError, match=message):
        load_game(f"holdem({params})")


def test_cli_bad_game_exits_2(capsys):
    from launch.cli import main
    assert main(["solve", "--game", "holdem(numRanks=2,numSuits=1)", "--iterations", "1"]) == 2
    assert "more cards than the deck" in capsys.readouterr().err


@pytest.mark.parametrize("name", [SMALL_LIMIT, SMALL_FULLGAME, SMALL_FCPA, "holdem"])
def test_names_spec_and_pickle(name):
    game = load_game(name)
    assert load_game(game.spec.name).spec == game.spec
    os_game = pyspiel.load_game(game.rules.openspiel_name())
    assert os_game.num_distinct_actions() == game.spec.num_actions
    assert os_game.max_utility() == pytest.approx(game.spec.max_utility * game.big_blind)
    clone = pickle.loads(pickle.dumps(game))
    pub = next(p for p, _ in decision_states(game))
    assert clone.spec == game.spec and clone.info_state_string(pub, 0, 1) == game.info_state_string(pub, 0, 1)


def test_defaults_are_universal_pokers():
    game = load_game("holdem")
    assert (game.spec.num_states, game.spec.num_actions, game.big_blind) == (24, 4, 100)
    assert game.spec.max_utility == 12.0  # 1200 chips, in big blinds


def test_multi_round_boards_keep_the_order_of_the_cards():
    """Two board rounds: OpenSpiel's string merges the orders of the board cards, ours does not,
    and the game has no OpenSpiel twin (policies there could not tell the orders apart)."""
    game = load_game(SMALL_FCPA)
    assert game.openspiel_name() is None and game.rules.openspiel_name().startswith("universal_poker(")
    keys = [game.info_state_string(pub, p, int(s)) for pub, p in decision_states(game)
            for s in np.flatnonzero(game.possible_mask(pub)[p])]
    assert len(keys) == len(set(keys))
    assert any("|" in k.split("[Public: ")[1].split("]")[0] for k in keys)


@pytest.mark.parametrize("name", [SMALL_LIMIT, SMALL_FULLGAME, SMALL_FCPA])
def test_features_and_betting_roles(name):
    game = load_game(name)
    d = game.deck.size
    for pub in public_states(game):
        f = game.features(pub)
        assert f.shape == (game.spec.feature_size,) and f.dtype == np.float32
        assert f.min() >= 0 and f.max() <= 1
        assert f[:d].sum() == len(game.board(pub))
        if game.kind(pub) != DECISION:
            continue
        assert f[d + 2 + game.actor(pub)] == 1 and f[d + 2:d + 5].sum() == 1
        legal = game.legal_actions(pub)
        roles = game.betting(pub)
        assert (roles.fold is not None) == (0 in legal) and roles.call == 1
        assert set(roles.bets) <= set(game.bet_names) and set(roles.bets.values()) <= set(legal)
        raises = [a for a in legal if a >= 2]
        assert bool(roles.bets) == bool(raises)
        if raises and "min" in game.bet_names:
            assert roles.bets["min"] == min(raises) and roles.bets["allin"] == max(raises)


def test_solve_writes_a_policy_file_openspiel_checks(tmp_path, capsys):
    from launch.cli import main
    out = tmp_path / "p.json"
    assert main(["solve", "--game", SMALL_FULLGAME, "--iterations", "200", "--out", str(out)]) == 0
    result = json.loads(capsys.readouterr().out)
    game = load_game(SMALL_FULLGAME)
    os_game = pyspiel.load_game(json.loads(out.read_text())["game"])
    tabular = to_openspiel(load_policy(out, game))
    expl = pyspiel.exploitability(os_game, os_policy.python_policy_to_pyspiel_policy(tabular))
    assert expl == pytest.approx(result["exploitability"] * game.big_blind, abs=1e-9)
    assert result["exploitability_mbb"] < 20


def test_policy_file_of_a_game_without_openspiel_twin_loads_by_name(tmp_path, capsys):
    from launch.cli import main
    out = tmp_path / "p.json"
    assert main(["solve", "--game", SMALL_FCPA, "--iterations", "20", "--out", str(out)]) == 0
    policy = load_policy(out)
    assert policy.game.spec == load_game(SMALL_FCPA).spec


@pytest.mark.parametrize("name", [SMALL_LIMIT, SMALL_FULLGAME, SMALL_FCPA,
                                  "holdem(numRanks=4,numSuits=2,numHoleCards=2,numRounds=2,numBoardCards=0 2)",
                                  "holdem(betting=nolimit,bettingAbstraction=sog,numRanks=3,numSuits=2,stack=10 10,"
                                  "blind=2 1)"])
def test_public_tree_size_is_a_lower_bound(name):
    """The exact tools refuse hold'em trees by this bound before building them: it must never
    pass the true count (here counted by building the small trees)."""
    from sog.search.full_tree import full_tree
    game = load_game(name)
    assert 1 < game.public_tree_size() <= full_tree(game).ct.num_nodes


def test_hunl_is_refused_before_building():
    """HUNL's bound (setups x flops x turns x rivers) passes the limit: refused at once (building
    took 20 GB of memory before)."""
    from sog.search.full_tree import TreeTooLarge, refuse_too_large
    game = load_game("hunl")
    assert game.public_tree_size() > 2_000_000_000
    with pytest.raises(TreeTooLarge, match="at least 2,707,294,201 public states"):
        refuse_too_large(game)


@pytest.mark.parametrize("name", ["kuhn_poker", "leduc_poker", SMALL_LIMIT,
                                  "holdem(numRanks=4,numSuits=2,numHoleCards=2,numRounds=1,numBoardCards=0)", "hunl"])
def test_opponent_reach_is_the_chance_weights_product(name):
    """`Poker.opponent_reach` (per-card sums, O(N h)) is chance_weights @ reach, with one- and
    two-card hands and with hands blocked (zero reach)."""
    game = load_game(name)
    cw = game.chance_weights(game.root())
    rng = np.random.default_rng(0)
    for reach in (rng.random(cw.shape[0]), np.where(rng.random(cw.shape[0]) < 0.3, 0.0, 1.0)):
        np.testing.assert_allclose(game.opponent_reach(reach), cw @ reach, rtol=1e-12, atol=1e-12)
