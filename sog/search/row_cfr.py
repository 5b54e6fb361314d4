"""CFR passes on a slot-preserving compiled tree as numba loops over its rows (poker).

On a slot-preserving tree (`sog.search.tree.CompiledTree.slot_preserving`) a private hand
stays itself below every public action and deal, so a child's reach is its parent's row
times its possible mask (and, for the actor below a decision node, the policy of the
action into it), and a parent's value is its children's rows summed. Here each stage of
a CFR pass is one compiled loop over the tree's positions, with no temporaries:

* `RowTree.propagate_ranges`: reach down, parents before children (positions ascend by depth);
* `RowTree.propagate_values`: counterfactual values up for the asked players only (an
  alternating update needs the updating player's), parents in decreasing position, each
  summing its children in increasing position;
* `RowTree.update`: the same pass, with the regret and average updates of each (decision row,
  slot) of the asked players done as soon as its value is known: the instantaneous regret of
  an entry is read straight from its child's value row (no q array), while the rows are in
  cache;
* `RowTree.fused_update`: the two passes with the leaf values between them, a block of subtrees
  at a time (hold'em's turn: the rivers' subtrees), so that a block's rows are still in cache
  from one stage to the next (the turn's ranges and values are 248 MB each: whole-tree stages
  stream them from memory). Threads take whole blocks.

The entries (the legal (decision row, slot, action) triples, ordered by row, slot,
action; float [E] arrays: `sog.search.cfr.Levels`) form groups, one per (row, slot). The
passes keep policies, regrets and averages in a *wide* layout [W] (`RowTree.to_wide`): the
rows whose groups all have the same 2 to 4 actions at every possible slot (poker's) as a row
[N] per action, so that a pass over such a decision row is one stream of slots that the
compiler vectorises (`_split_dense`, `_dense_row`); the others as their entries. Every
sum adds the same terms in the same order, starting from 0.0, as the numpy row passes
these loops replaced, so `CFRSolver`'s results are the same to the bit
(`tests/test_row_cfr.py`). With `sog.threads` set to k > 1 threads, a large pass is cut into
k pieces of slots (a slot's reach, values and its groups' regrets depend on that slot alone)
run side by side, the results again the same to the bit. Shapes: n positions, N slots,
A actions, m decision rows, G groups, E entries, W wide entries; ranges and values float [n, 2, N] in the
game's units (chips).
"""
from __future__ import annotations

import math
from collections.abc import Callable

import numba
import numpy as np

from sog import threads
from sog.search.tree import CompiledTree

MODES = {"cfr+": 0, "cfr": 1, "dcfr": 2}
PLAIN_ACTIONS = 4      # plain rows of 2 to this many actions per group can be dense (`RowTree.row_dense`)
MIN_SLOTS_PER_THREAD = 64      # a pass is split over threads only into pieces of at least this many slots
MIN_CELLS_PER_THREAD = 1 << 20  # ... and this many (position, slot) cells (the hold'em river subgame,
                                # 27 x 1326, is not split: 0.45 s for 1000 iterations on one thread,
                                # 0.78 s on two; the turn, 11,691 x 1326, goes 1.76x faster on two)
SUMMED_ROWS = 4                 # the up pass sums a node's children's rows this many at a time
BLOCK_POSITIONS = 64            # a block of `RowTree.fused_update` holds subtrees of this many positions or more
FUSED_MIN_CELLS = 1 << 20       # ... and a tree has blocks only from this many (position, slot) cells on


