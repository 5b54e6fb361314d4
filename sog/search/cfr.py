"""CFR on a compiled public tree, vectorised over information states, a depth at a time.

One iteration (simultaneous updates, both players at once):

1. `regret_matching_entries`: the current policy sigma from the regrets.
2. `propagate_ranges`: ranges [n, 2, N] flow down, one segment sum per depth.
3. `leaf_values`: terminals exactly (one weighted sum over the payoff matrices'
   entries, or the game's `terminal_values` where it has no dense payoffs: hold'em);
   frontier leaves with one batched `FrontierValues` call for all of them.
4. `propagate_entries`: counterfactual values [n, 2, N] and the actor's action
   values q flow up, one gather and segment sum per depth. The actor's value is
   sum_a sigma q (CFR) or max_a q (best response, same pass).
5. Regret and average-policy updates on every decision node at once.

On slot-preserving trees (poker) the stages are compiled loops over rows of hands instead
(`sog.search.row_cfr`; `Levels`), with the values of the updated players only and the
regret updates inside the value pass.

Policies, regrets, averages and q live over the legal (node, slot, action)
entries of the internal decision nodes, E of them (see `Levels`); the dense
[m, N, A] forms (`regret_matching`, `propagate_values`, `evaluate_policy`,
`CFRSolver.average_policy`) are for callers. On the small Scotland Yard E is 35x
smaller than m * N * A; with the oracle's forests compiled by indexing
(`sog.search.tree.FullSubtrees`) a SoG(100, 1) search near its root runs 9x
faster than with dense arrays and forests compiled from scratch.

Algorithms: "cfr+" (regret-matching+, linear averaging: the default), "cfr"
(vanilla, uniform averaging) and "dcfr" (discounted CFR, alpha/beta/gamma of
Brown & Sandholm 2019). Regrets and averages are float64.

The solver works on a full tree or a partial one whose frontier is evaluated by
a `FrontierValues` callable (GT-CFR's regret update phase), and on forests (several
roots, each with its own root ranges: the exact oracle solves many subgames at
once this way).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import numpy as np

from sog.search.row_cfr import RowTree, match_groups
from sog.search.tree import CompiledTree, index_dtype

ALGORITHMS = ("cfr+", "cfr", "dcfr")

# What CFR asks of a partial tree's frontier: frontier_values(pubs, ranges [F, 2, N]) ->
# the counterfactual values [F, 2, N] of its F frontier leaves, with the conventions and
# units of `sog.search.value_function.ValueFunction`'s values (GT-CFR passes on its value
# function's; depth-limited solving answers with its own leaf models).
FrontierValues = Callable[[Sequence, np.ndarray], np.ndarray]


@dataclasses.dataclass(frozen=True)
class CFRConfig:
    algorithm: str = "cfr+"
    alpha: float = 1.5   # dcfr: positive regrets discounted by t^a / (t^a + 1)
    beta: float = 0.0    # dcfr: negative regrets discounted by t^b / (t^b + 1)
    gamma: float = 2.0   # dcfr: average policy discounted by (t / (t + 1))^g
    alternating: bool = False  # update player 0, then player 1 against it (default: simultaneous)

    def __post_init__(self):
        if self.algorithm not in ALGORITHMS:
            raise ValueError(f"unknown CFR algorithm {self.algorithm!r}; choose one of {ALGORITHMS}")


class Levels:
    """Per-depth index arrays precomputed from a CompiledTree for the passes.

    Policies, regrets and action values of the internal decision nodes are kept
    over their legal (node, slot, action) *entries* only (E of them, ordered by
    position, slot, action), not as dense [m, N, A] arrays: in Scotland Yard the
    detectives have one slot of 12 and every station few moves, so E is 35x
    smaller than m * N * A. Entries with the same (node, slot) form a *group*
    (an information state of the actor); groups are contiguous.

    ent_dec   int [E]: flat index of each entry into a dense [m, N, A] array
    ent_row   int [E]: its decision row (index into `dec`)
    ent_grp   int [E]: its group
    grp_start int [G]: first entry of each group
    grp_val   int [G]: flat index of the group's (position, actor, slot) into [n, 2, N]
    grp_n_legal float [G]: legal actions of the group

    Index arrays (these and the passes' per-depth ones) are int32 where what they index
    allows (`sog.search.tree.index_dtype`).

    On a slot-preserving tree (`CompiledTree.slot_preserving`: poker) the passes are numba
    loops over whole rows instead of slot edges (`rows`: a `sog.search.row_cfr.RowTree`;
    `down` and `up` empty; None elsewhere, or with use_rows False: the edge passes, which every
    tree supports, with results equal to the bit). Measured against the edge passes: 2.2x the
    Leduc SoG(100, 1) searches per second with the exact oracle (`sog bench search`), 2.7x
    the CFR+ iterations per second on Leduc's full tree.
    """

    def __init__(self, ct: CompiledTree, use_rows: bool = True):
        N, A, n = ct.num_states, ct.num_actions, ct.num_nodes
        self.ct = ct
        dec = ct.decision
        self.dec = dec
        self.dec_actor = ct.actor[dec].astype(np.int64)
        self.legal_dec = ct.legal[dec]
        self.n_legal = np.maximum(self.legal_dec.sum(-1, keepdims=True), 1)
        row, slot, action = np.nonzero(self.legal_dec)
        self.num_entries = E = len(row)
        slot_index, ent_index = index_dtype(n * 2 * N), index_dtype(E + 1)
        self.ent_row = row.astype(index_dtype(len(dec)))
        self.ent_dec = ((row * N + slot) * A + action).astype(index_dtype(len(dec) * N * A))
        new_grp = np.ones(E, dtype=bool)
        new_grp[1:] = (row[1:] != row[:-1]) | (slot[1:] != slot[:-1])
        self.grp_start = np.flatnonzero(new_grp).astype(ent_index)
        self.ent_grp = (np.cumsum(new_grp) - 1).astype(ent_index)
        del new_grp
        g_row, g_slot = row[self.grp_start], slot[self.grp_start]
        self.grp_val = ((dec[g_row] * 2 + self.dec_actor[g_row]) * N + g_slot).astype(slot_index)
        self.grp_n_legal = np.diff(np.append(self.grp_start, E)).astype(np.float64)
        self.ent_player = self.dec_actor[row].astype(np.int8)
        self.down = []   # per depth d >= 1: (lo, hi, src, dst_local, pol: entry or E)
        self.up = []     # per depth d >= 1: index arrays for the value (up) pass
        self.rows = None  # `RowTree` (slot-preserving trees)
        b = ct.level_bounds
        use_rows = use_rows and ct.slot_preserving
        if use_rows:       # (the int64 [E] row, slot and action are dropped first: a turn subgame's peak)
            del row, slot
            self.rows = RowTree(ct, dec, g_row, g_slot, self.grp_start, action.astype(np.int8))
            del action
        else:
            ent_flat = (dec[row] * N + slot) * A + action          # into [n, N, A], ascending
            ent_pos, grp_pos = dec[row], dec[g_row]
            del row, slot, action   # (int64 [E] each: not kept through the per-depth loop)
        del g_row, g_slot
        for d in range(1, ct.depth) if not use_rows else ():
            e = ct.edges[d]
            lo, hi = b[d] * 2 * N, b[d + 1] * 2 * N
            plo, phi = b[d - 1] * 2 * N, b[d] * 2 * N
            is_act = e["pol"] != n * N * A
            pol = np.full(len(e["pol"]), E, dtype=ent_index)
            pol[is_act] = np.searchsorted(ent_flat, e["pol"][is_act])
            if not np.array_equal(ent_flat[pol[is_act]], e["pol"][is_act]):
                raise ValueError("an edge leaves a decision node by an illegal (slot, action)")
            into = ct.possible.reshape(-1)[e["dst"]]   # (no reach flows into impossible slots)
            self.down.append((lo, hi, e["src"][into], (e["dst"][into] - lo).astype(slot_index), pol[into]))
            elo, ehi = (int(x) for x in np.searchsorted(ent_pos, [b[d - 1], b[d]]))
            glo, ghi = (int(x) for x in np.searchsorted(grp_pos, [b[d - 1], b[d]]))
            self.up.append(dict(
                plo=plo, phi=phi, elo=elo, ehi=ehi, glo=glo, ghi=ghi,
                oth_dst=e["dst"][~is_act], oth_w=e["w"][~is_act],
                oth_src=(e["src"][~is_act] - plo).astype(slot_index),
                act_dst=e["dst"][is_act], act_ent=(pol[is_act] - elo).astype(ent_index)))
        # terminal values as one weighted sum over the payoffs' nonzero entries between possible
        # slots: values.flat[dst] += k * ranges.flat[src] (player 0's values from player 1's
        # ranges with k = payoff, then player 1's from player 0's with k = -payoff)
        # (None without dense payoffs: `leaf_values` asks `Game.terminal_values` then)
        self.payoff_index = None
        if ct.payoffs is not None:
            pos = ct.possible[ct.terminals]
            t, i, j = np.nonzero((ct.payoffs != 0) & pos[:, 0, :, None] & pos[:, 1, None, :])
            k, at = ct.payoffs[t, i, j], ct.terminals[t] * 2 * N
            self.payoff_index = (np.concatenate([k, -k]), np.concatenate([at + N + j, at + i]),
                                 np.concatenate([at + i, at + N + j]))
        self.terminal_pubs = tuple(ct.pub(p) for p in ct.terminals) if ct.payoffs is None else None
        # the terminals of each block of a row tree, then of its top (`RowTree.fused_update`): (positions
        # int [k], their pubs as a tuple, the rows of their reach int [k, 2]: `RowTree.reach_row`) each;
        # None where the passes are not fused (no blocks, dense payoffs or frontier leaves: a frontier's
        # values are one call for all its leaves)
        self.block_terminals = None
        if self.rows is not None and self.rows.blocks and ct.payoffs is None and not len(ct.frontier):
            of = self.rows.block_of[ct.terminals]
            self.block_terminals = []
            for block in (*range(len(self.rows.blocks)), -1):
                mine = np.flatnonzero(of == block)
                at = ct.terminals[mine]
                self.block_terminals.append((at, tuple(self.terminal_pubs[k] for k in mine), self.rows.reach_row[at]))
        # decision positions per depth (callers walking the tree a level at a time)
        self.dec_by_level = [np.flatnonzero((dec >= b[d]) & (dec < b[d + 1])) for d in range(ct.depth)]

    def to_entries(self, dense: np.ndarray) -> np.ndarray:
        """float [E] from a dense decision-node array [m, N, A]."""
        return np.asarray(dense, dtype=np.float64).reshape(-1)[self.ent_dec]

    def to_dense(self, entries: np.ndarray) -> np.ndarray:
        """float [m, N, A] from entries [E] (zero outside the legal entries)."""
        ct = self.ct
        out = np.zeros(len(self.dec) * ct.num_states * ct.num_actions)
        out[self.ent_dec] = entries
        return out.reshape(len(self.dec), ct.num_states, ct.num_actions)


def regret_matching(regrets: np.ndarray, legal: np.ndarray, n_legal: np.ndarray) -> np.ndarray:
    """float [m, N, A]: positive regrets normalised; uniform over legal where none is positive."""
    pos = np.maximum(regrets, 0.0) * legal
    total = pos.sum(-1, keepdims=True)
    return np.where(total > 0, pos / np.where(total > 0, total, 1.0), legal / n_legal)


def regret_matching_entries(lv: Levels, regrets: np.ndarray) -> np.ndarray:
    """float [E]: `regret_matching` over the legal entries (regrets [E]), one loop over the groups
    (`sog.search.row_cfr.match_groups`: no [E] temporaries, a hold'em turn subgame has about 1,000
    entries a public state); each group's positive regrets summed in entry order, as `np.bincount`
    sums them."""
    out = np.empty(len(regrets))
    match_groups(np.asarray(regrets, dtype=np.float64), lv.grp_start, out)
    return out


def full_policy(lv: Levels, sigma_dec: np.ndarray) -> np.ndarray:
    """float [E + 1]: a decision-node policy [m, N, A] over the legal entries, then the
    sentinel 1 (the weight of non-acting players' and chance edges): `propagate_ranges`'s input."""
    return np.append(lv.to_entries(sigma_dec), 1.0)


def propagate_ranges(lv: Levels, pol: np.ndarray, root_ranges: np.ndarray) -> np.ndarray:
    """float [n, 2, N]: reach of every slot under the policy (entries and sentinel [E + 1], see
    `full_policy`), roots set to root_ranges [R, 2, N]."""
    ct = lv.ct
    if lv.rows is not None:
        return lv.rows.propagate_ranges(lv.rows.to_wide(pol[:-1]), root_ranges)
    ranges = np.zeros((ct.num_nodes, 2, ct.num_states))
    ranges[ct.roots] = root_ranges * ct.possible[ct.roots]
    flat = ranges.reshape(-1)
    for lo, hi, src, dst, p in lv.down:
        flat[lo:hi] = np.bincount(dst, flat[src] * pol[p], minlength=hi - lo)
    return ranges


def leaf_values(lv: Levels, ranges: np.ndarray, value_fn: FrontierValues | None,
                players: tuple[int, ...] = (0, 1), out: np.ndarray | None = None) -> np.ndarray:
    """float [n, 2, N]: exact terminal values and frontier values; zeros elsewhere (a new array).
    With `out` (float [n, 2, N], a solver's buffer of the latest pass), the terminals' rows of
    `players` only are written there (their internal rows are the up pass's to write) and
    the frontier's rows."""
    ct = lv.ct
    values = np.zeros(ranges.shape) if out is None else out
    if lv.payoff_index is None:
        if len(ct.terminals):
            ct.game.terminal_values_into(lv.terminal_pubs, ranges, ct.terminals, values, players)
    else:
        k, src, dst = lv.payoff_index
        half = len(k) // 2         # player 0's values, then player 1's (see `Levels`)
        part = slice(None) if len(players) == 2 else slice(0, half) if players[0] == 0 else slice(half, None)
        summed = np.bincount(dst[part], k[part] * ranges.reshape(-1)[src[part]], minlength=ranges.size)
        if out is None:
            values = summed.reshape(ranges.shape).astype(np.float64, copy=False)  # (an empty bincount is int)
        else:
            for p in players:
                values[ct.terminals, p] = summed.reshape(ranges.shape)[ct.terminals, p]
    if len(ct.frontier):
        if value_fn is None:
            raise ValueError("the tree has frontier leaves but no value function was given")
        f = ct.frontier
        values[f] = value_fn([ct.pub(p) for p in f], ranges[f]) * ct.possible[f]
    return values


def propagate_entries(lv: Levels, sigma: np.ndarray, values: np.ndarray, best_response: bool = False
                      ) -> tuple[np.ndarray, np.ndarray]:
    """`propagate_values` over the legal entries: sigma [E] -> (values [n, 2, N], q [E])."""
    if lv.rows is not None:
        lv.rows.propagate_values(lv.rows.to_wide(sigma), values, best_response=best_response)
        return values, lv.rows.action_values(values)
    flat = values.reshape(-1)
    q = np.zeros(lv.num_entries)
    for u in reversed(lv.up):
        flat[u["plo"]:u["phi"]] += np.bincount(u["oth_src"], flat[u["oth_dst"]] * u["oth_w"],
                                               minlength=u["phi"] - u["plo"])
        elo, ehi, glo, ghi = u["elo"], u["ehi"], u["glo"], u["ghi"]
        if ehi == elo:
            continue
        # an (actor slot, action) may reach several children (Scotland Yard: caught or not)
        q[elo:ehi] = np.bincount(u["act_ent"], flat[u["act_dst"]], minlength=ehi - elo)
        if best_response:
            v = np.maximum.reduceat(q[elo:ehi], lv.grp_start[glo:ghi] - elo)
        else:
            v = np.bincount(lv.ent_grp[elo:ehi] - glo, sigma[elo:ehi] * q[elo:ehi], minlength=ghi - glo)
        flat[lv.grp_val[glo:ghi]] = v
    return values, q


def propagate_values(lv: Levels, sigma_dec: np.ndarray, values: np.ndarray, best_response: bool = False
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Counterfactual values up the tree, in place on `values` (leaf values set).

    Returns (values [n, 2, N], q [m, N, A]: the actor's action values at each
    decision node, zero at illegal entries). The actor's value is sigma . q, or
    max over legal q when `best_response` (then each player's values are its
    best-response values against the other's policy, for both players in one pass).
    """
    values, q = propagate_entries(lv, lv.to_entries(sigma_dec), values, best_response)
    return values, lv.to_dense(q)


class CFRSolver:
    """CFR over a compiled (possibly partial, possibly multi-root) public tree.

    root_ranges: float [R, 2, N] reach at each root (default: the game's
    initial ranges, for a tree rooted at the game's root).
    value_fn: evaluates frontier leaves (required iff the tree has a frontier).
    gadget: a re-solving gadget above the (first) root (`sog.search.gtcfr.Gadget`:
      `player`, `opponent_range()`, `update(values)`). Its player's root range is
      taken from it before every pass, and it is updated with that player's root
      values in that player's passes (with alternating updates, in the gadget
      player's own pass, as any of its decisions).
    levels: the tree's `Levels`, if already built (the oracle caches them).

    Regrets and averages are read and assigned over the legal entries (`regrets_e`, `avg_e`:
    float [E], see `Levels`), or as dense [m, N, A] arrays (`regrets`, `avg`); on a row tree
    they live in its wide layout (`RowTree.to_wide`), and both forms are copies (assign, do
    not modify in place).

    On a row tree (`Levels.rows`: large slot-preserving trees) a pass is the compiled
    stages of `sog.search.row_cfr`: the ranges and values live in two buffers [n, 2, N]
    reused by every pass, and a pass computes the values of the players it updates only
    (with alternating updates, one), so `last_pass`'s values of the other player are stale.
    """

    def __init__(self, ct: CompiledTree, root_ranges: np.ndarray | None = None,
                 value_fn: FrontierValues | None = None, config: CFRConfig = CFRConfig(), gadget=None,
                 levels: Levels | None = None):
        self.ct, self.config, self.value_fn, self.gadget = ct, config, value_fn, gadget
        self.levels = lv = Levels(ct) if levels is None else levels
        if root_ranges is None:
            root_ranges = np.broadcast_to(ct.game.initial_ranges(), (len(ct.roots), 2, ct.num_states))
        self.root_ranges = np.asarray(root_ranges, dtype=np.float64).reshape(len(ct.roots), 2, ct.num_states)
        # regrets and averages: over the entries [E], or on a row tree in its wide layout [W]
        # (`RowTree.to_wide`: the passes' own); `regrets_e` and `avg_e` give and take them as [E]
        size = lv.num_entries if lv.rows is None else lv.rows.num_wide
        self._regrets, self._avg = np.zeros(size), np.zeros(size)
        self.iterations = 0
        self._last: tuple | None = None   # (ranges, values, q [E] or None on row trees) of the latest pass
        # own_root[:, i]: player i's root values from the latest pass that updated it (float [R, 2, N])
        self.own_root = np.zeros((len(ct.roots), 2, ct.num_states))
        self._buffers: tuple | None = None   # row trees: (ranges, values) float [n, 2, N] each
        self._fresh = [False, False]   # row trees: whether each player's ranges in the buffer are current
        self.root_value_sum = np.zeros((len(ct.roots), 2, ct.num_states))
        self.root_value_weight = 0.0
        self._ents_of = [np.flatnonzero(lv.ent_player == i).astype(index_dtype(lv.num_entries)) for i in (0, 1)]

    @property
    def regrets_e(self) -> np.ndarray:
        """float [E]: the regrets over the legal entries (on a row tree a copy: assign, do not modify
        in place)."""
        return self._entries(self._regrets)

    @regrets_e.setter
    def regrets_e(self, entries: np.ndarray) -> None:
        self._regrets = self._stored(entries)

    @property
    def avg_e(self) -> np.ndarray:
        """float [E]: the cumulative average-policy weights over the legal entries (as `regrets_e`)."""
        return self._entries(self._avg)

    @avg_e.setter
    def avg_e(self, entries: np.ndarray) -> None:
        self._avg = self._stored(entries)

    def _entries(self, stored: np.ndarray) -> np.ndarray:
        """float [E] of a kept array (on a row tree, wide: `RowTree.from_wide`)."""
        return stored if self.levels.rows is None else self.levels.rows.from_wide(stored)

    def _stored(self, entries: np.ndarray) -> np.ndarray:
        """The kept form of entries [E] (a float copy; on a row tree, wide: `RowTree.to_wide`)."""
        rows = self.levels.rows
        return np.array(entries, dtype=np.float64) if rows is None else rows.to_wide(entries)

    @property
    def regrets(self) -> np.ndarray:
        return self.levels.to_dense(self.regrets_e)

    @regrets.setter
    def regrets(self, dense: np.ndarray) -> None:
        self.regrets_e = self.levels.to_entries(dense)

    @property
    def avg(self) -> np.ndarray:
        return self.levels.to_dense(self.avg_e)

    @avg.setter
    def avg(self, dense: np.ndarray) -> None:
        self.avg_e = self.levels.to_entries(dense)

    @property
    def last_pass(self) -> tuple | None:
        """(ranges [n, 2, N], values [n, 2, N], q [m, N, A]) of the latest pass."""
        if self._last is None:
            return None
        ranges, values, q = self._last
        if q is None:       # (a row tree's buffers, which the next pass overwrites: copies)
            ranges, values, q = ranges.copy(), values.copy(), self.levels.rows.action_values(values)
            if self.levels.block_terminals is not None:
                self.levels.rows.fill_unwritten(ranges)
        return ranges, values, self.levels.to_dense(q)

    def current_entries(self) -> np.ndarray:
        """float [E]: the current policy over the legal entries."""
        return regret_matching_entries(self.levels, self.regrets_e)

    def current_policy(self) -> np.ndarray:
        """float [m, N, A]: the current policy (regret matching)."""
        return self.levels.to_dense(self.current_entries())

    def average_entries(self) -> np.ndarray:
        """float [E]: the average policy over the legal entries (uniform where never reached)."""
        return regret_matching_entries(self.levels, self.avg_e)

    def average_policy(self) -> np.ndarray:
        """float [m, N, A] over decision nodes (uniform where never reached)."""
        return self.levels.to_dense(self.average_entries())

    def average_root_values(self) -> np.ndarray:
        """float [R, 2, N]: each player's counterfactual values at the roots averaged over this
        solver's iterations (linear weights t; uniform for vanilla CFR), each player's taken
        from the passes that updated it."""
        return self.root_value_sum / max(self.root_value_weight, 1e-300)

    def iterate(self, iterations: int = 1) -> None:
        players = ((0,), (1,)) if self.config.alternating else ((0, 1),)
        self._fresh = [False, False]      # (the root ranges or the regrets may have been assigned)
        for _ in range(iterations):
            t = self.iterations + 1
            for updating in players:
                self._update(t, updating)
            w = 1.0 if self.config.algorithm == "cfr" else t
            self.root_value_sum += w * self.own_root
            self.root_value_weight += w
            self.iterations = t

    def _update(self, t: int, players: tuple[int, ...]) -> None:
        """One pass of the current policy; regret and average updates for `players`."""
        if self.levels.rows is not None:
            return self._update_rows(t, players)
        lv, cfg, g = self.levels, self.config, self.gadget
        if g is not None:
            self.root_ranges[0, g.player] = g.opponent_range()
        sigma = self.current_entries()
        ranges = propagate_ranges(lv, np.append(sigma, 1.0), self.root_ranges)
        values = leaf_values(lv, ranges, self.value_fn)
        values, q = propagate_entries(lv, sigma, values)
        self._last = (ranges, values, q)
        for i in players:
            self.own_root[:, i] = values[self.ct.roots, i]
        if g is not None and g.player in players:
            g.update(values[self.ct.roots[0], g.player])
        ents = slice(None) if len(players) == 2 else self._ents_of[players[0]]
        at = lv.grp_val[lv.ent_grp[ents]]      # the entries' (position, actor, slot) in [n, 2, N]
        sigma, q = sigma[ents], q[ents]
        inst = q - values.reshape(-1)[at]
        own = ranges.reshape(-1)[at]
        r, avg = self._regrets[ents], self._avg[ents]     # (the entries themselves: no row tree here)
        if cfg.algorithm == "cfr+":
            r = np.maximum(r + inst, 0.0)
            avg = avg + t * own * sigma
        elif cfg.algorithm == "cfr":
            r = r + inst
            avg = avg + own * sigma
        else:
            ta, tb = t ** cfg.alpha, t ** cfg.beta
            r = np.where(r > 0, r * (ta / (ta + 1)), r * (tb / (tb + 1))) + inst
            avg = avg * ((t - 1) / t) ** cfg.gamma + own * sigma
        self._regrets[ents], self._avg[ents] = r, avg

    def _update_rows(self, t: int, players: tuple[int, ...]) -> None:
        """`_update` on a row tree (`sog.search.row_cfr`): the current policy (the regret matching
        of the regrets, taken by the passes where they read it, no policy array stored; every
        pass's `current_entries()`, made wide, where a subclass overrides it), the values computed
        for `players` only, and the ranges and values written into the solver's buffers (by
        `RowTree.fused_update` where the tree has blocks: `Levels.block_terminals`). A player's
        ranges are propagated again only when its policy or root range changed since they were
        (with alternating updates, only the other player's: the one just updated)."""
        lv, cfg, g, ct = self.levels, self.config, self.gadget, self.ct
        matched = type(self).current_entries is CFRSolver.current_entries
        # the regrets, regret-matched where the passes read them; or a subclass's policy (rows held
        # fixed), asked every pass
        sigma = self._regrets if matched else lv.rows.to_wide(self.current_entries())
        if g is not None:
            self.root_ranges[0, g.player] = g.opponent_range()
            self._fresh[g.player] = False
        if self._buffers is None:
            self._buffers = (np.zeros((ct.num_nodes, 2, ct.num_states)), np.zeros((ct.num_nodes, 2, ct.num_states)))
        stale = tuple(i for i in (0, 1) if not self._fresh[i])
        ta, tb = t ** cfg.alpha, t ** cfg.beta
        factors = (ta / (ta + 1), tb / (tb + 1), ((t - 1) / t) ** cfg.gamma)
        ranges, values = self._buffers
        if lv.block_terminals is not None:
            def block_leaves(b: int) -> None:
                at, pubs, reach_at = lv.block_terminals[b]
                if len(at):
                    ct.game.terminal_values_into(pubs, ranges, at, values, players, reach_at)

            lv.rows.fused_update(stale, players, cfg.algorithm, t, factors, sigma, self.root_ranges, ranges, values,
                                 self._regrets, self._avg, block_leaves, matched)
        else:
            lv.rows.propagate_ranges(sigma, self.root_ranges, out=ranges, players=stale, matched=matched)
            leaf_values(lv, ranges, self.value_fn, players, out=values)
            lv.rows.update(players, cfg.algorithm, t, factors, sigma, ranges, values, self._regrets, self._avg,
                           matched)
        self._fresh = [True, True]
        self._last = (ranges, values, None)
        for i in players:
            self.own_root[:, i] = values[ct.roots, i]
            self._fresh[i] = False
        if g is not None and g.player in players:
            g.update(values[ct.roots[0], g.player].copy())


def evaluate_entries(lv: Levels, sigma: np.ndarray, root_ranges: np.ndarray,
                     value_fn: FrontierValues | None = None, best_response: bool = False):
    """(ranges [n, 2, N], values [n, 2, N]) of a fixed policy over the legal entries [E];
    best-response values if asked."""
    ranges = propagate_ranges(lv, np.append(sigma, 1.0), root_ranges)
    values = leaf_values(lv, ranges, value_fn)
    values, _ = propagate_entries(lv, sigma, values, best_response=best_response)
    return ranges, values


def evaluate_policy(lv: Levels, sigma_dec: np.ndarray, root_ranges: np.ndarray,
                    value_fn: FrontierValues | None = None, best_response: bool = False):
    """`evaluate_entries` of a dense decision-node policy [m, N, A]."""
    return evaluate_entries(lv, lv.to_entries(sigma_dec), root_ranges, value_fn, best_response)
