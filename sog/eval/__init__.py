"""Evaluation: matches between agents, exploitability of a search agent, local best response, AIVAT,
Elo, and tournaments (two-player; `table` for n-player hold'em; `holdem` for the two-player hold'em
estimators).

    from sog.eval import play_match, search_exploitability, fit_elo
"""
from sog.eval.aivat import aivat_match
from sog.eval.elo import EloResult, fit_elo
from sog.eval.exact_agents import agent_policy, head_to_head
from sog.eval.lbr import LocalBestResponse, lbr_match
from sog.eval.match import play_game, play_match
from sog.eval.search_policy import search_exploitability, search_policy

__all__ = ["EloResult", "LocalBestResponse", "agent_policy", "aivat_match", "fit_elo", "head_to_head",
           "lbr_match", "play_game", "play_match", "search_exploitability", "search_policy"]
