"""Blueprint MCCFR on a world-state tree of abstract information states (Pluribus, Algorithm 1).

* The solver (`BlueprintMCCFR`): `sog.agents.sampling.mccfr.PluribusMCCFR` (batched external
sampling, linear weighting while t < linear_until, negative-regret pruning in
1 - prune_prob of the traversals after prune_after with a regret floor) on a world
tree whose decision rows are the abstract information states
(`AbstractWorldTree`): a real deal is sampled, each player's cards are read through
its bucket, and the regrets of an abstract set are allocated when the traversals
first create a public state where it occurs. Pluribus's exceptions: no pruning on the
last betting round (nor, as in the base class, of actions that end the hand at once).
* The blueprint (`blueprint_probs`), as Pluribus builds it (`averaging="pluribus"`):
on the first betting round the average strategy (Update-Strategy passes every
strategy_interval iterations, stopped at the end of the first round); after it, the
average of snapshots of the current strategy taken every snapshot_interval iterations
once t > snapshot_after (rows met after some snapshots count those as uniform, as an
unallocated row plays; with no snapshot yet, the current strategy).
`averaging="all"` keeps the average strategy on every round (the two-player textbook
blueprint), for comparison.
"""
from __future__ import annotations

import json

import numpy as np

from sog.agents.holdem.blueprint.abstraction import AbstractWorldTree, CardAbstraction
from sog.agents.holdem.blueprint.settings import BlueprintError, Settings, fingerprint
from sog.agents.holdem.blueprint.translation import real_policy
from sog.agents.sampling.mccfr import PluribusMCCFR, regret_matching
from sog.search.full_tree import tabular_from_array


