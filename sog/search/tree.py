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

Indices are int32 where the arrays they index allow (`index_dtype`): a 52-card hold'em turn
subgame has 25 M edges, whose tables dominate a solver's memory.

Most games keep slots (`CompiledTree.slot_preserving`: poker, where a private hand stays
itself below every public action and deal): every edge maps slot s to slot s, a child
below a decision node is reached by one action from exactly the actor's legal slots for it,
and a child's other slots are exactly its possible ones. There a child's reach is its
parent's row times the actor's policy row of the action and its possible mask, and a
parent's value its children's rows summed: dense [nodes, N] row operations per depth
(`sog.search.cfr.Levels`), so the per-slot edge lists are not built unless asked for
(`CompiledTree.edges`, built on first use).

With those, a CFR iteration is a handful of gathers and segment sums per depth
(`sog.search.cfr`), with no Python loop over nodes or information states.
"""
from __future__ import annotations

import dataclasses
import functools
from collections.abc import Hashable, Sequence

import numba
import numpy as np

from sog.errors import SogError
from sog.games.api import CHANCE, DECISION, TERMINAL, Child, Game


class TreeTooLarge(SogError, ValueError):
    """A tree would exceed the node budget it is built under."""


class PublicTree:
    """A growable public tree (or forest: several roots) of one game.

    Per-node arrays are preallocated and doubled when full; `size` nodes are
    valid. Every edge between a parent slot and a child slot is recorded in a
    flat edge table when the child is appended (columns `e_child` int32,
    `e_player` int8, `e_src` int32, `e_dst` int32, `e_action` int32: the child
    node, the player, the parent and child slots, the actor's action or -1;
    17 bytes an edge), ordered by child; the chance probability of the edge
    into a node is per node (`prob` float [cap]: `Child.prob` below chance nodes, 1 below
    decision nodes and at roots), so `compile_tree` is a few vectorised operations however large
    the tree is. A decision node may be *partially* expanded (GT-CFR's top-k
    expansion in perfect-information games): `present[node]` marks the
    (slot, action) pairs whose child is in the tree, and only those are legal
    for the solver.

    For walks down the tree without Python objects (`sog.search.expansion`), the children
    are also linked by arrays (`first_child`, `next_sibling`: -1 for none, in the order they
    were added, as `children`), and each node keeps its edge from the parent as arrays:
    `prob` (above), `in_state_maps` [cap, 2, N] (`Child.state_maps`; -1 at roots) and
    `in_actor_map` [cap, N, A] (`Child.actor_map` below a decision node, else -1), int16 slots
    where N < 2^15 (int32 otherwise). `first` int [cap] is the first node holding the same
    public state (the node itself for a new one), as `index`. The edges into node c are rows
    [edge_start[c], edge_start[c + 1]) of the edge table (int [cap + 1]; nodes and their edges
    are appended in the same order).

    separate: the roots' trees are kept apart (a batch of searches in one forest, GT-CFR's batch
    axis): a node's `first` and the `index` key are per tree ((tree, public state), tree = its
    root's position in `roots`), so no tree's prior, cache or summary reads another's. `tree_of`
    int [cap]: every node's tree (its root's position), in any forest.
    """

    def __init__(self, game: Game, roots: Sequence[Hashable], capacity: int = 64, separate: bool = False):
        self.game = game
        N, A = game.spec.num_states, game.spec.num_actions
        self.size = 0
        self.num_edges = 0
        self.version = 0                      # bumped by every change (compile caches key on it)
        cap = max(capacity, len(roots))
        self.parent = np.full(cap, -1, dtype=np.int64)
        self.depth = np.zeros(cap, dtype=np.int64)
        self.kind = np.zeros(cap, dtype=np.int8)
        self.actor = np.full(cap, -1, dtype=np.int8)
        self.prob = np.ones(cap, dtype=np.float64)  # chance probability of the edge from the parent
        self.expanded = np.zeros(cap, dtype=bool)   # every child is in the tree
        self.possible = np.zeros((cap, 2, N), dtype=bool)
        self.legal = np.zeros((cap, N, A), dtype=bool)    # game legality & actor possible
        self.present = np.zeros((cap, N, A), dtype=bool)  # (slot, action) has its child in the tree
        self.first_child = np.full(cap, -1, dtype=np.int64)
        self.next_sibling = np.full(cap, -1, dtype=np.int64)
        self._last_child = np.full(cap, -1, dtype=np.int64)
        self.first = np.zeros(cap, dtype=np.int64)
        self.tree_of = np.zeros(cap, dtype=np.int64)
        self.separate = separate
        self.edge_start = np.zeros(cap + 1, dtype=np.int64)   # node c's edges: [edge_start[c], edge_start[c + 1])
        slot = np.int16 if N < 2**15 else np.int32        # the edge maps' slots (hold'em: 1326 hands)
        self.in_state_maps = np.full((cap, 2, N), -1, dtype=slot)
        self.in_actor_map = np.full((cap, N, A), -1, dtype=slot)
        ecap = 4 * cap
        self.e_child = np.zeros(ecap, dtype=np.int32)
        self.e_player = np.zeros(ecap, dtype=np.int8)
        self.e_src = np.zeros(ecap, dtype=np.int32)
        self.e_dst = np.zeros(ecap, dtype=np.int32)
        self.e_action = np.zeros(ecap, dtype=np.int32)
        self._no_actions = np.zeros((N, A), dtype=bool)            # `_write_node`'s stand-ins where the
        self._no_actions_map = np.full((N, A), -1, dtype=np.int64)  # node has no legal mask, actor map or
        self._no_state_maps = np.full((2, N), -1, dtype=np.int64)   # edge (a root)
        self.pubs: list[Hashable] = []
        self.edge: list[Child | None] = []          # edge from the parent, per node
        self.children: list[list[int]] = []         # child node ids, per node
        self._added: list[set[int]] = []            # indices (in game.children) of added children
        self.index: dict[Hashable, int] = {}        # public state (separate: (tree, public state)) -> first node
        self.roots: list[int] = []
        for pub in roots:
            self.roots.append(self._append(pub, -1, None))

    # ---- growth -----------------------------------------------------------
    def _append(self, pub, parent: int, edge: Child | None) -> int:
        if self.size == len(self.parent):
            self._grow()
        game, i = self.game, self.size
        N, A = game.spec.num_states, game.spec.num_actions
        while self.num_edges + N * A + N > len(self.e_child):
            for name in ("e_child", "e_player", "e_src", "e_dst", "e_action"):
                old = getattr(self, name)
                setattr(self, name, np.concatenate([old, np.zeros_like(old)]))
        self.size += 1
        self.version += 1
        kind = game.cached("kind", pub)
        legal = game.cached("legal_mask", pub) if kind == DECISION else self._no_actions
        prob = edge.prob if parent >= 0 and self.kind[parent] == CHANCE else 1.0
        state_maps, actor_map = ((edge.state_maps, self._no_actions_map if edge.actor_map is None else edge.actor_map)
                                 if edge is not None else (self._no_state_maps, self._no_actions_map))
        self.pubs.append(pub)
        self.edge.append(edge)
        self.children.append([])
        self._added.append(set())
        tree = int(self.tree_of[parent]) if parent >= 0 else len(self.roots)
        self.tree_of[i] = tree
        first = self.index.setdefault((tree, pub) if self.separate else pub, i)
        self.num_edges = _write_node(
            i, parent, kind, game.cached("actor", pub), prob, first,
            game.cached("possible_mask", pub), legal, state_maps, actor_map, edge is not None, self.num_edges,
            self.parent, self.depth, self.kind, self.actor, self.prob, self.expanded, self.possible, self.legal,
            self.present, self.first, self.first_child, self.next_sibling, self._last_child, self.edge_start,
            self.in_state_maps, self.in_actor_map, self.e_child, self.e_player, self.e_src, self.e_dst,
            self.e_action)
        return i

    def add_root(self, pub) -> int:
        """Append another root (a forest); returns its node."""
        self.roots.append(self._append(pub, -1, None))
        return self.roots[-1]

    def nbytes(self) -> int:
        """Bytes held by the tree's arrays (node-indexed arrays at their capacity, the edge
        table); not counted: the public states and `Child` objects the game keeps."""
        return sum(v.nbytes for v in vars(self).values() if isinstance(v, np.ndarray))

    def _grow(self) -> None:
        for name in ("parent", "depth", "kind", "actor", "prob", "expanded", "possible", "legal", "present",
                     "first_child", "next_sibling", "_last_child", "first", "tree_of", "edge_start", "in_state_maps",
                     "in_actor_map"):
            old = getattr(self, name)
            setattr(self, name, np.concatenate([old, np.zeros_like(old)]))

    def expand(self, node: int, actions: Sequence[int] | None = None) -> list[int]:
        """Add the children of a non-terminal node; returns the node's children.

        actions: at a decision node, add only the children some legal
        (slot, action) with these actions reaches (partial expansion);
        default all children.
        """
        if self.expanded[node] or self.kind[node] == TERMINAL:
            return self.children[node]
        added = self._added[node]
        kids = self.game.cached("children", self.pubs[node])
        wanted = (self.game.cached("child_actions", self.pubs[node])[:, list(actions)].any(1) if actions is not None
                  and self.kind[node] == DECISION else np.ones(len(kids), dtype=bool))
        for k, child in enumerate(kids):
            if k in added or not wanted[k]:
                continue
            added.add(k)
            self.children[node].append(self._append(child.pub, node, child))
        self.expanded[node] = len(added) == len(kids)
        self.version += 1
        return self.children[node]

    def expand_sample(self, node: int, k: int, rng: np.random.Generator) -> list[int]:
        """Add min(k, width) children of a chance leaf drawn by `Game.sample_chance_children`,
        with their probabilities scaled so that the node's values are an unbiased estimate of
        its full expansion's (a query solve rooted at a chance node too wide to expand); the
        node is then closed to `expand`. Returns the node's children."""
        if self.kind[node] != CHANCE or self.children[node]:
            raise ValueError(f"expand_sample: node {node} is not a chance leaf")
        for child in self.game.sample_chance_children(self.pubs[node], k, rng):
            self.children[node].append(self._append(child.pub, node, child))
        self.expanded[node] = True
        self.version += 1
        return self.children[node]

    def expand_all(self, max_depth: int | None = None, stop=None, start: int = 0,
                   max_nodes: int | None = None) -> PublicTree:
        """Breadth-first expansion of every leaf from node `start` on, down to `max_depth`
        (relative to the roots) and not below public states for which `stop(pub)` is true;
        `TreeTooLarge` as soon as the tree has more than `max_nodes` nodes."""
        i = start
        while i < self.size:
            if (max_depth is None or self.depth[i] < max_depth) and not (
                    stop is not None and stop(self.pubs[i])):
                self.expand(i)
                if max_nodes is not None and self.size > max_nodes:
                    raise TreeTooLarge(f"more than {max_nodes:,} public states")
            i += 1
        return self

    @classmethod
    def full(cls, game: Game, roots: Sequence[Hashable] | None = None,
             max_nodes: int | None = None) -> PublicTree:
        """The complete public tree below `roots` (the game's root by default), of at most
        `max_nodes` nodes (`TreeTooLarge` beyond)."""
        return cls(game, [game.root()] if roots is None else roots).expand_all(max_nodes=max_nodes)

    def is_leaf(self) -> np.ndarray:
        """bool [size]: nodes without children."""
        n = self.size
        return np.array([not c for c in self.children], dtype=bool) if n else np.zeros(0, bool)

    def is_frontier(self) -> np.ndarray:
        """bool [size]: non-terminal leaves (no child in the tree yet)."""
        return self.is_leaf() & (self.kind[: self.size] != TERMINAL)


