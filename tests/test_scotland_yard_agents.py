"""The heuristic Scotland Yard agent (`sy_heuristic`) on hand-made London positions."""
from __future__ import annotations

import numpy as np
import pytest

from sog.agents.api import AgentError
from sog.agents.bots.scotland_yard import detective_distances
from sog.agents.registry import make_agent
from sog.eval.match import play_match
from sog.games import load_game
from sog.games.scotland_yard import SYState
from sog.games.scotland_yard_map import TICKETS


def st(*stations):
    return tuple(s - 1 for s in stations)


@pytest.fixture(scope="module")
def london():
    return load_game("scotland_yard_london")


def position(phase, detectives, possible, mrx=(4, 3, 3, 5, 2), round=5):
    return SYState(round, phase, st(*detectives), tuple(mrx) + (10, 8, 4) * 5, None, st(*possible),
                   None, ("test",))


def move(game, station, action):
    mv = game.moves
    return TICKETS[mv.ticket[station, action]], int(mv.dest[station, action]) + 1


def test_distances(london):
    d = detective_distances(london)
    assert d[st(1)[0], st(8)[0]] == 1 and d[st(1)[0], st(46)[0]] == 1     # taxi; bus / underground
    assert d[st(1)[0], st(1)[0]] == 0 and np.array_equal(d, d.T)
    assert d[st(115)[0], st(108)[0]] > 1                                   # no ferry for detectives


def test_mrx_runs_from_the_detectives(london):
    agent = make_agent("sy_heuristic", london)
    agent.reset(0, seed=1)
    pub = position("x", (8, 58, 29, 34, 50), possible=(1,), mrx=(4, 3, 3, 5, 0))
    s = st(1)[0]
    p = agent.strategy([pub], s)
    # from 1: 9 (by taxi or black) is two moves from 8, 46 (bus, underground, black) next to 58;
    # the black ticket to 9 is kept
    assert {move(london, s, a) for a in np.flatnonzero(p)} == {("taxi", 9)}
    assert move(london, s, agent.act([pub], s)) == ("taxi", 9)
    trapped = position("x", (19, 47, 59, 29, 50), possible=(1,))     # every move ends next to a detective
    assert np.flatnonzero(agent.strategy([trapped], s)).tolist() == [london.moves.double]


def test_detectives_close_in_on_the_possible_stations(london):
    agent = make_agent("sy_heuristic", london)
    agent.reset(1, seed=0)
    pub = position("d1", (13, 26, 29, 34, 50), possible=(89, 128))
    p = agent.strategy([pub], 0)
    assert {move(london, st(13)[0], a) for a in np.flatnonzero(p)} == {("underground", 89)}


def test_heuristic_beats_random_in_both_seats(london):
    out = play_match(london, make_agent("sy_heuristic", london), make_agent("random", london), games=6, seed=0)
    assert out["seat_means"][0] > 0 and out["seat_means"][1] > -1
    with pytest.raises(AgentError, match="plays Scotland Yard, not kuhn_poker"):
        make_agent("sy_heuristic", load_game("kuhn_poker"))
