"""Full-game self-play UCT and Smooth UCT on sampled deals of two-player limit hold'em.

Heinrich and Silver, "Smooth UCT Search in Computer Poker" (IJCAI 2015), section 4's Limit
Texas Hold'em setting: Algorithm 1 of `sog.agents.sampling.uct` (same SELECT and UPDATE, same
defaults gamma = 0.1, eta = 0.9) run on the bucketed abstract game instead of public states:

* each simulation draws a deal (`sog.games.holdem.deal_buckets.DealBuckets`: both hands, the
  full board, each player's bucket code per round, the showdown ranks) and walks the abstract
  betting tree (`sog.games.holdem.betting_tree.BettingTree`, the game's own actions: limit);
* a player's information state is (betting node, its bucket on the current round): imperfect
  recall as in the paper (with `recall: perfect` the codes of rounds 0..r instead);
* one tree per player grows by one information state per simulation on leaving it, rollouts
  uniformly random; compiled, many simulations per call (`sog.agents.holdem.blueprint.uct_kernels`).

The card abstraction is not the paper's. The paper buckets E[HS^2] on an equidistant grid
(169 / 1000 / 500 / 200 per round); this repository has no cheap E[HS^2] for 52 cards (its
expectation over the turn and river cards is one evaluator pass per completion), so rounds
after the first use the `strength` indexer of `DealBuckets` (immediate hand rank on the
board dealt so far, cut at 1-D k-means thresholds) and the first round its lossless 169 suit
classes (`buckets: 0`). On small decks `indexer: table` (k-means over equity
distributions, every round) makes the abstract game the world-tree blueprint's, with an exact
exploitability of the policy played in the real game (`real_policy`).

Exploration: the paper's schedule (3), set at the start of each betting round (the root and
every chance node's child) and kept through the round: c = min(C, pot + k x remaining), pot the
chips in (big blinds) and remaining the most chips the players can still add (the largest pot
below that node minus pot); the paper's C = 24 (half the largest two-player LHE pot) and
k = 0.5 give c in [10, 24]. Mixing (Smooth UCT): eta_k = max(gamma, eta / (1 + d sqrt(N(u))))
with the paper's LHE d = 1/20000.

Tables, dense: a row per (decision d, code), S = the sum over decisions of the codes of their
round (rows `base[d] .. base[d] + codes - 1`): visits int64 [S], counts int64 [S, K], q float64
[S, K] (K = 3 in limit). Two-player LHE has 8, 70, 630 and 5,670 decisions a round: the paper's
grid gives S = 1,520,352 rows, 85 MB (the strength indexer's 1-D k-means finds 936 flop buckets
for the 1,000 asked: 1,515,872 rows, 81 MB); `d * num_codes + code` keys (`_row_key`, the blueprint's
and the checkpoint's) would need 6,378 x 1,000 rows, hence the per-round offsets.

Policies (`policy_probs`, float [R, K] over the R rows in the trees): "greedy" (one-hot argmax
Q over tried slots, ties to the lowest slot: how the paper evaluated its LHE profiles; the
`blueprint_probs` saved as blueprint.npz) and "average" (N(u, a) / N(u)). Checkpoints
(`sog.agents.holdem.blueprint.files.save_checkpoint`): the rows in the trees with their keys, the counters
and the generator's state; a run resumed between batches repeats the uninterrupted one bit for
bit.
"""
from __future__ import annotations

import dataclasses
import json
from typing import ClassVar

import numpy as np

from sog.agents.holdem.blueprint import uct_kernels as K
from sog.agents.holdem.blueprint.sampled_mccfr import RowViews, SampledRows
from sog.agents.holdem.blueprint.settings import (
    BlueprintError,
    describe_abstraction,
    fingerprint,
    parse_section,
)
from sog.agents.sampling.common import Budget
from sog.games.api import CHANCE
from sog.games.holdem.betting_tree import BettingTree, BettingTreeError
from sog.games.holdem.deal_buckets import DealBuckets

__all__ = ["METHODS", "SampledUCT", "UCTSettings"]

METHODS = ("smooth_uct", "uct")


