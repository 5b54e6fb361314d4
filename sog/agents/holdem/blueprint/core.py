"""Pluribus-style blueprints of two-player hold'em: MCCFR on a bucketed abstract game.

Brown and Sandholm, "Superhuman AI for multiplayer poker" (Science 2019), supplement
Algorithm 1, on `sog.games.holdem.Holdem` with the card abstraction of
`sog.games.holdem.buckets`:

* The abstract game (`CardAbstraction`): a player's information state is (the betting
  history, ACPC style, with the `sog` abstraction's setup where there is one; the bucket
  of its cards). `recall="imperfect"` (Pluribus) keys the bucket of the current round
  alone; `"perfect"` the buckets of every round so far. Buckets are one per suit-
  isomorphism class where the round's count is 0 (lossless, Pluribus's first round).
  The actions are the game's own (limit, or the `fcpa` / `sog` no-limit abstractions),
  or, on a fullgame no-limit game, those of a bet-size abstraction
  (`sog.games.holdem.action_abstraction.abstract_actions`: fold, call, the round's and
  raise level's pot fractions, all-in); legal actions depend on the betting history
  alone, so one abstract set has one action set.
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
* In the real game (`real_policy`): every real information state (public state, hand)
  plays its abstract set's blueprint; sets never met play uniformly. With bet sizes the
  real history is first translated (opponent raises read as abstract sizes by the
  pseudo-harmonic mapping) and abstract raises are played at their pot fraction of the
  real pot. Its exact exploitability comes from `sog.search.full_tree` (small decks only).
* Checkpoints (`save_checkpoint`, `load_checkpoint`): the tables (regrets, averages,
  snapshot sums) of the allocated rows with their abstract keys, the iteration count, the
  counters and the generator's state, stamped with a fingerprint of the game, the
  abstraction and the solver settings; a checkpoint of another fingerprint, or a damaged
  one, raises `BlueprintError`. A run resumed from a checkpoint taken between batches
  repeats the uninterrupted run bit for bit (rows are numbered in a different order, but
  a row's updates come in the same order).
"""
from __future__ import annotations

import dataclasses
import functools
import json
import zipfile
from pathlib import Path

import numpy as np

from sog.agents.sampling.mccfr import DEFAULT_BATCH, PluribusMCCFR, regret_matching
from sog.agents.sampling.world_tree import CHANCE, DECISION, WorldTree
from sog.files import atomic_write
from sog.games.holdem import betting as B
from sog.games.holdem.action_abstraction import (
    BetSizes,
    abstract_actions,
    bet_chips,
    raise_fraction,
    translate,
)
from sog.games.holdem.buckets import Buckets
from sog.search.full_tree import full_tree, tabular_from_array

__all__ = ["AVERAGING", "RECALL", "TRAVERSERS", "AbstractWorldTree", "BlueprintError", "BlueprintMCCFR", "CardAbstraction",
           "load_checkpoint", "real_policy", "save_checkpoint"]

AVERAGING = ("pluribus", "all")
TRAVERSERS = ("world", "sampled")
RECALL = ("imperfect", "perfect")
CHECKPOINT_FORMAT = 1
# the arrays of a checkpoint per solver kind (meta "solver"; `solver_kind` of the solver, else MCCFR):
# the sampled UCT solver's are `sog.agents.holdem.blueprint.sampled_uct.SampledUCT.state`'s
CHECKPOINT_ARRAYS = {"mccfr": {"regret", "avg", "snap", "snap_rows", "legal", "keys", "counters", "rng"},
                     "uct": {"keys", "visits", "counts", "q", "counters", "rng"}}


class BlueprintError(ValueError):
    """A blueprint setting, checkpoint or blueprint file that cannot be used."""


