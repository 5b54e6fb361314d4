"""Hold'em's `sog` betting abstraction (fold, check / call, one bet of f x pot) and `hunl`:
bet sizes on hand-made states, all-in clipping, the hand's setup (bet fraction, stacks)
as a public chance event drawn per hand from the hand's seed, and solving with it."""
from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest

from sog.agents.policy_agents import RandomAgent
from sog.eval.match import play_game
from sog.games import UnknownGameError, load_game
from sog.games.api import CHANCE, DECISION
from sog.games.holdem import betting as B
from sog.games.traverse import decision_states
from sog.search.cfr import CFRConfig, CFRSolver
from sog.search.full_tree import full_tree

TINY = ("holdem(bettingAbstraction=sog,numRanks=3,numSuits=2,blind=2 1,firstPlayer=2 1,stack=20 20,"
        "numHoleCards=1,numRounds=2,numBoardCards=0 1,{})")


def play(game, pub, *actions):
    """`pub` after the actions, each checked legal."""
    for a in actions:
        assert a in game.legal_actions(pub), (pub, a)
        pub = pub + (a,)
    return pub


def sequences(game, pub) -> str:
    return game.info_state_string(pub, 0, 0).split("[Sequences: ")[1].split("]")[0]


def test_hunl_is_the_papers_game():
    game = load_game("hunl")
    assert game.deck.size == 52 and game.spec.num_states == 1326 and game.spec.num_actions == 3
    assert game.rules.blinds == (100, 50) and game.rules.stacks == (20000, 20000)
    assert game.spec.max_utility == 200.0                      # big blinds
    root = game.root()
    assert game.kind(root) == CHANCE
    kids = game.children(root)
    fractions = [c.pub[0].fraction for c in kids]
    assert fractions == [Fraction(50 + j, 100) for j in range(51)]
    assert sum(c.prob for c in kids) == pytest.approx(1.0)
    assert all((c.state_maps == np.arange(1326)).all() for c in kids)   # no card seen
    assert game.openspiel_name() is None
    assert load_game(game.spec.name).spec == game.spec


def test_bet_is_f_times_the_pot_after_calling():
    game = load_game("hunl(betFraction=0.75)")
    pub = game.root()
    assert game.kind(pub) == DECISION and game.actor(pub) == 1          # the small blind acts first
    assert game.legal_actions(pub) == (0, 1, 2) and game.bet_fraction(pub) == 0.75
    # SB: calls 50 to 100, pot after calling 200: raise to 100 + 150; BB: pot after calling 500
    pub = play(game, pub, 2, 2)
    assert sequences(game, pub) == "r250r625" and game.pot(pub) == 875
    assert game.betting(pub).bets == {"bet": 2} and game.betting(pub).fold == 0
    # calls close the round; the flop's first bet is 3/4 of the pot 1250 on top of nothing
    pub = play(game, pub, 1) + ((0, 1, 2),)
    assert game.actor(pub) == 0 and game.legal_actions(pub) == (1, 2)   # nothing to call: no fold
    pub = play(game, pub, 2)
    assert sequences(game, pub) == "r250r625c|r1563"                      # 625 + 937.5 rounded up


def test_bet_above_the_stack_is_all_in():
    game = load_game("hunl(betFraction=1,stack=600 600)")
    pub = play(game, game.root(), 2)                    # pot raise to 300
    pub = play(game, pub, 2)                            # 300 + 600 > 600: all-in
    assert sequences(game, pub) == "r300r600"
    assert game.legal_actions(pub) == (0, 1)            # the all-in cannot be re-raised
    assert game.kind(play(game, pub, 1)) == CHANCE      # called: the board runs out


