"""Agents at an n-player hold'em table (`sog.eval.table.tournament`), and first pieces of Pluribus's real-time search.

A table agent plays inside the table's abstract betting tree
(`sog.multiplayer.betting_tree.TableBettingTree`): for a batch of decisions (tree nodes) of
sampled deals it returns its distribution over each node's action slots, vectorised over the
batch. `table` below is the `sog.eval.table.tournament.Table` (duck-typed: `betting`, `width`, `legal`,
`call_slot`, `deck`). Agents: `UniformAgent` (`random`), `CallAgent` (`call`), `BlueprintAgent`
(a `sog blueprint` file: the blueprint row of (decision, the seat's bucket code)).

Real-time search pieces (Pluribus; the search agent is
`sog.agents.holdem.table.search.SearchAgent`; `sog.eval.table.tournament.Table.rollout` plays a profile of these
agents on from any node, one agent a seat, which values a depth-limited subgame's leaves under
each player's continuation):
* `continuation_probs` / `ContinuationAgent`: Pluribus's four continuation strategies at a
  depth-limited subgame's leaves: the blueprint, and the blueprint biased toward folding,
  calling or raising (that action class's probabilities multiplied by `BIAS` = 5, then
  renormalised);
* `BlueprintAgent.beliefs`: each player's range over every hand of the deck along a public
  betting path, by Bayes' rule with the blueprint's action probabilities (the subgame's
  beliefs): per player the product over its decisions of sigma(action | decision, the hand's
  bucket code on that round's board), zero for hands holding a board card, normalised;
* `sample_hands`: hands for the players still in drawn from those ranges, no card shared (the
  deals a subgame is solved on, `sog.agents.holdem.table.subgame_tree.subgame_deals`).
"""
from __future__ import annotations

import abc
import copy
from collections.abc import Callable, Iterable

import numpy as np

from sog.agents.holdem.blueprint.files import read_blueprint
from sog.agents.holdem.blueprint.settings import BlueprintError
from sog.errors import SogError
from sog.games.api import DECISION
from sog.multiplayer.holdem import BET, CALL, FOLD

CONTINUATIONS = ("blueprint", "fold", "call", "raise")
BIAS = 5.0


class TableError(SogError, ValueError):
    """A table evaluation that cannot run as asked (bad agents, games, counts)."""


class TableAgent(abc.ABC):
    """An agent at the table: for decisions (betting-tree nodes) of a batch of deals, its
    distribution over each node's action slots. `prepare(table, cards)` runs once per batch of
    deals (int64 [D, n h + b], `Table.deal`) and returns what `probs` needs."""

    name = "agent"

    def prepare(self, table, cards: np.ndarray):
        return None

    @abc.abstractmethod
    def probs(self, table, nodes: np.ndarray, deals: np.ndarray, seats: np.ndarray, ctx) -> np.ndarray:
        """float64 [m, K]: the distribution over slots at decision nodes[i] (int64 [m]) of the
        player in seats[i] on deal deals[i] (rows of the batch), zero past each node's actions."""

    def stats(self) -> dict:
        return {}


class UniformAgent(TableAgent):
    """Every legal action slot equally likely (`random`)."""

    name = "random"

    def probs(self, table, nodes, deals, seats, ctx):
        legal = table.legal(nodes)
        return legal / legal.sum(axis=1, keepdims=True)


class CallAgent(TableAgent):
    """Always check / call (`call`)."""

    name = "call"

    def probs(self, table, nodes, deals, seats, ctx):
        out = np.zeros((len(nodes), table.width))
        out[np.arange(len(nodes)), table.call_slot[nodes]] = 1.0
        return out