@numba.njit(cache=True)
def _write_node(i, p, kind_i, actor_i, prob_i, first_i, possible_i, legal_mask, state_maps, actor_map, has_edge,
                start, parent, depth, kind, actor, prob, expanded, possible, legal, present, first, first_child,
                next_sibling, last_child, edge_start, in_state_maps, in_actor_map, e_child, e_player, e_src, e_dst,
                e_action):
    """Write node i (parent p, -1 for a root) into the tree's arrays (see `PublicTree`): its kind,
    actor, edge probability prob_i, first node of its public state first_i, possible slots
    possible_i bool [2, N], legal (slot, action) pairs legal_mask bool [N, A] masked to the actor's
    possible slots at a decision node (none elsewhere); with an edge (has_edge), link it as p's
    last child, store the edge's maps (state_maps int [2, N], actor_map int [N, A]: -1 rows where
    it has none) and record its edges from row `start` (`_add_edges`; room assumed); a root's maps
    are -1. Returns the new number of edges."""
    N, A = legal.shape[1], legal.shape[2]
    parent[i] = p
    expanded[i] = False
    depth[i] = 0 if p < 0 else depth[p] + 1
    prob[i] = prob_i
    kind[i] = kind_i
    actor[i] = actor_i
    for j in range(2):
        for s in range(N):
            possible[i, j, s] = possible_i[j, s]
    for s in range(N):
        for a in range(A):
            present[i, s, a] = False
            legal[i, s, a] = kind_i == DECISION and legal_mask[s, a] and possible_i[actor_i, s]
    first[i] = first_i
    first_child[i] = next_sibling[i] = last_child[i] = -1
    edge_start[i] = start
    k = start
    for j in range(2):
        for s in range(N):
            in_state_maps[i, j, s] = state_maps[j, s]
    for s in range(N):
        for a in range(A):
            in_actor_map[i, s, a] = actor_map[s, a]
    if has_edge:
        if last_child[p] < 0:
            first_child[p] = i
        else:
            next_sibling[last_child[p]] = i
        last_child[p] = i
        k = _add_edges(p, i, start, kind, actor, in_actor_map, in_state_maps, legal, possible, present, e_child,
                       e_player, e_src, e_dst, e_action)
    edge_start[i + 1] = k
    return k