@dataclasses.dataclass(frozen=True)
class UCTSettings:
    """The `uct:` section of a blueprint config (the paper's two-player LHE values)."""

    method: str = "smooth_uct"        # or "uct"
    seed: int = 0
    batch: int = 4096                 # simulations per kernel call (deals sampled at once)
    c_max: float = 24.0               # C of schedule (3), big blinds
    k: float = 0.5                    # k of schedule (3)
    gamma: float = 0.1                # Smooth UCB: eta_k = max(gamma, eta / (1 + d sqrt(N(u))))
    eta: float = 0.9
    d: float = 1.0 / 20000.0
    traverser: ClassVar[str] = "sampled"     # what `launch.blueprint` and the table ask of a blueprint

    def __post_init__(self):
        if self.method not in METHODS:
            raise BlueprintError(f"uct.method: {self.method!r} must be one of {', '.join(METHODS)}")
        for name, lo in (("seed", 0), ("batch", 1)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
                raise BlueprintError(f"uct.{name}: {v!r} must be an integer >= {lo}")
        for name in ("c_max", "k", "gamma", "eta", "d"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0:
                raise BlueprintError(f"uct.{name}: {v!r} must be a number >= 0")
        if self.gamma > 1 or self.eta > 1:
            raise BlueprintError("uct.gamma and uct.eta are probabilities: at most 1")

    @classmethod
    def parse(cls, config) -> UCTSettings:
        return parse_section(cls, config, "uct")


def exploration(tree: BettingTree, c_max: float, k: float) -> np.ndarray:
    """float64 [M]: schedule (3)'s c at every node, fixed at each round's first node (see the
    module doc). Children have larger ids than their parents (depth-first numbering)."""
    pot = tree.spent.sum(axis=1)
    top = pot.copy()                            # the largest final pot below each node
    for n in range(tree.num_nodes - 1, -1, -1):
        kids = tree.child[n][tree.child[n] >= 0]
        if len(kids):
            top[n] = top[kids].max()
    c = np.empty(tree.num_nodes)
    c[0] = min(c_max, pot[0] + k * (top[0] - pot[0]))
    for n in range(tree.num_nodes):
        for m in tree.child[n].tolist():
            if m >= 0:
                c[m] = min(c_max, pot[m] + k * (top[m] - pot[m])) if tree.kind[n] == CHANCE else c[n]
    return c


class SampledUCT(RowViews):
    """UCT or Smooth UCT (`settings.method`) on sampled deals (see the module doc)."""

    solver_kind = "uct"

    def __init__(self, game, cards: DealBuckets, settings: UCTSettings | None = None):
        self.settings = s = UCTSettings() if settings is None else settings
        self.game, self.cards, self.bet_sizes = game, cards, None
        try:
            self.betting = BettingTree(game.rules)
        except BettingTreeError as e:
            raise BlueprintError(f"{game.spec.name}: {e}") from None
        if cards.players != 2:
            raise BlueprintError(f"deal buckets for {cards.players} players; UCT here is two-player")
        bt = self.betting
        per_round = np.cumprod(cards.sizes) if cards.recall == "perfect" else np.asarray(cards.sizes)
        rows = per_round[bt.round[bt.decision_node]].astype(np.int64)       # [D]
        self.base = np.concatenate([[0], np.cumsum(rows)[:-1]]).astype(np.int64)
        self.size = int(rows.sum())
        self.explore = exploration(bt, s.c_max, s.k)
        self.num_actions = bt.width
        self.visits = np.zeros(self.size, dtype=np.int64)
        self.counts = np.zeros((self.size, bt.width), dtype=np.int64)
        self.q = np.zeros((self.size, bt.width))
        self._stats = np.zeros(1, dtype=np.int64)
        self.rng = np.random.default_rng(s.seed)
        self.iterations = 0
        self.tree = SampledRows(self)

    # ---- rows ---------------------------------------------------------------------------------
    @property
    def num_rows(self) -> int:
        """R: the information states in the two trees."""
        return int(self._stats[0])

    @property
    def table_bytes(self) -> int:
        return self.visits.nbytes + self.counts.nbytes + self.q.nbytes

    def _rows(self) -> np.ndarray:
        """int64 [R]: the dense rows in the trees, ascending."""
        return np.flatnonzero(self.visits)

    @property
    def _row_key(self) -> np.ndarray:
        """int64 [R]: `decision * num_codes + code` of every row in the trees (`RowViews`)."""
        rows = self._rows()
        d = np.searchsorted(self.base, rows, side="right") - 1
        return d * self.cards.num_codes + (rows - self.base[d])

    # ---- running --------------------------------------------------------------------------------
    def run(self, iterations: int | None = None, seconds: float | None = None) -> int:
        """Run `iterations` more simulations and/or for `seconds` (checked between batches);
        returns the simulations done now."""
        budget = Budget(iterations, seconds)
        while budget.more():
            n = budget.chunk(self.settings.batch)
            seeds = self.rng.integers(0, np.iinfo(np.uint64).max, size=n, dtype=np.uint64, endpoint=True)
            _, codes, ranks = self.cards.sample(self.rng, n)
            self.simulate(seeds, codes, ranks)
            self.iterations += n
            budget.done += n
        return budget.done

    def simulate(self, seeds: np.ndarray, codes: np.ndarray, ranks: np.ndarray) -> None:
        """Simulations i = 0..m-1 (`uct_kernels.run`): seed seeds[i] (uint64 [m]), deal codes[i]
        (int64 [m, 2, R]) and ranks[i] (int64 [m, 2])."""
        s, bt = self.settings, self.betting
        K.run(bt.kind, bt.actor, bt.round, bt.num_actions, bt.child, bt.decision, bt.spent, bt.folded,
              self.explore, self.base, codes, ranks, seeds, self.visits, self.counts, self.q,
              s.method == "smooth_uct", s.gamma, s.eta, s.d, self._stats, bt.depth)

    # ---- policies -------------------------------------------------------------------------------
    def policy_probs(self, kind: str = "greedy") -> np.ndarray:
        """float [R, K] over the rows in the trees: "greedy" (argmax Q over tried slots, ties to
        the lowest) or "average" (N(u, a) / N(u))."""
        rows = self._rows()
        counts = self.counts[rows].astype(np.float64)
        if kind == "average":
            return counts / self.visits[rows][:, None]
        if kind != "greedy":
            raise ValueError(f"unknown policy kind {kind!r}")
        out = np.zeros_like(counts)
        out[np.arange(len(rows)), np.argmax(np.where(counts > 0, self.q[rows], -np.inf), axis=1)] = 1.0
        return out

    def blueprint_probs(self) -> np.ndarray:
        """The greedy policy: what the paper evaluated in LHE (the blueprint file's)."""
        return self.policy_probs("greedy")

    def stats(self) -> dict:
        return {"method": self.settings.method, "simulations": self.iterations, "rows_in_trees": self.num_rows,
                "table_rows": self.size, "table_mb": self.table_bytes / 2**20}

    # ---- checkpoints ------------------------------------------------------------------------------
    def fingerprint(self) -> dict:
        return fingerprint(self.game.spec.name, describe_abstraction(self.cards.table.config.to_json(),
                                                                     self.cards.recall, None, self.cards.describe()),
                           self.settings)

    def state(self) -> dict:
        rows = self._rows()
        return {"keys": self._row_key, "visits": self.visits[rows], "counts": self.counts[rows], "q": self.q[rows],
                "counters": np.array([self.iterations, self.num_rows], dtype=np.int64),
                "rng": np.array(json.dumps(self.rng.bit_generator.state))}

    def restore(self, arrays: dict) -> None:
        keys = arrays["keys"]
        m = len(keys)
        if keys.dtype.kind not in "iu" or keys.ndim != 1:
            raise ValueError("row keys are not integers")
        if arrays["visits"].shape != (m,) or arrays["counts"].shape != (m, self.num_actions) \
                or arrays["q"].shape != (m, self.num_actions) or arrays["counters"].shape != (2,):
            raise ValueError("tables of the wrong shape")
        d, code = np.divmod(keys, self.cards.num_codes) if m else (keys, keys)
        if m and (keys.min() < 0 or d.max() >= self.betting.num_decisions
                  or np.any(self.base[d] + code >= np.append(self.base[1:], self.size)[d])):
            raise ValueError("row keys outside this betting tree")
        rows = self.base[d] + code
        self.visits[:], self.counts[:], self.q[:] = 0, 0, 0.0
        self.visits[rows], self.counts[rows], self.q[rows] = arrays["visits"], arrays["counts"], arrays["q"]
        self.iterations, self._stats[0] = (int(x) for x in arrays["counters"])
        self.rng.bit_generator.state = json.loads(str(arrays["rng"]))