class BlueprintMCCFR(PluribusMCCFR):
    """Algorithm 1 on the abstract game of `abstraction` (see the module doc)."""

    def __init__(self, abstraction: CardAbstraction, settings: Settings = Settings()):
        s = settings
        if s.traverser != "world":
            raise BlueprintError(f"mccfr.traverser {s.traverser!r}: BlueprintMCCFR is the world-tree traverser")
        game = abstraction.game
        super().__init__(game, seed=s.seed, discount_interval=s.discount_interval, linear_until=s.linear_until,
                         prune_after=s.prune_after, prune_prob=s.prune_prob, prune_threshold=s.prune_threshold,
                         regret_floor=s.regret_floor, strategy_interval=s.strategy_interval, batch=s.batch)
        self.settings, self.abstraction = s, abstraction
        self.tree = AbstractWorldTree(game, abstraction)
        self.last_round = game.rules.num_rounds - 1
        self._snap = np.zeros((0, self.num_actions))
        self._snap_rows = np.zeros(0)
        self.snapshots = 0
        self._grow_tables()



    def _grow_tables(self) -> None:
        """The base tables, then the snapshot sums as long as they."""
        super()._grow_tables()
        if len(self._snap) < len(self._regret):
            cap = len(self._regret)
            snap = np.zeros((cap, self.num_actions))
            snap[:len(self._snap)] = self._snap
            count = np.zeros(cap)
            count[:len(self._snap_rows)] = self._snap_rows
            self._snap, self._snap_rows = snap, count



    def _prunable(self, nodes: np.ndarray) -> np.ndarray:
        return self.tree.node_round(nodes) < self.last_round

    def _averaged(self, nodes: np.ndarray) -> np.ndarray:
        if self.settings.averaging == "all":
            return nodes
        return nodes[self.tree.node_round(nodes) == 0]

    def _snapshot_due(self, t: int) -> bool:
        return t > self.settings.snapshot_after and t % self.settings.snapshot_interval == 0

    def _batch_size(self, n: int) -> int:
        n = super()._batch_size(n)
        if self.settings.averaging == "pluribus":
            t, k = self.iterations, self.settings.snapshot_interval
            nxt = max((t // k + 1) * k, (self.settings.snapshot_after // k + 1) * k)
            n = min(n, nxt - t)
        return n

    def _batch(self, n: int) -> None:
        super()._batch(n)
        if self.settings.averaging == "pluribus" and self._snapshot_due(self.iterations + n):
            self._take_snapshot()

    def _take_snapshot(self) -> None:
        rows = self.tree.num_rows
        self._snap[:rows] += regret_matching(self._regret[:rows], self.tree.row_legal)
        self._snap_rows[:rows] += 1
        self.snapshots += 1



    def current_probs(self) -> np.ndarray:
        """float [R, A]: the current regret-matching strategy of every allocated row."""
        rows = self.tree.num_rows
        return regret_matching(self._regret[:rows], self.tree.row_legal)

    def blueprint_probs(self) -> np.ndarray:
        """float [R, A]: the blueprint of every allocated row (see the module doc)."""
        return pluribus_blueprint(self, self.tree.num_rows, self.tree.row_legal, self.tree.row_round == 0)

    def blueprint(self) -> dict[str, np.ndarray]:
        """{abstract key: float [A] action probabilities (columns: action ids)}."""
        probs = self.blueprint_probs()
        return {key: probs[i] for i, key in enumerate(self.tree.row_key)}

    def real_policy(self, probs: np.ndarray | None = None) -> np.ndarray:
        """float [m, N, A]: the blueprint (or `probs` [R, A] over the rows) played in the real
        game, over the full tree's decision public states (`sog.search.full_tree`)."""
        return real_policy(self.tree, self.blueprint_probs() if probs is None else probs)

    def policy(self):
        """The blueprint in the real game as a `TabularPolicy` over the full tree (small decks)."""
        return tabular_from_array(self.game, self.real_policy())

    def current_policy(self):
        """The current regret-matching strategy in the real game, as `policy`."""
        return tabular_from_array(self.game, self.real_policy(self.current_probs()))



    def fingerprint(self) -> dict:
        return fingerprint(self.game.spec.name, self.abstraction.describe(), self.settings)

    def stats(self) -> dict:
        """The run's counters for `sog blueprint`'s result: snapshots taken, traversals pruned, actions skipped."""
        return {"snapshots": self.snapshots, "pruned_traversals": self.pruned_traversals,
                "skipped_actions": self.skipped_actions}

    def state(self) -> dict:
        rows = self.tree.num_rows
        return {"regret": self._regret[:rows], "avg": self._avg[:rows], "snap": self._snap[:rows],
                "snap_rows": self._snap_rows[:rows], "legal": self.tree.row_legal,
                "keys": np.array(self.tree.row_key, dtype=str).reshape(rows),
                "counters": np.array([self.iterations, self.snapshots, self.nodes_touched,
                                      self.pruned_traversals, self.skipped_actions], dtype=np.int64),
                "rng": np.array(json.dumps(self.rng.bit_generator.state))}

    def restore(self, arrays: dict) -> None:
        keys = [str(k) for k in arrays["keys"].tolist()]
        self.tree = AbstractWorldTree(self.game, self.abstraction, keys, arrays["legal"])
        rows, a = len(keys), self.num_actions
        for name, src in (("_regret", "regret"), ("_avg", "avg"), ("_snap", "snap")):
            table = np.zeros((max(rows, 64), a))
            table[:rows] = arrays[src]
            setattr(self, name, table)
        self._snap_rows = np.zeros(len(self._snap))
        self._snap_rows[:rows] = arrays["snap_rows"]
        (self.iterations, self.snapshots, self.nodes_touched, self.pruned_traversals,
         self.skipped_actions) = (int(x) for x in arrays["counters"])
        self.rng.bit_generator.state = json.loads(str(arrays["rng"]))


def pluribus_blueprint(solver, rows: int, legal: np.ndarray, first_round: np.ndarray) -> np.ndarray:
    """float [R, A]: the blueprint of a Pluribus solver's first `rows` rows (the module doc):
    the average strategy where `first_round` (bool [R]) or with `averaging="all"`, else the
    snapshot average, rows met after some snapshots counting those as uniform (the current
    strategy before any snapshot). `solver` holds `_regret`, `_avg`, `_snap` [>= R, A],
    `_snap_rows` int [>= R], `snapshots` and `settings.averaging`; legal bool [R, A]."""
    current = regret_matching(solver._regret[:rows], legal)
    avg = solver._avg[:rows] * legal
    total = avg.sum(axis=1, keepdims=True)
    averaged = np.where(total > 0, avg / np.where(total > 0, total, 1.0), current)
    if solver.settings.averaging == "all":
        return averaged
    if solver.snapshots:
        uniform = legal / np.maximum(legal.sum(axis=1, keepdims=True), 1)
        later = (solver._snap[:rows] + (solver.snapshots - solver._snap_rows[:rows])[:, None] * uniform) / solver.snapshots
    else:
        later = current
    return np.where(first_round[:, None], averaged, later)
