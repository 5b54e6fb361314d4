"""Information-set Monte Carlo tree search (IS-MCTS) with determinization.

Cowling, Powley and Whitehouse, "Information Set Monte Carlo Tree Search",
IEEE TCIAIG 2012; evaluated as a baseline in the Student of Games supplement
(Schmid et al., "Table S5": exploitability in Leduc of the policy obtained by
independent IS-MCTS searches at every information state, sweeping the number
of simulations, the UCT constant C and the final-policy rule).

Search from one information state (pub, slot) of the player to act at `pub`:

* Determinization: each simulation starts from a world state consistent with
  the searched information state, the opponent's slot drawn from
  `opponent_range` (default uniform over its possible slots) times the deal's
  chance weights (card removal), like OpenSpiel's `resample_from_infostate`.
  The opponent's own policy does not enter the belief: that is the known
  weakness of determinization (strategy fusion / non-locality) that keeps
  IS-MCTS exploitable.
* Variant: *multiple-observer* IS-MCTS (MO-ISMCTS). Each player has its own
  tree over its own information states (pub, slot): the searcher selects at
  its information states and the opponent selects at *its* information states
  (with its sampled private slot), rather than one single-observer tree in
  which the opponent would act on the searcher's information. This is
  Algorithm 1 of Heinrich and Silver (`sog.agents.sampling.uct.MCTSEngine`) rooted at
  the determinized world state: UCB1 selection
  `Q + C sqrt(log N / N_a)` (untried actions first), one node added to each
  player's tree per simulation, then uniformly random rollouts; chance is
  sampled.
* Final policy at the root (`policy_kind`, the supplement's three rules):
  "visits" (mvd, normalised visit counts), "max_visits" (mvis, one-hot on the
  most visited action), "max_value" (mval, one-hot on the highest Monte Carlo
  value estimate). Ties go to the lowest action index.

`uct_c` defaults to `spec.max_utility` (Kuhn 2, Leduc 13; the supplement's
best Leduc settings used C = 10 to 13). `ismcts_policy` runs an independent
search at every information state of the game (breadth-first over the public
tree, slots from `possible_mask`) and assembles the TabularPolicy, which is
how the supplement measures IS-MCTS' exploitability.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from sog.agents.sampling.common import DECISION, Budget, World, WorldStepper, decision_infostates, sample_index
from sog.agents.sampling.uct import MCTSEngine
from sog.games.api import Game
from sog.policy import TabularPolicy

__all__ = ["ISMCTS", "SearchResult", "ismcts_policy", "POLICY_KINDS"]

POLICY_KINDS = ("visits", "max_visits", "max_value")


@dataclasses.dataclass
class SearchResult:
    """Root statistics of one search.

    visits, values: float [A] visit counts and mean returns (for the searcher) of the
    root's actions (0 for illegal ones); simulations: how many were run.
    """

    pub: object
    slot: int
    player: int
    visits: np.ndarray
    values: np.ndarray
    simulations: int

    def policy(self, kind: str = "visits") -> np.ndarray:
        """float [A]: the root policy by "visits", "max_visits" or "max_value"."""
        out = np.zeros(len(self.visits))
        if self.visits.sum() <= 0:
            raise ValueError("no simulation reached the root")
        if kind == "visits":
            return self.visits / self.visits.sum()
        if kind == "max_visits":
            out[int(np.argmax(self.visits))] = 1.0
        elif kind == "max_value":
            out[int(np.argmax(np.where(self.visits > 0, self.values, -np.inf)))] = 1.0
        else:
            raise ValueError(f"unknown policy kind {kind!r}; use one of {POLICY_KINDS}")
        return out


class ISMCTS:
    """MO-ISMCTS searcher. ISMCTS(game, uct_c=None, seed=0, smooth=False, gamma=0.1, eta=0.9, d=0.001).

    `search(pub, slot, simulations=None, seconds=None, opponent_range=None)` builds fresh
    trees and returns a `SearchResult`; `policy(pub, slot, simulations, kind)` is the
    root policy. One seeded Generator (`self.rng`, which a caller may replace) drives
    every search, so a sequence of searches is reproducible. `smooth=True` selects with
    Smooth UCB (gamma, eta, d) instead of UCB1 (the online Smooth UCT agent).
    """

    def __init__(self, game: Game, uct_c: float | None = None, seed: int = 0, smooth: bool = False,
                 gamma: float = 0.1, eta: float = 0.9, d: float = 0.001):
        self.game = game
        self.uct_c = float(game.spec.max_utility if uct_c is None else uct_c)
        self.rng = np.random.default_rng(seed)
        self.stepper = WorldStepper(game)
        self.smooth = bool(smooth)
        self._smooth_kw = {"gamma": gamma, "eta": eta, "d": d}
        self.last_engine: MCTSEngine | None = None

    def _opponent_weights(self, pub, player: int, slot: int, opponent_range) -> np.ndarray:
        game = self.game
        n = game.spec.num_states
        rng_in = np.ones(n) if opponent_range is None else np.asarray(opponent_range, dtype=np.float64)
        cw = game.chance_weights(pub)
        cw = cw[slot] if player == 0 else cw[:, slot]
        w = rng_in * cw * game.cached("possible_mask", pub)[1 - player]
        if w.sum() <= 0:
            raise ValueError(f"no opponent slot is consistent with slot {slot} at {pub!r}")
        return w

    def search(self, pub, slot: int, simulations: int | None = None, seconds: float | None = None,
               opponent_range: np.ndarray | None = None) -> SearchResult:
        game = self.game
        if game.cached("kind", pub) != DECISION:
            raise ValueError(f"{pub!r} is not a decision public state")
        player = game.cached("actor", pub)
        if not game.cached("possible_mask", pub)[player][slot]:
            raise ValueError(f"slot {slot} of player {player} is not possible at {pub!r}")
        weights = self._opponent_weights(pub, player, slot, opponent_range)
        engine = MCTSEngine(game, self.uct_c, self.rng, smooth=self.smooth, stepper=self.stepper,
                            **self._smooth_kw)
        budget = Budget(simulations, seconds)
        for _ in budget:
            other = sample_index(self.rng, weights)
            slots = (slot, other) if player == 0 else (other, slot)
            engine.simulate(World(pub, slots))
        self.last_engine = engine
        a = game.spec.num_actions
        visits, values = np.zeros(a), np.zeros(a)
        info = engine.infos.get((pub, slot))
        if info is not None:
            visits[info.legal] = info.visits
            values[info.legal] = info.q
        return SearchResult(pub, slot, player, visits, values, budget.done)

    def policy(self, pub, slot: int, simulations: int, kind: str = "visits",
               opponent_range: np.ndarray | None = None) -> np.ndarray:
        """float [A]: the root policy of a fresh search of `simulations` simulations."""
        return self.search(pub, slot, simulations, opponent_range=opponent_range).policy(kind)


def ismcts_policy(game: Game, simulations: int, policy_kind: str = "visits", seed: int = 0,
                  uct_c: float | None = None) -> TabularPolicy:
    """Independent IS-MCTS searches at every information state, as one TabularPolicy.

    Each (decision pub, possible actor slot) gets its own fresh search of
    `simulations` simulations with a uniform opponent belief (SoG supplement, Table S5).
    """
    if policy_kind not in POLICY_KINDS:
        raise ValueError(f"unknown policy kind {policy_kind!r}; use one of {POLICY_KINDS}")
    searcher = ISMCTS(game, uct_c=uct_c, seed=seed)
    table = {}
    for pub, _actor, slots in decision_infostates(game):
        legal = game.cached("legal_mask", pub)
        arr = legal / np.maximum(legal.sum(axis=1, keepdims=True), 1)
        for s in slots:
            arr[s] = searcher.policy(pub, int(s), simulations, policy_kind)
        table[pub] = arr
    return TabularPolicy(game, table)
