"""The vectorised hold'em LBR: the generic fold / call LBR's decisions, values and returns on
small decks; at most the exact best response; a fast HUNL smoke run; per-hand equities."""
import itertools
import resource

import numpy as np
import pytest

from sog.agents.api import Agent, AgentError
from sog.agents.bots.poker import CallAgent
from sog.agents.policy_agents import RandomAgent, TabularAgent
from sog.eval.holdem.lbr import HoldemLBR
from sog.eval.lbr import LBRError, LocalBestResponse, lbr_match, play_lbr_game
from sog.games import load_game
from sog.games.holdem.cards import Deck
from sog.games.holdem.equity import hand_equities
from sog.games.holdem.game import hunl
from sog.search.full_tree import exploitability, full_tree, tabular_from_array

SMALL_LIMIT = ("holdem(betting=limit,numRanks=3,numSuits=2,blind=2 1,firstPlayer=2 1,numHoleCards=1,"
               "numRounds=2,numBoardCards=0 1,raiseSize=2 4,maxRaises=2 2)")
SMALL_FULLGAME = ("holdem(betting=nolimit,bettingAbstraction=fullgame,numRanks=3,numSuits=2,blind=2 1,"
                  "firstPlayer=2 1,stack=9 7,numHoleCards=1,numRounds=2,numBoardCards=0 1)")  # side pots
SMALL_FCPA = ("holdem(betting=nolimit,numRanks=3,numSuits=2,blind=1 1,stack=5 5,numHoleCards=1,"
              "numRounds=3,numBoardCards=0 1 1)")
TWO_CARDS = ("holdem(betting=limit,numRanks=5,numSuits=2,blind=2 1,firstPlayer=2 1,numHoleCards=2,"
             "numRounds=2,numBoardCards=0 3,raiseSize=2 4,maxRaises=2 2)")
TWO_CARDS_3_ROUNDS = ("holdem(betting=limit,numRanks=4,numSuits=2,blind=2 1,firstPlayer=2 1 1,numHoleCards=2,"
                      "numRounds=3,numBoardCards=0 2 1,raiseSize=2 4 4,maxRaises=1 1 1)")


def random_policy(game, seed):
    """A fixed, fully mixed tabular policy (Dirichlet rows over the legal actions)."""
    lv = full_tree(game).levels
    rng = np.random.default_rng(seed)
    sigma = rng.dirichlet(np.ones(game.spec.num_actions), size=lv.legal_dec.shape[:2]) * lv.legal_dec
    total = sigma.sum(-1, keepdims=True)
    return tabular_from_array(game, np.where(total > 0, sigma / np.where(total > 0, total, 1.0), 0.0))


class Checked(HoldemLBR):
    """The hold'em LBR that checks its action values against the generic LBR's at every decision."""

    def __init__(self, game):
        super().__init__(game)
        self.generic = LocalBestResponse(game)
        self.decisions = 0

    def decide(self, pubs, actions, actors, tables, seat, root_slot, opponent):
        worlds = self.generic.posterior(pubs, actions, actors, tables, seat, root_slot)
        _, want = self.generic.choose(tuple(pubs), worlds, seat)
        got = self.action_values(pubs[-1], root_slot,
                                 self.opponent_range(pubs, actions, actors, tables, seat, root_slot), seat)
        assert got.keys() == want.keys()
        for a in want:
            assert got[a] == pytest.approx(want[a], abs=1e-9), (pubs[-1], a)
        self.decisions += 1
        return super().decide(pubs, actions, actors, tables, seat, root_slot, opponent)


@pytest.mark.parametrize("name", [SMALL_LIMIT, SMALL_FULLGAME, SMALL_FCPA, TWO_CARDS, TWO_CARDS_3_ROUNDS])
def test_same_decisions_values_and_returns_as_the_generic_lbr(name):
    game = load_game(name)
    generic = LocalBestResponse(game)
    checked = Checked(game)
    for agent in (RandomAgent(game), TabularAgent(game, random_policy(game, 1))):
        for seed, seat in itertools.product(range(12), (0, 1)):
            want = play_lbr_game(game, generic, agent, seat, seed)
            got = play_lbr_game(game, checked, agent, seat, seed)
            assert got["history"] == want["history"] and got["deal"] == want["deal"]
            assert got["value"] == pytest.approx(want["value"], abs=1e-12)
    assert checked.decisions > 50


@pytest.mark.parametrize("name", [SMALL_LIMIT, TWO_CARDS])
def test_lbr_is_at_most_the_exact_best_response(name):
    game = load_game(name)
    policy = random_policy(game, 2)
    br = 1000 * exploitability(game, policy)                  # mbb/hand: the mean of both seats' BR
    m = lbr_match(game, TabularAgent(game, policy), 600, seed=3, lbr=HoldemLBR(game))
    assert m["ci95_mbb"][0] <= br, (m, br)
    assert m["mbb_per_hand"] > 0 and m["lbr_decisions"] > 0, m   # a mixed random policy: exploitable


