"""Agents: anything that picks an action at a decision of a `sog.games` game.

The agent API (`Agent`, its errors), the spec language and registry (`make_agent("uct?simulations=200",
game)`, `register(kind, factory)` for a kind of your own) and the built-in agents. The families live
in subpackages: `sampling` (world-state MCCFR, UCT, IS-MCTS), `bots` (scripted poker and Scotland Yard
players), `external` (UCI / GTP engines, move names, the ACPC seat), `holdem` (the hold'em blueprint,
the table agents and their seats in a two-player game).
"""
from sog.agents.api import Agent, AgentError, AgentFailure
from sog.agents.depth_limited import DepthLimitedAgent
from sog.agents.policy_agents import (
                                      BaseAgent,
                                      ISMCTSAgent,
                                      MCCFRAgent,
                                      RandomAgent,
                                      SmoothUCTAgent,
                                      TabularAgent,
                                      UCTAgent,
)
from sog.agents.registry import make_agent
from sog.agents.sog_agent import SoGAgent
from sog.agents.spec import parse_spec, register, take_params

__all__ = ["Agent", "AgentError", "AgentFailure", "BaseAgent", "DepthLimitedAgent", "ISMCTSAgent",
           "MCCFRAgent", "RandomAgent", "SmoothUCTAgent", "SoGAgent", "TabularAgent", "UCTAgent",
           "make_agent", "parse_spec", "register", "take_params"]
