"""The exact oracle `ValueFunction`: solve the subgame below each query to the end.

For a batch of public belief states (pub, r0, r1) the oracle takes the forest
of full subtrees below the queried public states (each subtree built once, the
forest compiled from them by indexing: `sog.search.tree.FullSubtrees`; cached
per batch of public states), runs CFR on all of them at once with the
queried ranges fixed at the roots, and returns the counterfactual values at
the roots averaged over the call's iterations (`values="average"`, linear
weights: what GT-CFR's query solvers produce as training targets) or each
player's best-response values against the other's average policy
(`values="best_response"`). As the iteration count grows both converge to the
subgame's equilibrium counterfactual values, which is what a perfect CVPN
would output: search properties are tested with this oracle first, so search
bugs and learning bugs stay apart.

With few iterations per call the two differ in a way that matters to a search
that reads them at its frontier: best-response values overstate both players'
values by the call's gap (see `ExactValueFunction`) and so bias every choice
between a frontier leaf and an explored branch, while averaged values err both
ways. Leduc, SoG(1000, 1) with 10 iterations per call, alternating updates,
seeds 0 / 1: 35.2 / 9.6 mbb/h with best-response values, 0.73 / 0.95 with
averaged ones (player 0's part 14.6 / 11.7 -> 0.54 / 1.02).

Warm starting (default) keeps, for every decision public state of every
subtree solved so far, the regrets it ended with (over its legal slot-action
entries), and starts the next solve
that contains it from them (averages restart): consecutive queries of a CFR
run differ only slightly in their ranges, and the subgames below different
queried public states are independent given the ranges, so a public state's
regrets carry over whatever batch it is queried in.

A public state asked more than once in one call at other ranges (GT-CFR's
`search.off_support_smoothing` asks a leaf again with one player's range
smoothed) would share those regrets between beliefs: each solve would start
from the other's and write over it, and the answers would depend on how the
rows meet in calls (Leduc SoG(10,1) at eps 0.25: 379.2 mbb/h with the second
rows in calls of their own, 423.3 in the same call). So the store has a
*channel* per role: a query is in channel 0, unless its public state came
earlier in the same call, and then in channel 1, 2 or 3 when player 0's,
player 1's or both players' ranges differ from that first query's (the
players' bits); every decision public state of its subtree warm-starts from
and writes to that channel. A smoothed row so always meets its own kind, and
the answers are those of one oracle per role (a test). With channels, Leduc
SoG(10,1), 8 seeds: 390.2 / 502.8 / 384.0 mbb/h at eps 0 / 0.25 / 0.5 (eps 0
unchanged); SoG(100,1): 32.8 / 42.5 at eps 0 / 0.1.
"""
from __future__ import annotations

import collections
from collections.abc import Callable, Sequence

import numpy as np

from sog.games.api import DECISION, Game
from sog.search.cfr import CFRConfig, CFRSolver, Levels, evaluate_entries
from sog.search.tree import CompiledTree, FullSubtrees


