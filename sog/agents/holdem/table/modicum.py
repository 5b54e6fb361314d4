"""Modicum at a two-player table (`modicum:CONFIG.yaml?...`): depth-limited search, then end-game solving.

Modicum (Brown, Sandholm and Amos 2018, Appendix A) plays heads-up no-limit hold'em from a
blueprint: depth-limited subgames with continuation-strategy leaves on the second betting round
(the flop: the subgame to the end of the round, each leaf valued by rollouts of the blueprint and
of the blueprint biased toward fold, call and raise), and from the third round (the turn) on
subgames solved to the end of the game with CFR+ over every hand of both players, unsafe the
first time and safely after. `ModicumAgent` is that agent over a `sog blueprint`, composed of
the two table agents that do these parts:

* before `search.first_round` (default 1, the flop) it plays the blueprint;
* in rounds [`search.first_round`, `endgame.first_round`) each decision is Modicum's
  depth-limited search (`sog.agents.holdem.table.search.SearchAgent`: beliefs over every hand by Bayes'
  rule, rooted at the round's start, its solution played for the rest of the round): by default
  (`search.ranges` = RANGES) the range search over every hand of both players, the opponent
  choosing among the four continuation strategies at the leaves, valued by rollouts
  (`sog.agents.holdem.table.range_search`, as the paper's); with `search.ranges=0` Pluribus's sampled-deal
  search (linear CFR over deals drawn from the beliefs). On the 8-card game (both rounds
  searched, search seeds 0 to 3) the range search's exact exploitability was 0.129 chips a hand
  on average and +0.0146 against the blueprint (0.305 exploitable), the sampled one's 0.382 and
  -0.0334 on 8 drawn deals (docs: Results), hence the default;
* from `endgame.first_round` (default 2, the turn) on, end-game solving
  (`sog.agents.holdem.table.endgame.EndgameAgent`: CFR+ over all hands of both players to the end of
  the hand, re-solved safely at each later round by default); a round whose game has more than
  `endgame.max_nodes` public states (about half the HUNL turns at the default) is played by the
  blueprint, or with `too_large=search` searched as above (to the end of that round; the
  end-game solver's beliefs there are then the search's where it lists every deal). Exact
  exploitability with every second-round game of the 8-card game too large, mbb/hand (1 / 16
  run-outs): blueprint there 207.4 / 178.4, searched 178.2 / 134.5; but in HUNL at the
  hunl_small table (seed 1, AIVAT) searching them gave -415.6 +- 358.5 mbb/hand against the
  blueprint (2,640 hands) where the blueprint there gave -61.0 +- 234.3 (4,640 hands), so the
  blueprint is the default.

The end-game solver's beliefs at its first round are Bayes' rule along the public path, both
players': at the searched rounds' decisions by the search's strategy for every hand where that
search lists every deal (`SearchAgent.every_hand`: the same search whatever the searcher holds,
so the beliefs are its model of both players; as Modicum and Pluribus update them by the search
they ran), else by the blueprint's rows, the model the search itself starts from (a search on
sampled deals has a strategy only for the hands they hold). On the 8-card game of
tests/test_holdem_modicum.py with a trained blueprint (exact exploitability, mbb/hand): the
blueprint 269.9, the end-game solver alone 145.4, Modicum 101.6 with the search's beliefs and
244.9 with the blueprint's (16 run-outs a deal). With `endgame.resolve=safe` (the default) the
first end-game solve keeps the opponent's counterfactual values under the blueprint as its
Terminate values. LBR measures it (`sog.eval.table.lbr`) with its range by `beliefs`: its strategy
for every hand where the search lists every deal, its own model of it where the search samples
deals (the searched rounds have no strategy for the hands not held).

Where the search is a range search (`search.ranges`) its strategy is defined for every hand at any
size, so "where the search lists every deal" above holds for it too.

Options are the two agents' settings, prefixed with the part they set: `search.iterations`,
`search.deals`, `search.profiles`, `search.sample`, `search.runouts`, `search.ranges`, `search.seconds`, ... and
`endgame.iterations`, `endgame.first_round`, `endgame.resolve`, `endgame.max_nodes`.
`stats()` reports both parts' counts.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from sog.agents.holdem.table.agents import BlueprintAgent, OverBlueprint, TableError
from sog.agents.holdem.table.endgame import EndgameAgent, EndgameSettings, board_at
from sog.agents.holdem.table.search import SearchAgent, SearchSettings

TOO_LARGE = ("blueprint", "search")
RANGES = 4096       # the search's default: Modicum's range search, this many rollouts a leaf and continuation


@dataclasses.dataclass(frozen=True)
class ModicumSettings:
    """The depth-limited search's settings (`search`) and the end-game solver's (`endgame`); the
    search plays rounds [search.first_round, endgame.first_round), so it must start earlier.
    `too_large`: who plays a later round whose game is too large for the solver, "blueprint" or
    "search" (module doc). The search is by default the range search (`search.ranges` = RANGES, as
    Modicum's; `search.ranges=0`: the sampled-deal search)."""

    search: SearchSettings = SearchSettings(ranges=RANGES)
    endgame: EndgameSettings = EndgameSettings()
    too_large: str = "blueprint"

    def __post_init__(self):
        if self.too_large not in TOO_LARGE:
            raise TableError(f"modicum: too_large must be one of {', '.join(TOO_LARGE)}, got {self.too_large!r}")
        if self.search.first_round >= self.endgame.first_round:
            raise TableError(f"modicum: search.first_round ({self.search.first_round}) must be below "
                             f"endgame.first_round ({self.endgame.first_round}): the search plays the rounds "
                             "between them")

    @property
    def first_round(self) -> int:
        """The first round the agent does not play by the blueprint (`OverBlueprint.probs`)."""
        return self.search.first_round


class ModicumAgent(OverBlueprint):
    """Depth-limited search, then full-range end-game solving, over `blueprint` (module doc)."""

    def __init__(self, blueprint: BlueprintAgent, settings: ModicumSettings = ModicumSettings(),
                 label: str = "modicum"):
        super().__init__(blueprint, settings, label)
        self.search = SearchAgent(blueprint, settings.search, label)
        self.endgame = EndgameAgent(blueprint, settings.endgame, label)
        self.endgame.before = self._played_before

    def _played_before(self, table, node: int, board) -> np.ndarray | None:
        """The end-game solver's `before`: the search's rows for every hand where it plays node (before
        the solver's first round, and in rounds too large to solve with `too_large` "search")."""
        if self.settings.too_large != "search" and table.betting.round[node] >= self.settings.endgame.first_round:
            return None
        return self.search.every_hand(table, node, board)

    def beliefs(self, table, path: np.ndarray, slots: np.ndarray, board, seat: int) -> np.ndarray:
        """float64 [2, N]: the end-game solver's beliefs (`EndgameAgent.beliefs`: Bayes' rule along the
        public path with the agent in `seat`'s per-hand strategy), whose rows at the searched rounds'
        decisions are the search's for every hand where it lists every deal, else the blueprint's (the
        agent's model there: a search on sampled deals has no strategy for the hands it does not hold)."""
        return self.endgame.beliefs(table, path, slots, board, seat)

    def decide(self, table, node: int, cards: np.ndarray, seat: int) -> np.ndarray:
        """float64 [K]: the search's row before the end-game solver's first round, and after it where
        the round's game is too large for the solver with `too_large` "search"; else the solver's (the
        blueprint's where too large)."""
        r = int(table.betting.round[node])
        searched = self.settings.too_large == "search" and \
            not self.endgame.plays(table, node, board_at(table, node, cards))
        if r < self.settings.endgame.first_round or searched:
            return self.search.decide(table, node, cards, seat)
        return self.endgame.decide(table, node, cards, seat)

    def stats(self) -> dict:
        return {"search": self.search.stats(), "endgame": self.endgame.stats(), "blueprint": self.blueprint.stats()}