class RowTree:
    """The index arrays of the row passes, from a compiled slot-preserving tree and its entries.

    parent int [n], prob float [n]: each position's parent (-1 at roots) and the chance
      probability of the edge into it (1 below decision nodes and at roots);
    kid_start int [n + 1], kids int [n - R]: the children of position p, increasing, are
      kids[kid_start[p]:kid_start[p + 1]];
    dec_row int [n]: the decision row of each position (-1 off internal decision nodes);
      actor int [n]: its actor;
    row_pos int [m]: each decision row's position; row_grp int [m + 1]: its groups
      [row_grp[r], row_grp[r + 1]);
    grp_slot int [G]: each group's slot; grp_ent int [G + 1]: its entries
      [grp_ent[g], grp_ent[g + 1]);
    ent_action int8 [E]: each entry's action; child_of int [m, A]: the child each action of a
      decision row leads to (-1: none);
    same_mask bool [n]: whether a position's possible mask is its parent's (both players; not at
      roots): its rows are then its parent's, unmasked (their impossible slots are 0 already);
    row_dense bool [m]: the *plain* decision rows (every group has the same actions, into children
      with the row's possible mask; row_kid int [m, A] then: the child of the k-th action of each
      group) of 2 to PLAIN_ACTIONS actions with a group at every slot possible for their actor:
      their policies, regrets and averages are kept *dense*, a row
      [N] per action over all slots (0 at the impossible ones), so that the passes run over
      them as straight streams of slots that the compiler vectorises; row_na int [m]: a row's
      actions (in each group); row_w0 int [m]: where a row's entries start in a *wide* array
      [W] (`num_wide`): a dense row's action a at slot s at row_w0 + a N + s, any other row's
      entry e (`Levels` order) at e + wshift[row] (int [m]); wide_of_entry int [E]: each entry's
      place (`to_wide`, `from_wide`). The passes take policies, regrets and averages wide;
    everywhere int [n]: every position (the order of a whole pass);
    blocks: int [k] arrays, increasing, and top int [n - sum k]: the positions of each block and the
      others. A block is the subtrees of children of chance nodes with no chance node
      below them (hold'em's turn: the rivers' subtrees; the k-th children of all of them
      together, `_blocks`), gathered until it holds BLOCK_POSITIONS positions or more; block_of
      int [n] gives each position's (-1: the top). A block's rows fit in the processor's cache
      (the turn's: 243 positions, 5 MB), so `fused_update` runs its stages back to back. Trees of
      fewer than FUSED_MIN_CELLS (position, slot) cells have no blocks (everything is the top);
    unwritten bool [n, 2], reach_row int [n, 2] (trees with blocks): the leaves whose reach of a
      player is its parent's row (same possible mask, the player not moving into it), which
      `fused_update` does not write: their leaf values read it from row reach_row (the parent;
      elsewhere the position itself); all_written bool [n, 2]: none (the other passes).
    """

    def __init__(self, ct: CompiledTree, dec: np.ndarray, grp_row: np.ndarray, grp_slot: np.ndarray,
                 grp_start: np.ndarray, ent_action: np.ndarray):
        n, A = ct.num_nodes, ct.num_actions
        self.ct = ct
        self.parent = ct.parent.astype(np.int64)
        self.prob = ct.prob.astype(np.float64)
        below = np.flatnonzero(self.parent >= 0)
        self.kids = below[np.argsort(self.parent[below], kind="stable")]
        self.kid_start = np.searchsorted(self.parent[self.kids], np.arange(n + 1)).astype(np.int64)
        self.dec_row = np.full(n, -1, dtype=np.int64)
        self.dec_row[dec] = np.arange(len(dec))
        self.actor = ct.actor.astype(np.int64)
        self.row_pos = dec.astype(np.int64)
        self.row_grp = np.searchsorted(grp_row, np.arange(len(dec) + 1)).astype(np.int64)
        self.grp_slot = grp_slot.astype(np.int64 if len(grp_slot) < 2**20 else np.int32)
        self.grp_ent = np.append(grp_start, len(ent_action)).astype(np.int64)
        self.ent_action = np.asarray(ent_action, dtype=np.int8)
        self.child_of = np.full((len(dec), A), -1, dtype=np.int64)
        act = below[ct.action_in[below] >= 0]
        self.child_of[self.dec_row[self.parent[act]], ct.action_in[act]] = act
        self.same_mask = np.zeros(n, dtype=np.bool_)
        self.same_mask[below] = (ct.possible[below] == ct.possible[self.parent[below]]).all(axis=(1, 2))
        self.row_kid, plain = _plain_rows(self.row_grp, self.grp_ent, self.ent_action, self.child_of, self.same_mask)
        self._wide_layout(ct, grp_row, plain)
        self.everywhere = np.arange(n, dtype=np.int64)
        self.block_of = np.full(n, -1, dtype=np.int64)
        if n * ct.num_states >= FUSED_MIN_CELLS:
            self.block_of = _blocks(self.kid_start, self.kids, self.dec_row, BLOCK_POSITIONS)
        by_block = np.argsort(self.block_of, kind="stable")
        self.top, *self.blocks = np.split(by_block, np.cumsum(np.bincount(self.block_of + 1))[:-1])
        # a leaf's reach of a player who does not move into it, with its parent's possible mask, is
        # its parent's row: `fused_update` leaves it unwritten, its leaf values read the parent's
        leaf = self.kid_start[1:] == self.kid_start[:-1]
        self.reach_row = np.stack([np.arange(n), np.arange(n)], axis=1)
        self.unwritten = np.zeros((n, 2), dtype=np.bool_)
        if self.blocks:
            parent = np.maximum(self.parent, 0)
            for i in (0, 1):
                moves = (self.dec_row[parent] >= 0) & (self.actor[parent] == i)
                self.unwritten[:, i] = leaf & self.same_mask & ~moves
                self.reach_row[self.unwritten[:, i], i] = parent[self.unwritten[:, i]]
        self.all_written = np.zeros((n, 2), dtype=np.bool_)

    def _wide_layout(self, ct: CompiledTree, grp_row: np.ndarray, plain: np.ndarray) -> None:
        """row_dense, row_na, row_w0, wshift, num_wide, wide_of_entry (see the class doc), from the
        plain rows (bool [m], `_plain_rows`)."""
        N, m = ct.num_states, len(self.row_pos)
        first, last = self.grp_ent[self.row_grp[:-1]], self.grp_ent[self.row_grp[1:]]
        groups = np.diff(self.row_grp)
        self.row_na = np.zeros(m, dtype=np.int64)
        self.row_na[groups > 0] = self.grp_ent[self.row_grp[:-1][groups > 0] + 1] - first[groups > 0]
        possible = ct.possible[self.row_pos, self.actor[self.row_pos]].sum(axis=1)
        self.row_dense = plain & (self.row_na >= 2) & (self.row_na <= PLAIN_ACTIONS) & (groups == possible)
        size = np.where(self.row_dense, self.row_na * N, last - first)
        self.row_w0 = np.concatenate([[0], np.cumsum(size)[:-1]]).astype(np.int64)
        self.num_wide = int(size.sum())
        self.wshift = self.row_w0 - first
        self.wide_of_entry = np.empty(int(self.grp_ent[-1]), dtype=np.int32 if self.num_wide < 2**31 else np.int64)
        _wide_of_entry(np.asarray(grp_row, dtype=np.int64), self.grp_ent, self.grp_slot, self.row_dense, self.row_w0,
                       self.wshift, N, self.wide_of_entry)

    def to_wide(self, entries: np.ndarray) -> np.ndarray:
        """float [W]: entries [E] in the wide layout (0 at the dense rows' impossible slots)."""
        out = np.zeros(self.num_wide)
        out[self.wide_of_entry] = entries
        return out

    def from_wide(self, wide: np.ndarray) -> np.ndarray:
        """float [E]: the entries of a wide array [W]."""
        return wide[self.wide_of_entry]

    def fused_update(self, stale: tuple[int, ...], players: tuple[int, ...], algorithm: str, t: float,
                     factors: tuple[float, float, float], sigma: np.ndarray, root_ranges: np.ndarray,
                     ranges: np.ndarray, values: np.ndarray, regrets: np.ndarray, avg: np.ndarray,
                     leaf_values: Callable[[int], None], matched: bool = False) -> None:
        """`propagate_ranges` of the `stale` players into ranges, then `update` of `players`, a block
        at a time (`blocks`), with a block's rows still in cache from one stage to the next: the
        top's ranges; then, for each block b (side by side on `sog.threads`, a block to a thread at
        a time), its ranges, leaf_values(b) (which must write the values of `players` at the
        leaves of block b, reading a leaf's reach from `reach_row`), its values and updates; then
        leaf_values(-1) (the top's leaves) and the top's values and updates. Each position's rows
        and each group's updates are the same arithmetic as the three passes', so the results are
        the same to the bit. The `unwritten` rows are left as they were (`fill_unwritten`). With
        matched, sigma is the regrets (see `update`)."""
        N = self.ct.num_states
        down = (root_ranges, self.ct.possible, *self._layout(), sigma, matched, _mask(stale), self.unwritten, ranges)
        up = (self.ct.possible, *self._layout(), sigma, matched, _mask(players), False, MODES[algorithm], float(t),
              factors[0], factors[1], factors[2], ranges, regrets, avg, values)
        _down(self.ct.roots.astype(np.int64), *down, self.top, 0, N)
        no_roots = np.empty(0, dtype=np.int64)
        left = iter(range(len(self.blocks)))     # (shared: each piece takes the next block left)

        def piece() -> None:
            for b in left:
                _down(no_roots, *down, self.blocks[b], 0, N)
                leaf_values(b)
                _up(*up, self.blocks[b], 0, N)

        threads.run([piece] * min(threads.parts(), len(self.blocks)) or [piece])
        leaf_values(-1)
        _up(*up, self.top, 0, N)

    def _layout(self) -> tuple:
        """The index arrays every pass reads (`_down`, `_up`)."""
        return (self.kid_start, self.kids, self.prob, self.same_mask, self.dec_row, self.actor, self.row_grp,
                self.grp_slot, self.grp_ent, self.ent_action, self.child_of, self.row_kid, self.row_dense, self.row_na,
                self.row_w0, self.wshift)

    def fill_unwritten(self, ranges: np.ndarray) -> None:
        """ranges [n, 2, N] after `fused_update`: the `unwritten` rows copied from their `reach_row`."""
        for i in (0, 1):
            at = np.flatnonzero(self.unwritten[:, i])
            ranges[at, i] = ranges[self.reach_row[at, i], i]

    def propagate_ranges(self, sigma: np.ndarray, root_ranges: np.ndarray, out: np.ndarray | None = None,
                         players: tuple[int, ...] = (0, 1), matched: bool = False) -> np.ndarray:
        """float [n, 2, N] (`out` if given, else new): reach of every slot under the policy sigma
        [W] (wide, `to_wide`; with matched: the regret matching of regrets sigma [W], matched where read), the
        roots' set to root_ranges [R, 2, N] at their possible slots; only the rows of `players` are
        written (a player's reach depends on its own policy alone). An `out` must be zeros, or a
        buffer of earlier passes of this tree (`_down`: the slots with no action into them)."""
        ct = self.ct
        ranges = np.zeros((ct.num_nodes, 2, ct.num_states)) if out is None else out
        args = (ct.roots.astype(np.int64), np.ascontiguousarray(root_ranges, dtype=np.float64), ct.possible,
                *self._layout(), sigma, matched, _mask(players), self.all_written, ranges, self.everywhere)
        threads.run([lambda lo=lo, hi=hi: _down(*args, lo, hi) for lo, hi in self._pieces()])
        return ranges

    def _pieces(self) -> list[tuple[int, int]]:
        """The slot ranges a pass is split into (`sog.threads`): pieces of at least MIN_SLOTS_PER_THREAD
        slots and MIN_CELLS_PER_THREAD (position, slot) cells, or one (a small pass costs less
        than handing it to another thread)."""
        N, n = self.ct.num_states, self.ct.num_nodes
        return threads.bounds(N, min(threads.parts(), N // MIN_SLOTS_PER_THREAD, n * N // MIN_CELLS_PER_THREAD) or 1)

    def propagate_values(self, sigma: np.ndarray, values: np.ndarray, players: tuple[int, ...] = (0, 1),
                         best_response: bool = False) -> np.ndarray:
        """Counterfactual values up the tree for `players`, in place on values [n, 2, N] (their
        leaf values set; other players' rows are left as they are). The actor's value is
        sigma . q (sigma [W], wide: `to_wide`), or its best q when `best_response`."""
        none = np.empty(0)
        args = (self.ct.possible, *self._layout(), sigma, False, _mask(players), best_response, -1, 0.0, 0.0, 0.0, 0.0,
                values, none, none, values, self.everywhere)
        threads.run([lambda lo=lo, hi=hi: _up(*args, lo, hi) for lo, hi in self._pieces()])
        return values

    def action_values(self, values: np.ndarray) -> np.ndarray:
        """float [E]: q, each entry's child value of the actor (values [n, 2, N] after the up pass)."""
        q = np.empty(len(self.ent_action))
        _action_values(self.row_pos, self.actor, self.row_grp, self.grp_slot, self.grp_ent, self.ent_action,
                       self.child_of, values, q)
        return q

    def update(self, players: tuple[int, ...], algorithm: str, t: float, factors: tuple[float, float, float],
               sigma: np.ndarray, ranges: np.ndarray, values: np.ndarray, regrets: np.ndarray,
               avg: np.ndarray, matched: bool = False) -> None:
        """`propagate_values` of `players` (their leaf values set in values [n, 2, N]) and, at the
        entries of their decision rows, in place: regrets and averages [W] (wide: `to_wide`) by
        `algorithm` at iteration t (dcfr: factors = the positive and negative regrets' and the
        average's discounts; unused otherwise) from the pass's policy sigma [W] (read only) and
        ranges [n, 2, N]. With matched, sigma is regrets itself: the policy is its regret
        matching, taken where read (before each group's update), and not stored (no policy
        array: a third less of the entries' traffic)."""
        args = (self.ct.possible, *self._layout(), sigma, matched, _mask(players), False, MODES[algorithm], float(t),
                factors[0], factors[1], factors[2], ranges, regrets, avg, values, self.everywhere)
        threads.run([lambda lo=lo, hi=hi: _up(*args, lo, hi) for lo, hi in self._pieces()])


@numba.njit(cache=True)
def _blocks(kid_start, kids, dec_row, min_positions):
    """block_of int [n]: the block of each position (-1: the top; see `RowTree.blocks`). The k-th
    children of the chance nodes go to the same block (in poker, the subtrees of one card dealt
    after different betting: their showdowns share a board, so `sog.games.poker` fills its lanes
    with them), and consecutive k are merged until a block holds min_positions positions."""
    n = len(kid_start) - 1
    chance_below = np.zeros(n, dtype=np.bool_)    # a chance node at or below a position
    size = np.ones(n, dtype=np.int64)             # the positions of its subtree
    for p in range(n - 1, -1, -1):
        chance_below[p] = dec_row[p] < 0 and kid_start[p + 1] > kid_start[p]
        for k in range(kid_start[p], kid_start[p + 1]):
            chance_below[p] = chance_below[p] or chance_below[kids[k]]
            size[p] += size[kids[k]]
    key = np.full(n, -1, dtype=np.int64)          # a block's subtree root: which child it is
    per_key = np.zeros(n, dtype=np.int64)         # the positions of the subtrees of each key
    for p in range(n):
        if dec_row[p] < 0:
            for k in range(kid_start[p], kid_start[p + 1]):
                c = kids[k]
                if not chance_below[c]:
                    key[c] = k - kid_start[p]
                    per_key[key[c]] += size[c]
    block_of_key = np.full(n, -1, dtype=np.int64)
    b, filled = -1, min_positions
    for k in range(n):
        if per_key[k] > 0:
            if filled >= min_positions:
                b, filled = b + 1, 0
            block_of_key[k] = b
            filled += per_key[k]
    block_of = np.full(n, -1, dtype=np.int64)
    for p in range(n):                            # (parents before children)
        for k in range(kid_start[p], kid_start[p + 1]):
            c = kids[k]
            block_of[c] = block_of[p] if block_of[p] >= 0 else block_of_key[key[c]] if key[c] >= 0 else -1
    return block_of


def _mask(players: tuple[int, ...]) -> np.ndarray:
    out = np.zeros(2, dtype=np.bool_)
    out[list(players)] = True
    return out


@numba.njit(cache=True, nogil=True, inline="always")
def _pos(x):
    """np.maximum(x, 0.0) to the bit (-0.0 and NaN kept)."""
    return x if (x >= 0.0 or math.isnan(x)) else 0.0


@numba.njit(cache=True, nogil=True, inline="always")
def _match(r, r0, k, sigma, e0):
    """sigma[e0:e0 + k] = the positive parts of a group's regrets r[r0:r0 + k] normalised
    (uniform where none is positive), the total summed in entry order from 0.0 as
    `np.bincount` does."""
    total = 0.0
    for a in range(k):
        total += _pos(r[r0 + a])
    uniform = 1.0 / float(k)
    for a in range(k):
        sigma[e0 + a] = _pos(r[r0 + a]) / total if total > 0 else uniform


@numba.njit(cache=True)
def match_groups(regrets, grp_start, out):
    """out [E]: `_match` of each group of entries (group g: [grp_start[g], grp_start[g + 1]), the last
    to the end): the current policy of regrets [E] (`sog.search.cfr.regret_matching_entries`)."""
    E, G = len(regrets), len(grp_start)
    for g in range(G):
        lo, hi = grp_start[g], grp_start[g + 1] if g + 1 < G else E
        _match(regrets, lo, hi - lo, out, lo)


@numba.njit(cache=True)
def _wide_of_entry(grp_row, grp_ent, grp_slot, row_dense, row_w0, wshift, N, out):
    """out[e]: entry e's place in the wide layout (`RowTree._wide_layout`): in a dense row r, the
    row's block row_w0[r] + (its action's rank in the group) x N + its group's slot; elsewhere
    e + wshift[r] (the row's entries in order). One loop, no [E] temporaries (a hold'em turn
    subgame has about 1,000 entries a public state)."""
    for g in range(len(grp_row)):
        r = grp_row[g]
        for e in range(grp_ent[g], grp_ent[g + 1]):
            out[e] = row_w0[r] + (e - grp_ent[g]) * N + grp_slot[g] if row_dense[r] else e + wshift[r]


@numba.njit(cache=True)
def _plain_rows(row_grp, grp_ent, ent_action, child_of, same_mask):
    """(row_kid int [m, A], plain bool [m]): see `RowTree.row_dense`."""
    m, A = child_of.shape
    row_kid = np.full((m, A), -1, dtype=np.int64)
    plain = np.zeros(m, dtype=np.bool_)
    for row in range(m):
        g0, g1 = row_grp[row], row_grp[row + 1]
        if g0 == g1:
            continue
        e0, na = grp_ent[g0], grp_ent[g0 + 1] - grp_ent[g0]
        ok = True
        for a in range(na):
            row_kid[row, a] = child_of[row, ent_action[e0 + a]]
            ok = ok and same_mask[row_kid[row, a]]
        for g in range(g0 + 1, g1):
            if not ok:
                break
            if grp_ent[g + 1] - grp_ent[g] != na:
                ok = False
                break
            for a in range(na):
                if ent_action[grp_ent[g] + a] != ent_action[e0 + a]:
                    ok = False
        plain[row] = ok
    return row_kid, plain


@numba.njit(cache=True, nogil=True)
def _groups_in(grp_slot, g0, g1, lo, hi, everything):
    """The groups [ga, gb) among a row's groups [g0, g1) (increasing slots) whose slot is in [lo, hi)."""
    if everything:
        return g0, g1
    return (g0 + np.searchsorted(grp_slot[g0:g1], lo), g0 + np.searchsorted(grp_slot[g0:g1], hi))


@numba.njit(cache=True, nogil=True)
def _down(roots, root_ranges, possible, kid_start, kids, prob, same_mask, dec_row, actor, row_grp, grp_slot,
          grp_ent, ent_action, child_of, row_kid, row_dense, row_na, row_w0, wshift, sigma, matched, players,
          unwritten, ranges, order, lo, hi):
    """ranges [n, 2, N], every row of the `players` (bool [2]) written: roots from root_ranges
    [R, 2, N] x possible; a child's rows its parent's x its possible mask (copied where that is
    its parent's: `RowTree.same_mask`), the actor's below a decision node x the policy (sigma
    [W], wide: `RowTree.to_wide`) of the action into it (a dense row, `RowTree.row_dense`: one
    stream of its slots writes every child whole, `_split_dense`). Below any other decision row
    the actor's rows are written only at the slots of its groups: every other slot of ranges
    must hold 0 already (impossible at the child, or no action into it: a zeroed buffer, which
    every pass leaves so). The rows unwritten (bool [n, 2]) are not written
    (`RowTree.unwritten`). With matched, sigma holds the regrets, regret-matched where read
    (`_policy_of`). The children of the positions order (int [k], increasing) are written (every
    position's: `RowTree.everywhere`). Only the slots [lo, hi) are read and written (a piece of
    a split pass, `sog.threads`)."""
    N = ranges.shape[2]
    everything = lo == 0 and hi == N
    pol = np.empty(child_of.shape[1], sigma.dtype)     # a group's policy (matched, off the dense rows)
    for k in range(len(roots)):
        r = roots[k]
        for i in range(2):
            if not players[i]:
                continue
            dst, src, mask = ranges[r, i, lo:hi], root_ranges[k, i, lo:hi], possible[r, i, lo:hi]
            for s in range(len(dst)):
                dst[s] = src[s] * mask[s]
    for j in range(len(order)):
        p = order[j]
        row = dec_row[p]
        mover = actor[p] if row >= 0 and players[actor[p]] else -1     # whose reach sigma moves here
        for k in range(kid_start[p], kid_start[p + 1]):
            c = kids[k]
            for i in range(2):
                if not players[i] or i == mover or unwritten[c, i]:
                    continue
                # (views of the piece's slots, looped from 0: a loop over range(lo, hi) indexes with
                # a sign check that keeps it from vectorising; a loop copies faster than a slice)
                src, dst = ranges[p, i, lo:hi], ranges[c, i, lo:hi]
                if same_mask[c]:
                    for s in range(len(dst)):
                        dst[s] = src[s]
                else:
                    mask = possible[c, i, lo:hi]
                    for s in range(len(dst)):
                        dst[s] = src[s] * mask[s]
        if mover < 0:
            continue
        i = mover
        if row_dense[row]:
            na, src = row_na[row], ranges[p, i, lo:hi]
            d0, d1, d2, d3 = _piece(_kid_rows(na, row_kid[row], ranges, i), lo, hi)
            w0, w1, w2, w3 = _wide_rows(na, row_w0[row], N, lo, hi, sigma)
            if na == 2:
                _split_dense(2, matched, src, d0, d1, d2, d3, w0, w1, w2, w3)
            elif na == 3:
                _split_dense(3, matched, src, d0, d1, d2, d3, w0, w1, w2, w3)
            else:
                _split_dense(4, matched, src, d0, d1, d2, d3, w0, w1, w2, w3)
            continue
        g0, g1 = _groups_in(grp_slot, row_grp[row], row_grp[row + 1], lo, hi, everything)
        shift = wshift[row]
        for g in range(g0, g1):
            s = grp_slot[g]
            e0, e1 = grp_ent[g], grp_ent[g + 1]
            group = _group_policy(e0 + shift, e1 + shift, sigma, matched, pol)
            for e in range(e0, e1):
                c = child_of[row, ent_action[e]]
                ranges[c, i, s] = ranges[p, i, s] * possible[c, i, s] * group[e - e0]


@numba.njit(cache=True, nogil=True, inline="always")
def _kid_rows(na, kid, rows, i):
    """Player i's rows [N] of rows [n, 2, N] at the first four children kid[0], kid[1], ... of a
    dense row (PLAIN_ACTIONS) or of a sum (SUMMED_ROWS) (the first child's again past na)."""
    return (rows[kid[0], i], rows[kid[1 if na > 1 else 0], i], rows[kid[2 if na > 2 else 0], i],
            rows[kid[3 if na > 3 else 0], i])


@numba.njit(cache=True, nogil=True, inline="always")
def _piece(rows, lo, hi):
    """The slots [lo, hi) of four rows."""
    return rows[0][lo:hi], rows[1][lo:hi], rows[2][lo:hi], rows[3][lo:hi]


@numba.njit(cache=True, nogil=True, inline="always")
def _wide_rows(na, w0, N, lo, hi, wide):
    """The slots [lo, hi) of the first four action rows of the dense row whose entries start at
    w0 in a wide array (`RowTree.row_w0`; the first action's again past na)."""
    a1, a2, a3 = (1 if na > 1 else 0) * N, (2 if na > 2 else 0) * N, (3 if na > 3 else 0) * N
    return wide[w0 + lo:w0 + hi], wide[w0 + a1 + lo:w0 + a1 + hi], wide[w0 + a2 + lo:w0 + a2 + hi], \
        wide[w0 + a3 + lo:w0 + a3 + hi]


@numba.njit(cache=True, nogil=True, inline="always")
def _split_dense(na, matched, src, d0, d1, d2, d3, w0, w1, w2, w3):
    """The actor's reach at the children of a dense decision row (2 <= na <= 4 actions,
    `RowTree.row_dense`; slot views): src[s] x the policy of each action at s (`_policy_of` of
    its rows w0 .. w3 of sigma), into that action's child row d0 .. d3, at every slot (0 at the
    impossible ones, where src is 0). Inlined with a literal na, one loop over the slots that the
    compiler vectorises."""
    for s in range(len(src)):
        x = src[s]
        p0, p1, p2, p3 = _policy_of(na, matched, w0[s], w1[s], w2[s], w3[s])
        d0[s] = x * p0
        d1[s] = x * p1
        if na > 2:
            d2[s] = x * p2
        if na > 3:
            d3[s] = x * p3


@numba.njit(cache=True, nogil=True, inline="always")
def _policy_of(na, matched, w0, w1, w2, w3):
    """The policy of na (2 to 4) actions at one slot: w0 .. w3 (past na: 0), or with matched the
    regret matching of regrets w0 .. w3 (`_match`'s arithmetic, so its bits)."""
    w2 = w2 if na > 2 else 0.0
    w3 = w3 if na > 3 else 0.0
    if not matched:
        return w0, w1, w2, w3
    return _normalised(na, _pos(w0), _pos(w1), _pos(w2), _pos(w3))


@numba.njit(cache=True, nogil=True, inline="always")
def _normalised(na, r0, r1, r2, r3):
    """The regret matching of a group of na (2 to 4) actions from its positive regrets r0 .. r3:
    each over their total (summed from 0.0 in action order), uniform where it is 0 (`_match`)."""
    total = 0.0 + r0
    total += r1
    if na > 2:
        total += r2
    if na > 3:
        total += r3
    if total > 0:
        return r0 / total, r1 / total, r2 / total, r3 / total
    u = 1.0 / float(na)
    return u, u, (u if na > 2 else 0.0), (u if na > 3 else 0.0)


@numba.njit(cache=True, nogil=True, inline="always")
def _group_policy(e0, e1, sigma, matched, pol):
    """The policy of the group of entries [e0, e1): a view of sigma, or with matched the regret
    matching of regrets sigma[e0:e1] written into pol (`_match`)."""
    if not matched:
        return sigma[e0:e1]
    _match(sigma, e0, e1 - e0, pol, 0)
    return pol


@numba.njit(cache=True, nogil=True)
def _up(possible, kid_start, kids, prob, same_mask, dec_row, actor, row_grp, grp_slot, grp_ent, ent_action, child_of,
        row_kid, row_dense, row_na, row_w0, wshift, sigma, matched, players, best_response, mode, t, f_pos, f_neg,
        f_avg, ranges, regrets, avg, values, order, lo, hi):
    """values [n, 2, N] of the `players` (bool [2]) at every internal position, leaves' as given:
    the actor's at a decision node sum_a sigma q (sigma [W], wide: `RowTree.to_wide`; or max
    over legal q; 0 at slots with no legal action), every other row its children's rows x their
    chance probabilities, in child order. With mode >= 0 (`_update_group`), each of the actor's
    groups is updated once its value is known (ranges, regrets [W], avg [W] unused otherwise);
    a dense row (`RowTree.row_dense`) in one stream of its slots (`_dense_row`). The positions
    order (int [k], increasing) are computed, in decreasing order (every position:
    `RowTree.everywhere`). With matched, sigma holds the regrets, regret-matched where read
    (`_policy_of`, before a group's update); no policy is written. Only the slots [lo, hi) (and
    the groups of those slots) are read and written (a piece of a split pass, `sog.threads`)."""
    N = values.shape[2]
    A = child_of.shape[1]
    everything = lo == 0 and hi == N
    q = np.empty(A)                      # a group's child values, in entry order
    pol = np.empty(A, sigma.dtype)       # a group's policy (matched, off the dense rows)
    for j in range(len(order) - 1, -1, -1):
        p = order[j]
        k0, k1 = kid_start[p], kid_start[p + 1]
        if k0 == k1:
            continue
        row = dec_row[p]
        for i in range(2):
            if not players[i]:
                continue
            if row >= 0 and actor[p] == i:
                if row_dense[row]:
                    na, w, live = row_na[row], row_w0[row], possible[p, i, lo:hi]
                    own, dst = ranges[p, i, lo:hi], values[p, i, lo:hi]
                    c0, c1, c2, c3 = _piece(_kid_rows(na, row_kid[row], values, i), lo, hi)
                    g0, g1, g2, g3 = _wide_rows(na, w, N, lo, hi, sigma)
                    # (without updates, regrets and avg are empty: views of sigma stand in, unused)
                    r0, r1, r2, r3 = _wide_rows(na, w, N, lo, hi, regrets if mode >= 0 else sigma)
                    a0, a1, a2, a3 = _wide_rows(na, w, N, lo, hi, avg if mode >= 0 else sigma)
                    if mode == 0 and na == 2:
                        _dense_row(2, 0, False, matched, live, own, dst, c0, c1, c2, c3, g0, g1, g2, g3, r0, r1, r2,
                                   r3, a0, a1, a2, a3, t, f_pos, f_neg, f_avg)
                    elif mode == 0 and na == 3:
                        _dense_row(3, 0, False, matched, live, own, dst, c0, c1, c2, c3, g0, g1, g2, g3, r0, r1, r2,
                                   r3, a0, a1, a2, a3, t, f_pos, f_neg, f_avg)
                    elif mode == 0:
                        _dense_row(4, 0, False, matched, live, own, dst, c0, c1, c2, c3, g0, g1, g2, g3, r0, r1, r2,
                                   r3, a0, a1, a2, a3, t, f_pos, f_neg, f_avg)
                    else:
                        _dense_row(na, mode, best_response, matched, live, own, dst, c0, c1, c2, c3, g0, g1, g2, g3,
                                   r0, r1, r2, r3, a0, a1, a2, a3, t, f_pos, f_neg, f_avg)
                    continue
                values[p, i, lo:hi] = 0.0
                g0, g1 = _groups_in(grp_slot, row_grp[row], row_grp[row + 1], lo, hi, everything)
                shift = wshift[row]
                for g in range(g0, g1):
                    s = grp_slot[g]
                    e0, e1 = grp_ent[g], grp_ent[g + 1]
                    for e in range(e0, e1):
                        q[e - e0] = values[child_of[row, ent_action[e]], i, s]
                    group = _group_policy(e0 + shift, e1 + shift, sigma, matched, pol)
                    x = -np.inf if best_response else 0.0
                    for e in range(e0, e1):
                        if best_response:
                            x = max(x, q[e - e0])
                        else:
                            x += group[e - e0] * q[e - e0]
                    values[p, i, s] = x
                    if mode >= 0:
                        _update_group(e0 + shift, e1 + shift, q, x, ranges[p, i, s], group, mode, t, f_pos, f_neg,
                                      f_avg, regrets, avg)
                continue
            dst = values[p, i]
            for k in range(k0, k1, SUMMED_ROWS):      # children's terms SUMMED_ROWS at a time, in order
                nk = min(k1 - k, SUMMED_ROWS)
                c0, c1, c2, c3 = _kid_rows(nk, kids[k:], values, i)
                w0, w1, w2, w3 = _kid_probs(nk, kids[k:], prob)
                if nk == 4:
                    _add_rows(4, k == k0, dst, c0, c1, c2, c3, w0, w1, w2, w3, lo, hi)
                elif nk == 3:
                    _add_rows(3, k == k0, dst, c0, c1, c2, c3, w0, w1, w2, w3, lo, hi)
                elif nk == 2:
                    _add_rows(2, k == k0, dst, c0, c1, c2, c3, w0, w1, w2, w3, lo, hi)
                else:
                    _add_rows(1, k == k0, dst, c0, c1, c2, c3, w0, w1, w2, w3, lo, hi)


@numba.njit(cache=True, nogil=True, inline="always")
def _kid_probs(na, kid, prob):
    """The chance probabilities of the first SUMMED_ROWS (= 4) children kid[0], kid[1], ... (the
    first child's again past na), as `_kid_rows` takes their rows."""
    return prob[kid[0]], prob[kid[1 if na > 1 else 0]], prob[kid[2 if na > 2 else 0]], prob[kid[3 if na > 3 else 0]]


@numba.njit(cache=True, nogil=True, inline="always")
def _add_rows(na, first, dst, c0, c1, c2, c3, w0, w1, w2, w3, lo, hi):
    """dst[lo:hi] (0.0 where first) plus, in order, the na (1 to 4) rows c0 .. c3 x their weights
    w0 .. w3: one sweep for what na in-place additions of a row would do, to the bit (views
    looped from 0, so that it vectorises: see `_down`)."""
    d, a0, a1, a2, a3 = dst[lo:hi], c0[lo:hi], c1[lo:hi], c2[lo:hi], c3[lo:hi]
    for s in range(len(d)):
        x = 0.0 if first else d[s]
        x += a0[s] * w0
        if na > 1:
            x += a1[s] * w1
        if na > 2:
            x += a2[s] * w2
        if na > 3:
            x += a3[s] * w3
        d[s] = x


@numba.njit(cache=True, nogil=True, inline="always")
def _dense_row(na, mode, best_response, matched, live, own, dst, c0, c1, c2, c3, g0, g1, g2, g3, r0, r1, r2, r3,
               a0, a1, a2, a3, t, f_pos, f_neg, f_avg):
    """The actor's value and updates at a dense decision row (2 <= na <= 4 actions,
    `RowTree.row_dense`; slot views): at each slot s, the child values q_a = c0[s] .. c3[s]
    (the actor's rows of the children), the policy p_a of the rows g0 .. g3 of sigma
    (`_policy_of`), the value dst[s] = sum_a p_a q_a (or max_a q_a with best_response; 0 where
    live, the actor's possible mask, is not), and with mode >= 0 `_updated`'s updates of the
    regrets r0 .. r3 and averages a0 .. a3 with its reach own[s]. The same arithmetic in the
    same order as the groups' (`_update_group`), so the same bits; at impossible slots every
    term is 0 (the rows hold 0 there) and so stays the regret and average. Inlined with a literal
    na and mode (cfr+), one loop over the slots that the compiler vectorises: with matched the
    policy is read from r0 .. r3 themselves, so that the compiler sees the same arrays (it does
    not vectorise a loop whose loads may overlap its stores)."""
    if matched:
        _dense_slots(na, mode, best_response, True, live, own, dst, c0, c1, c2, c3, r0, r1, r2, r3, r0, r1, r2, r3,
                     a0, a1, a2, a3, t, f_pos, f_neg, f_avg)
    else:
        _dense_slots(na, mode, best_response, False, live, own, dst, c0, c1, c2, c3, g0, g1, g2, g3, r0, r1, r2, r3,
                     a0, a1, a2, a3, t, f_pos, f_neg, f_avg)


@numba.njit(cache=True, nogil=True, inline="always")
def _dense_slots(na, mode, best_response, matched, live, own, dst, c0, c1, c2, c3, g0, g1, g2, g3, r0, r1, r2, r3,
                 a0, a1, a2, a3, t, f_pos, f_neg, f_avg):
    """`_dense_row`'s loop."""
    for s in range(len(dst)):
        q0, q1 = c0[s], c1[s]
        q2 = c2[s] if na > 2 else 0.0
        q3 = c3[s] if na > 3 else 0.0
        p0, p1, p2, p3 = _policy_of(na, matched, g0[s], g1[s], g2[s], g3[s])
        if best_response:
            x = max(max(-np.inf, q0), q1)
            if na > 2:
                x = max(x, q2)
            if na > 3:
                x = max(x, q3)
        else:
            x = 0.0 + p0 * q0
            x += p1 * q1
            if na > 2:
                x += p2 * q2
            if na > 3:
                x += p3 * q3
        dst[s] = x if live[s] else 0.0
        if mode >= 0:
            o = own[s]
            r0[s], a0[s] = _updated(r0[s], a0[s], q0 - x, o, p0, mode, t, f_pos, f_neg, f_avg)
            r1[s], a1[s] = _updated(r1[s], a1[s], q1 - x, o, p1, mode, t, f_pos, f_neg, f_avg)
            if na > 2:
                r2[s], a2[s] = _updated(r2[s], a2[s], q2 - x, o, p2, mode, t, f_pos, f_neg, f_avg)
            if na > 3:
                r3[s], a3[s] = _updated(r3[s], a3[s], q3 - x, o, p3, mode, t, f_pos, f_neg, f_avg)


@numba.njit(cache=True, nogil=True, inline="always")
def _updated(r, a, inst, own, sigma, mode, t, f_pos, f_neg, f_avg):
    """(regret, average) of an entry after the updates of `CFRSolver` (mode 0 cfr+, 1 cfr, 2 dcfr)
    from its regret r and average a, its instantaneous regret inst, its actor's reach own and its
    policy sigma (before the update), each as its numpy form computes it."""
    if mode == 0:
        return _pos(r + inst), a + t * own * sigma
    if mode == 1:
        return r + inst, a + own * sigma
    return (r * f_pos if r > 0 else r * f_neg) + inst, a * f_avg + own * sigma


@numba.njit(cache=True, nogil=True, inline="always")
def _update_group(e0, e1, q, v, own, group, mode, t, f_pos, f_neg, f_avg, regrets, avg):
    """`_updated`'s updates at the entries [e0, e1) of regrets and avg (wide) of one group (a
    player's slot of a decision row: child values q[:e1 - e0], value v, reach own, policy
    group[:e1 - e0])."""
    for e in range(e0, e1):
        regrets[e], avg[e] = _updated(regrets[e], avg[e], q[e - e0] - v, own, group[e - e0], mode, t, f_pos, f_neg,
                                      f_avg)


@numba.njit(cache=True)
def _action_values(row_pos, actor, row_grp, grp_slot, grp_ent, ent_action, child_of, values, q):
    for row in range(len(row_pos)):
        i = actor[row_pos[row]]
        for g in range(row_grp[row], row_grp[row + 1]):
            s = grp_slot[g]
            for e in range(grp_ent[g], grp_ent[g + 1]):
                q[e] = values[child_of[row, ent_action[e]], i, s]