class CardAbstraction:
    """The abstract information states of a `Holdem` game under a bucketing (see the module doc).

    `keys(pub)`: (history string, int64 [N] bucket code per hand, -1 where the hand holds a
    board card) at a decision public state; a hand's abstract key is (history, code).
    """

    def __init__(self, game, buckets: Buckets, recall: str = "imperfect", bet_sizes: BetSizes | None = None):
        rules, cfg = game.rules, buckets.config
        if bet_sizes is not None and (rules.limit or rules.abstraction != "fullgame"):
            raise BlueprintError(f"bet sizes apply to fullgame no-limit games, not {game.spec.name}")
        if bet_sizes is not None and len(bet_sizes.sizes) != rules.num_rounds:
            raise BlueprintError(f"bet sizes for {len(bet_sizes.sizes)} rounds; {game.spec.name} has "
                                 f"{rules.num_rounds}")
        if recall not in RECALL:
            raise BlueprintError(f"recall must be one of {', '.join(RECALL)}, got {recall!r}")
        if (cfg.num_ranks, cfg.num_suits, cfg.hole, cfg.board_cards) != (
                rules.num_ranks, rules.num_suits, rules.hole, rules.board_cards):
            raise BlueprintError(f"buckets built for {cfg.describe()} do not fit {game.spec.name}")
        if len(cfg.buckets) != rules.num_rounds:
            raise BlueprintError(f"buckets {list(cfg.buckets)} give {len(cfg.buckets)} rounds; "
                                 f"{game.spec.name} has {rules.num_rounds}")
        self.game, self.buckets, self.recall, self.bet_sizes = game, buckets, recall, bet_sizes
        self._legal: dict = {}
        self.sizes = [rb.num_buckets for rb in buckets.rounds]
        self._keys = functools.lru_cache(maxsize=1 << 16)(self._compute)
        self._board_buckets = functools.lru_cache(maxsize=1 << 14)(buckets.board_buckets)

    def round(self, pub) -> int:
        return self.game.betting_state(pub).round

    def history(self, pub) -> str:
        return betting_key(self.game.rules, self.game.betting_state(pub))

    def keys(self, pub) -> tuple[str, np.ndarray]:
        return self._keys(pub)

    def _compute(self, pub):
        rules = self.game.rules
        r = self.round(pub)
        board = tuple(c for event in pub if isinstance(event, tuple) for c in event)   # deal order
        rounds = [r] if self.recall == "imperfect" else range(r + 1)
        code = np.zeros(self.game.spec.num_states, dtype=np.int64)
        for k in rounds:
            b = np.asarray(self._board_buckets(k, board[:sum(rules.board_cards[:k + 1])]), dtype=np.int64)
            code = np.where((code < 0) | (b < 0), -1, code * self.sizes[k] + b)
        code.setflags(write=False)
        return self.history(pub), code

    def legal_mask(self, pub) -> np.ndarray:
        """bool [N, A]: the abstract game's actions at decision public state `pub` (the game's
        own, or the bet-size abstraction's `abstract_actions`)."""
        if self.bet_sizes is None:
            return self.game.cached("legal_mask", pub)
        mask = self._legal.get(pub)
        if mask is None:
            mask = np.zeros((self.game.spec.num_states, self.game.spec.num_actions), dtype=bool)
            mask[:, list(abstract_actions(self.game.rules, self.game.betting_state(pub), self.bet_sizes))] = True
            mask.setflags(write=False)
            if len(self._legal) > 1 << 16:
                self._legal.clear()
            self._legal[pub] = mask
        return mask

    def describe(self) -> dict:
        return describe_abstraction(self.buckets.config.to_json(), self.recall, self.bet_sizes)


class AbstractWorldTree(WorldTree):
    """`WorldTree` whose decision rows are abstract information states (key -> row, allocated
    when first met; `keys`, `row_key`, `row_round`, `row_legal`), and which knows the betting
    round of every node (`node_round`)."""

    def __init__(self, game, abstraction: CardAbstraction, keys: list[str] | None = None,
                 legal: np.ndarray | None = None):
        self.abstraction = abstraction
        self.key_row: dict[str, int] = {}
        self.row_key: list[str] = []
        self._row_round: list[int] = []
        self._row_legal: list[np.ndarray] = []
        self._group_round = np.zeros(1024, dtype=np.int8)
        self._num_groups = 0
        for i, key in enumerate(keys or ()):       # restored rows first, as numbered when saved
            self._new_row(key, _key_round(key), legal[i])
        super().__init__(game)                     # (sets num_rows to 0 before creating the root)
        self.num_rows = len(self.row_key)

    def _new_row(self, key: str, round_: int, legal: np.ndarray) -> int:
        r = self.key_row[key] = len(self.row_key)
        self.row_key.append(key)
        self._row_round.append(round_)
        self._row_legal.append(np.asarray(legal, dtype=bool))
        self.num_rows = len(self.row_key)
        return r

    @property
    def row_round(self) -> np.ndarray:
        return np.array(self._row_round, dtype=np.int64)

    @property
    def row_legal(self) -> np.ndarray:
        return np.array(self._row_legal, dtype=bool).reshape(len(self._row_legal), self.num_actions)

    def _add_group(self, pub, s0, s1):
        g = self._num_groups
        if g == len(self._group_round):
            self._group_round = np.concatenate([self._group_round, np.zeros_like(self._group_round)])
        self._group_round[g] = self.game.betting_state(pub).round
        self._num_groups += 1
        return super()._add_group(pub, s0, s1)

    def node_round(self, nodes: np.ndarray) -> np.ndarray:
        return self._group_round[self.group[nodes]]

    def rows_of(self, pub, allocate: bool) -> np.ndarray:
        """int64 [N]: the row of every hand's abstract set at decision public state `pub`
        (allocated when new if `allocate`, else -1 where new or the hand is impossible)."""
        history, code = self.abstraction.keys(pub)
        out = np.full(len(code), -1, dtype=np.int64)
        round_ = self.game.betting_state(pub).round
        legal = None
        for c in np.unique(code[code >= 0]).tolist():
            key = f"{history}|{c}"
            r = self.key_row.get(key)
            if r is None and allocate:
                if legal is None:
                    legal = self.abstraction.legal_mask(pub)[0]
                r = self._new_row(key, round_, legal)
            if r is not None:
                out[code == c] = r
        return out

    def _legal_mask(self, pub) -> np.ndarray:
        return self.abstraction.legal_mask(pub)

    def _decision_rows(self, pub, actor: int, slots: np.ndarray) -> np.ndarray:
        rows = self.rows_of(pub, allocate=True)[slots]
        if (rows < 0).any():
            raise AssertionError(f"{self.game.spec.name}: an impossible hand at {pub!r}")
        return rows