@numba.njit(cache=True)
def _add_edges(p, c, start, kind, actor, in_actor_map, in_state_maps, legal, possible, present,
               e_child, e_player, e_src, e_dst, e_action):
    """Write the edges of parent p -> child c from row `start` of the edge table (room for N * A + N
    rows assumed): player 0's, then player 1's; the actor's at a decision node for its legal (slot,
    action) pairs that reach c, in (slot, action) order (marking them present), another player's
    for its possible slots that map to c, in slot order. Returns the new number of edges."""
    N, A = legal.shape[1], legal.shape[2]
    k = start
    for i in range(2):
        if kind[p] == DECISION and actor[p] == i:
            for s in range(N):
                for a in range(A):
                    if in_actor_map[c, s, a] >= 0 and legal[p, s, a]:
                        e_player[k], e_src[k], e_dst[k], e_action[k] = i, s, in_actor_map[c, s, a], a
                        present[p, s, a] = True
                        e_child[k] = c
                        k += 1
        else:
            for s in range(N):
                if in_state_maps[c, i, s] >= 0 and possible[p, i, s]:
                    e_player[k], e_src[k], e_dst[k], e_action[k] = i, s, in_state_maps[c, i, s], -1
                    e_child[k] = c
                    k += 1
    return k


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
    payoffs: np.ndarray | None     # float [T, N, N] player 0's payoff per slot pair; None for a
                                   # game without dense payoffs (`Game.terminal_values` instead)
    frontier: np.ndarray           # int [F] positions
    decision: np.ndarray           # int [n_dec] positions of internal decision nodes
    prob: np.ndarray               # float [n]: chance probability of the edge from the parent (1
                                   # below decision nodes and at roots)
    action_in: np.ndarray | None   # int [n]: the action into each node from its decision parent, -1
                                   # below chance nodes and at roots; None unless slot_preserving
    _edge_table: tuple | None      # (edge table by child node id, its per-node starts): `edges`' input

    @property
    def depth(self) -> int:
        return len(self.level_bounds) - 1

    @property
    def slot_preserving(self) -> bool:
        """Whether every edge keeps its slot (see the module doc): solvers then use rows, not edges."""
        return self.action_in is not None

    def release_edges(self) -> None:
        """Drop the edge table (`edges`' input: 17 bytes a slot edge, about 2N a public state in
        poker, kept alive with the public tree's edge arrays it views) of a slot-preserving tree,
        whose row passes never read it; `edges` is then an error."""
        if not self.slot_preserving:
            raise ValueError("release_edges: the tree does not keep slots; its passes read the edges")
        self._edge_table = None

    @functools.cached_property
    def edges(self) -> list[dict]:
        """Per depth d >= 1 (index 0 None): the slot-to-slot edges src, dst, pol, w (see the
        module doc), built a depth at a time on first use (their int64 intermediates are one
        depth's)."""
        if self._edge_table is None:
            raise ValueError("edges: the edge table was released (`release_edges`)")
        edge, edge_start = self._edge_table
        N, A, n = self.num_states, self.num_actions, self.num_nodes
        slot_index, pol_index = index_dtype(n * 2 * N), index_dtype(n * N * A + 1)
        b, out = self.level_bounds, [None]
        for d in range(1, self.depth):   # a depth's edges, by child position (ids ascend within a depth)
            ids = self.node_of[b[d]:b[d + 1]]
            idx = _ranges(edge_start[ids], edge_start[ids + 1] - edge_start[ids])
            child = self.pos_of[edge["child"][idx]]
            par = self.parent[child]
            player, act, e_src = edge["player"][idx], edge["action"][idx], edge["src"][idx]
            out.append(dict(
                src=((par * 2 + player) * N + e_src).astype(slot_index),
                dst=((child * 2 + player) * N + edge["dst"][idx]).astype(slot_index),
                pol=np.where(act >= 0, (par * N + e_src) * A + act, n * N * A).astype(pol_index),
                w=self.prob[child]))
        return out

    def pub(self, position: int):
        return self._pubs[position]


