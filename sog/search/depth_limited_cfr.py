"""Depth-limited CFR: CFR on a trunk whose frontier is solved by the exact oracle.

The trunk's policy alone is not a full-game policy, and re-solving the frontier
subgames afterwards at the trunk's final ranges is *unsafe*: the subgame has
many equilibria for fixed ranges, and the one found need not give the
opponent's off-path information states the values the trunk relied on (on
Leduc this composition is exploitable by ~100 mbb/h even from an equilibrium
trunk). Instead, every oracle solve at iteration t is averaged into the
frontier subgames' policy with the same weights full-tree CFR would give it
(iteration weight times the owner's reach, from the ranges at that
iteration), so the composed policy is the average of the full-game policies
the iterations played.
"""
from __future__ import annotations

import numpy as np

from sog.games.api import Game
from sog.policy import TabularPolicy
from sog.search.cfr import CFRConfig, CFRSolver, full_policy, propagate_ranges, regret_matching
from sog.search.oracle import ExactValueFunction
from sog.search.tree import CompiledTree, PublicTree, compile_tree


class DepthLimitedCFR:
    """CFR on `trunk` (a compiled partial tree) with `oracle` at its frontier."""

    def __init__(self, game: Game, trunk: CompiledTree, oracle: ExactValueFunction,
                 config: CFRConfig = CFRConfig()):
        self.game, self.trunk, self.oracle = game, trunk, oracle
        self.solver = CFRSolver(trunk, value_fn=self._evaluate, config=config)
        self._solves: list[CFRSolver] = []          # the oracle's solves of the current iteration
        self._sub_avg: np.ndarray | None = None     # [m_sub, N, A] weighted subgame policy sums
        self._sub: CFRSolver | None = None

    @classmethod
    def to_depth(cls, game: Game, stop, oracle: ExactValueFunction, config: CFRConfig = CFRConfig()):
        """Trunk from the game's root down to (and including) public states where `stop(pub)`."""
        trunk = compile_tree(PublicTree(game, [game.root()]).expand_all(stop=stop))
        return cls(game, trunk, oracle, config)

    def _evaluate(self, pubs, ranges: np.ndarray) -> np.ndarray:
        values, sub = self.oracle.solve(pubs, ranges)
        self._solves.append(sub)
        return values

    def iterate(self, iterations: int = 1) -> None:
        for _ in range(iterations):
            self._solves.clear()
            self.solver.iterate(1)
            weight = self.solver.iterations if self.solver.config.algorithm == "cfr+" else 1.0
            solves = self._solves
            for k, sub in enumerate(solves):
                # alternating updates call the oracle once per player's pass: that pass's
                # ranges are the ones the trunk averages that player's policy with
                self._accumulate(sub, weight, player=k if len(solves) == 2 else None)
        self._solves.clear()

    def _accumulate(self, sub: CFRSolver, weight: float, player: int | None) -> None:
        lv = sub.levels
        sigma = sub.average_policy()
        ranges = propagate_ranges(lv, full_policy(lv, sigma), sub.root_ranges)
        own = ranges[lv.dec, lv.dec_actor][:, :, None]
        if player is not None:
            own = own * (lv.dec_actor == player)[:, None, None]
        if self._sub_avg is None:
            self._sub_avg, self._sub = np.zeros_like(sigma), sub
        self._sub_avg += weight * own * sigma

    def policy(self) -> TabularPolicy:
        """The composed full-game average policy (trunk and frontier subgames)."""
        s = self.solver
        table = {self.trunk.pub(p): s.average_policy()[i] for i, p in enumerate(s.levels.dec)}
        if self._sub is not None:
            lv = self._sub.levels
            sub_policy = regret_matching(self._sub_avg, lv.legal_dec, lv.n_legal)
            table.update({self._sub.ct.pub(p): sub_policy[i] for i, p in enumerate(lv.dec)})
        return TabularPolicy(self.game, table)