def betting_key(rules, st) -> str:
    """The history part of an abstract key at betting state `st`: the ACPC betting string, with
    the `sog` abstraction's setup (drawn bet fraction, stacks) after it."""
    text = B.sequences(rules, st)
    if rules.abstraction == "sog":
        text += f"/{st.setup.fraction}/{st.setup.stacks[0]},{st.setup.stacks[1]}"
    return text


def _key_round(key: str) -> int:
    """The betting round of an abstract key: the ACPC history's '|' count."""
    return key.rsplit("|", 1)[0].split("/", 1)[0].count("|")


@dataclasses.dataclass(frozen=True)
class Settings:
    """Algorithm 1's options in iterations (Pluribus's minutes in brackets)."""

    seed: int = 0
    batch: int = DEFAULT_BATCH
    discount_interval: int = 100      # linear weighting every ... (10 min)
    linear_until: int = 4000          # ... while t < this (400 min)
    prune_after: int = 2000           # pruning once t > this (200 min)
    prune_prob: float = 0.05          # a traversal unpruned with this probability (5%)
    prune_threshold: float | None = None   # regret at or below: skipped (-300M; here -300 x max utility)
    regret_floor: float | None = None      # (-310M; here -310 x max utility)
    strategy_interval: int = 1        # Update-Strategy every ... (10,000 iterations)
    snapshot_after: int = 4000        # snapshots of the current strategy once t > this (800 min)
    snapshot_interval: int = 1000     # ... every (200 min)
    averaging: str = "pluribus"
    traverser: str = "world"          # world tree (small decks) or sampled deals (sog.agents.holdem.blueprint.sampled_mccfr)

    def __post_init__(self):
        ints = ("seed", "batch", "discount_interval", "linear_until", "prune_after", "strategy_interval",
                "snapshot_after", "snapshot_interval")
        for name in ints:
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise BlueprintError(f"mccfr.{name}: {v!r} must be an integer")
        for name in ("batch", "discount_interval", "strategy_interval", "snapshot_interval"):
            if getattr(self, name) < 1:
                raise BlueprintError(f"mccfr.{name}: {getattr(self, name)} must be at least 1")
        for name in ("linear_until", "prune_after", "snapshot_after", "seed"):
            if getattr(self, name) < 0:
                raise BlueprintError(f"mccfr.{name}: {getattr(self, name)} must be at least 0")
        if isinstance(self.prune_prob, bool) or not isinstance(self.prune_prob, (int, float)) \
                or not 0.0 <= self.prune_prob <= 1.0:
            raise BlueprintError(f"mccfr.prune_prob: {self.prune_prob!r} must be a number in [0, 1]")
        for name in ("prune_threshold", "regret_floor"):
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
                raise BlueprintError(f"mccfr.{name}: {v!r} must be a number")
        if self.averaging not in AVERAGING:
            raise BlueprintError(f"mccfr.averaging: {self.averaging!r} must be one of {', '.join(AVERAGING)}")
        if self.traverser not in TRAVERSERS:
            raise BlueprintError(f"mccfr.traverser: {self.traverser!r} must be one of {', '.join(TRAVERSERS)}")

    @classmethod
    def parse(cls, config) -> Settings:
        return parse_section(cls, config, "mccfr")


