"""Exact evaluation of agents on games small enough to enumerate: exploitability and head to head.

An agent that states its strategy for every private state at a decision (`strategy_table`:
the blueprint, end-game solving, Modicum where its searches list every deal; tabular and
random agents slot by slot, `sog.eval.aivat.probe_strategy_table`) has a whole policy on the
game's full public tree (`agent_policy`: float [D, N, A], one table per decision of
`sog.search.full_tree.full_tree`), asked at each decision with the history [pub] (the agents
measured here read only the decision itself). Where its table is NaN for a hand (a search on
sampled deals solves for the hand it holds) the agent is asked for that hand alone
(`Agent.strategy`): the row is the search it runs holding that hand, so the policy is what it
plays, one search per hand and decision. From two such policies:

* `exploitability`: NashConv / 2 by exact best response (`sog.search.full_tree`);
* `head_to_head`: the first agent's expected utility against the second, each in both seats
  (seat 0's policy from one, seat 1's from the other), averaged over the two seats: exact, where
  a match would estimate it with an interval.

Search beats the blueprint it starts from (the Modicum and Pluribus claim) is a head-to-head
statement; exploitability measures something else: on the 8-card no-limit game of
tests/test_holdem_blueprint_agent.py, Modicum cuts its trained blueprint's exploitability from
0.305 to 0.113 chips a hand (16 run-outs) while winning only +0.012 chips a hand against it
(docs/results.md).
"""
from __future__ import annotations

import numpy as np

from sog.agents.api import Agent
from sog.errors import SogError
from sog.eval.aivat import probe_strategy_table
from sog.games.api import Game
from sog.search.full_tree import full_tree, pair_value


class AgentPolicyError(SogError, ValueError):
    """The agent has no strategy for every private state at some decision."""


def agent_policy(game: Game, agent: Agent) -> np.ndarray:
    """float64 [D, N, A]: the agent's strategy at every decision of the game's full tree
    (`full_tree(game).decision_pubs` order), each row a distribution over the legal actions of a
    possible private state; the agent is reset (`Agent.reset(seat, 0)`) before its decisions in each
    seat. Rows NaN in its table are asked hand by hand (module doc). AgentPolicyError where it
    states none."""
    pubs = full_tree(game).decision_pubs
    out: list = [None] * len(pubs)
    for seat in (0, 1):
        agent.reset(seat, 0)
        for i, pub in enumerate(pubs):
            if game.actor(pub) == seat:
                out[i] = _table(agent, pub)
    return np.stack(out)


def _table(agent: Agent, pub) -> np.ndarray:
    """float64 [N, A]: `agent_policy`'s table at decision `pub`."""
    if hasattr(agent, "strategy_table"):
        table = np.array(agent.strategy_table([pub]), dtype=np.float64)
    else:
        table = probe_strategy_table(agent, [pub])
    if table is None:
        raise AgentPolicyError(f"{agent!r} states no strategy at its decisions")
    game = agent.game
    for s in np.flatnonzero(~np.isfinite(table).all(axis=1) & game.cached("possible_mask", pub)[game.actor(pub)]):
        row = agent.strategy([pub], int(s))        # hand by hand: a search on sampled deals for the hand held
        if row is None or not np.isfinite(row).all():
            raise AgentPolicyError(f"{agent!r} has no strategy for hand {s} at {pub!r}")
        table[s] = row
    return np.nan_to_num(table)


def head_to_head(game: Game, first: np.ndarray, second: np.ndarray) -> float:
    """The expected utility (game units) of policy `first` against policy `second` (`agent_policy`
    arrays of one two-player zero-sum game), the mean of first in seat 0 and first in seat 1
    (`sog.search.full_tree.pair_value`)."""
    return 0.5 * (pair_value(game, first, second) - pair_value(game, second, first))