def compile_tree(tree: PublicTree) -> CompiledTree:
    """Renumber `tree` by depth and build the per-depth edge lists (see module doc)."""
    n, m = tree.size, tree.num_edges
    return _compile(tree.game, tree.pubs, dict(
        depth=tree.depth[:n], parent=tree.parent[:n], kind=tree.kind[:n], actor=tree.actor[:n],
        prob=tree.prob[:n], leaf=tree.is_leaf(), legal=tree.legal[:n], present=tree.present[:n],
        possible=tree.possible[:n]),
        np.asarray(tree.roots), dict(child=tree.e_child[:m], player=tree.e_player[:m], src=tree.e_src[:m],
                                     dst=tree.e_dst[:m], action=tree.e_action[:m]))


def index_dtype(size: int) -> type:
    """The dtype of indices into an array of `size` items: int32 for large arrays that int32
    can index (memory: a 52-card turn subgame's tables), int64 otherwise, small arrays
    included (numpy casts int32 indices to int64 on every bincount and gather, which cost
    Leduc's oracle subgames 1.4x in their passes)."""
    return np.int32 if 2**20 <= size < 2**31 else np.int64


def _compile(game: Game, pubs: Sequence, node: dict, roots: np.ndarray, edge: dict,
             payoffs: np.ndarray | None = None) -> CompiledTree:
    """`compile_tree` from node arrays (depth, parent, kind, actor, prob, leaf, legal, present,
    possible; indexed by node id), the root ids and the edge table (child, player, src, dst,
    action; see `PublicTree`); payoffs [T, N, N] of the terminals in position order if known.
    The edge lists are built a depth at a time (their int64 intermediates are one depth's)."""
    N, A = game.spec.num_states, game.spec.num_actions
    n = len(node["depth"])
    node_of = np.argsort(node["depth"], kind="stable")
    pos_of = np.empty(n, dtype=np.int64)
    pos_of[node_of] = np.arange(n)
    depth = node["depth"][node_of]
    D = int(depth.max()) + 1
    level_bounds = np.searchsorted(depth, np.arange(D + 1))
    pubs = [pubs[i] for i in node_of]
    kind = node["kind"][node_of]
    actor = node["actor"][node_of]
    par_of = node["parent"][node_of]
    parent = np.where(par_of >= 0, pos_of[par_of], -1)
    leaf = node["leaf"][node_of]
    # only actions whose child is in the tree are legal at an internal decision node
    legal = node["legal"][node_of] & (node["present"][node_of] | leaf[:, None, None])
    possible = node["possible"][node_of]
    terminals = np.flatnonzero(kind == TERMINAL)
    if payoffs is None:
        payoffs = _payoffs(game, [pubs[t] for t in terminals])
    frontier = np.flatnonzero(leaf & (kind != TERMINAL))

    if np.any(np.diff(edge["child"]) < 0):   # (PublicTree's and FullSubtrees' come ordered by child)
        order = np.argsort(edge["child"], kind="stable")
        edge = {k: v[order] for k, v in edge.items()}
    edge_start = np.searchsorted(edge["child"], np.arange(n + 1))
    action_in = _slot_actions(node, edge, game.spec.num_actions)
    ct = CompiledTree(
        game=game, num_nodes=n, num_states=N, num_actions=A, node_of=node_of, pos_of=pos_of,
        level_bounds=level_bounds, kind=kind, actor=actor, parent=parent, legal=legal,
        possible=possible, roots=np.sort(pos_of[roots]), terminals=terminals,
        payoffs=payoffs, frontier=frontier, decision=np.flatnonzero((kind == DECISION) & ~leaf),
        prob=np.where(parent >= 0, node["prob"][node_of], 1.0),
        action_in=None if action_in is None else action_in[node_of], _edge_table=(edge, edge_start))
    ct._pubs = pubs
    return ct


