"""Two-player hold'em with OpenSpiel universal_poker's parameters, rules and action ids.

`holdem(numRanks=3,numSuits=2,betting=limit,...)` (see `params` for the parameters):
`params` validates the rules, `betting` plays the ACPC server's betting, `cards` holds
the deck, the hands (slots) and the ACPC hand ranking, `game` is the public-tree game;
`hunl` is the Student of Games paper's heads-up no-limit game (`load_game("hunl")`).
The Pluribus-style abstraction: `isomorphism` (suit-isomorphic hands and boards), `buckets`
(k-means hand buckets per round, cached) and `action_abstraction` (bet sizes, translation).
"""
from sog.games.holdem.game import Holdem, hunl
from sog.games.holdem.params import HoldemParameterError

__all__ = ["Holdem", "HoldemParameterError", "hunl"]
