"""Tabular policies (`TabularPolicy`) and their JSON files (`load_policy`, `save_policy`)."""
from sog.policy.files import load_policy, save_policy
from sog.policy.tabular import PolicyError, TabularPolicy

__all__ = ["PolicyError", "TabularPolicy", "load_policy", "save_policy"]
