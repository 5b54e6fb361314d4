"""Agents: anything that picks an action at a decision of a `sog.games` game.

The agent API (`Agent`, its errors), the spec language and registry (`make_agent("uct?simulations=200",
game)`, `register(kind, factory)` for a kind of your own) and the built-in agents. The families live
in subpackages: `sampling` (world-state MCCFR, UCT, IS-MCTS), `bots` (scripted poker and Scotland Yard
players), `external` (UCI / GTP engines, the ACPC seat), `holdem` (the hold'em blueprint, the table
agents and their seats in a two-player game). The names load on first use.
"""
from sog.lazy import lazy_exports

_POLICY = "sog.agents.policy_agents"
_EXPORTS = {
    "Agent": "sog.agents.api", "AgentError": "sog.agents.api", "AgentFailure": "sog.agents.api",
    "DepthLimitedAgent": "sog.agents.depth_limited", "SoGAgent": "sog.agents.sog_agent",
    "BaseAgent": _POLICY, "ISMCTSAgent": _POLICY, "MCCFRAgent": _POLICY, "RandomAgent": _POLICY,
    "SmoothUCTAgent": _POLICY, "TabularAgent": _POLICY, "UCTAgent": _POLICY,
    "make_agent": "sog.agents.registry", "parse_spec": "sog.agents.spec", "register": "sog.agents.spec",
    "take_params": "sog.agents.spec",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
