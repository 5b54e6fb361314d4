"""N-player hold'em (`sog.multiplayer.holdem`) against OpenSpiel's `universal_poker` on random
playouts: at every state the player to move, the chance outcomes, the legal actions, every
player's information-state string, and at the end the returns (side pots and split pots
included, counted so that a run that never met them fails). Then the n-player solvers on a
three-player limit hold'em small enough for the exact NashConv, and Pluribus' pruning hook."""
from __future__ import annotations

import numpy as np
import pytest

from launch.bench_multiplayer import bench_multiplayer
from launch.cli import main
from sog.games.holdem.action_abstraction import BetSizes
from sog.multiplayer import CHANCE, TERMINAL, Holdem, PlayersError, UnknownGameError, load_game
from sog.multiplayer.best_response import Evaluator
from sog.multiplayer.holdem import BET, CALL
from sog.multiplayer.mccfr import ExternalSamplingMCCFR
from sog.multiplayer.policy import completed

pyspiel = pytest.importorskip("pyspiel")

SMALL = {"numRanks": 4, "numSuits": 2}
FULL = {"numRanks": 13, "numSuits": 4, "numRounds": 4, "numHoleCards": 2, "numBoardCards": "0 3 1 1",
        "firstPlayer": "3 1 1 1"}
CONFIGS = {   # players, parameters; unequal stacks everywhere in no-limit, for side pots
    "3p-small-fcpa": (3, {**SMALL, "blind": "50 100 0", "stack": "300 500 1000", "firstPlayer": "3 1"}),
    "3p-small-limit": (3, {**SMALL, "betting": "limit", "blind": "5 10 0", "raiseSize": "10 20",
                           "maxRaises": "2 2", "firstPlayer": "3 1"}),
    "4p-small-fullgame": (4, {"numRanks": 5, "numSuits": 2, "bettingAbstraction": "fullgame",
                              "blind": "50 100 0 0", "stack": "150 400 1000 250", "firstPlayer": "3 1"}),
    "4p-52-limit": (4, {**FULL, "betting": "limit", "blind": "5 10 0 0", "raiseSize": "10 10 20 20",
                        "maxRaises": "3 4 4 4"}),
    "6p-small-fcpa": (6, {"numRanks": 5, "numSuits": 2, "blind": "50 100 0 0 0 0",
                          "stack": "200 700 500 120 1000 350", "firstPlayer": "3 1"}),
    "6p-52-fcpa": (6, {**FULL, "blind": "50 100 0 0 0 0", "stack": "400 1000 2000 300 10000 800"}),
    # Pluribus' bet sizes, checked against the fullgame game underneath
    "3p-small-pluribus": (3, {**SMALL, "bettingAbstraction": "pluribus", "blind": "50 100 0",
                              "stack": "3000 500 1800", "firstPlayer": "3 1"}),
    "6p-52-pluribus": (6, {**FULL, "bettingAbstraction": "pluribus", "blind": "50 100 0 0 0 0",
                           "stack": "10000 8000 12000 3000 10000 600"}),
}
# three players, 4 cards (the board is the card nobody holds), one raise a round: 5,753 histories
TINY_LIMIT = {"betting": "limit", "numRanks": 4, "numSuits": 1, "blind": "1 2 0", "raiseSize": "2 4",
              "maxRaises": "1 1", "firstPlayer": "3 1"}


