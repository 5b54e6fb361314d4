"""Sampled-deal blueprint MCCFR for two-player hold'em: Pluribus's Algorithm 1 with no world tree.

The world-tree blueprint (`sog.agents.holdem.blueprint.world_mccfr.BlueprintMCCFR`) keeps a node per (public
state, hand pair) it meets, which cannot fit for 52 cards. This solver keeps only:

* the abstract betting tree (`sog.games.holdem.betting_tree.BettingTree`): betting
  histories of abstract actions, shared by every deal, enumerated once;
* per sampled deal, each player's bucket code per round and the showdown ranks
  (`sog.games.holdem.deal_buckets.DealBuckets`: the k-means class tables, or on-demand hand
  strength after the first round);
* a row store: an information state (decision d of the betting tree, the actor's code) ->
  a row of float64 [K] regrets, average sums and snapshot sums (K the tree's widest
  decision; column j is action slot j), in a numba dict keyed `d * num_codes + code`, rows
  allocated when their owner's traversal first meets them, tables doubling as they fill.

Each iteration runs, for each player in turn, Update-Strategy (when t % strategy_interval
== 0) and one external-sampling traversal, each on its own fresh deal, in compiled code
(`sog.agents.holdem.blueprint.sampled_kernels`), updating the tables at once (no minibatch). Algorithm 1's
schedule is the world-tree blueprint's, with the same `Settings`: linear weighting every
discount_interval while t < linear_until, negative-regret pruning in 1 - prune_prob of the
traversals after prune_after (not on the last round nor of actions that end the hand) with
a regret floor, the average strategy on the first round (`averaging="pluribus"`; every round
with `"all"`) and snapshots of the current strategy every snapshot_interval after
snapshot_after for the later rounds. The blueprint (`blueprint_probs`) and checkpoints
(`sog.agents.holdem.blueprint.files.save_checkpoint` / `load_checkpoint`, keys stored as int64) follow
`BlueprintMCCFR`; a run resumed between batches repeats the uninterrupted one bit for bit.

On small decks with table buckets the abstract game is the world-tree blueprint's (same
keys `"<history>|<code>"`), so `real_policy` is the same evaluation path
(`sog.agents.holdem.blueprint.translation.real_policy`) and has an exact exploitability.
"""
from __future__ import annotations

import json

import numba
import numpy as np

from sog.agents.holdem.blueprint import sampled_kernels as K
from sog.agents.holdem.blueprint.abstraction import CardAbstraction
from sog.agents.holdem.blueprint.settings import (
    BlueprintError,
    Settings,
    describe_abstraction,
    fingerprint,
)
from sog.agents.holdem.blueprint.translation import real_policy
from sog.agents.holdem.blueprint.world_mccfr import pluribus_blueprint
from sog.agents.sampling.common import Budget
from sog.agents.sampling.mccfr import regret_matching
from sog.games.holdem.action_abstraction import BetSizes
from sog.games.holdem.betting_tree import BettingTree, BettingTreeError
from sog.games.holdem.deal_buckets import DealBuckets
from sog.multiplayer.betting_tree import TableBettingTree
from sog.search.full_tree import tabular_from_array

__all__ = ["MultiplayerBlueprintMCCFR", "RowViews", "SampledBlueprintMCCFR", "SampledRows"]

MIN_CAPACITY = 4096


