"""Public trees as flat arrays, and their compiled per-depth form for solvers.

`PublicTree` is the growable structure: nodes are appended (never removed)
with their public state, parent, depth, kind and actor, and an expanded node
records its children. Leaves that are neither terminal nor expanded form the
*frontier*, evaluated by a `ValueFunction`.

`compile_tree` turns a snapshot into `CompiledTree`: nodes renumbered by
depth (so each depth is a contiguous block of *positions*), per-node arrays
and, for every depth, the edges from its parents. An edge joins one slot of
one player at a parent to one slot of the same player at a child:

    src  flat index into [n, 2, N]   (parent position, player, slot)
    dst  flat index into [n, 2, N]   (child position, player, slot)
    pol  flat index into [n, N, A]   (parent position, slot, action) for the
         acting player's edges; the sentinel n*N*A for other players and chance
    w    chance probability (chance edges), 1 otherwise

With those, a CFR iteration is a handful of gathers and segment sums per depth
(`sog.search.cfr`), with no Python loop over nodes or information states.
"""
from __future__ import annotations

import dataclasses
from typing import Hashable, Sequence

import numpy as np

from sog.games.api import CHANCE, DECISION, TERMINAL, Child, Game


class PublicTree:
    """A growable public tree (or forest: several roots) of one game.

    Arrays are preallocated and doubled when full; `size` nodes are valid.
    """

    def __init__(self, game: Game, roots: Sequence[Hashable], capacity: int = 64):
        self.game = game
        self.size = 0
        cap = max(capacity, len(roots))
        self.parent = np.full(cap, -1, dtype=np.int64)
        self.depth = np.zeros(cap, dtype=np.int64)
        self.kind = np.zeros(cap, dtype=np.int8)
        self.actor = np.full(cap, -1, dtype=np.int8)
        self.expanded = np.zeros(cap, dtype=bool)
        self.pubs: list[Hashable] = []
        self.edge: list[Child | None] = []          # edge from the parent, per node
        self.children: list[list[int]] = []         # child node ids, per node
        self.roots = [self._append(pub, -1, None) for pub in roots]

    # ---- growth -----------------------------------------------------------
    def _append(self, pub, parent: int, edge: Child | None) -> int:
        if self.size == len(self.parent):
            self._grow()
        i = self.size
        self.size += 1
        self.parent[i] = parent
        self.expanded[i] = False
        self.depth[i] = 0 if parent < 0 else self.depth[parent] + 1
        self.kind[i] = self.game.cached("kind", pub)
        self.actor[i] = self.game.cached("actor", pub)
        self.pubs.append(pub)
        self.edge.append(edge)
        self.children.append([])
        return i

    def _grow(self) -> None:
        for name in ("parent", "depth", "kind", "actor", "expanded"):
            old = getattr(self, name)
            new = np.zeros(2 * len(old), dtype=old.dtype)
            new[: len(old)] = old
            setattr(self, name, new)

    def expand(self, node: int) -> list[int]:
        """Add all children of a non-terminal leaf; returns their node ids."""
        if self.expanded[node] or self.kind[node] == TERMINAL:
            return self.children[node]
        for child in self.game.cached("children", self.pubs[node]):
            self.children[node].append(self._append(child.pub, node, child))
        self.expanded[node] = True
        return self.children[node]

    def expand_all(self, max_depth: int | None = None, stop=None) -> "PublicTree":
        """Breadth-first expansion of every leaf, down to `max_depth` (relative to
        the roots) and not below public states for which `stop(pub)` is true."""
        i = 0
        while i < self.size:
            if (max_depth is None or self.depth[i] < max_depth) and not (
                    stop is not None and stop(self.pubs[i])):
                self.expand(i)
            i += 1
        return self

    @classmethod
    def full(cls, game: Game, roots: Sequence[Hashable] | None = None) -> "PublicTree":
        """The complete public tree below `roots` (the game's root by default)."""
        return cls(game, [game.root()] if roots is None else roots).expand_all()

    def is_frontier(self) -> np.ndarray:
        """bool [size]: non-terminal leaves."""
        n = self.size
        return ~self.expanded[:n] & (self.kind[:n] != TERMINAL)


