"""Local best response: large positive win rate against uniform random play, near zero or
negative against a near-equilibrium CFR+ policy; exact ranges; clear errors."""
import numpy as np
import pytest

from sog.agents.api import Agent
from sog.agents.policy_agents import RandomAgent, TabularAgent
from sog.eval.aivat import equilibrium_policy
from sog.eval.lbr import LBRError, LocalBestResponse, lbr_match, play_lbr_game
from sog.games import load_game
from sog.policy import TabularPolicy


def test_lbr_beats_uniform_random_by_a_lot(leduc, kuhn):
    m = lbr_match(leduc, RandomAgent(leduc), 1000, seed=0)
    assert m["hands"] == 1000 and m["ci95_mbb"][0] > 250, m
    m = lbr_match(kuhn, RandomAgent(kuhn), 1000, seed=0, bets=["all"])
    assert m["ci95_mbb"][0] > 300, m


def test_lbr_does_not_beat_a_near_equilibrium_leduc_policy(leduc):
    eq = TabularAgent(leduc, equilibrium_policy(leduc, 2000, alternating=False))   # 3.96 mbb/h
    m = lbr_match(leduc, eq, 1000, seed=1)
    assert m["ci95_mbb"][1] < 30 and m["mbb_per_hand"] < 0, m        # fold/call LBR loses
    m = lbr_match(leduc, eq, 1000, seed=1, bets=["raise"])
    assert m["ci95_mbb"][0] < 0 and m["mbb_per_hand"] < 100, m       # consistent with <= 0


def test_range_is_the_bayes_posterior(kuhn):
    """Player 0 bets with the king only: after its bet LBR (player 1) knows it holds the king."""
    table = {(): np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])}
    opponent = TabularAgent(kuhn, TabularPolicy(kuhn, table))
    lbr = LocalBestResponse(kuhn)
    opponent.reset(0, 0)
    tables = {0: table[()]}
    worlds = lbr.posterior([(), (1,)], [1], [0], tables, seat=1, root_slot=1)      # LBR holds the queen
    assert [w.slots for _, w in worlds] == [(2, 1)]
    action, values = lbr.choose(((), (1,)), worlds, seat=1)
    assert action == 0 and values[0] == -1 and values[1] == -2                    # fold, do not call
    worlds = lbr.posterior([(), (0,)], [0], [0], tables, seat=1, root_slot=1)      # it checked: J or ...
    assert sorted(w.slots[0] for _, w in worlds) == [0]                           # ... J (LBR holds Q)


def test_lbr_against_a_sog_agent_is_seeded(kuhn):
    """LBR asks the SoG agent hypothetical questions (its strategy after a bet LBR considers)."""
    from sog.agents.sog_agent import SoGAgent
    from sog.search.oracle import ExactValueFunction
    from sog.search.settings import SearchSettings

    def games():
        agent = SoGAgent(kuhn, ExactValueFunction(kuhn, iterations=20), SearchSettings(3, 1))
        lbr = LocalBestResponse(kuhn, bets=["bet"])
        return [play_lbr_game(kuhn, lbr, agent, seat, seed)["history"] for seed in range(3) for seat in (0, 1)]

    assert games() == games()


class Opaque(Agent):
    def __init__(self, game):
        self.game = game

    def act(self, history, slot):
        return int(np.flatnonzero(self.game.legal_mask(history[-1])[slot])[0])


def test_bad_input(leduc, kuhn):
    with pytest.raises(LBRError, match="needs a poker game"):
        LocalBestResponse(load_game("tic_tac_toe"))
    with pytest.raises(LBRError, match="unknown bet 'shove'"):
        LocalBestResponse(leduc, bets=["shove"])
    with pytest.raises(LBRError, match="does not expose"):
        lbr_match(kuhn, Opaque(kuhn), 4)