def parse_section(cls, config, section: str):
    """The settings dataclass `cls` of a config's `section` (None: the defaults); a section that is
    not a mapping, or holds a key `cls` lacks, is a BlueprintError."""
    if config is None:
        return cls()
    if not isinstance(config, dict):
        raise BlueprintError(f"{section}: {config!r} must be a mapping")
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(config) - known)
    if unknown:
        raise BlueprintError(f"{section}: unknown key {unknown[0]!r}; known: {', '.join(sorted(known))}")
    return cls(**config)


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

    # ---- tables ----------------------------------------------------------------
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

    # ---- Algorithm 1's poker-specific parts -------------------------------------
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

    # ---- the blueprint ------------------------------------------------------------
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

    # ---- checkpoints ----------------------------------------------------------------
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


def _abstract_probs(tree: AbstractWorldTree, probs: np.ndarray, pub) -> np.ndarray:
    """float [N, A]: the blueprint at abstract decision public state `pub` for every hand
    (uniform over the abstract actions where its set was never met or the hand is impossible)."""
    legal = tree.abstraction.legal_mask(pub)
    rows = tree.rows_of(pub, allocate=False)
    uniform = legal / np.maximum(legal.sum(axis=1, keepdims=True), 1)
    out = uniform.copy()
    known = rows >= 0
    if known.any():
        p = probs[rows[known]] * legal[known]
        tot = p.sum(axis=1, keepdims=True)
        out[known] = np.where(tot > 0, p / np.where(tot > 0, tot, 1.0), uniform[known])
    return out


def fingerprint(game: str, abstraction: dict, settings: Settings) -> dict:
    """What a checkpoint must match (JSON-normalised): the game's name, the abstraction
    (`CardAbstraction.describe`) and the settings."""
    return json.loads(json.dumps({"game": game, **abstraction, "settings": dataclasses.asdict(settings)}))


def describe_abstraction(buckets_json: str, recall: str, bet_sizes: BetSizes | None,
                         indexer: dict | None = None) -> dict:
    """The abstraction part of a fingerprint; `indexer`: the sampled traverser's deal buckets
    (`DealBuckets.describe`), absent for the world tree."""
    out = {"buckets": buckets_json, "recall": recall,
           "bet_sizes": None if bet_sizes is None else [bet_sizes.sizes, bet_sizes.all_in]}
    if indexer is not None:
        out["indexer"] = indexer
    return out


def real_policy(tree: AbstractWorldTree, probs: np.ndarray) -> np.ndarray:
    """float [m, N, A]: the blueprint `probs` ([R, A] over the rows) played in the real game,
    over the full tree's decision public states (`sog.search.full_tree`).

    Without bet sizes the abstract game's public states are the real ones: each real
    information state plays its abstract row (uniformly where never met). With bet sizes,
    the real history is translated action by action (`translate_history`: an opponent's
    raise read as the abstract raise the pseudo-harmonic mapping picks, deterministically),
    and each abstract action is played as the real action of the same kind and pot fraction
    (`real_action`); where the translation breaks down (the abstract hand ended or went to
    a card while the real one goes on) the player checks or calls."""
    game = tree.game
    ft = full_tree(game)
    n, a = game.spec.num_states, game.spec.num_actions
    out = np.zeros((len(ft.decision_pubs), n, a))
    if tree.abstraction.bet_sizes is None:
        for i, pub in enumerate(ft.decision_pubs):
            out[i] = _abstract_probs(tree, probs, pub)
        return out
    memo: dict = {}
    rules = game.rules
    for i, pub in enumerate(ft.decision_pubs):
        apub = translate_history(game, tree.abstraction.bet_sizes, pub, memo)
        if apub is None or game.kind(apub) != DECISION or game.actor(apub) != game.actor(pub):
            out[i, :, B.CALL] = 1.0
            continue
        p = _abstract_probs(tree, probs, apub)
        st_real, st_abs = game.betting_state(pub), game.betting_state(apub)
        for j in abstract_actions(rules, st_abs, tree.abstraction.bet_sizes):
            out[i, :, real_action(rules, st_abs, st_real, j)] += p[:, j]
    return out


