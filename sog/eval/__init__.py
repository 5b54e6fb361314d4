"""Evaluation: matches between agents, exploitability of a search agent, local best response, AIVAT,
Elo, and tournaments (two-player; `table` for n-player hold'em; `holdem` for the two-player hold'em
estimators).

    from sog.eval import play_match, search_exploitability, fit_elo

The names load on first use.
"""
from sog.lazy import lazy_exports

_EXPORTS = {
    "aivat_match": "sog.eval.aivat", "EloResult": "sog.eval.elo", "fit_elo": "sog.eval.elo",
    "agent_policy": "sog.eval.exact_agents", "head_to_head": "sog.eval.exact_agents",
    "LocalBestResponse": "sog.eval.lbr", "lbr_match": "sog.eval.lbr", "play_game": "sog.eval.match",
    "play_match": "sog.eval.match", "search_exploitability": "sog.eval.search_policy",
    "search_policy": "sog.eval.search_policy",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