def _playouts(game: Holdem, playouts: int, seed: int) -> dict:
    """Play both implementations in lockstep (actions: call half the time, else uniform; the
    `pluribus` abstraction's raises as the fullgame raises of their chips, a subset of
    OpenSpiel's legal actions); returns counts of states, showdowns, side pots and split pots."""
    os_game = pyspiel.load_game(game.name, game.openspiel_params())
    rng = np.random.default_rng(seed)
    seen = {"states": 0, "showdowns": 0, "side_pots": 0, "splits": 0}
    for _ in range(playouts):
        ours, theirs = game.initial_state(), os_game.new_initial_state()
        while True:
            seen["states"] += 1
            player = ours.current_player()
            assert player == theirs.current_player(), (ours, str(theirs))
            for p in range(game.num_players):
                assert ours.openspiel_information_state(p) == theirs.information_state_string(p), (ours, p)
            if player == TERMINAL:
                returns = ours.returns()
                np.testing.assert_allclose(returns, theirs.returns(), rtol=0, atol=1e-9)
                assert abs(returns.sum()) < 1e-9
                live = [p for p in range(game.num_players) if not ours.folded[p]]
                if len(live) > 1:
                    ranks = np.array(game.ranks([tuple(sorted(ours.hole[p] + ours.board)) for p in live]))
                    seen["showdowns"] += 1
                    seen["side_pots"] += len({ours.spent[p] for p in live}) > 1   # one all-in for less
                    seen["splits"] += int((ranks == ranks.max()).sum()) > 1
                break
            if player == CHANCE:
                outcomes = ours.chance_outcomes()
                assert outcomes == tuple(theirs.chance_outcomes())
                a = a_theirs = outcomes[rng.integers(len(outcomes))][0]
            else:
                actions, raises = ours.legal_actions(), ours.raise_options()
                if game.abstraction == "pluribus":
                    as_theirs = [b if b < BET else raises[b] for b in actions]
                    assert set(as_theirs) <= set(theirs.legal_actions())
                else:
                    as_theirs = list(actions)
                    assert as_theirs == theirs.legal_actions()
                j = actions.index(CALL) if rng.random() < 0.5 else rng.integers(len(actions))
                a, a_theirs = actions[j], as_theirs[j]
            ours, theirs = ours.child(a), theirs.child(a_theirs)
    return seen


@pytest.mark.parametrize("config", CONFIGS)
def test_holdem_matches_universal_poker(config):
    players, params = CONFIGS[config]
    seen = _playouts(Holdem(players, **params), 150, seed=len(config))
    assert seen["showdowns"] > 20 and ("limit" in config or seen["side_pots"] > 5), seen


def test_small_decks_split_pots():
    seen = _playouts(Holdem(3, numRanks=2, numSuits=4, blind="1 2 0", stack="10 6 20"), 200, seed=7)
    assert seen["splits"] > 5 and seen["side_pots"] > 5, seen


@pytest.mark.slow
@pytest.mark.parametrize("config", CONFIGS)
def test_holdem_matches_universal_poker_at_length(config):
    players, params = CONFIGS[config]
    _playouts(Holdem(players, **params), 3000, seed=100 + len(config))


def test_default_tables_match_universal_poker():
    for players in (2, 3, 5):
        _playouts(Holdem(players), 100, seed=players)


def test_keys_are_perfect_recall_where_several_rounds_deal_board_cards():
    game = Holdem(3, **{**FULL, "blind": "50 100 0", "stack": "1000 1000 1000"})
    preflop = game.initial_state()
    for a in (0, 1, 2, 3, 4, 5):    # hole cards
        preflop = preflop.child(a)
    s = preflop.child(CALL).child(CALL).child(CALL).child(51).child(47).child(43)   # flop As Ks Qs
    turn = s.child(CALL).child(CALL).child(CALL).child(23)                           # turn 7s
    assert "[Public: AsKsQs|7s]" in turn.information_state(0)
    assert "[Public: AsKsQs7s]" in turn.openspiel_information_state(0)
    river = turn.child(CALL).child(CALL).child(CALL).child(30)
    assert preflop.prunable() and turn.prunable() and not river.prunable()


def test_unequal_all_ins_make_side_pots():
    # 4 cards of one suit: 5 beats 4 beats 3 beats 2; player 2 (the deepest) holds the worst card
    game = Holdem(3, numRanks=4, numSuits=1, blind="50 100 0", stack="300 500 1000", firstPlayer="3 1")
    s = game.initial_state().child(3).child(2).child(0)      # hole cards 5, 4, 2
    s = s.child(3).child(CALL).child(CALL)      # player 2 all-in for 1000, called by 300 and 500
    s = s.child(1)                              # the board: 3
    assert s.current_player() == TERMINAL
    # main pot 3 x 300 to player 0, side pot 2 x 200 to player 1; player 2's last 500 comes back
    np.testing.assert_array_equal(s.returns(), [600.0, -100.0, -500.0])