def translate_history(game, bet_sizes: BetSizes, pub, memo: dict | None = None):
    """The abstract public state a real one (`pub`, a history of the fullgame no-limit `game`) is
    read as under `bet_sizes`, or None where the abstract hand has no counterpart (see
    `real_policy`); `memo` caches prefixes."""
    memo = {} if memo is None else memo
    if pub in memo:
        return memo[pub]
    if not pub:
        return ()
    rules = game.rules
    prev = translate_history(game, bet_sizes, pub[:-1], memo)
    event = pub[-1]
    out = None
    if prev is not None:
        kind = game.kind(prev)
        if not isinstance(event, int):       # a deal (or setup): where both hands are dealt the same cards
            before = pub[:-1]
            same = (kind == CHANCE == game.kind(before)
                    and B.cards_due(rules, game.betting_state(prev)) == B.cards_due(rules, game.betting_state(before)))
            out = prev + (event,) if same else None
        elif kind == DECISION:
            legal = abstract_actions(rules, game.betting_state(prev), bet_sizes)
            if event in (B.FOLD, B.CALL):
                out = prev + (event,) if event in legal else None
            else:
                raises = [x for x in legal if x > B.CALL]
                if not raises:
                    out = prev + (B.CALL,)
                else:
                    st_abs = game.betting_state(prev)
                    fractions = [raise_fraction(rules, st_abs, x) for x in raises]
                    f = raise_fraction(rules, game.betting_state(pub[:-1]), event)
                    out = prev + (raises[translate(fractions, max(f, 0.0))],)
    memo[pub] = out
    return out


def real_action(rules, st_abs, st_real, action: int) -> int:
    """The real action (fullgame id) that plays abstract `action` of state `st_abs` at real
    state `st_real`: fold and call as they are (fold where the real player faces no bet is a
    check), a raise at its pot fraction of the real pot (all-in as all-in), clipped to the
    real raise-to range, a call where the real player may not raise. In a game of its own
    actions (limit, the fcpa and sog abstractions) every action is itself, a call where the
    real player may not take it."""
    real_legal = B.legal_actions(rules, st_real)
    if action in (B.FOLD, B.CALL) or rules.limit or rules.abstraction != "fullgame":
        return action if action in real_legal else B.CALL
    rng = B.raise_range(rules, st_real)
    if rng is None:
        return B.CALL
    lo, hi = rng
    p = B.actor(rules, st_abs)
    if action >= st_abs.stacks[p]:
        return hi
    f = raise_fraction(rules, st_abs, action)
    q = B.actor(rules, st_real)
    chips = st_real.max_spent + round(bet_chips(st_real.pot, st_real.max_spent - st_real.spent[q], f))
    return min(max(chips, lo), hi)


# ---- checkpoint files ----------------------------------------------------------------
def save_checkpoint(solver: BlueprintMCCFR, path: str | Path, extra: dict | None = None) -> None:
    """Write the solver's state (and `extra`, JSON-able) to `path` (.npz, atomically)."""
    meta = {"format": CHECKPOINT_FORMAT, "fingerprint": solver.fingerprint(), "extra": extra or {},
            "solver": getattr(solver, "solver_kind", "mccfr")}
    arrays = {"meta": np.array(json.dumps(meta, sort_keys=True)), **solver.state()}
    atomic_write(path, lambda f: np.savez_compressed(f, **arrays))


def read_checkpoint(path: str | Path) -> tuple[dict, dict]:
    """(meta, arrays) of a checkpoint file; `BlueprintError` if it is not one."""
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {name: z[name] for name in z.files}
        meta = json.loads(str(arrays.pop("meta")))
        if not isinstance(meta, dict) or meta.get("format") != CHECKPOINT_FORMAT:
            raise BlueprintError(f"{path}: not a blueprint checkpoint of format {CHECKPOINT_FORMAT}")
        kind = meta.get("solver", "mccfr")
        if kind not in CHECKPOINT_ARRAYS:
            raise BlueprintError(f"{path}: a checkpoint of an unknown solver {kind!r}")
        needed = CHECKPOINT_ARRAYS[kind]
        if needed - set(arrays):
            raise BlueprintError(f"{path}: a blueprint checkpoint without {min(needed - set(arrays))!r}")
        rows = len(arrays["keys"])
        if kind == "mccfr" and (arrays["regret"].shape[0] != rows or arrays["avg"].shape != arrays["regret"].shape
                or arrays["snap"].shape != arrays["regret"].shape or arrays["legal"].shape != arrays["regret"].shape
                or arrays["snap_rows"].shape != (rows,) or arrays["counters"].shape != (5,)):
            raise BlueprintError(f"{path}: a blueprint checkpoint whose tables are damaged")
    except BlueprintError:
        raise
    except (OSError, ValueError, TypeError, KeyError, EOFError, zipfile.BadZipFile) as e:
        raise BlueprintError(f"{path}: not a readable blueprint checkpoint ({type(e).__name__}: {e})") from None
    return meta, arrays


