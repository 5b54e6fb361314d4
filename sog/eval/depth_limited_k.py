"""The k-experiment of depth-limited solving: exploitability against the number of
continuation strategies.

Solving the depth-limited subgame at the root once per seat, with k
continuations for the opponent at the leaves (`sog.search.multivalued`), and
composing the two seats' trunks with the blueprint below gives a full-game
policy whose exploitability is exact (`exploitability_by_k`): the paper's
Figure 1 effect, it falls as k grows. `frozen_limit` (the best trunk against
every opponent strategy, i.e. k = all pure strategies) is the floor.
"""
from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from sog.games.api import DECISION, Game
from sog.search.cfr import (
    CFRConfig,
    CFRSolver,
)
from sog.search.full_tree import (
    best_response_values,
    full_tree,
)
from sog.search.multivalued import (
    DEFAULT_CONFIG,
    at_chance,
    compose,
    make_continuations,
    solve_depth_limited,
)
from sog.search.tree import PublicTree


def _trunk_pubs(game: Game) -> set:
    tree = PublicTree(game, [game.root()]).expand_all(stop=at_chance(game, game.root()))
    return {tree.pubs[i] for i in range(tree.size) if tree.kind[i] == DECISION}


class _FrozenSolver(CFRSolver):
    """CFR on the full tree with some rows of the current policy fixed."""

    def __init__(self, ct, frozen: np.ndarray, fixed: np.ndarray, config: CFRConfig):
        super().__init__(ct, config=config)
        self.frozen, self.fixed = frozen, fixed

    def current_entries(self) -> np.ndarray:
        lv = self.levels
        sigma = super().current_entries()
        frozen = self.frozen[lv.ent_row]
        sigma[frozen] = lv.to_entries(self.fixed)[frozen]
        return sigma


def frozen_limit(game: Game, blueprint: np.ndarray, iterations: int = 2000,
                 config: CFRConfig = DEFAULT_CONFIG) -> np.ndarray:
    """The k -> "every strategy" limit: per seat, the trunk that is best against an opponent
    free everywhere when the seat plays its blueprint below the depth limit (full-tree CFR
    with those rows frozen); composed like `compose`. The floor of `exploitability_by_k`."""
    ft = full_tree(game)
    lv = ft.levels
    trunk = _trunk_pubs(game)
    below = np.array([pub not in trunk for pub in ft.decision_pubs])
    out = np.array(blueprint, dtype=np.float64, copy=True)
    for seat in (0, 1):
        frozen = below & (lv.dec_actor == seat)
        solver = _FrozenSolver(ft.ct, frozen, blueprint, config)
        solver.iterate(iterations)
        mine = ~below & (lv.dec_actor == seat)
        out[mine] = solver.average_policy()[mine]
    return out


def exploitability_by_k(game: Game, blueprint: np.ndarray, approach: str, ks: Sequence[int],
                        iterations: int = 500, bias_factor: float = 5.0,
                        config: CFRConfig = DEFAULT_CONFIG, log=None) -> list[dict]:
    """Exploitability of the composed policy (each seat's depth-limited solution at the root
    in the trunk, blueprint below) for each k in `ks`; rows of dicts, game units and mbb."""
    kmax = max(ks)
    conts = {seat: make_continuations(game, blueprint, seat, kmax, approach, bias_factor, iterations,
                                      config) for seat in (0, 1)}
    root, init = game.root(), game.initial_ranges()
    rows = []
    for k in ks:
        t0 = time.perf_counter()
        sols = {seat: solve_depth_limited(game, root, init, conts[seat].truncated(k), iterations, config)
                for seat in (0, 1)}
        br = best_response_values(game, compose(game, blueprint, sols))
        expl = float(br.sum() / 2)
        row = {"approach": approach, "k": int(k), "exploitability": expl,
               "exploitability_mbb": 1000 * expl, "best_response_values": [float(x) for x in br],
               "seconds": time.perf_counter() - t0, "continuations": list(conts[0].labels[:k])}
        rows.append(row)
        if log is not None:
            log(f"{approach:>15} k={k:<2} {1000 * expl:9.2f} mbb/h")
    return rows


