"""The public-tree game API: the one interface every solver in sog talks to.

A game is described from the point of view of the *public tree*: nodes are
public states (the sequence of public observations), and each node carries, for
both players, a fixed-width vector of information-state *slots*. A slot is one
information state of that player consistent with the public state; slots that
are not possible at a node are masked out (`possible_mask`). The width
`spec.num_states` (N) is the same for both players and for every public state
of a game: it is the width of the network's range inputs and value outputs.
Actions are `spec.num_actions` (A) abstract actions; which are legal may depend
on the actor's slot (`legal_mask`, shape [N, A]).

Conventions (used by every solver and by the network):

* A *range* `r_i[s]` is player i's reach probability of slot s: the product of
  i's own action probabilities along the way, times the probability of the
  chance events only i observes privately (its marginal deal probability
  `initial_ranges()` at the root).
* Chance events that are *public* (a board card) are edges of the public tree:
  a chance node's children carry a scalar probability `Child.prob`, and a slot
  whose private information contradicts the outcome (a blocked card) maps to -1.
  For the games here `P(child | s0, s1) = prob` whenever both slots map to a
  slot of the child, which is how card removal factorises.
* The correlation between both players' private information (card removal at
  the deal) lives in `chance_weights(pub)`, an [N, N] matrix equal to
  `P(s0, s1) / (P(s0) P(s1))` (0 for incompatible pairs, 1 for independent
  private information such as dice).
* The *counterfactual value* of player 0 at a terminal is
  `v0 = (chance_weights * utility) @ r1`, of player 1 `v1 = -(...)^T @ r0`:
  values include the opponent's and chance's reach, not the player's own.
  The game value is `r0 . v0` at the root with `r0 = initial_ranges()[0]`.
* Decision children are keyed by the public observation an action produces.
  For the actor, `Child.actor_map[s, a]` is the child slot that slot s reaches
  with action a (-1 if (s, a) does not lead to this child). For the other
  player, `Child.state_maps[i][s]` gives its child slot (-1 if slot s is
  inconsistent with the observation). At chance nodes both players use
  `state_maps`. A joint (s_actor, a, s_other) leads to exactly one child.

How the games of the paper map onto this:

* Poker (Kuhn, Leduc, hold'em): slots are private hands; maps are the identity;
  at a board-card chance node a hand holding the card maps to -1 (card removal)
  and `prob = 1 / (cards left)`; `chance_weights` zeroes hands sharing a card.
* Scotland Yard: Mr X's slots are his stations, the detectives have one slot.
  Mr X's move is observed only by its ticket type, so all his moves with one
  ticket lead to one child and `actor_map[s, a] = a` (destination station);
  legality depends on his station. A detective landing on station x produces
  the observations "caught" (Mr X's state_map keeps only slot x) and "not
  caught" (slot x maps to -1).
* Perfect-information games: N = 1, each player has one slot, every map is
  [[0, 0, ...]] restricted to legal actions, and chance is public.

The world-state level (`sog.games.world`) is derived from these maps, so it is
consistent with the public tree by construction: a world state is a public
state plus both players' slots.
"""
from __future__ import annotations

import abc
import dataclasses
import functools
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np

DECISION, CHANCE, TERMINAL = 0, 1, 2
CHANCE_PLAYER = -1
_MISSING = object()


@dataclasses.dataclass(frozen=True)
class GameSpec:
    """Static facts of a game.

    num_states: N, information-state slots per player per public state.
    num_actions: A, abstract actions (the policy head width).
    feature_size: length of `Game.features(pub)`.
    max_utility: bound on |utility| in the game's units (chips for poker).
    perfect_information: one slot per player, no private information.
    feature_shape: (C, H, W) when the features are C planes of an H x W board (chess,
      Go): `features(pub)` is then that array flattened in C order, so a convolutional
      network reshapes it and the MLP reads it flat; None for flat features.
    """

    name: str
    num_states: int
    num_actions: int
    feature_size: int
    max_utility: float
    perfect_information: bool = False
    feature_shape: tuple[int, int, int] | None = None