def _slot_actions(node: dict, edge: dict, num_actions: int) -> np.ndarray | None:
    """int [n] by node id: the action into each node from its decision parent (-1 elsewhere) if
    the tree keeps slots (see the module doc), else None. Node arrays and the edge table (by
    child) as `_compile`'s. Keeping slots: every edge has src == dst; every child of a
    decision node has actor edges of one action a, one per legal (slot, a) of its parent, and
    no sibling has the same action; the other (child, player)'s edges reach every possible
    slot of the child (edges leave possible parent slots only, so the child's possible
    slots are among its parent's)."""
    n = len(node["depth"])
    child, player, act = edge["child"], edge["player"], edge["action"]
    if not np.array_equal(edge["src"], edge["dst"]):
        return None
    parent, kind = node["parent"], node["kind"]
    is_act = act >= 0
    action_in = np.full(n, -1, dtype=np.int64)
    action_in[child[is_act]] = act[is_act]
    if np.any(action_in[child[is_act]] != act[is_act]):
        return None                                        # a child reached by two actions
    below = np.flatnonzero(parent >= 0)
    dec_child = below[kind[parent[below]] == DECISION]
    par, a = parent[dec_child], action_in[dec_child]
    if np.any(a < 0) or len(np.unique(par * num_actions + a)) != len(dec_child):
        return None
    actor_edges = np.bincount(child[is_act], minlength=n)[dec_child]
    if np.any(actor_edges != node["legal"][par, :, a].sum(-1)):
        return None
    possible = node["possible"]
    N = possible.shape[-1]
    oth = np.flatnonzero(~is_act)
    row = child[oth].astype(np.int64) * 2 + player[oth]    # (child, player) rows [n * 2]
    covered = np.bincount(row[possible.reshape(-1)[row * N + edge["dst"][oth]]], minlength=2 * n)
    other = np.zeros((n, 2), dtype=bool)
    other[below] = True
    other[dec_child, node["actor"][par]] = False
    want = possible.sum(-1).reshape(-1)
    return action_in if np.array_equal(covered[other.reshape(-1)], want[other.reshape(-1)]) else None


