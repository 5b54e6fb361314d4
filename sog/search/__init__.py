"""Search and solving on a game's public tree: CFR+ on the full tree, GT-CFR (growing the tree with
a value function at its leaves), continual re-solving, the exact oracle value function, and
exploitability by exact best response.

    from sog.search import GTCFR, SearchSettings, ExactValueFunction, equilibrium_policy, exploitability

The names load on first use (`sog.search.settings` alone stays cheap: the solvers compile numba code).
"""
import importlib

_EXPORTS = {
    "CFRConfig": "cfr", "CFRSolver": "cfr", "GTCFR": "gtcfr", "ContinualResolver": "resolve",
    "ExactValueFunction": "oracle", "InvalidSetting": "settings", "SearchSettings": "settings",
    "PublicTree": "tree", "TreeTooLarge": "tree", "ValueFunction": "value_function",
    "best_response_values": "full_tree", "equilibrium_policy": "full_tree", "exploitability": "full_tree",
    "policy_value": "full_tree",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'sog.search' has no attribute {name!r}")
    return getattr(importlib.import_module(f"sog.search.{_EXPORTS[name]}"), name)
