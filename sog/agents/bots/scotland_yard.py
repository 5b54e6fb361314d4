"""Reference opponents for Scotland Yard (any map): a heuristic agent for both seats.

* As Mr X (seat 0), it plays a move whose destination is farthest from the nearest detective
  (shortest paths over the edges detectives can use: taxi, bus, underground), preferring
  among those the moves that keep his black tickets; it plays the double-move card when every
  single move ends next to a detective (distance <= 1) and a double is legal.
* As the detectives (seat 1), each detective plays a move whose destination is nearest to the
  stations where Mr X may be (the public `possible` set: nearest station first, then the mean
  distance over the set).

Ties are broken uniformly at random with the agent's seeded rng. Spec: `sy_heuristic`.
"""
from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np

from sog.agents.api import AgentError
from sog.agents.policy_agents import BaseAgent
from sog.games.api import Game
from sog.games.scotland_yard import MRX_PHASES, ScotlandYard
from sog.games.scotland_yard_map import BLACK, TRANSPORTS


def detective_distances(game: ScotlandYard) -> np.ndarray:
    """int [N, N]: shortest paths (in moves) over the edges detectives can use (all but ferries);
    a station a detective cannot reach is N away."""
    m = game.map
    n = m.num_stations
    nb = [set() for _ in range(n)]
    for transport in TRANSPORTS[:3]:
        for a, b in m.edges.get(transport, ()):
            nb[a].add(b)
            nb[b].add(a)
    dist = np.full((n, n), n, dtype=np.int64)
    for s in range(n):
        dist[s, s], frontier, d = 0, [s], 0
        while frontier:
            d += 1
            nxt = [t for u in frontier for t in nb[u] if dist[s, t] == n]
            for t in nxt:
                dist[s, t] = d
            frontier = list(set(nxt))
    return dist


class ScotlandYardHeuristic(BaseAgent):
    """The heuristic Mr X and detectives of the module docstring, behind the agent API."""

    name = "sy_heuristic"

    def __init__(self, game: Game):
        if not isinstance(game, ScotlandYard):
            raise AgentError(f"agent 'sy_heuristic' plays Scotland Yard, not {game.spec.name}")
        super().__init__(game)
        self.dist = detective_distances(game)

    def _distribution(self, history: Sequence[Hashable], slot: int, legal: np.ndarray) -> np.ndarray:
        pub = history[-1]
        score = self._mrx_scores(pub, slot, legal) if pub.phase in MRX_PHASES \
            else self._detective_scores(pub, legal)
        best = np.ones(len(legal), dtype=bool)           # the lexicographic maxima of the rows
        for column in score.T:
            column = np.where(best, column, -np.inf)
            best &= column == column.max()
        out = np.zeros(self.game.spec.num_actions)
        out[legal[best]] = 1.0
        return out

    def _mrx_scores(self, pub, station: int, legal: np.ndarray) -> np.ndarray:
        """float [k, 2]: (distance to the nearest detective, keeps black tickets) per legal action,
        the double move scored above every move when all moves end next to a detective."""
        mv = self.game.moves
        near = self.dist[list(pub.detectives)].min(0)                       # [N]
        dest = np.where(mv.dest[station, legal] >= 0, mv.dest[station, legal], station)
        score = np.stack([near[dest].astype(float), (mv.ticket[station, legal] != BLACK)], 1)
        double = legal == mv.double
        if double.any():
            moves = ~double
            score[double] = (np.inf, 1.0) if moves.any() and score[moves, 0].max() <= 1 else (-np.inf, 0.0)
        return score

    def _detective_scores(self, pub, legal: np.ndarray) -> np.ndarray:
        """float [k, 2]: minus (distance to the nearest possible station, mean distance)."""
        mv = self.game.moves
        pos = pub.detectives[self.game.phases.index(pub.phase) - 1]
        dest = np.where(mv.dest[pos, legal] >= 0, mv.dest[pos, legal], pos)
        d = self.dist[np.ix_(dest, list(pub.possible))].astype(float)         # [k, P]
        return -np.stack([d.min(1), d.mean(1)], 1)