@pytest.mark.parametrize("params, match", [
    ({"blind": "50 100"}, "3 blinds"),
    ({"stack": "100 100"}, "3 stacks"),
    ({"numPlayers": 4}, "numPlayers=4 but players=3"),
    ({"bettingAbstraction": "sog"}, "fcpa, fullgame or pluribus"),
    ({"bettingAbstraction": "pluribus", "betting": "limit"}, "no-limit"),
    ({"bettingAbstraction": "pluribus", "numRounds": 5}, "numRounds"),
    ({"numRanks": 2, "numSuits": 1}, "more cards than the deck"),
    ({"firstPlayer": "4 1"}, "firstPlayer"),
    ({"blind": "50 100 10", "stack": "50 100 10"}, "no player could act"),
    ({"bogus": 1}, "unknown parameter"),
])
def test_bad_parameters_are_refused(params, match):
    with pytest.raises(ValueError, match=match):
        Holdem(3, **params)


def test_pluribus_bet_sizes():
    game = Holdem(3, bettingAbstraction="pluribus", blind="50 100 0", stack="10000 10000 10000")
    s = game.initial_state().child(0).child(1).child(2)
    # player 2 first: pot 150, 100 to call; the preflop's first sizes f give 100 + f x 250 chips
    assert s.raise_options() == {2: 225, 3: 288, 4: 350, 5: 475, 6: 600, 7: 850, 8: 1350, 9: 2600, 10: 10000}
    assert s.legal_actions() == (0, 1, *range(2, 11)) and game.num_actions == 11
    s = s.child(4)       # to 350; player 0 re-raises: sizes 0.5, 1, 2 x (pot 500 + 300 to call)
    assert s.raise_options() == {2: 750, 3: 1150, 4: 1950, 10: 10000}
    with pytest.raises(ValueError, match="not legal"):
        s.child(5)
    with pytest.raises(ValueError, match="the game has 2"):
        Holdem(3, bet_sizes=BetSizes(sizes=(((1.0,),),)), bettingAbstraction="pluribus")
    with pytest.raises(ValueError, match="needs bettingAbstraction=pluribus"):
        Holdem(3, bet_sizes=BetSizes())


def test_load_game_and_player_counts():
    game = load_game("holdem(numRanks=4,numSuits=2,blind=50 100 0,stack=300 500 1000)", 3)
    assert game.num_players == 3 and game.num_actions == 4 and game.max_utility == 800.0
    assert load_game("universal_poker", 4).rules.blinds == (50, 100, 0, 0)
    with pytest.raises(UnknownGameError, match="3 blinds"):
        load_game("holdem(blind=1 2)", 3)
    with pytest.raises(UnknownGameError, match="no parameters"):
        load_game("kuhn_poker(players=3)", 3)
    with pytest.raises(PlayersError, match="between 2 and 6"):
        Holdem(7)


def test_nash_conv_matches_openspiel_on_holdem():
    game = Holdem(3, **TINY_LIMIT)
    ev = Evaluator(game)
    rng = np.random.default_rng(0)
    policy = {}
    for r, key in enumerate(ev.tree.row_key):
        w = rng.random(len(ev.tree.row_actions[r]))
        policy[key] = list(zip(ev.tree.row_actions[r], w / w.sum()))
    os_game = pyspiel.load_game(game.name, game.openspiel_params())
    assert ev.nash_conv(policy) == pytest.approx(pyspiel.nash_conv(os_game, policy), abs=1e-9)


def test_mccfr_on_three_player_limit_holdem():
    game = Holdem(3, **TINY_LIMIT)
    ev = Evaluator(game)
    solver = ExternalSamplingMCCFR(game, seed=1, linear_until=10**6, discount_interval=100)
    curve = []
    for n in (100, 1000, 3000):
        solver.run(n - solver.iterations)
        curve.append(ev.nash_conv(completed(ev.tree, solver.average_policy())))
    assert curve[0] > curve[1] > curve[2] and curve[2] < 0.6, curve