@pytest.mark.parametrize("params", ["betFraction=0.5", "betFraction=1", "fractionSteps=4,stackSteps=3"])
def test_every_bet_is_a_legal_raise(params):
    """On every decision of a small game the bet is the fraction's size, clipped to the legal
    raises; with f >= 1/2 the minimum raise never binds."""
    game = load_game(TINY.format(params))
    for pub, _ in decision_states(game):
        st = game._state(pub)
        rng = B.raise_range(game.rules, st)
        assert (B.BET in game.legal_actions(pub)) == (rng is not None)
        if rng is None:
            continue
        p = game.actor(pub)
        lo, hi = rng
        to = B.raise_to(game.rules, st, B.BET)
        target = st.max_spent + int(st.setup.fraction * (st.pot + st.max_spent - st.spent[p]) + Fraction(1, 2))
        assert to == min(target, hi) and to >= lo


def test_setups_drawn_at_the_root_and_stack_steps():
    game = load_game(TINY.format("fractionSteps=3,stackSteps=4"))
    kids = game.children(game.root())
    setups = [c.pub[0] for c in kids]
    assert [s.fraction for s in setups] == [Fraction(1, 2)] * 4 + [Fraction(3, 4)] * 4 + [Fraction(1)] * 4
    assert [s.stacks for s in setups[:4]] == [(5, 5), (10, 10), (15, 15), (20, 20)]
    pub = kids[5].pub
    f = game.features(pub)
    assert f[-1] == 0.75 and f[game.deck.size] == pytest.approx(2 / 10)    # blind 2 of stack 10
    assert game.features(game.root())[-1] == 0.0
    assert game.info_state_string(pub, 0, 0).endswith("[Fraction: 3/4]")
    assert game.info_state_string(game.root(), 0, 0).endswith("[Fraction: ?]")
    with pytest.raises(ValueError, match="setup"):
        game.kind((B.Setup(Fraction(2, 3), (20, 20)),))


def test_the_fraction_is_public_and_drawn_per_hand_from_the_seed():
    game = load_game("hunl")

    def hand(seed):
        g = play_game(game, [RandomAgent(game), RandomAgent(game)], seed)
        setup = g["pubs"][1][0]
        assert isinstance(setup, B.Setup) and all(p[0] == setup for p in g["pubs"][1:])
        return setup.fraction

    draws = [hand(s) for s in range(8)]
    assert draws == [hand(s) for s in range(8)]              # deterministic for a seed
    assert len(set(draws)) > 1                                # drawn per hand


def test_drawn_fractions_solve_as_the_mixture_of_the_fixed_ones():
    """The setup is a public chance event: CFR on the game that draws f from {1/2, 1} plays each
    fraction's subgame as the game with that fraction fixed, and its value is their mean."""
    def solve(params):
        game = load_game(TINY.format(params))
        solver = CFRSolver(full_tree(game).ct, config=CFRConfig("cfr+", alternating=True))
        solver.iterate(200)
        return float(game.initial_ranges()[0] @ solver.average_root_values()[0, 0])

    drawn = solve("fractionSteps=2")
    fixed = [solve("betFraction=0.5"), solve("betFraction=1")]
    assert drawn == pytest.approx(np.mean(fixed), abs=1e-12)


def test_solve_cli_on_a_tiny_deck(tmp_path, capsys):
    from launch.cli import main
    from sog.policy.files import load_policy
    name = TINY.format("fractionSteps=3")
    out = tmp_path / "p.json"
    assert main(["solve", "--game", name, "--iterations", "300", "--out", str(out)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["exploitability_mbb"] < 5
    assert load_policy(out).game.spec == load_game(name).spec


@pytest.mark.parametrize("params,message", [
    ("bettingAbstraction=sog,betFraction=0.4", r"must be in \[0.5, 1\]"),
    ("bettingAbstraction=sog,betFraction=x", "not a number"),
    ("bettingAbstraction=sog,betFraction=0.5,fractionSteps=3", "not both"),
    ("bettingAbstraction=sog,fractionSteps=1", "fractionSteps"),
    ("bettingAbstraction=sog,stackSteps=0", "stackSteps"),
    ("betFraction=0.5", "needs bettingAbstraction=sog"),
    ("betting=limit,bettingAbstraction=sog", "limit betting has one raise size"),
])
def test_bad_sog_parameters(params, message):
    with pytest.raises(UnknownGameError, match=message):
        load_game(f"holdem({params})")
