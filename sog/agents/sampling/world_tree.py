"""A flat, lazily grown world-state tree for the vectorised sampling baselines.

The sampling baselines (`sog.agents.sampling.mccfr`) walk batches of sampled
trajectories at once; they need, per world state (public state + both players'
slots, see `sog.games.world`), its kind, actor, information-state row and
children as array lookups rather than Python calls. `WorldTree` stores that in
preallocated flat arrays that double when full:

  kind      int8  [M]     DECISION / CHANCE / TERMINAL (sog.games.api)
  actor     int8  [M]     acting player at decision nodes (0 elsewhere)
  row       int64 [M]     information-state row at decision nodes: the actor's
                          (public state, slot) -> row in the [R, A] tables
  children  int64 [M, K]  decision: child per action (-1 illegal);
                          chance: child per outcome (-1 padding)
  cum_prob  float [M, K]  chance: cumulative outcome probabilities (1 past the end)
  utility   float [M]     player 0's payoff at terminals

Nodes are created a public state at a time: expanding one world state expands
every world state of its public state (all slot pairs reachable there) with a
handful of numpy operations, so a game is only materialised where sampling
goes (tic-tac-toe or the small Scotland Yard never get built whole). The
transitions are those of `sog.games.world`, derived from the same public-tree
maps (`Child.actor_map`, `Child.state_maps`, chance `prob`s renormalised over
the outcomes compatible with both slots), so the two cannot disagree.
"""
from __future__ import annotations

from collections.abc import Hashable

import numpy as np

from sog.games.api import CHANCE, DECISION, TERMINAL, Game

__all__ = ["WorldTree", "CHANCE", "DECISION", "TERMINAL"]


