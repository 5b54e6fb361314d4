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
* `RowTree.update`: the same pass, with the regret, average and current-policy (regret
  matching) updates of each (decision row, slot) of the asked players done as soon as its
  value is known: the instantaneous regret of an entry is read straight from its child's
  value row (no q array), while the rows are in cache;
* `RowTree.fused_update`: the two passes with the leaf values between them, a block of subtrees
  at a time (hold'em's turn: the rivers' subtrees), so that a block's rows are still in cache
  from one stage to the next (the turn's ranges and values are 248 MB each: whole-tree stages
  stream them from memory). Threads take whole blocks.

The entries (the legal (decision row, slot, action) triples, ordered by row, slot,
action; float [E] arrays: `sog.search.cfr.Levels`) form groups, one per (row, slot). Every
sum adds the same terms in the same order, starting from 0.0, as the numpy row passes
these loops replaced, so `CFRSolver`'s results are the same to the bit
(`tests/test_row_cfr.py`). With `sog.threads` set to k > 1 threads, a large pass is cut into
k pieces of slots (a slot's reach, values and its groups' regrets depend on that slot alone)
run side by side, the results again the same to the bit. Shapes: n positions, N slots,
A actions, m decision rows, G groups, E entries; ranges and values float [n, 2, N] in the
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
PLAIN_ACTIONS = 4      # plain rows of 2 to this many actions per group run the straight-line kernels
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
    row_plain bool [m]: whether every group of a decision row has the same actions, into
      children with the row's possible mask; row_kid int [m, A] then: the child of the k-th
      action of each group (a group's entries are then e0, e0 + 1, ... in that order);
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
        self.ent_action = ent_action.astype(np.int8)
        self.child_of = np.full((len(dec), A), -1, dtype=np.int64)
        act = below[ct.action_in[below] >= 0]
        self.child_of[self.dec_row[self.parent[act]], ct.action_in[act]] = act
        self.same_mask = np.zeros(n, dtype=np.bool_)
        self.same_mask[below] = (ct.possible[below] == ct.possible[self.parent[below]]).all(axis=(1, 2))
        self.row_kid, self.row_plain = _plain_rows(self.row_grp, self.grp_ent, self.ent_action, self.child_of,
                                                   self.same_mask)
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
        down = (root_ranges, self.ct.possible, self.kid_start, self.kids, self.same_mask, self.dec_row, self.actor,
                self.row_grp, self.grp_slot, self.grp_ent, self.ent_action, self.child_of, self.row_kid,
                self.row_plain, sigma, matched, _mask(stale), self.unwritten, ranges)
        up = (self.kid_start, self.kids, self.prob, self.dec_row, self.actor, self.row_grp, self.grp_slot,
              self.grp_ent, self.ent_action, self.child_of, self.row_kid, self.row_plain, sigma, matched,
              _mask(players), False, MODES[algorithm], float(t), factors[0], factors[1], factors[2], ranges, regrets,
              avg, values)
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

    def fill_unwritten(self, ranges: np.ndarray) -> None:
        """ranges [n, 2, N] after `fused_update`: the `unwritten` rows copied from their `reach_row`."""
        for i in (0, 1):
            at = np.flatnonzero(self.unwritten[:, i])
            ranges[at, i] = ranges[self.reach_row[at, i], i]

    def propagate_ranges(self, sigma: np.ndarray, root_ranges: np.ndarray, out: np.ndarray | None = None,
                         players: tuple[int, ...] = (0, 1), matched: bool = False) -> np.ndarray:
        """float [n, 2, N] (`out` if given, else new): reach of every slot under the policy sigma
        [E] (with matched: the regret matching of regrets sigma [E], matched where read), the
        roots' set to root_ranges [R, 2, N] at their possible slots; only the rows of `players` are
        written (a player's reach depends on its own policy alone). An `out` must be zeros, or a
        buffer of earlier passes of this tree (`_down`: the slots with no action into them)."""
        ct = self.ct
        ranges = np.zeros((ct.num_nodes, 2, ct.num_states)) if out is None else out
        args = (ct.roots.astype(np.int64), np.ascontiguousarray(root_ranges, dtype=np.float64), ct.possible,
                self.kid_start, self.kids, self.same_mask, self.dec_row, self.actor, self.row_grp,
                self.grp_slot, self.grp_ent, self.ent_action, self.child_of, self.row_kid, self.row_plain, sigma,
                matched, _mask(players), self.all_written, ranges, self.everywhere)
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
        sigma . q (sigma [E]), or its best q when `best_response`."""
        none = np.empty(0)
        args = (self.kid_start, self.kids, self.prob, self.dec_row, self.actor, self.row_grp, self.grp_slot,
                self.grp_ent, self.ent_action, self.child_of, self.row_kid, self.row_plain, sigma, False,
                _mask(players), best_response, -1, 0.0, 0.0, 0.0, 0.0, values, none, none, values, self.everywhere)
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
        entries of their decision rows, in place: regrets and averages [E] by `algorithm` at
        iteration t (dcfr: factors = the positive and negative regrets' and the average's
        discounts; unused otherwise) from the pass's sigma and ranges [n, 2, N], then sigma [E]
        set to the new regrets' regret matching. With matched, sigma is regrets itself: the policy
        is its regret matching, taken where read (before each group's update), and not stored
        (no [E] policy array: a third less of the entries' traffic)."""
        args = (self.kid_start, self.kids, self.prob, self.dec_row, self.actor, self.row_grp, self.grp_slot,
                self.grp_ent, self.ent_action, self.child_of, self.row_kid, self.row_plain, sigma, matched,
                _mask(players), False, MODES[algorithm], float(t), factors[0], factors[1], factors[2], ranges, regrets,
                avg, values, self.everywhere)
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
def _plain_rows(row_grp, grp_ent, ent_action, child_of, same_mask):
    """(row_kid int [m, A], row_plain bool [m]): see `RowTree`."""
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
def _down(roots, root_ranges, possible, kid_start, kids, same_mask, dec_row, actor, row_grp, grp_slot,
          grp_ent, ent_action, child_of, row_kid, row_plain, sigma, matched, players, unwritten, ranges, order, lo,
          hi):
    """ranges [n, 2, N], every row of the `players` (bool [2]) written: roots from root_ranges
    [R, 2, N] x possible; a child's rows its parent's x its possible mask (copied where that is
    its parent's: `RowTree.same_mask`), the actor's below a decision node x sigma of the action
    into it (on a plain row, `RowTree.row_plain`, one walk of its groups writes every child,
    unmasked). The actor's rows below a decision node are written only at the slots of its
    groups: every other slot of ranges must hold 0 already (impossible at the child, or no
    action into it: a zeroed buffer, which every pass leaves so). The rows unwritten (bool [n, 2]) are
    not written (`RowTree.unwritten`). With matched, sigma holds the regrets, regret-matched
    where read (`_policy`). The children of the positions order (int [k], increasing) are
    written (every position's: `RowTree.everywhere`). Only the slots [lo, hi) are read and
    written (a piece of a split pass, `sog.threads`)."""
    everything = lo == 0 and hi == ranges.shape[2]
    pol = np.empty(child_of.shape[1])     # a group's policy (matched, off the plain rows)
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
        g0, g1 = _groups_in(grp_slot, row_grp[row], row_grp[row + 1], lo, hi, everything)
        if row_plain[row]:
            if g1 == g0:
                continue
            na = grp_ent[g0 + 1] - grp_ent[g0]      # (every group of a plain row has as many)
            if 2 <= na <= PLAIN_ACTIONS:
                e, slots, src = grp_ent[g0], grp_slot[g0:g1], ranges[p, i]
                d0, d1, d2, d3 = _kid_rows(na, row_kid[row], ranges, i)
                if na == 2:
                    _split_plain_row(2, e, slots, sigma, matched, src, d0, d1, d2, d3)
                elif na == 3:
                    _split_plain_row(3, e, slots, sigma, matched, src, d0, d1, d2, d3)
                else:
                    _split_plain_row(na, e, slots, sigma, matched, src, d0, d1, d2, d3)
                continue
        for g in range(g0, g1):
            s = grp_slot[g]
            e0, e1 = grp_ent[g], grp_ent[g + 1]
            group = _group_policy(e0, e1, sigma, matched, pol)
            for e in range(e0, e1):
                c = child_of[row, ent_action[e]]
                ranges[c, i, s] = ranges[p, i, s] * possible[c, i, s] * group[e - e0]


@numba.njit(cache=True, nogil=True, inline="always")
def _kid_rows(na, kid, rows, i):
    """Player i's rows [N] of rows [n, 2, N] at the first four children kid[0], kid[1], ... of a
    plain row (PLAIN_ACTIONS) or of a sum (SUMMED_ROWS) (the first child's again past na)."""
    return (rows[kid[0], i], rows[kid[1 if na > 1 else 0], i], rows[kid[2 if na > 2 else 0], i],
            rows[kid[3 if na > 3 else 0], i])


@numba.njit(cache=True, nogil=True, inline="always")
def _split_plain_row(na, e, slots, sigma, matched, src, d0, d1, d2, d3):
    """The actor's reach at the children of a plain decision row (2 <= na <= 4 actions; `RowTree.row_plain`):
    for each group (slot s in slots, entries e, e + 1, ... e + na - 1), src[s] x the policy of each
    action (`_policy`), into that action's child row d0, d1, d2, d3 [N] (the actor's). Inlined with a
    literal na (2 and 3, the limit poker rows), the action loop unrolls and everything stays in
    registers."""
    for g in range(len(slots)):
        s = slots[g]
        x = src[s]
        s0, s1, s2, s3 = _policy(na, matched, sigma, e)
        d0[s] = x * s0
        d1[s] = x * s1
        if na > 2:
            d2[s] = x * s2
        if na > 3:
            d3[s] = x * s3
        e += na


@numba.njit(cache=True, nogil=True, inline="always")
def _policy(na, matched, sigma, e):
    """The policy of the group of na (2 to 4) entries e, e + 1, ...: sigma[e:e + na] (padded with
    zeros to four), or with matched the regret matching of regrets sigma[e:e + na] (`_match`'s
    arithmetic, so its bits)."""
    w0, w1 = sigma[e], sigma[e + 1]
    w2 = sigma[e + 2] if na > 2 else 0.0
    w3 = sigma[e + 3] if na > 3 else 0.0
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
def _up(kid_start, kids, prob, dec_row, actor, row_grp, grp_slot, grp_ent, ent_action, child_of, row_kid,
        row_plain, sigma, matched, players, best_response, mode, t, f_pos, f_neg, f_avg, ranges, regrets, avg, values,
        order, lo, hi):
    """values [n, 2, N] of the `players` (bool [2]) at every internal position, leaves' as given:
    the actor's at a decision node sum_a sigma q (or
    max over legal q; 0 at slots with no legal action), every other row its children's rows x
    their chance probabilities, in child order. With mode >= 0 (`_update_group`), each of the
    actor's groups is updated once its value is known (ranges, regrets, avg unused otherwise);
    on a plain row (`RowTree.row_plain`) of up to PLAIN_ACTIONS actions by `_plain_row`. The
    positions order (int [k], increasing) are computed, in decreasing order (every position:
    `RowTree.everywhere`). With matched, sigma holds the regrets, regret-matched where read
    (`_policy`, before a group's update) and no policy is written. Only the slots [lo, hi) (and
    the groups of those slots) are read and written (a piece of a split pass, `sog.threads`)."""
    N = values.shape[2]
    A = child_of.shape[1]
    everything = lo == 0 and hi == N
    q = np.empty(A)                      # a group's child values, in entry order
    pol = np.empty(A)                    # a group's policy (matched, off the plain rows)
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
                values[p, i, lo:hi] = 0.0
                plain = row_plain[row]
                g0, g1 = _groups_in(grp_slot, row_grp[row], row_grp[row + 1], lo, hi, everything)
                na = grp_ent[g0 + 1] - grp_ent[g0] if g1 > g0 else 0
                if plain and mode >= 0 and 2 <= na <= PLAIN_ACTIONS:
                    e, slots, own, dst = grp_ent[g0], grp_slot[g0:g1], ranges[p, i], values[p, i]
                    c0, c1, c2, c3 = _kid_rows(na, row_kid[row], values, i)
                    if na == 2 and mode == 0:
                        _plain_row(2, 0, e, slots, own, dst, c0, c1, c2, c3, t, f_pos, f_neg, f_avg, sigma, matched,
                                   regrets, avg)
                    elif na == 3 and mode == 0:
                        _plain_row(3, 0, e, slots, own, dst, c0, c1, c2, c3, t, f_pos, f_neg, f_avg, sigma, matched,
                                   regrets, avg)
                    else:
                        _plain_row(na, mode, e, slots, own, dst, c0, c1, c2, c3, t, f_pos, f_neg, f_avg, sigma,
                                   matched, regrets, avg)
                    continue
                for g in range(g0, g1):
                    s = grp_slot[g]
                    e0, e1 = grp_ent[g], grp_ent[g + 1]
                    for e in range(e0, e1):
                        c = row_kid[row, e - e0] if plain else child_of[row, ent_action[e]]
                        q[e - e0] = values[c, i, s]
                    group = _group_policy(e0, e1, sigma, matched, pol)
                    x = -np.inf if best_response else 0.0
                    for e in range(e0, e1):
                        if best_response:
                            x = max(x, q[e - e0])
                        else:
                            x += group[e - e0] * q[e - e0]
                    values[p, i, s] = x
                    if mode >= 0:
                        _update_group(e0, e1, q, x, ranges[p, i, s], group, mode, t, f_pos, f_neg, f_avg, regrets, avg)
                        if not matched:
                            _match(q, 0, e1 - e0, sigma, e0)
                continue
            dst = values[p, i]
            for k in range(k0, k1, SUMMED_ROWS):      # children's terms SUMMED_ROWS at a time, in order
                c0, c1, c2, c3 = _kid_rows(min(k1 - k, SUMMED_ROWS), kids[k:], values, i)
                w0, w1, w2, w3 = _kid_probs(min(k1 - k, SUMMED_ROWS), kids[k:], prob)
                if k1 - k >= 4:
                    _add_rows(4, k == k0, dst, c0, c1, c2, c3, w0, w1, w2, w3, lo, hi)
                elif k1 - k == 3:
                    _add_rows(3, k == k0, dst, c0, c1, c2, c3, w0, w1, w2, w3, lo, hi)
                elif k1 - k == 2:
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
def _plain_row(na, mode, e, slots, own, dst, c0, c1, c2, c3, t, f_pos, f_neg, f_avg, sigma, matched, regrets, avg):
    """The actor's value and updates at a plain decision row (2 <= na <= 4 actions; `RowTree.row_plain`):
    for each group (slot s in slots, entries e, e + 1, ... e + na - 1), its child values
    q_a = c0[s], c1[s], ... (the actor's rows [N] of the children, `_kid_rows`), its value
    dst[s] = sum_a sigma q_a and `_update_group`'s updates, with its reach own[s]. The same
    arithmetic in the same order as `_update_group`; the policy is `_policy`'s (with matched,
    of the regrets before the updates, and the new one is not stored). Inlined with a literal na
    and mode (cfr+ on the limit poker rows), the action loop unrolls and everything stays in
    registers."""
    for g in range(len(slots)):
        s = slots[g]
        q0, q1 = c0[s], c1[s]
        q2 = c2[s] if na > 2 else 0.0
        q3 = c3[s] if na > 3 else 0.0
        s0, s1, s2, s3 = _policy(na, matched, sigma, e)
        x = 0.0 + s0 * q0
        x += s1 * q1
        if na > 2:
            x += s2 * q2
        if na > 3:
            x += s3 * q3
        dst[s] = x
        o = own[s]
        r0 = _pos(_entry(e, q0 - x, o, s0, mode, t, f_pos, f_neg, f_avg, regrets, avg))
        r1 = _pos(_entry(e + 1, q1 - x, o, s1, mode, t, f_pos, f_neg, f_avg, regrets, avg))
        r2 = _pos(_entry(e + 2, q2 - x, o, s2, mode, t, f_pos, f_neg, f_avg, regrets, avg)) if na > 2 else 0.0
        r3 = _pos(_entry(e + 3, q3 - x, o, s3, mode, t, f_pos, f_neg, f_avg, regrets, avg)) if na > 3 else 0.0
        if not matched:
            s0, s1, s2, s3 = _normalised(na, r0, r1, r2, r3)
            sigma[e], sigma[e + 1] = s0, s1
            if na > 2:
                sigma[e + 2] = s2
            if na > 3:
                sigma[e + 3] = s3
        e += na


@numba.njit(cache=True, nogil=True, inline="always")
def _entry(e, inst, own, sigma, mode, t, f_pos, f_neg, f_avg, regrets, avg):
    """The regret and average updates of `CFRSolver` (mode 0 cfr+, 1 cfr, 2 dcfr) at entry e, with
    its instantaneous regret inst, its actor's reach own and its policy sigma (before the update),
    each as its numpy form computes it; returns the new regret."""
    r = regrets[e]
    if mode == 0:
        r = _pos(r + inst)
        avg[e] = avg[e] + t * own * sigma
    elif mode == 1:
        r = r + inst
        avg[e] = avg[e] + own * sigma
    else:
        r = (r * f_pos if r > 0 else r * f_neg) + inst
        avg[e] = avg[e] * f_avg + own * sigma
    regrets[e] = r
    return r


@numba.njit(cache=True, nogil=True, inline="always")
def _update_group(e0, e1, q, v, own, group, mode, t, f_pos, f_neg, f_avg, regrets, avg):
    """`_entry`'s updates at the entries [e0, e1) of one group (a player's slot of a decision row:
    child values q[:e1 - e0], value v, reach own, policy group[:e1 - e0]); the new regrets are left
    in q (which they overwrite), for the caller's regret matching."""
    for e in range(e0, e1):
        q[e - e0] = _entry(e, q[e - e0] - v, own, group[e - e0], mode, t, f_pos, f_neg, f_avg, regrets, avg)


@numba.njit(cache=True)
def _action_values(row_pos, actor, row_grp, grp_slot, grp_ent, ent_action, child_of, values, q):
    for row in range(len(row_pos)):
        i = actor[row_pos[row]]
        for g in range(row_grp[row], row_grp[row + 1]):
            s = grp_slot[g]
            for e in range(grp_ent[g], grp_ent[g + 1]):
                q[e] = values[child_of[row, ent_action[e]], i, s]
