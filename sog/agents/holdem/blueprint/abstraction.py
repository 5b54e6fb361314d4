"""The abstract game of a blueprint (`CardAbstraction`): a player's information state is (the betting
history, ACPC style, with the `sog` abstraction's setup where there is one; the bucket
of its cards). `recall="imperfect"` (Pluribus) keys the bucket of the current round
alone; `"perfect"` the buckets of every round so far. Buckets are one per suit-
isomorphism class where the round's count is 0 (lossless, Pluribus's first round).
The actions are the game's own (limit, or the `fcpa` / `sog` no-limit abstractions),
or, on a fullgame no-limit game, those of a bet-size abstraction
(`sog.games.holdem.action_abstraction.abstract_actions`: fold, call, the round's and
raise level's pot fractions, all-in); legal actions depend on the betting history
alone, so one abstract set has one action set.
"""
from __future__ import annotations

import functools

import numpy as np

from sog.agents.holdem.blueprint.settings import (
    RECALL,
    BlueprintError,
    describe_abstraction,
)
from sog.agents.sampling.world_tree import WorldTree
from sog.games.holdem import betting as B
from sog.games.holdem.action_abstraction import (
    BetSizes,
    abstract_actions,
)
from sog.games.holdem.buckets import Buckets


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