class BlueprintAgent(TableAgent):
    """A blueprint's probabilities (`sog.agents.holdem.blueprint.files.save_blueprint`'s file) looked up by
    (decision, the seat's bucket code on the node's round): `keys` int64 [R] sorted,
    `d * num_codes + code`; `probs` float [R, K] in slots; `cards` the blueprint's
    `DealBuckets` (codes of a deal). Information states the blueprint never met are played
    uniformly (counted in `stats`)."""

    name = "blueprint"

    def __init__(self, keys: np.ndarray, probs: np.ndarray, cards, label: str = "blueprint"):
        order = np.argsort(keys, kind="stable")
        self.keys, self.table_probs = keys[order], np.asarray(probs, dtype=np.float64)[order]
        self.cards, self.name = cards, label
        self.lookups = self.misses = 0

    @classmethod
    def from_file(cls, path, betting, cards, label: str = "blueprint") -> tuple[BlueprintAgent, dict]:
        """The agent of a blueprint file on this betting tree, and the file's meta (its
        fingerprint: the caller checks it is of the same configuration). TableError if the
        file is not a blueprint or its keys are not of this tree."""
        try:
            meta, keys, probs = read_blueprint(path)
        except BlueprintError as e:
            raise TableError(str(e)) from None
        if probs.shape[1] > betting.width:
            raise TableError(f"{path}: probabilities of shape {probs.shape} for {len(keys)} keys and "
                             f"{betting.width} slots")
        parts = np.char.rpartition(keys.astype(str), "|")
        history, code = parts[:, 0], parts[:, 2]
        names = np.array(betting.history)
        order = np.argsort(names)
        pos = np.clip(np.searchsorted(names[order], history), 0, len(names) - 1)
        if len(keys) and (not np.all(names[order][pos] == history) or not np.all(np.char.isdigit(code))):
            raise TableError(f"{path}: keys that are not this game's betting histories (a blueprint of another "
                             "game or bet sizes)")
        decision = order[pos].astype(np.int64)
        code = code.astype(np.int64) if len(keys) else np.zeros(0, np.int64)
        if len(keys) and code.max() >= cards.num_codes:
            raise TableError(f"{path}: bucket codes up to {code.max()}, the abstraction has {cards.num_codes}")
        full = np.zeros((len(keys), betting.width))
        full[:, :probs.shape[1]] = probs
        return cls(decision * cards.num_codes + code, full, cards, label), meta

    def prepare(self, table, cards):
        return self.cards.codes(cards)

    def rows(self, betting, nodes: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(float64 [m, K]: the blueprint's row over node's slots at decisions nodes[i] (int64 [m]) of
        `betting` for bucket codes codes[i] (int64 [m], >= 0), ones where it never met that state;
        bool [m]: whether it met it)."""
        key = betting.decision[nodes] * self.cards.num_codes + codes
        return self._lookup(key)

    def _lookup(self, key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """`rows` of the blueprint's keys `key` (int64 [m], `d * num_codes + code`), in its own slots."""
        idx = np.minimum(np.searchsorted(self.keys, key), max(len(self.keys) - 1, 0))
        hit = self.keys[idx] == key if len(self.keys) else np.zeros(len(key), bool)
        return np.where(hit[:, None], self.table_probs[idx] if len(self.keys) else 0.0, 1.0), hit

    def probs(self, table, nodes, deals, seats, codes):
        bt = table.betting
        rows, hit = self.rows(bt, nodes, codes[deals, seats, bt.round[nodes]])
        legal = table.legal(nodes)
        out = rows[:, :table.width] * legal
        total = out.sum(axis=1, keepdims=True)
        bad = total[:, 0] <= 0
        out[bad] = legal[bad]
        total[bad] = legal[bad].sum(axis=1, keepdims=True)
        self.lookups += len(nodes)
        self.misses += int((~hit).sum())
        return out / total

    def hand_probs(self, table, node: int, codes: np.ndarray) -> np.ndarray:
        """float64 [N, K]: the blueprint's distribution at decision `node` for hands of bucket codes
        `codes` (int64 [N]; -1: an impossible hand, given zeros), unmet states uniform."""
        ok = codes >= 0
        rows, _ = self.rows(table.betting, np.full(len(codes), node, np.int64), np.where(ok, codes, 0))
        legal = table.legal(np.array([node]))[0]
        out = rows[:, :table.width] * legal
        total = out.sum(axis=1, keepdims=True)
        out = np.where(total > 0, out / np.where(total > 0, total, 1.0), legal / legal.sum())
        out[~ok] = 0.0
        return out

    def beliefs(self, table, path: np.ndarray, slots: np.ndarray, board: np.ndarray, seat: int | None = None
                ) -> np.ndarray:
        """float64 [P, N]: each seat's range over the deck's hands (`Deck.hands` order) after the
        public betting path `path` (int64 [T]: the nodes from the root; decisions among them took
        slots[t]) on `board` (the board cards dealt so far, in order): by Bayes' rule from uniform,
        the blueprint's probability of each action taken at the seat's decisions (module doc);
        hands holding a board card have zero weight. The same whichever `seat` asks (an agent
        whose model depends on its seat, `EndgameAgent.beliefs`, takes it)."""
        codes = {}

        def rows_at(node: int, known: np.ndarray) -> np.ndarray:
            r = int(table.betting.round[node])
            if r not in codes:
                codes[r] = self.cards.hand_codes(known, r)
            return self.hand_probs(table, node, codes[r])
        return path_ranges(table, path, slots, board, rows_at)

    def stats(self) -> dict:
        return {"decisions": self.lookups, "unmet_information_states": self.misses,
                "unmet_share": self.misses / max(self.lookups, 1)}


class OverBlueprint(TableAgent):
    """An agent that plays `blueprint` (a `BlueprintAgent`, copied: its own lookup counters) before
    its settings' `first_round` and decides by itself from then on (`decide`): the real-time search
    (`sog.agents.holdem.table.search`) and end-game solving (`sog.agents.holdem.table.endgame`)."""

    def __init__(self, blueprint: BlueprintAgent, settings, label: str):
        self.blueprint = copy.copy(blueprint)
        self.blueprint.lookups = self.blueprint.misses = 0
        self.settings, self.name = settings, label

    def prepare(self, table, cards):
        return cards, self.blueprint.prepare(table, cards)

    def probs(self, table, nodes, deals, seats, ctx):
        cards, codes = ctx
        out = self.blueprint.probs(table, nodes, deals, seats, codes)
        for i in np.flatnonzero(table.betting.round[nodes] >= self.settings.first_round):
            out[i] = self.decide(table, int(nodes[i]), cards[deals[i]], int(seats[i]))
        return out

    @abc.abstractmethod
    def decide(self, table, node: int, cards: np.ndarray, seat: int) -> np.ndarray:
        """float64 [K]: the distribution over node's slots for `seat` holding its cards in the deal
        `cards` (int64 [n h + b]; only its own hole cards and the board dealt at node are read)."""


def bayes_ranges(players: int, possible: np.ndarray, steps: Iterable[tuple[int, np.ndarray]]) -> np.ndarray:
    """float64 [P, N]: each of `players` seats' range over N hands by Bayes' rule from uniform: the product
    of the likelihoods of its actions (steps: pairs (seat, float [N]: each hand's probability of the
    action that seat took)) and `possible` (float [N]: 1 on the hands sharing no board card), normalised
    per seat (a seat with no weight left stays zero)."""
    out = np.ones((players, len(possible)))
    for seat, likelihood in steps:
        out[seat] *= likelihood
    out *= possible
    total = out.sum(axis=1, keepdims=True)
    return out / np.where(total > 0, total, 1.0)


def path_ranges(table, path: np.ndarray, slots: np.ndarray, board,
                rows_at: Callable[[int, np.ndarray], np.ndarray]) -> np.ndarray:
    """float64 [P, N]: `bayes_ranges` along the public betting path `path` (int64 [T]: the nodes from
    the root; decisions among them took slots[t]) on `board` (the board dealt so far, in deal order):
    at each decision the actor's per-hand distribution rows_at(node, known) (float [N, K]; known: the
    board cards dealt at node) read at the slot taken."""
    bt = table.betting
    board = np.asarray(board, dtype=np.int64)
    steps = ((int(bt.actor[node]), rows_at(node, board[:table.levels[max(int(table.node_level[node]), 0)]])[:, slot])
             for node, slot in zip(np.asarray(path).tolist(), np.asarray(slots).tolist())
             if bt.kind[node] == DECISION)
    return bayes_ranges(table.players, table.possible(board), steps)


def continuation_probs(probs: np.ndarray, actions: np.ndarray, bias: str, factor: float = BIAS) -> np.ndarray:
    """float64 [m, K]: distributions over slots (probs [m, K], rows summing to 1 over legal slots)
    biased toward one action class (Pluribus's continuation strategies): "fold" (action id 0),
    "call" (1) or "raise" (2 and up) has its probability multiplied by `factor`, then each row is
    renormalised; "blueprint" returns probs. actions int64 [m, K]: each slot's game action id
    (-1 past a node's actions). A row without that class, or where it has probability zero,
    is unchanged."""
    if bias not in CONTINUATIONS:
        raise TableError(f"continuation {bias!r}: one of {', '.join(CONTINUATIONS)}")
    probs = np.asarray(probs, dtype=np.float64)
    if bias == "blueprint":
        return probs.copy()
    cls = actions == FOLD if bias == "fold" else actions == CALL if bias == "call" else actions >= BET
    out = probs * np.where(cls, factor, 1.0)
    return out / out.sum(axis=1, keepdims=True)


class ContinuationAgent(TableAgent):
    """`base`'s strategy biased toward `bias` (`continuation_probs`) at every decision."""

    def __init__(self, base: TableAgent, bias: str, factor: float = BIAS):
        if bias not in CONTINUATIONS:
            raise TableError(f"continuation {bias!r}: one of {', '.join(CONTINUATIONS)}")
        self.base, self.bias, self.factor = base, bias, factor
        self.name = f"{base.name}+{bias}"

    def prepare(self, table, cards):
        return self.base.prepare(table, cards)

    def probs(self, table, nodes, deals, seats, ctx):
        p = self.base.probs(table, nodes, deals, seats, ctx)
        return continuation_probs(p, table.betting.action[nodes], self.bias, self.factor)

    def stats(self) -> dict:
        return self.base.stats()


def canonical(table, board) -> tuple:
    """The board (int [b], as dealt) with each round's cards sorted: the key of a spot whose play does
    not depend on the order a round's cards came in (`TableSubgame`'s, the searches')."""
    cuts = [k for k in table.levels if 0 < k < len(board)]
    return tuple(int(c) for part in np.split(np.asarray(board, dtype=np.int64), cuts) for c in np.sort(part))


def sample_hands(beliefs: np.ndarray, hand_masks: np.ndarray, rng: np.random.Generator, n: int,
                 batch: int = 4096, max_draws: int = 1 << 24) -> np.ndarray:
    """int64 [n, k]: n independent draws of one hand for each of k players (rows of the deck's
    hands), player i's from its range beliefs[i] (float [k, N], e.g. `BlueprintAgent.beliefs` of
    the players still in), conditioned on no two players holding the same card: the joint
    distribution proportional to prod_i beliefs[i][h_i] over card-disjoint hands (rejection
    sampling, vectorised over a batch of candidates; `hand_masks` uint64 [N]: each hand's card
    bits, `Deck.hand_masks`). The deals a subgame solver samples its traversals from. TableError
    if fewer than one candidate in max_draws / n is accepted."""
    beliefs = np.asarray(beliefs, dtype=np.float64)
    cdf = np.cumsum(beliefs, axis=1)
    if (cdf[:, -1] <= 0).any():
        raise TableError("a player's range is empty")
    cdf /= cdf[:, -1:]
    out, got, drawn = np.empty((n, len(beliefs)), dtype=np.int64), 0, 0
    while got < n:
        if drawn >= max_draws:
            raise TableError(f"{got} of {n} card-disjoint hands after {drawn:,} draws: the ranges hardly overlap")
        u = rng.random((batch, len(beliefs)))
        cand = np.stack([np.minimum(np.searchsorted(cdf[i], u[:, i], side="right"), cdf.shape[1] - 1)
                         for i in range(len(beliefs))], axis=1)
        masks = hand_masks[cand]
        acc, ok = np.zeros(batch, dtype=np.uint64), np.ones(batch, dtype=bool)
        for i in range(len(beliefs)):
            ok &= (acc & masks[:, i]) == 0
            acc |= masks[:, i]
        keep = cand[ok][:n - got]
        out[got:got + len(keep)] = keep
        got, drawn = got + len(keep), drawn + batch
    return out