class WorldTree:
    """Flat arrays over the world states reached so far (see module doc)."""

    def __init__(self, game: Game, capacity: int = 4096):
        self.game = game
        spec = game.spec
        self.num_slots, self.num_actions = spec.num_states, spec.num_actions
        self.size = 0
        self._alloc(capacity, self.num_actions)
        # information-state rows: a block of num_slots rows per decision public state
        self.row_base: dict[Hashable, int] = {}
        self.num_rows = 0
        # one group per public-state visit: its world states are a contiguous node range
        self._group_pub: list[Hashable] = []
        self._group_range: list[tuple[int, int]] = []
        init = np.asarray(game.initial_ranges(), dtype=np.float64)
        joint = init[0][:, None] * init[1][None, :] * game.chance_weights(game.root())
        s0, s1 = np.nonzero(joint > 0)
        self.roots = self._add_group(game.root(), s0, s1)
        self.root_cum = np.cumsum(joint[s0, s1]) / joint[s0, s1].sum()

    # ---- storage -------------------------------------------------------------
    def _alloc(self, capacity: int, width: int) -> None:
        def grow(name, shape, dtype, fill):
            new = np.full(shape, fill, dtype=dtype)
            old = getattr(self, name, None)
            if old is not None:
                new[tuple(slice(0, s) for s in old.shape)] = old
            setattr(self, name, new)
        grow("kind", capacity, np.int8, TERMINAL)
        grow("actor", capacity, np.int8, 0)
        grow("row", capacity, np.int64, -1)
        grow("s0", capacity, np.int64, 0)
        grow("s1", capacity, np.int64, 0)
        grow("utility", capacity, np.float64, 0.0)
        grow("expanded", capacity, bool, False)
        grow("children", (capacity, width), np.int64, -1)
        grow("cum_prob", (capacity, width), np.float64, 1.0)
        grow("group", capacity, np.int64, 0)       # the group (public-state visit) of each node
        self.capacity, self.width = capacity, width

    def _reserve(self, extra: int, width: int) -> None:
        if self.size + extra > self.capacity or width > self.width:
            cap = self.capacity
            while cap < self.size + extra:
                cap *= 2
            self._alloc(cap, max(width, self.width))

    def _add_group(self, pub, s0: np.ndarray, s1: np.ndarray) -> np.ndarray:
        """Create the world states (pub, s0[i], s1[i]); returns their node ids."""
        n = len(s0)
        self._reserve(n, self.width)
        ids = np.arange(self.size, self.size + n)
        self.size += n
        game = self.game
        kind = game.cached("kind", pub)
        self.kind[ids], self.s0[ids], self.s1[ids] = kind, s0, s1
        self.group[ids] = len(self._group_pub)
        self._group_pub.append(pub)
        self._group_range.append((int(ids[0]) if n else self.size, n))
        if kind == DECISION:
            actor = game.cached("actor", pub)
            self.actor[ids] = actor
            self.row[ids] = self._decision_rows(pub, actor, s0 if actor == 0 else s1)
        elif kind == TERMINAL:
            self.utility[ids] = game.cached("utility", pub)[s0, s1]
            self.expanded[ids] = True
        return ids

    def _decision_rows(self, pub, actor: int, slots: np.ndarray) -> np.ndarray:
        """int64 [n]: the information-state rows of the actor's `slots` at decision public state
        `pub`: a block of num_slots rows per public state, allocated when it is first created
        (a subclass may key rows otherwise: `sog.agents.holdem.blueprint` keys them by abstract
        information state)."""
        base = self.row_base.get(pub)
        if base is None:
            base = self.row_base[pub] = self.num_rows
            self.num_rows += self.num_slots
        return base + slots

    def _legal_mask(self, pub) -> np.ndarray:
        """bool [N, A]: the actions the tree expands at decision public state `pub` (the game's
        legal ones; a subclass may restrict them to an action abstraction)."""
        return self.game.cached("legal_mask", pub)

    # ---- expansion -----------------------------------------------------------
    def ensure_expanded(self, nodes: np.ndarray) -> None:
        """Create the children of every node in `nodes` (int [n]) that has none yet."""
        todo = nodes[~self.expanded[nodes]]
        if len(todo):
            for g in np.unique(self.group[todo]):
                self._expand_group(int(g))

    def _expand_group(self, g: int) -> None:
        pub = self._group_pub[g]
        start, n = self._group_range[g]
        ids = np.arange(start, start + n)
        s0, s1 = self.s0[ids].copy(), self.s1[ids].copy()
        game = self.game
        kind = game.cached("kind", pub)
        children = game.cached("children", pub)
        if kind == DECISION:
            self._expand_decision(pub, ids, s0, s1, children)
        elif kind == CHANCE:
            self._expand_chance(ids, s0, s1, children)
        self.expanded[ids] = True

    def _expand_decision(self, pub, ids, s0, s1, children) -> None:
        actor = self.game.cached("actor", pub)
        s_act, s_oth = (s0, s1) if actor == 0 else (s1, s0)
        legal = self._legal_mask(pub)[s_act]                                    # [n, A]
        assigned = np.zeros(legal.shape, dtype=bool)
        for child in children:
            c_act = child.actor_map[s_act]                                      # [n, A]
            c_oth = child.state_maps[1 - actor][s_oth]                          # [n]
            ok = legal & ~assigned & (c_act >= 0) & (c_oth >= 0)[:, None]
            if not ok.any():
                continue
            i, a = np.nonzero(ok)
            new_act, new_oth = c_act[i, a], c_oth[i]
            c0, c1 = (new_act, new_oth) if actor == 0 else (new_oth, new_act)
            new = self._add_group(child.pub, c0, c1)
            self.children[ids[i], a] = new
            assigned |= ok
        if (legal & ~assigned).any():
            raise AssertionError(f"{self.game.spec.name}: a legal action of {pub!r} has no child")

    def _expand_chance(self, ids, s0, s1, children) -> None:
        n = len(ids)
        count = np.zeros(n, dtype=np.int64)
        outcomes = []   # (node positions, column, child node ids, probability)
        for child in children:
            c0, c1 = child.state_maps[0][s0], child.state_maps[1][s1]
            ok = (c0 >= 0) & (c1 >= 0)
            if ok.any():
                i = np.flatnonzero(ok)
                outcomes.append((i, count[i].copy(), self._add_group(child.pub, c0[i], c1[i]), child.prob))
                count[i] += 1
        if n == 0:
            return
        self._reserve(0, int(count.max()))
        p = np.zeros((n, self.width))
        for i, col, new, prob in outcomes:
            self.children[ids[i], col] = new
            p[i, col] = prob
        cum = np.cumsum(p, axis=1) / p.sum(axis=1, keepdims=True)
        cum[np.arange(self.width)[None, :] >= count[:, None] - 1] = 1.0   # exact 1 from the last outcome on
        self.cum_prob[ids] = cum

    # ---- sampling ------------------------------------------------------------
    def sample_roots(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """int [n]: world states at the root, drawn from the deal distribution."""
        return self.roots[np.minimum(np.searchsorted(self.root_cum, rng.random(n), side="right"),
                                     len(self.roots) - 1)]

    def sample_chance(self, nodes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """int [n]: one outcome of each chance node (expanded), by its probabilities."""
        j = (rng.random(len(nodes))[:, None] >= self.cum_prob[nodes]).sum(axis=1)
        return self.children[nodes, np.minimum(j, self.width - 1)]