class RowViews:
    """The rows of a solver on sampled deals, as `sog.agents.holdem.blueprint` reads them. The solver
    holds `game`, `betting` (the abstract betting tree), `cards` (`DealBuckets`), `num_actions`
    (K), `num_rows` (R), `_row_key` (int64 [>= R]: `decision * num_codes + code` of row r) and
    `tree` (`SampledRows`), and its `blueprint_probs()` gives float [R, K]."""

    def row_nodes(self) -> np.ndarray:
        """int64 [R]: the betting-tree node of every allocated row."""
        return self.betting.decision_node[self._row_key[:self.num_rows] // self.cards.num_codes]

    def row_legal(self) -> np.ndarray:
        """bool [R, K]: the action slots of every allocated row."""
        n = self.betting.num_actions[self.row_nodes()]
        return np.arange(self.num_actions)[None, :] < n[:, None]

    def game_probs(self, probs: np.ndarray) -> np.ndarray:
        """float [R, A]: slot probabilities [R, K] as the game's action ids (small games: A columns)."""
        out = np.zeros((len(probs), self.game.spec.num_actions))
        acts = self.betting.action[self.row_nodes()]
        r, j = np.nonzero(acts >= 0)
        out[r, acts[r, j]] = probs[r, j]
        return out

    def real_policy(self, probs: np.ndarray | None = None) -> np.ndarray:
        """float [m, N, A]: the blueprint (or `probs` [R, K]) played in the real game, over the full
        tree's decision public states, by `sog.agents.holdem.blueprint.translation.real_policy` (table buckets only)."""
        probs = self.blueprint_probs() if probs is None else probs
        return real_policy(self.tree, self.game_probs(probs))

    def policy(self):
        """The blueprint in the real game as a `TabularPolicy` (small decks)."""
        return tabular_from_array(self.game, self.real_policy())


class SampledBlueprintMCCFR(RowViews):
    """Algorithm 1 on sampled deals (see the module doc)."""

    def __init__(self, game, cards: DealBuckets, bet_sizes: BetSizes | None = None,
                 settings: Settings | None = None):
        settings = Settings(traverser="sampled") if settings is None else settings
        if settings.traverser != "sampled":
            raise BlueprintError(f"mccfr.traverser {settings.traverser!r}: this is the sampled-deal traverser")
        s = settings
        self.game, self.cards, self.bet_sizes, self.settings = game, cards, bet_sizes, s
        self.betting = self._betting_tree()
        self.num_players = self.betting.spent.shape[1]
        if cards.players != self.num_players:
            raise BlueprintError(f"deal buckets for {cards.players} players; the game has {self.num_players}")
        u = self._max_utility()
        self.prune_threshold = -300.0 * u if s.prune_threshold is None else float(s.prune_threshold)
        self.regret_floor = -310.0 * u if s.regret_floor is None else float(s.regret_floor)
        if self.regret_floor > self.prune_threshold:
            raise BlueprintError("mccfr.regret_floor must be <= mccfr.prune_threshold")
        self.rng = np.random.default_rng(s.seed)
        self.num_actions = self.betting.width
        self.last_round = game.rules.num_rounds - 1
        self.margin = self.betting.num_decisions        # rows one traversal may allocate, at most
        self._row_of = numba.typed.Dict.empty(numba.types.int64, numba.types.int64)
        self._counts = np.zeros(3, dtype=np.int64)     # rows, nodes visited, actions skipped
        self._alloc(max(MIN_CAPACITY, 2 * self.margin), 0)
        self.iterations = self.snapshots = self.pruned_traversals = 0
        self.tree = SampledRows(self)

    def _betting_tree(self) -> BettingTree:
        try:
            return BettingTree(self.game.rules, self.bet_sizes)
        except BettingTreeError as e:
            raise BlueprintError(f"{self.game_name}: {e}") from None

    def _max_utility(self) -> float:
        """The game's largest payoff (big blinds): the default pruning threshold and floor scale."""
        return float(self.game.spec.max_utility)

    # ---- tables ---------------------------------------------------------------------------
    def _alloc(self, capacity: int, rows: int) -> None:
        """Tables of `capacity` rows, the first `rows` copied from the current ones."""
        k = self.num_actions
        for name in ("_regret", "_avg", "_snap"):
            new = np.zeros((capacity, k))
            if rows:
                new[:rows] = getattr(self, name)[:rows]
            setattr(self, name, new)
        for name, dtype in (("_snap_rows", np.float64), ("_row_key", np.int64)):
            new = np.zeros(capacity, dtype=dtype)
            if rows:
                new[:rows] = getattr(self, name)[:rows]
            setattr(self, name, new)

    @property
    def num_rows(self) -> int:
        return int(self._counts[0])

    @property
    def nodes_touched(self) -> int:
        return int(self._counts[1])

    @property
    def skipped_actions(self) -> int:
        return int(self._counts[2])

    # ---- running ----------------------------------------------------------------------------
    def run(self, iterations: int | None = None, seconds: float | None = None) -> int:
        """Run until `iterations` more iterations or `seconds` elapse (checked between batches);
        returns the iterations done now."""
        budget = Budget(iterations, seconds)
        while budget.more():
            n = self._batch_size(budget.chunk(self.settings.batch))
            self._batch(n)
            self.iterations += n
            budget.done += n
        return budget.done

    def _batch_size(self, n: int) -> int:
        """At most n, ending at the next discount or snapshot iteration."""
        s, t = self.settings, self.iterations
        if t < s.linear_until:
            n = min(n, s.discount_interval - t % s.discount_interval)
        if s.averaging == "pluribus":
            k = s.snapshot_interval
            n = min(n, max((t // k + 1) * k, (s.snapshot_after // k + 1) * k) - t)
        return n

    def _schedule(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """(players int8 [m], modes int8 [m]) of iterations t+1..t+n: per iteration and player,
        an Update-Strategy pass when due, then a traversal (pruned or not)."""
        s = self.settings
        t = np.arange(self.iterations + 1, self.iterations + n + 1)
        due = t % s.strategy_interval == 0
        order = np.arange(self.num_players, dtype=np.int8)
        slots = np.stack([np.repeat(order, 2), np.tile(np.array([K.UPDATE, K.TRAVERSE], dtype=np.int8),
                                                        self.num_players)], axis=1)
        it, slot = np.nonzero(np.tile(np.stack([due, np.ones(n, bool)], axis=1), self.num_players))
        players, modes = slots[slot, 0], slots[slot, 1].copy()
        trav = np.flatnonzero(modes == K.TRAVERSE)
        prune = (t[it[trav]] > s.prune_after) & (self.rng.random(len(trav)) >= s.prune_prob)
        modes[trav[prune]] = K.TRAVERSE_PRUNED
        self.pruned_traversals += int(prune.sum())
        return players, modes

    def _batch(self, n: int) -> None:
        s = self.settings
        players, modes = self._schedule(n)
        seeds = self.rng.integers(0, np.iinfo(np.uint64).max, size=len(players), dtype=np.uint64, endpoint=True)
        _, codes, ranks = self.cards.sample(self.rng, len(players))
        self.traverse(players, modes, seeds, codes, ranks)
        end = self.iterations + n
        if end < s.linear_until and end % s.discount_interval == 0:
            k = end / s.discount_interval
            d = k / (k + 1.0)
            self._regret[:self.num_rows] *= d
            self._avg[:self.num_rows] *= d
        if s.averaging == "pluribus" and end > s.snapshot_after and end % s.snapshot_interval == 0:
            rows = self.num_rows
            self._snap[:rows] += regret_matching(self._regret[:rows], self.row_legal())
            self._snap_rows[:rows] += 1
            self.snapshots += 1

    def traverse(self, players: np.ndarray, modes: np.ndarray, seeds: np.ndarray, codes: np.ndarray,
                 ranks: np.ndarray) -> None:
        """Traversals i = 0..m-1 in order (`sampled_kernels.run`): player players[i] (int8 [m]),
        mode modes[i] (int8 [m]), seed seeds[i] (uint64 [m]), deal codes[i] (int64 [m, 2, R]) and
        ranks[i] (int64 [m, 2]); the tables double whenever a traversal might not fit."""
        s, bt = self.settings, self.betting
        max_avg_round = 0 if s.averaging == "pluribus" else self.last_round
        done, m = 0, len(players)
        while done < m:
            done += K.run(bt.kind, bt.actor, bt.round, bt.num_actions, bt.child, bt.decision, bt.spent, bt.folded,
                          codes[done:], ranks[done:], players[done:], modes[done:], seeds[done:],
                          self.cards.num_codes, self._row_of, self._row_key, self._regret, self._avg, self._counts,
                          self.margin, self.prune_threshold, self.regret_floor, self.last_round, max_avg_round,
                          bt.depth)
            if done < m:
                self._alloc(2 * len(self._regret), self.num_rows)

    # ---- the blueprint ------------------------------------------------------------------------
    def current_probs(self) -> np.ndarray:
        """float [R, K]: the current regret-matching strategy of every allocated row."""
        return regret_matching(self._regret[:self.num_rows], self.row_legal())

    def blueprint_probs(self) -> np.ndarray:
        """float [R, K]: the blueprint of every row: the average strategy on the first round,
        the snapshot average after it (`averaging="pluribus"`), as `BlueprintMCCFR`."""
        return pluribus_blueprint(self, self.num_rows, self.row_legal(), self.betting.round[self.row_nodes()] == 0)

    # ---- checkpoints ---------------------------------------------------------------------------
    def fingerprint(self) -> dict:
        return fingerprint(self.game_name, describe_abstraction(self.cards.table.config.to_json(), self.cards.recall,
                                                                self.bet_sizes, self.cards.describe()), self.settings)

    @property
    def game_name(self) -> str:
        return self.game.spec.name

    def stats(self) -> dict:
        """The run's counters for `sog blueprint`'s result: snapshots taken, traversals pruned, actions skipped."""
        return {"snapshots": self.snapshots, "pruned_traversals": self.pruned_traversals,
                "skipped_actions": self.skipped_actions}

    def state(self) -> dict:
        rows = self.num_rows
        return {"regret": self._regret[:rows], "avg": self._avg[:rows], "snap": self._snap[:rows],
                "snap_rows": self._snap_rows[:rows], "legal": self.row_legal(), "keys": self._row_key[:rows],
                "counters": np.array([self.iterations, self.snapshots, self.nodes_touched, self.pruned_traversals,
                                      self.skipped_actions], dtype=np.int64),
                "rng": np.array(json.dumps(self.rng.bit_generator.state))}

    def restore(self, arrays: dict) -> None:
        keys = arrays["keys"]
        if keys.dtype.kind not in "iu" or keys.ndim != 1:
            raise ValueError("row keys are not integers")
        rows = len(keys)
        if rows and (keys.min() < 0 or keys.max() >= self.betting.num_decisions * self.cards.num_codes):
            raise ValueError("row keys outside this betting tree")
        self._counts[:] = 0
        self._alloc(max(MIN_CAPACITY, 2 * self.margin, 2 * rows), 0)
        for name, src in (("_regret", "regret"), ("_avg", "avg"), ("_snap", "snap"), ("_snap_rows", "snap_rows"),
                          ("_row_key", "keys")):
            getattr(self, name)[:rows] = arrays[src]
        self._row_of.clear()
        for r, key in enumerate(keys.tolist()):
            self._row_of[key] = r
        (self.iterations, self.snapshots, nodes, self.pruned_traversals, skipped) = (int(x) for x in arrays["counters"])
        self._counts[:] = (rows, nodes, skipped)
        self.rng.bit_generator.state = json.loads(str(arrays["rng"]))


class MultiplayerBlueprintMCCFR(SampledBlueprintMCCFR):
    """The sampled-deal traverser on n-player hold'em (`sog.multiplayer.holdem.Holdem`, 2 to 6
    players, its own action abstraction): each iteration one Update-Strategy pass (when due)
    and one traversal per player. No exact evaluation: `real_policy` is two-player only."""

    def __init__(self, game, cards: DealBuckets, settings: Settings | None = None):
        super().__init__(game, cards, game.bet_sizes, settings)

    def _betting_tree(self) -> BettingTree:
        try:
            return TableBettingTree(self.game)
        except BettingTreeError as e:
            raise BlueprintError(f"{self.game_name}: {e}") from None

    def _max_utility(self) -> float:
        return self.game.max_utility / max(self.game.rules.blinds)

    @property
    def game_name(self) -> str:
        return repr(self.game)

    def real_policy(self, probs: np.ndarray | None = None) -> np.ndarray:
        raise BlueprintError("the real-game policy and its exact exploitability are two-player only")


class SampledRows:
    """The rows of a `SampledBlueprintMCCFR` as `sog.agents.holdem.blueprint` reads a world tree's:
    `num_rows`, `row_key` ("<history>|<code>"), `row_legal` (in slots), and for `real_policy`
    `game`, `abstraction` (a `CardAbstraction` of the table buckets) and `rows_of`."""

    def __init__(self, solver: SampledBlueprintMCCFR):
        self.solver, self.game = solver, solver.game
        self._abstraction = None
        self._key_row: dict[str, int] = {}

    @property
    def num_rows(self) -> int:
        return self.solver.num_rows

    @property
    def row_key(self) -> list[str]:
        s = self.solver
        d, code = np.divmod(s._row_key[:s.num_rows], s.cards.num_codes)
        history = s.betting.history
        return [f"{history[i]}|{c}" for i, c in zip(d.tolist(), code.tolist())]

    @property
    def row_legal(self) -> np.ndarray:
        return self.solver.row_legal()

    @property
    def abstraction(self) -> CardAbstraction:
        if self._abstraction is None:
            s = self.solver
            if s.cards.indexer != "table":
                raise BlueprintError("the real-game policy needs table buckets on every round (indexer: table)")
            self._abstraction = CardAbstraction(s.game, s.cards.table, s.cards.recall, s.bet_sizes)
        return self._abstraction

    def rows_of(self, pub, allocate: bool = False) -> np.ndarray:
        """int64 [N]: the row of every hand's abstract set at decision public state `pub`, -1
        where never met or the hand is impossible (rows are allocated only by traversals)."""
        if len(self._key_row) != self.num_rows:
            self._key_row = {key: r for r, key in enumerate(self.row_key)}
        history, code = self.abstraction.keys(pub)
        out = np.full(len(code), -1, dtype=np.int64)
        for c in np.unique(code[code >= 0]).tolist():
            r = self._key_row.get(f"{history}|{c}")
            if r is not None:
                out[code == c] = r
        return out