@dataclasses.dataclass(frozen=True)
class Capabilities:
    """What a game offers beyond the game API, read by openings, game records, tournaments and the
    protocol hosts instead of asking for the game's class.

    notation: how moves are named, a key of `sog.games.board_moves.NOTATIONS` ("uci": chess long
      algebraic, "gtp": Go vertices), or None: an action is named by its id.
    record: the game-record format tournaments write ("pgn", "sgf"), or None for none.
    protocol: the GUI / match protocol a `sog` host speaks for the game ("uci", "gtp"), or None.
    """

    notation: str | None = None
    record: str | None = None
    protocol: str | None = None


@dataclasses.dataclass(frozen=True)
class Child:
    """One child of a public state, keyed by the public observation.

    pub: the child's public state.
    observation: a short label of the public observation (action name, card).
    prob: at chance nodes, P(observation | compatible slots); 1 otherwise.
    actor_map: int [N, A] at decision nodes (child slot or -1), else None.
    state_maps: int [2, N]: child slot of each player's slot, or -1. The row of
      the actor at a decision node is ignored (actor_map rules there).
    """

    pub: Hashable
    observation: str
    prob: float
    actor_map: np.ndarray | None
    state_maps: np.ndarray


class Game(abc.ABC):
    """A two-player zero-sum game seen through its public tree.

    Public states are hashable, immutable values chosen by the game (tuples).
    All per-public-state methods are pure functions of the public state, so
    the cached wrappers below may memoise them.
    """

    spec: GameSpec
    capabilities: Capabilities = Capabilities()

    # ---- static --------------------------------------------------------
    @abc.abstractmethod
    def root(self) -> Hashable:
        """The first public state after the private deal."""

    @abc.abstractmethod
    def initial_ranges(self) -> np.ndarray:
        """float [2, N]: each player's marginal probability of each slot at the root."""

    # ---- per public state -----------------------------------------------
    @abc.abstractmethod
    def kind(self, pub) -> int:
        """DECISION, CHANCE or TERMINAL."""

    @abc.abstractmethod
    def actor(self, pub) -> int:
        """The acting player (0 or 1), or CHANCE_PLAYER at chance and terminal nodes."""

    @abc.abstractmethod
    def legal_mask(self, pub) -> np.ndarray:
        """bool [N, A]: legal actions per actor slot (all False at non-decision nodes)."""

    @abc.abstractmethod
    def possible_mask(self, pub) -> np.ndarray:
        """bool [2, N]: which slots of each player are possible at this public state."""

    @abc.abstractmethod
    def children(self, pub) -> Sequence[Child]:
        """The children of a decision or chance node (empty at terminals)."""

    @abc.abstractmethod
    def utility(self, pub) -> np.ndarray:
        """float [N, N]: player 0's utility at a terminal for each slot pair."""

    def chance_weights(self, pub) -> np.ndarray:
        """float [N, N]: P(s0, s1) / (P(s0) P(s1)) of the private deal (see module doc)."""
        return np.ones((self.spec.num_states,) * 2)

    @abc.abstractmethod
    def features(self, pub) -> np.ndarray:
        """float32 [feature_size]: the public-state encoding fed to the network."""

    @abc.abstractmethod
    def action_name(self, pub, action: int) -> str:
        """Human-readable name of an abstract action."""

    @abc.abstractmethod
    def slot_name(self, pub, player: int, slot: int) -> str:
        """Human-readable name of a player's information-state slot."""

    def info_state_string(self, pub, player: int, slot: int) -> str:
        """A unique key for (public state, player, slot); OpenSpiel's string where it has the game."""
        return f"{player}|{self.slot_name(pub, player, slot)}|{pub!r}"

    def openspiel_name(self) -> str | None:
        """The OpenSpiel game string with the same rules, or None."""
        return None

    def child_actions(self, pub) -> np.ndarray:
        """bool [K, A] at a decision node: whether child k of `children(pub)` is reached by action
        a from some legal slot of the actor that is possible here (`PublicTree`'s partial
        expansion picks the children of the actions it is given); derived from `children`,
        `legal_mask` and `possible_mask`, so `cached` keeps it per public state."""
        kids = self.cached("children", pub)
        legal = self.cached("legal_mask", pub) & self.cached("possible_mask", pub)[self.cached("actor", pub)][:, None]
        amaps = np.stack([child.actor_map for child in kids])            # [K, N, A]
        return ((amaps >= 0) & legal).any(1)

    def value_scale(self, pub) -> float:
        """The unit of the network's values at public state `pub` (`networks.encoding`): by default
        `spec.max_utility`; poker's pot (DeepStack's normalisation)."""
        return self.spec.max_utility

    @property
    def network_family(self) -> str:
        """The name shared by the games whose networks this game can use: games that differ only
        in what a hand draws before anyone acts (hold'em's stack and bet-fraction draws: a CVPN
        trained with stacks drawn per hand plays the fixed-stack game). By default the game's
        own name."""
        return self.spec.name

    def public_tree_size(self) -> int | None:
        """The number of public states of the full tree, or a lower bound of it, where the
        game knows one without building the tree (`sog.search.full_tree` refuses too large a
        tree before building it); None: counted while building."""
        return None

    # ---- memoised views (solvers call these) ----------------------------
    @functools.cached_property
    def _memo(self) -> dict:
        return {}

    def memo(self, key: Hashable, build: Callable[[], Any]) -> Any:
        """`build()`, computed once per game object and kept under `key`: for values that
        depend on the game alone (its compiled full tree, an equilibrium, index tables).
        Keys are tuples whose first item names the owner, e.g. ("full_tree",)."""
        memo = self._memo
        if key not in memo:
            memo[key] = build()
        return memo[key]

    def clear_memo(self) -> None:
        """Forget every memoised value (benchmarks that time cold starts)."""
        self._memo.clear()

    state_memo_limit: int | None = None
    """How many per-state values `cached` keeps at most (its table is emptied when full), for a
    game whose per-state values are large and whose runs meet ever new public states (hold'em
    with 1326 hands: a decision's children hold [N, A] maps; London Scotland Yard); None: all."""

    def cached(self, what: str, pub):
        """Memoised `getattr(self, what)(pub)` for the pure per-state methods (at most
        `state_memo_limit` of them)."""
        key = (what, pub)
        limit = self.state_memo_limit
        table = self._memo if limit is None else self.memo(("state_memo",), dict)
        value = table.get(key, _MISSING)
        if value is _MISSING:
            if limit is not None and len(table) >= limit:
                table.clear()
            value = table[key] = getattr(self, what)(pub)
        return value

    # ---- public chance ----------------------------------------------------
    search_chance_limit: int | None = None
    """Searches leave a chance node with more outcomes than this a value-function leaf unless
    their settings give a limit (`sog.search.gtcfr.wide_chance`); None: they expand every one."""

    def chance_width(self, pub) -> int:
        """The number of children of chance node `pub` (a search leaves a chance node wider
        than its `chance_limit` unexpanded: `sog.search.gtcfr`); this default counts them."""
        return len(self.cached("children", pub))

    def chance_child(self, pub, child_pub) -> Child:
        """The child of chance node `pub` whose public state is `child_pub`; ValueError if it
        is none of them. This default enumerates `children`."""
        for child in self.cached("children", pub):
            if child.pub == child_pub:
                return child
        raise ValueError(f"{child_pub!r} is not a chance outcome of {pub!r} ({self.spec.name})")

    def sample_chance_children(self, pub, k: int, rng: np.random.Generator) -> list[Child]:
        """min(k, width) distinct children of chance node `pub`, drawn uniformly without
        replacement (`rng.choice(width, m, replace=False)`, kept in the order of `children`),
        each with its `prob` times width / m: the sum over them of prob x (a child's values) is
        an unbiased estimate of the node's values (a query solve at a chance node too wide to
        expand: `actors.query_solver`). This default enumerates `children`."""
        kids = self.cached("children", pub)
        m = min(k, len(kids))
        pick = np.sort(rng.choice(len(kids), size=m, replace=False))
        return [dataclasses.replace(kids[i], prob=kids[i].prob * len(kids) / m) for i in pick.tolist()]

    def sample_chance_child(self, pub, slots: tuple[int, int], rng: np.random.Generator) -> Child:
        """A child of chance node `pub` drawn by its probability among those both players'
        slots are consistent with (one `rng.choice` over them, in the order of `children`): the
        public chance event of a played game (`sog.games.world.sample_chance`). This default
        enumerates `children`."""
        outcomes = [c for c in self.cached("children", pub)
                    if c.state_maps[0][slots[0]] >= 0 and c.state_maps[1][slots[1]] >= 0]
        total = sum(c.prob for c in outcomes)
        return outcomes[rng.choice(len(outcomes), p=np.array([c.prob / total for c in outcomes]))]

    def payoff_matrix(self, pub) -> np.ndarray:
        """float [N, N]: chance_weights * utility, player 0's terminal payoff per slot pair."""
        return self.chance_weights(pub) * self.utility(pub)

    dense_payoffs: bool = True
    """Whether solvers build the [N, N] payoff matrix of every terminal (fine for small N);
    when False they call `terminal_values` instead (hold'em: N = 1326)."""

    def terminal_values(self, pubs: Sequence, ranges: np.ndarray) -> np.ndarray:
        """float [T, 2, N]: both players' counterfactual values at terminals `pubs` given both
        players' ranges [T, 2, N]: v0 = P r1, v1 = -P^T r0 with P the payoff matrix, zero at
        impossible slots. This default multiplies the dense matrices; a game with structure
        (poker: `sog.games.poker`) overrides it with an O(N log N) form."""
        out = np.zeros(np.shape(ranges))
        for t, pub in enumerate(pubs):
            pay = self.cached("payoff_matrix", pub)
            possible = self.cached("possible_mask", pub)
            out[t, 0] = np.where(possible[0], pay @ np.where(possible[1], ranges[t, 1], 0.0), 0.0)
            out[t, 1] = np.where(possible[1], -(np.where(possible[0], ranges[t, 0], 0.0) @ pay), 0.0)
        return out

    def terminal_values_into(self, pubs: Sequence, ranges: np.ndarray, at: np.ndarray, out: np.ndarray,
                             players: Sequence[int] = (0, 1), reach_at: np.ndarray | None = None) -> None:
        """`terminal_values` of the rows at (int [T]) of ranges [n, 2, N], written to the same
        rows of out [n, 2, N] for `players` only (a solver's whole-tree arrays; others' rows left
        as they are). With reach_at (int [T, 2]), player i's reach at terminal k is read from row
        reach_at[k, i] of ranges instead (a solver that leaves a terminal's copy of its parent's
        row unwritten). This default copies the rows; poker's reads and writes them in place."""
        rows = np.stack([at, at], axis=1) if reach_at is None else np.asarray(reach_at)
        values = self.terminal_values(pubs, np.stack([ranges[rows[:, 0], 0], ranges[rows[:, 1], 1]], axis=1))
        for p in players:
            out[at, p] = values[:, p]

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.spec.name}>"


def identity_maps(n: int, possible: np.ndarray | None = None) -> np.ndarray:
    """int [2, N] identity state maps, with -1 where `possible` (bool [2, N]) is False."""
    maps = np.tile(np.arange(n), (2, 1))
    if possible is not None:
        maps = np.where(possible, maps, -1)
    return maps


def single_action_map(n: int, action: int, num_actions: int, legal: np.ndarray) -> np.ndarray:
    """int [N, A]: slot s with `action` stays slot s (if legal); everything else -1."""
    amap = np.full((n, num_actions), -1, dtype=np.int64)
    ok = legal[:, action]
    amap[ok, action] = np.arange(n)[ok]
    return amap
