"""CFR on a compiled public tree, vectorised over information states, a depth at a time.

One iteration (simultaneous updates, both players at once):

1. `regret_matching`: the current policy sigma [n, N, A] from the regrets.
2. `propagate_ranges`: ranges [n, 2, N] flow down, one segment sum per depth.
3. `leaf_values`: terminals exactly (batched payoff matrices); frontier leaves
   with one batched `ValueFunction` call for all of them.
4. `propagate_values`: counterfactual values [n, 2, N] and the actor's action
   values q [n, N, A] flow up, one gather and segment sum per depth. The actor's
   value is sum_a sigma q (CFR) or max_a q (best response, same pass).
5. Regret and average-policy updates on every decision node at once.

Algorithms: "cfr+" (regret-matching+, linear averaging: the default), "cfr"
(vanilla, uniform averaging) and "dcfr" (discounted CFR, alpha/beta/gamma of
Brown & Sandholm 2019). Regrets and averages are float64.

The solver works on a full tree or a partial one whose frontier is evaluated by
a `ValueFunction` (GT-CFR's regret update phase), and on forests (several
roots, each with its own root ranges: the exact oracle solves many subgames at
once this way).
"""
from __future__ import annotations

import dataclasses
from typing import Protocol, Sequence

import numpy as np

from sog.search.tree import CompiledTree

ALGORITHMS = ("cfr+", "cfr", "dcfr")


class ValueFunction(Protocol):
    """Counterfactual values of public belief states, batched.

    pubs: B public states; ranges: float [B, 2, N] (each player's reach).
    Returns float [B, 2, N]: each player's counterfactual values (opponent and
    chance reach included, own reach excluded; units of the game's utility).
    """

    def __call__(self, pubs: Sequence, ranges: np.ndarray) -> np.ndarray: ...