class ExactValueFunction:
    """Counterfactual values by solving subgames with CFR (see module doc).

    iterations: CFR iterations per call; config: the CFR variant used
    (alternating CFR+ by default: the fastest to converge).
    values: "average" (the call's iteration-averaged counterfactual values, default)
      or "best_response" (each player's best response to the other's average policy).
    tolerance: if given, each call iterates on (in chunks of `iterations`, at most
      `max_iterations` in all) until the queried subgames' gap is at most this. The
      gap (game units) is sum over the queried roots of r0 . BR0 + r1 . BR1: how much
      both players' best-response values together exceed the zero-sum total, i.e. the
      summed exploitability of the subgame solutions weighted by the queried reach
      (0 for an exact equilibrium). `gap` holds the latest call's, `gap_total` the sum
      over calls (the oracle's accuracy: see `sog exploitability`'s output).
    max_cached_nodes: compiled forests are cached per batch of queried public states,
      least recently used evicted first beyond this many nodes in all.
    interrupt: if given, called after every chunk of `iterations` of a call; it may raise to
      give the call up (a deadline: the training run's diagnostics).
    """

    VALUES = ("average", "best_response")

    def __init__(self, game: Game, iterations: int = 500,
                 config: CFRConfig = CFRConfig("cfr+", alternating=True), warm_start: bool = True,
                 values: str = "average", tolerance: float | None = None,
                 max_iterations: int = 10_000, max_cached_nodes: int = 1_000_000,
                 interrupt: Callable[[], None] | None = None):
        if iterations < 1 or max_iterations < iterations:
            raise ValueError(f"oracle iterations must be >= 1 and <= max_iterations, got {iterations}, "
                             f"{max_iterations}")
        if tolerance is not None and not tolerance > 0:
            raise ValueError(f"oracle tolerance must be > 0, got {tolerance}")
        if values not in self.VALUES:
            raise ValueError(f"oracle values must be one of {self.VALUES}, got {values!r}")
        self.game, self.iterations, self.config, self.warm_start = game, iterations, config, warm_start
        # a warm-started oracle answers a repeated query better each time: a search's evaluation
        # cache (`sog.search.value_cache`) would keep its first answer, so "auto" leaves it off
        self.cacheable = not warm_start
        self.values, self.tolerance, self.max_iterations = values, tolerance, max_iterations
        self.interrupt = interrupt
        self.gap = float("nan")     # the latest call's gap (game units)
        self.gap_total = 0.0        # sum of the calls' gaps
        self.iterations_run = 0     # CFR iterations over all calls
        # compiled forests by batch of queried pubs, least recently used first; evicted beyond
        # max_cached_nodes nodes in all (a large game's forests would otherwise fill the memory)
        self._forests: collections.OrderedDict[tuple, tuple[CompiledTree, Levels, np.ndarray]] = \
            collections.OrderedDict()
        self.max_cached_nodes, self._cached_nodes = max_cached_nodes, 0
        self._subtrees = FullSubtrees(game)
        # warm start: regrets over the legal entries of every decision pub solved so far, per
        # channel c (module doc): the entries of a pub at _offsets[c][its node in self._subtrees]
        # (-1: none yet) in _store
        self._offsets: dict[int, np.ndarray] = {}
        self._offset_of: dict = {}   # (pub, channel) -> offset (a pub may have several subtree nodes)
        self._store = np.zeros(0)
        self.calls = 0
        self.queries = 0
        self.last_solver: CFRSolver | None = None   # the latest call's subgame solver

    def forest(self, pubs: Sequence) -> CompiledTree:
        return self._forest(tuple(pubs))[0]

    def _forest(self, key: tuple) -> tuple[CompiledTree, Levels, np.ndarray]:
        """(compiled forest below the queried pubs, its Levels, int [3, E]: each legal entry's
        `self._subtrees` node, its place among that node's entries and its root's query)."""
        if key in self._forests:
            self._forests.move_to_end(key)
            return self._forests[key]
        ct, nodes = self._subtrees.forest(key)
        lv = Levels(ct)
        root_of = np.empty(ct.num_nodes, dtype=np.int64)
        root_of[ct.roots] = np.arange(len(ct.roots))
        for d in range(1, ct.depth):
            level = slice(ct.level_bounds[d], ct.level_bounds[d + 1])
            root_of[level] = root_of[ct.parent[level]]
        row_first = np.searchsorted(lv.ent_row, np.arange(len(lv.dec)))
        entries = np.stack([nodes[lv.dec][lv.ent_row], np.arange(lv.num_entries) - row_first[lv.ent_row],
                            root_of[lv.dec][lv.ent_row]])
        self._forests[key] = (ct, lv, entries)
        self._cached_nodes += ct.num_nodes
        while self._cached_nodes > self.max_cached_nodes and len(self._forests) > 1:
            self._cached_nodes -= self._forests.popitem(last=False)[1][0].num_nodes
        return self._forests[key]

    @staticmethod
    def channels(pubs: Sequence, ranges: np.ndarray) -> np.ndarray:
        """int [B]: each query's warm-start channel (module doc): 0 for the first query of its pub
        in the call, else the bits of the players whose ranges differ from that first query's."""
        first: dict = {}
        out = np.zeros(len(pubs), dtype=np.int64)
        for b, pub in enumerate(pubs):
            a = first.setdefault(pub, b)
            if a != b:
                differs = (ranges[b] != ranges[a]).any(axis=1)
                out[b] = int(differs[0]) + 2 * int(differs[1])
        return out

    def _places(self, entries: np.ndarray, channels: np.ndarray) -> np.ndarray:
        """int [E]: each entry's place in the warm-start store, in its root query's channel."""
        node, local, root = entries
        of_entry = channels[root]
        place = np.empty(len(node), dtype=np.int64)
        for c in np.unique(channels).tolist():
            offset = self._add_offsets(c)
            sel = of_entry == c
            place[sel] = offset[node[sel]] + local[sel]
        return place

    def _add_offsets(self, channel: int) -> np.ndarray:
        """The channel's store offsets by subtree node, with places for the nodes added since
        its last call."""
        tree, offsets = self._subtrees.tree, self._offsets.get(channel, np.zeros(0, dtype=np.int64))
        old = len(offsets)
        if tree.size == old:
            return offsets
        legal = tree.legal[old:tree.size]
        counts = np.where(tree.kind[old:tree.size] == DECISION, legal.sum((1, 2)), 0)
        offset = np.full(tree.size - old, -1, dtype=np.int64)
        end = len(self._store)
        for k in np.flatnonzero(counts):   # once per node: keyed by pub (duplicates share)
            key = (tree.pubs[old + k], channel)
            if key not in self._offset_of:
                self._offset_of[key] = end
                end += counts[k]
            offset[k] = self._offset_of[key]
        self._offsets[channel] = offsets = np.concatenate([offsets, offset])
        self._store = np.concatenate([self._store, np.zeros(end - len(self._store))])
        return offsets

    def solve(self, pubs: Sequence, ranges: np.ndarray) -> tuple[np.ndarray, CFRSolver]:
        """(values [B, 2, N], the solver): the values at the queried roots (see `values`).

        Runs `iterations` CFR iterations, then more in chunks of `iterations` while the
        queried subgames' gap (see `tolerance`) is above `tolerance`, up to `max_iterations`."""
        key = tuple(pubs)
        ct, lv, entries = self._forest(key)
        solver = CFRSolver(ct, root_ranges=ranges, config=self.config, levels=lv)
        if self.warm_start:
            place = self._places(entries, self.channels(key, ranges))
            solver.regrets_e = self._store[place]
        while True:
            solver.iterate(self.iterations)
            if self.interrupt is not None:
                self.interrupt()
            _, br = evaluate_entries(lv, solver.average_entries(), solver.root_ranges, best_response=True)
            self.gap = float(np.einsum("bpn,bpn->", solver.root_ranges, br[ct.roots]))
            if self.tolerance is None or self.gap <= self.tolerance or \
                    solver.iterations + self.iterations > self.max_iterations:
                break
        if self.warm_start:
            self._store[place] = solver.regrets_e
        values = br[ct.roots] if self.values == "best_response" else solver.average_root_values()
        self.calls += 1
        self.queries += len(key)
        self.iterations_run += solver.iterations
        self.gap_total += self.gap
        self.last_solver = solver
        return values, solver

    def evaluate(self, pubs: Sequence, ranges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(values [B, 2, N], logits [B, 2, N, A]): the logits are the log of the subgame
        solution's average policy at each queried root (zeros where no one acts): the
        prior a perfect network would give."""
        values, solver = self.solve(pubs, ranges)
        spec = self.game.spec
        logits = np.zeros((len(pubs), 2, spec.num_states, spec.num_actions))
        lv, roots = solver.levels, solver.ct.roots
        rows = np.minimum(np.searchsorted(lv.dec, roots), max(len(lv.dec) - 1, 0))
        acting = np.flatnonzero(lv.dec[rows] == roots) if len(lv.dec) else np.zeros(0, dtype=np.int64)
        logits[acting, lv.dec_actor[rows[acting]]] = np.log(solver.average_policy()[rows[acting]] + 1e-9)
        return values, logits