def load_checkpoint(solver: BlueprintMCCFR, path: str | Path) -> dict:
    """Restore `solver` from `path`; returns the checkpoint's `extra`. `BlueprintError` if the
    file is not a checkpoint or was written for another game, abstraction or settings."""
    meta, arrays = read_checkpoint(path)
    mine, theirs = solver.fingerprint(), meta.get("fingerprint")
    if theirs != mine:
        what = ("game" if not isinstance(theirs, dict) or theirs.get("game") != mine["game"] else
                "abstraction" if any(theirs.get(k) != mine.get(k) for k in ("buckets", "recall", "bet_sizes", "indexer"))
                else "MCCFR settings" if theirs.get("settings") != mine["settings"] else "configuration")
        detail = (f"written for {theirs.get('game')}, not {mine['game']}" if what == "game"
                  else f"its {what} differ from this configuration's")
        raise BlueprintError(f"{path}: a blueprint checkpoint of another {what} ({detail})")
    if meta.get("solver", "mccfr") != getattr(solver, "solver_kind", "mccfr"):
        raise BlueprintError(f"{path}: a checkpoint of another solver ({meta.get('solver', 'mccfr')})")
    if "regret" in arrays and arrays["regret"].shape[1] != solver.num_actions:
        raise BlueprintError(f"{path}: a blueprint checkpoint whose tables are damaged")
    try:
        solver.restore(arrays)
    except (ValueError, TypeError, KeyError) as e:
        raise BlueprintError(f"{path}: a damaged blueprint checkpoint ({type(e).__name__}: {e})") from None
    return meta.get("extra", {})


def read_blueprint(path: str | Path) -> tuple[dict, np.ndarray, np.ndarray]:
    """(meta, keys str [R], probs float32 [R, K]) of a blueprint policy file (`save_blueprint`);
    `BlueprintError` if it is not one."""
    try:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(str(z["meta"]))
            keys, probs = z["keys"], z["probs"]
    except (OSError, KeyError, ValueError, EOFError, zipfile.BadZipFile) as e:
        raise BlueprintError(f"{path}: not a blueprint file ({e})") from None
    if not isinstance(meta, dict) or meta.get("kind") != "blueprint":
        raise BlueprintError(f"{path}: a {meta.get('kind') if isinstance(meta, dict) else None!r} file, "
                             "not a blueprint")
    if probs.ndim != 2 or probs.shape[0] != len(keys):
        raise BlueprintError(f"{path}: probabilities of shape {probs.shape} for {len(keys)} keys")
    return meta, keys, probs


def save_blueprint(solver: BlueprintMCCFR, path: str | Path, probs: np.ndarray | None = None) -> None:
    """The blueprint policy file: abstract keys, float32 [R, K] probabilities over each row's
    abstract actions in increasing id (slot j: its j-th legal action; the solver's
    `blueprint_probs`, or `probs`: [R, A] over action ids for the world tree, `in_slots`, [R, K]
    already for the solvers on sampled deals), the fingerprint."""
    meta = {"format": CHECKPOINT_FORMAT, "kind": "blueprint", "fingerprint": solver.fingerprint(),
            "iterations": solver.iterations}
    probs = solver.blueprint_probs() if probs is None else probs
    if isinstance(solver, BlueprintMCCFR):
        probs = in_slots(probs, solver.tree.row_legal)
    arrays = {"meta": np.array(json.dumps(meta, sort_keys=True)),
              "keys": np.array(solver.tree.row_key, dtype=str).reshape(solver.tree.num_rows),
              "probs": probs.astype(np.float32)}
    atomic_write(path, lambda f: np.savez_compressed(f, **arrays))


def in_slots(probs: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """float [R, K]: rows over action ids (`probs` float [R, A], `legal` bool [R, A]) as rows over
    their legal actions in increasing id (K: the most legal actions of a row; zeros past a row's)."""
    order = np.argsort(~legal, axis=1, kind="stable")
    k = max(int(legal.sum(axis=1).max(initial=0)), 1)
    return np.where(np.take_along_axis(legal, order, axis=1), np.take_along_axis(probs, order, axis=1), 0.0)[:, :k]