@dataclasses.dataclass
class CompiledTree:
    """A snapshot of a PublicTree, renumbered by depth. Shapes use n = nodes,
    N = slots, A = actions, T = terminals, F = frontier leaves, R = roots."""

    game: Game
    num_nodes: int
    num_states: int
    num_actions: int
    node_of: np.ndarray            # int [n]: PublicTree node id of each position
    pos_of: np.ndarray             # int [size]: position of each PublicTree node
    level_bounds: np.ndarray       # int [D + 1]: positions of depth d are [b[d], b[d+1])
    kind: np.ndarray               # int8 [n]
    actor: np.ndarray              # int8 [n], -1 at chance / terminal
    parent: np.ndarray             # int [n] parent position, -1 at roots
    legal: np.ndarray              # bool [n, N, A] (False outside decision nodes)
    possible: np.ndarray           # bool [n, 2, N]
    roots: np.ndarray              # int [R] positions
    terminals: np.ndarray          # int [T] positions
    payoffs: np.ndarray            # float [T, N, N] player 0's payoff per slot pair
    frontier: np.ndarray           # int [F] positions
    edges: list[dict]              # per depth d >= 1: src, dst, pol, w (see module doc)
    decision: np.ndarray           # int [n_dec] positions of decision nodes

    @property
    def depth(self) -> int:
        return len(self.level_bounds) - 1

    def pub(self, position: int):
        return self._pubs[position]


def compile_tree(tree: PublicTree) -> CompiledTree:
    """Renumber `tree` by depth and build the per-depth edge lists (see module doc)."""
    game = tree.game
    N, A = game.spec.num_states, game.spec.num_actions
    n = tree.size
    node_of = np.argsort(tree.depth[:n], kind="stable")
    pos_of = np.empty(n, dtype=np.int64)
    pos_of[node_of] = np.arange(n)
    depth = tree.depth[:n][node_of]
    D = int(depth.max()) + 1
    level_bounds = np.searchsorted(depth, np.arange(D + 1))
    pubs = [tree.pubs[i] for i in node_of]
    kind = tree.kind[:n][node_of]
    actor = tree.actor[:n][node_of]
    parent = np.where(tree.parent[:n][node_of] >= 0, pos_of[tree.parent[:n][node_of]], -1)
    legal = np.zeros((n, N, A), dtype=bool)
    possible = np.zeros((n, 2, N), dtype=bool)
    for p, pub in enumerate(pubs):
        possible[p] = game.cached("possible_mask", pub)
        if kind[p] == DECISION:
            legal[p] = game.cached("legal_mask", pub) & possible[p, actor[p]][:, None]
    terminals = np.flatnonzero(kind == TERMINAL)
    payoffs = np.stack([game.cached("payoff_matrix", pubs[t]) for t in terminals]) if len(
        terminals) else np.zeros((0, N, N))
    frontier_nodes = np.flatnonzero(tree.is_frontier())
    frontier = np.sort(pos_of[frontier_nodes])

    sentinel = n * N * A
    per_depth: list[list[tuple]] = [[] for _ in range(D)]
    slots = np.arange(N)
    for c in range(n):
        edge = tree.edge[node_of[c]]
        if edge is None:
            continue
        p = parent[c]
        for i in (0, 1):
            if kind[p] == DECISION and actor[p] == i:
                s, a = np.nonzero(edge.actor_map >= 0)
                keep = legal[p, s, a]
                s, a = s[keep], a[keep]
                cs = edge.actor_map[s, a]
                pol = (p * N + s) * A + a
            else:
                s = slots[edge.state_maps[i] >= 0]
                s = s[possible[p, i, s]]
                cs = edge.state_maps[i][s]
                pol = np.full(len(s), sentinel)
            w = np.full(len(s), edge.prob if kind[p] == CHANCE else 1.0)
            per_depth[depth[c]].append(((p * 2 + i) * N + s, (c * 2 + i) * N + cs, pol, w))
    edges = [None]
    for d in range(1, D):
        cols = list(zip(*per_depth[d])) if per_depth[d] else [[]] * 4
        src, dst, pol, w = (np.concatenate(col) if len(col) else np.zeros(0) for col in cols)
        edges.append(dict(src=src.astype(np.int64), dst=dst.astype(np.int64),
                          pol=pol.astype(np.int64), w=w.astype(np.float64)))
    ct = CompiledTree(
        game=game, num_nodes=n, num_states=N, num_actions=A, node_of=node_of, pos_of=pos_of,
        level_bounds=level_bounds, kind=kind, actor=actor, parent=parent, legal=legal,
        possible=possible, roots=np.sort(pos_of[tree.roots]), terminals=terminals,
        payoffs=payoffs, frontier=frontier, edges=edges,
        decision=np.flatnonzero(kind == DECISION))
    ct._pubs = pubs
    return ct