class PolicyValueFunction(ValueFunction, Protocol):
    """A ValueFunction that also returns prior-policy logits (the CVPN; the oracle).

    evaluate(pubs, ranges [B, 2, N]) -> (values [B, 2, N], logits [B, 2, N, A]):
    logits[b, i] is player i's prior over actions per slot (only the actor's is
    used; entries of illegal actions are ignored by callers).
    """

    def evaluate(self, pubs: Sequence, ranges: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...


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
    """Per-depth index arrays precomputed from a CompiledTree for the passes."""

    def __init__(self, ct: CompiledTree):
        N, A, n = ct.num_states, ct.num_actions, ct.num_nodes
        self.ct = ct
        self.sentinel = n * N * A
        self.down = []   # per depth d >= 1: (lo, hi, src, dst_local, pol)
        self.up = []     # per depth d >= 1: index arrays for the value (up) pass
        b = ct.level_bounds
        for d in range(1, ct.depth):
            e = ct.edges[d]
            lo, hi = b[d] * 2 * N, b[d + 1] * 2 * N
            plo, phi = b[d - 1] * 2 * N, b[d] * 2 * N
            is_act = e["pol"] != self.sentinel
            self.down.append((lo, hi, e["src"], e["dst"] - lo, e["pol"]))
            qlo, qhi = b[d - 1] * N * A, b[d] * N * A
            self.up.append(dict(
                plo=plo, phi=phi, qlo=qlo, qhi=qhi,
                oth_dst=e["dst"][~is_act], oth_w=e["w"][~is_act], oth_src=e["src"][~is_act] - plo,
                act_dst=e["dst"][is_act], act_pol=e["pol"][is_act] - qlo))
        dec = ct.decision
        self.dec = dec
        self.dec_actor = ct.actor[dec].astype(np.int64)
        # decision positions per depth (for finishing a level in the up pass)
        self.dec_by_level = [np.flatnonzero((dec >= b[d]) & (dec < b[d + 1])) for d in range(ct.depth)]
        self.legal_dec = ct.legal[dec]
        self.n_legal = np.maximum(self.legal_dec.sum(-1, keepdims=True), 1)


def regret_matching(regrets: np.ndarray, legal: np.ndarray, n_legal: np.ndarray) -> np.ndarray:
    """float [m, N, A]: positive regrets normalised; uniform over legal where none is positive."""
    pos = np.maximum(regrets, 0.0) * legal
    total = pos.sum(-1, keepdims=True)
    return np.where(total > 0, pos / np.where(total > 0, total, 1.0), legal / n_legal)


def full_policy(lv: Levels, sigma_dec: np.ndarray) -> np.ndarray:
    """Scatter a decision-node policy [m, N, A] into a flat [n*N*A + 1] array (sentinel = 1)."""
    ct = lv.ct
    flat = np.zeros(lv.sentinel + 1)
    flat[-1] = 1.0
    flat[: lv.sentinel].reshape(ct.num_nodes, ct.num_states, ct.num_actions)[lv.dec] = sigma_dec
    return flat


def propagate_ranges(lv: Levels, pol_flat: np.ndarray, root_ranges: np.ndarray) -> np.ndarray:
    """float [n, 2, N]: reach of every slot under the policy, roots set to root_ranges [R, 2, N]."""
    ct = lv.ct
    ranges = np.zeros((ct.num_nodes, 2, ct.num_states))
    ranges[ct.roots] = root_ranges
    flat = ranges.reshape(-1)
    for lo, hi, src, dst, pol in lv.down:
        flat[lo:hi] = np.bincount(dst, flat[src] * pol_flat[pol], minlength=hi - lo)
    return ranges * ct.possible


def leaf_values(lv: Levels, ranges: np.ndarray, value_fn: ValueFunction | None) -> np.ndarray:
    """float [n, 2, N]: exact terminal values and frontier values; zeros elsewhere."""
    ct = lv.ct
    values = np.zeros_like(ranges)
    t = ct.terminals
    if len(t):
        values[t, 0] = np.einsum("tij,tj->ti", ct.payoffs, ranges[t, 1])
        values[t, 1] = -np.einsum("tij,ti->tj", ct.payoffs, ranges[t, 0])
    if len(ct.frontier):
        if value_fn is None:
            raise ValueError("the tree has frontier leaves but no value function was given")
        values[ct.frontier] = value_fn([ct.pub(p) for p in ct.frontier], ranges[ct.frontier])
    return values * ct.possible


def propagate_values(lv: Levels, sigma_dec: np.ndarray, values: np.ndarray, best_response: bool = False
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Counterfactual values up the tree, in place on `values` (leaf values set).

    Returns (values [n, 2, N], q [m, N, A]: the actor's action values at each
    decision node). The actor's value is sigma . q, or max over legal q when
    `best_response` (then each player's values are its best-response values
    against the other's policy, for both players in one pass).
    """
    ct = lv.ct
    N, A = ct.num_states, ct.num_actions
    flat = values.reshape(-1)
    q_full = np.zeros(lv.sentinel)
    for d in range(ct.depth - 1, 0, -1):
        u = lv.up[d - 1]
        flat[u["plo"]:u["phi"]] += np.bincount(u["oth_src"], flat[u["oth_dst"]] * u["oth_w"],
                                               minlength=u["phi"] - u["plo"])
        # an (actor slot, action) may reach several children (Scotland Yard: caught or not)
        q_full[u["qlo"]:u["qhi"]] = np.bincount(u["act_pol"], flat[u["act_dst"]],
                                                minlength=u["qhi"] - u["qlo"])
        rows = lv.dec_by_level[d - 1]
        if len(rows):
            pos = lv.dec[rows]
            q = q_full.reshape(ct.num_nodes, N, A)[pos]
            if best_response:
                v = np.where(lv.legal_dec[rows], q, -np.inf).max(-1)
                v = np.where(np.isfinite(v), v, 0.0)
            else:
                v = (sigma_dec[rows] * q).sum(-1)
            values[pos, lv.dec_actor[rows]] = v
    q = q_full.reshape(ct.num_nodes, N, A)[lv.dec]
    return values, q


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
    """

    def __init__(self, ct: CompiledTree, root_ranges: np.ndarray | None = None,
                 value_fn: ValueFunction | None = None, config: CFRConfig = CFRConfig(), gadget=None):
        self.ct, self.config, self.value_fn, self.gadget = ct, config, value_fn, gadget
        self.levels = Levels(ct)
        if root_ranges is None:
            root_ranges = np.broadcast_to(ct.game.initial_ranges(), (len(ct.roots), 2, ct.num_states))
        self.root_ranges = np.asarray(root_ranges, dtype=np.float64).reshape(len(ct.roots), 2, ct.num_states)
        m = len(ct.decision)
        self.regrets = np.zeros((m, ct.num_states, ct.num_actions))
        self.avg = np.zeros_like(self.regrets)
        self.iterations = 0
        self.last_pass: tuple | None = None   # (ranges, values, q) of the latest pass
        # own_values[:, i]: player i's values from the latest pass that updated it (float [n, 2, N])
        self.own_values = np.zeros((ct.num_nodes, 2, ct.num_states))
        self.root_value_sum = np.zeros((len(ct.roots), 2, ct.num_states))
        self.root_value_weight = 0.0
        self._rows_of = [np.flatnonzero(self.levels.dec_actor == i) for i in (0, 1)]

    def current_policy(self) -> np.ndarray:
        lv = self.levels
        return regret_matching(self.regrets, lv.legal_dec, lv.n_legal)

    def average_policy(self) -> np.ndarray:
        """float [m, N, A] over decision nodes (uniform where never reached)."""
        lv = self.levels
        return regret_matching(self.avg, lv.legal_dec, lv.n_legal)

    def average_root_values(self) -> np.ndarray:
        """float [R, 2, N]: each player's counterfactual values at the roots averaged over this
        solver's iterations (linear weights t; uniform for vanilla CFR), each player's taken
        from the passes that updated it."""
        return self.root_value_sum / max(self.root_value_weight, 1e-300)

    def iterate(self, iterations: int = 1) -> None:
        players = ((0,), (1,)) if self.config.alternating else ((0, 1),)
        for _ in range(iterations):
            t = self.iterations + 1
            for updating in players:
                self._update(t, updating)
            w = 1.0 if self.config.algorithm == "cfr" else t
            self.root_value_sum += w * self.own_values[self.ct.roots]
            self.root_value_weight += w
            self.iterations = t

    def _update(self, t: int, players: tuple[int, ...]) -> None:
        """One pass of the current policy; regret and average updates for `players`."""
        lv, cfg, g = self.levels, self.config, self.gadget
        dec, actor = lv.dec, lv.dec_actor
        if g is not None:
            self.root_ranges[0, g.player] = g.opponent_range()
        sigma = self.current_policy()
        ranges = propagate_ranges(lv, full_policy(lv, sigma), self.root_ranges)
        values = leaf_values(lv, ranges, self.value_fn)
        values, q = propagate_values(lv, sigma, values)
        self.last_pass = (ranges, values, q)
        for i in players:
            self.own_values[:, i] = values[:, i]
        if g is not None and g.player in players:
            g.update(values[self.ct.roots[0], g.player])
        rows = slice(None) if len(players) == 2 else self._rows_of[players[0]]
        sigma, q, legal = sigma[rows], q[rows], lv.legal_dec[rows]
        inst = (q - values[dec[rows], actor[rows]][:, :, None]) * legal
        own = ranges[dec[rows], actor[rows]][:, :, None]
        r, avg = self.regrets[rows], self.avg[rows]
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
        self.regrets[rows], self.avg[rows] = r, avg


def evaluate_policy(lv: Levels, sigma_dec: np.ndarray, root_ranges: np.ndarray,
                    value_fn: ValueFunction | None = None, best_response: bool = False):
    """(ranges [n, 2, N], values [n, 2, N]) of a fixed policy; best-response values if asked."""
    ranges = propagate_ranges(lv, full_policy(lv, sigma_dec), root_ranges)
    values = leaf_values(lv, ranges, value_fn)
    values, _ = propagate_values(lv, sigma_dec, values, best_response=best_response)
    return ranges, values
