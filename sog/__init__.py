"""sog: Student of Games as a library (no Ray, no JAX in here).

The names a script needs, from the layers below (games < policy < search < agents < eval):

    import sog
    game = sog.load_game("leduc_poker")
    policy = sog.equilibrium_policy(game, iterations=1000)          # CFR+, alternating updates
    print(1000 * sog.exploitability(game, policy), "mbb/h")
    oracle = sog.ExactValueFunction(game, iterations=10)              # exact leaf values
    agent = sog.SoGAgent(game, oracle, sog.SearchSettings(simulations=100, per_phase=1))
    resolver = sog.ContinualResolver(game, oracle, sog.SearchSettings(simulations=10))
    print(sog.search_exploitability(game, resolver, seeds=1)["mean"])

Everything else is importable from its module (`sog.search.cfr`, `sog.eval.lbr`, ...).
"""
from sog.agents.api import Agent, AgentError
from sog.agents.registry import make_agent
from sog.agents.sog_agent import SoGAgent
from sog.eval.match import play_game, play_match
from sog.eval.search_policy import search_exploitability, search_policy
from sog.games import GAMES, load_game
from sog.games.api import Game, GameSpec
from sog.policy import PolicyError, TabularPolicy, load_policy, save_policy
from sog.search.cfr import CFRConfig, CFRSolver
from sog.search.full_tree import (best_response_values, equilibrium_policy, exploitability,
                                  full_tree, policy_value)
from sog.search.gtcfr import GTCFR
from sog.search.oracle import ExactValueFunction
from sog.search.resolve import ContinualResolver
from sog.search.settings import SearchSettings
from sog.search.tree import PublicTree

__all__ = [
    "GAMES", "GTCFR", "Agent", "AgentError", "CFRConfig", "CFRSolver", "ContinualResolver",
    "ExactValueFunction", "Game", "GameSpec", "PolicyError", "PublicTree", "SearchSettings", "SoGAgent",
    "TabularPolicy", "best_response_values", "equilibrium_policy", "exploitability", "full_tree",
    "load_game", "load_policy", "make_agent", "play_game", "play_match", "policy_value",
    "save_policy", "search_exploitability", "search_policy",
]
