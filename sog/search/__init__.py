"""Search and solving on a game's public tree: CFR+ on the full tree, GT-CFR (growing the tree with
a value function at its leaves), continual re-solving, the exact oracle value function, and
exploitability by exact best response.

    from sog.search import GTCFR, SearchSettings, ExactValueFunction, equilibrium_policy, exploitability

The names load on first use (`sog.search.settings` alone stays cheap: the solvers compile numba code).
"""
from sog.lazy import lazy_exports

_EXPORTS = {
    "CFRConfig": "sog.search.cfr", "CFRSolver": "sog.search.cfr", "GTCFR": "sog.search.gtcfr",
    "ContinualResolver": "sog.search.resolve", "ExactValueFunction": "sog.search.oracle",
    "InvalidSetting": "sog.search.settings", "SearchSettings": "sog.search.settings",
    "PublicTree": "sog.search.tree", "TreeTooLarge": "sog.search.tree", "ValueFunction": "sog.search.value_function",
    "best_response_values": "sog.search.full_tree", "equilibrium_policy": "sog.search.full_tree",
    "exploitability": "sog.search.full_tree", "policy_value": "sog.search.full_tree",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
