"""Search and solving on a game's public tree: CFR+ on the full tree, GT-CFR (growing the tree with
a value function at its leaves), continual re-solving, the exact oracle value function, and
exploitability by exact best response.

    from sog.search import GTCFR, SearchSettings, ExactValueFunction, equilibrium_policy, exploitability
"""
from sog.search.cfr import CFRConfig, CFRSolver
from sog.search.full_tree import best_response_values, equilibrium_policy, exploitability, full_tree, policy_value
from sog.search.gtcfr import GTCFR
from sog.search.oracle import ExactValueFunction
from sog.search.resolve import ContinualResolver
from sog.search.settings import InvalidSetting, SearchSettings
from sog.search.tree import PublicTree, TreeTooLarge
from sog.search.value_function import ValueFunction

__all__ = ["GTCFR", "CFRConfig", "CFRSolver", "ContinualResolver", "ExactValueFunction", "InvalidSetting",
           "PublicTree", "SearchSettings", "TreeTooLarge", "ValueFunction", "best_response_values",
           "equilibrium_policy", "exploitability", "full_tree", "policy_value"]