def test_hunl_smoke_against_always_call():
    """Against always-call nothing bets: LBR calls (its equity against the uniform range beats
    the small blind's fold) and both check down, so in duplicate the two seats' showdowns
    cancel unless LBR folds its small blind."""
    game = hunl(betFraction=0.75)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    m = lbr_match(game, CallAgent(game), 4, seed=0, lbr=HoldemLBR(game))
    assert m["hands"] == 4 and np.isfinite(m["mbb_per_hand"]) and m["lbr_decisions"] >= 4, m
    assert abs(m["mbb_per_hand"]) <= 250, m                   # 0, or a folded small blind
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak < 1_000_000   # KB: under 1 GB more


def test_hand_equities_match_the_scalar_equity_exactly_and_sampled():
    from sog.games.holdem.equity import equity
    deck = Deck(13, 4, 2)
    hand, board = [48, 51], [0, 17, 30]                       # As Ac against the board 2c 6d 9h
    eq = hand_equities(deck, hand, board, 5)                  # exact: 1081 runouts
    blocked = (deck.hand_masks & deck.card_masks(np.array([hand + board]))[0]) != 0
    assert np.isnan(eq[blocked]).all() and not np.isnan(eq[~blocked]).any()
    # against a uniformly random hand: the mean over the hands (each hand's runouts equally many)
    want = equity(deck, hand, board, 5, np.random.default_rng(0), samples=200_000, exact_limit=0)
    assert float(np.mean(eq[~blocked])) == pytest.approx(want, abs=0.005)
    rng = np.random.default_rng(1)
    sampled = hand_equities(deck, hand, board, 5, rng, samples=2000, exact_runouts=0)
    assert np.nanmax(np.abs(sampled - eq)) < 0.1 and np.nanmean(np.abs(sampled - eq)) < 0.02
    river = hand_equities(deck, hand, board + [5, 9], 5)     # one runout: 1, 1/2 or 0
    assert set(np.unique(river[~np.isnan(river)])) <= {0.0, 0.5, 1.0}


def test_bad_game():
    with pytest.raises(LBRError, match="needs a hold'em game"):
        HoldemLBR(load_game("leduc_poker"))


class Opaque(Agent):
    """An agent that plays but does not say how (no `strategy`)."""

    def __init__(self, game):
        self.game = game

    def act(self, history, slot):
        return self.game.betting(history[-1]).call


def test_cli_lbr_on_hunl():
    import argparse

    from launch import tournament
    from launch.console import UserError

    parser = argparse.ArgumentParser()
    tournament.add_parser(parser.add_subparsers())
    args = parser.parse_args(["lbr", "--game", "hunl(betFraction=0.5)", "--agent", "call", "--hands", "2"])
    out = args.func(args)
    assert out["hands"] == 2 and out["bets"] == [] and out["lbr_decisions"] >= 2 and out["hands_per_second"] > 0
    args = parser.parse_args(["lbr", "--game", "hunl", "--agent", "call", "--hands", "2", "--bets", "bet"])
    with pytest.raises(UserError, match="fold/call LBR"):
        args.func(args)
    game = hunl(betFraction=0.5)
    with pytest.raises(LBRError, match="does not expose"):
        lbr_match(game, Opaque(game), 2, lbr=HoldemLBR(game))


def test_sog_agent_spec_leaves_hunl_flops_unexpanded():
    """`sog:` agents' searches leave a HUNL flop a network leaf by the game's own limit (an expanded
    flop would be 22,100 children); chance_limit and chance_samples can be set."""
    from launch.tournament import setup_agents
    from sog.agents.registry import make_agent
    from sog.search.gtcfr import wide_chance

    setup_agents()
    game = hunl()
    settings = make_agent("sog:fresh?s=1", game).resolver.settings
    assert settings.chance_limit == 0 and settings.chance_samples == 16         # the game's limit
    flop = game.root() + (game.children(game.root())[0].pub[-1], 1, 1)
    assert game.kind(flop) == 1 and wide_chance(game, settings, flop)
    kuhn = load_game("kuhn_poker")
    assert make_agent("sog:fresh?s=1", kuhn).resolver.settings.chance_limit == 0
    settings = make_agent("sog:fresh?s=1&chance_limit=5&chance_samples=3", kuhn).resolver.settings
    assert (settings.chance_limit, settings.chance_samples) == (5, 3)
    assert make_agent("sog:fresh?s=1&smooth=0.25", kuhn).resolver.settings.off_support_smoothing == 0.25
    with pytest.raises(AgentError, match="off_support_smoothing"):
        make_agent("sog:fresh?s=1&smooth=2", kuhn)