@pytest.mark.slow
def test_mccfr_on_six_card_limit_holdem():
    """The README's figures: 3 players, 6 cards, 58,477 histories; about a minute."""
    game = Holdem(3, betting="limit", numRanks=3, numSuits=2, blind="1 1 1", raiseSize="2 4", maxRaises="1 1",
                  firstPlayer="1 1")
    ev = Evaluator(game)
    solver = ExternalSamplingMCCFR(game, seed=1)
    curve = []
    for n in (100, 1000, 10000):
        solver.run(n - solver.iterations)
        curve.append(ev.nash_conv(completed(ev.tree, solver.average_policy())))
    assert curve == pytest.approx([5.49759, 3.12058, 0.94463], abs=1e-4)


def test_no_pruning_on_the_last_betting_round():
    game = Holdem(3, **TINY_LIMIT)
    solver = ExternalSamplingMCCFR(game, seed=2, prune_after=0, prune_prob=0.0, prune_threshold=-1e6,
                                   regret_floor=-2e6)
    solver.run(50)        # every traversal may prune; no regret is anywhere near the threshold yet
    tree = solver.tree
    assert solver.skipped_actions == 0
    last = sorted({tree.row[v] for v in range(tree.num_nodes) if tree.row[v] >= 0 and not tree.prunable[v]})
    earlier = sorted(set(range(tree.num_rows)) - set(last))
    assert last and earlier and all("[Round 1]" in tree.row_key[r] for r in last)
    solver.regret[last] = -1.5e6      # below the threshold, but on the last round: explored still
    solver.run(20)
    assert solver.skipped_actions == 0
    solver.regret[earlier] = -1.5e6   # earlier rounds: their non-terminal actions are skipped
    solver.run(20)
    assert solver.skipped_actions > 0


def test_bench_races_openspiel_on_holdem(capfd):
    out = bench_multiplayer(Holdem(3, **TINY_LIMIT), seconds=0.6, checkpoints=1, log=lambda *a, **k: None)
    assert out["game"] == "universal_poker" and out["solvers"]["openspiel"]["iterations"] > 0
    assert all(0 < r["nash_conv"] < 10 for r in out["solvers"].values())
    assert "unimplemented" not in capfd.readouterr().err    # OpenSpiel's line per key it never met


def test_bench_refuses_bad_holdem_parameters(capsys):
    assert main(["bench", "multiplayer", "--game", "holdem(blind=1 2)", "--players", "3", "--seconds", "1"]) == 2
    assert "3 blinds" in capsys.readouterr().err


@pytest.mark.parametrize("sizes", [((((0.5, 1.0), (1.0,)), ((1.0,),)), True), ((((1.0,),), ((1.0,),)), False),
                                   ((((0.25, 0.5, 1.0), (0.25, 1.0)), ((0.25, 0.75),)), True),
                                   ((((0.1, 3.0),), ((0.1, 0.75, 4.0),)), False)])
def test_pluribus_sizes_are_the_two_player_abstraction_chip_for_chip(sizes):
    """The table game's bet-size actions (sizes clipped to the legal raise range, all-in where
    configured or a size reaches it, Python rounding) are `abstract_actions`' for two players, so
    a two-player blueprint of any bet sizes loads at the table: the same betting strings."""
    from launch.blueprint import table_holdem
    from sog.games import load_game as load_two_player
    from sog.games.holdem.action_abstraction import BetSizes
    from sog.games.holdem.betting_tree import BettingTree
    from sog.multiplayer.betting_tree import TableBettingTree

    text = ("holdem(betting=nolimit,bettingAbstraction=fullgame,numRounds=2,blind=2 1,stack=23 23,"
            "firstPlayer=2 1,numRanks=4,numSuits=2,numHoleCards=1,numBoardCards=0 1)")
    bet_sizes = BetSizes(sizes[0], all_in=sizes[1])
    two = BettingTree(load_two_player(text).rules, bet_sizes)
    table = TableBettingTree(table_holdem("test", text, 2, bet_sizes))
    assert sorted(two.history) == sorted(table.history) and len(two.history) > 20
