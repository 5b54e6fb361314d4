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

Everything else is importable from its module (`sog.search.cfr`, `sog.eval.lbr`, ...). The names
above are imported on first use, so that `import sog.config` (every command line) does not load
the search, agents and numba.
"""
from sog.lazy import lazy_exports

# name -> the module it comes from
_EXPORTS = {
    "Agent": "sog.agents.api", "AgentError": "sog.agents.api", "make_agent": "sog.agents.registry",
    "SoGAgent": "sog.agents.sog_agent", "play_game": "sog.eval.match", "play_match": "sog.eval.match",
    "search_exploitability": "sog.eval.search_policy", "search_policy": "sog.eval.search_policy",
    "GAMES": "sog.games", "load_game": "sog.games", "Game": "sog.games.api", "GameSpec": "sog.games.api",
    "PolicyError": "sog.policy", "TabularPolicy": "sog.policy", "load_policy": "sog.policy",
    "save_policy": "sog.policy", "CFRConfig": "sog.search.cfr", "CFRSolver": "sog.search.cfr",
    "best_response_values": "sog.search.full_tree", "equilibrium_policy": "sog.search.full_tree",
    "exploitability": "sog.search.full_tree", "full_tree": "sog.search.full_tree",
    "policy_value": "sog.search.full_tree", "GTCFR": "sog.search.gtcfr",
    "ExactValueFunction": "sog.search.oracle", "ContinualResolver": "sog.search.resolve",
    "SearchSettings": "sog.search.settings", "PublicTree": "sog.search.tree",
}

__all__ = [
    "GAMES", "GTCFR", "Agent", "AgentError", "CFRConfig", "CFRSolver", "ContinualResolver",
    "ExactValueFunction", "Game", "GameSpec", "PolicyError", "PublicTree", "SearchSettings", "SoGAgent",
    "TabularPolicy", "best_response_values", "equilibrium_policy", "exploitability", "full_tree",
    "load_game", "load_policy", "make_agent", "play_game", "play_match", "policy_value",
    "save_policy", "search_exploitability", "search_policy",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