def _payoffs(game: Game, terminals: Sequence) -> np.ndarray | None:
    """float [T, N, N]: the payoff matrices of terminal public states (None when the game's
    solvers use `Game.terminal_values` instead: `Game.dense_payoffs` False)."""
    if not game.dense_payoffs:
        return None
    N = game.spec.num_states
    return np.stack([game.cached("payoff_matrix", pub) for pub in terminals]) if len(terminals) \
        else np.zeros((0, N, N))


def _ranges(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """int [sum counts]: the concatenated ranges [starts[i], starts[i] + counts[i])."""
    total = int(counts.sum())
    first = np.cumsum(counts) - counts
    return np.arange(total) - np.repeat(first - starts, counts)


class FullSubtrees:
    """The full subtrees below public states, each built once, and forests of them compiled
    by indexing (the exact oracle's forests: compiling them from scratch for every new batch
    of queried public states cost a third of a Scotland Yard search's time).

    One `PublicTree` holds every subtree built so far (a public state queried outside them
    adds its whole subtree as a new root); nodes are also numbered in depth-first preorder
    (`pre`, subtree `size`), so each subtree is a contiguous block.
    """

    def __init__(self, game: Game):
        self.game = game
        self.tree = PublicTree(game, [])
        self._indexed = 0

    def node(self, pub: Hashable) -> int:
        """The tree node of `pub`, its full subtree built if new."""
        tree = self.tree
        i = tree.index.get(pub)
        if i is None:
            i = tree.add_root(pub)
            tree.expand_all(start=i)
        return i

    def _index(self) -> None:
        """Preorder numbers, subtree sizes, per-node edge ranges, terminal payoffs."""
        tree, n, m = self.tree, self.tree.size, self.tree.num_edges
        parent, depth = tree.parent[:n], tree.depth[:n]
        levels = [np.flatnonzero(depth == d) for d in range(int(depth.max()) + 1)]
        size = np.ones(n, dtype=np.int64)
        for nodes in levels[:0:-1]:
            size += np.bincount(parent[nodes], size[nodes], minlength=n).astype(np.int64)
        pre = np.empty(n, dtype=np.int64)
        pre[levels[0]] = np.cumsum(size[levels[0]]) - size[levels[0]]
        for nodes in levels[1:]:   # siblings are consecutive node ids, in order
            par = parent[nodes]
            before = np.cumsum(size[nodes]) - size[nodes]
            first = np.ones(len(nodes), dtype=bool)
            first[1:] = par[1:] != par[:-1]
            group = np.maximum.accumulate(np.where(first, np.arange(len(nodes)), 0))
            pre[nodes] = pre[par] + 1 + before - before[group]
        self.pre, self.size = pre, size
        self.by_pre = np.argsort(pre)
        self.edge_start = np.searchsorted(tree.e_child[:m], np.arange(n + 1))
        self.leaf = tree.is_leaf()
        terminals = np.flatnonzero(tree.kind[:n] == TERMINAL)
        self.payoff_row = np.full(n, -1, dtype=np.int64)
        self.payoff_row[terminals] = np.arange(len(terminals))
        self.payoffs = _payoffs(self.game, [tree.pubs[t] for t in terminals])
        self._indexed = n

    def forest(self, pubs: Sequence[Hashable]) -> tuple[CompiledTree, np.ndarray]:
        """(the compiled forest of the full subtrees below `pubs`, in that order of roots;
        int [n]: the `tree` node of each of its positions)."""
        roots = np.array([self.node(p) for p in pubs], dtype=np.int64)
        if self._indexed != self.tree.size:
            self._index()
        tree, pre, size = self.tree, self.pre, self.size
        counts = size[roots]
        copy = np.repeat(np.arange(len(roots)), counts)
        local = np.arange(int(counts.sum()))
        sel = self.by_pre[_ranges(pre[roots], counts)]            # tree node per local id
        is_root = local == (np.cumsum(counts) - counts)[copy]
        parent = np.where(is_root, -1, local - (pre[sel] - pre[np.maximum(tree.parent[sel], 0)]))
        depth = tree.depth[sel] - tree.depth[roots][copy]
        starts, ends = self.edge_start[sel], self.edge_start[sel + 1]
        ecounts = np.where(is_root, 0, ends - starts)
        e = _ranges(starts, ecounts)
        node = dict(depth=depth, parent=parent, kind=tree.kind[sel], actor=tree.actor[sel],
                    prob=np.where(is_root, 1.0, tree.prob[sel]), leaf=self.leaf[sel], legal=tree.legal[sel],
                    present=tree.present[sel], possible=tree.possible[sel])
        edge = dict(child=np.repeat(local, ecounts), player=tree.e_player[e], src=tree.e_src[e],
                    dst=tree.e_dst[e], action=tree.e_action[e])
        order = np.argsort(depth, kind="stable")
        terminals = order[tree.kind[sel][order] == TERMINAL]
        payoffs = None if self.payoffs is None else self.payoffs[self.payoff_row[sel[terminals]]]
        ct = _compile(self.game, [tree.pubs[i] for i in sel], node, np.flatnonzero(is_root), edge,
                      payoffs)
        return ct, sel[ct.node_of]
