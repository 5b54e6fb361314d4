"""Compiled n-player MCCFR on Kuhn and Leduc poker: external sampling (with Pluribus' options) and
outcome sampling, walking the betting skeleton of `sog.multiplayer.dealt` in numba.

* `CompiledExternalSampling`: the algorithm of `sog.multiplayer.mccfr.ExternalSamplingMCCFR`
  (see there: one traversal per player per iteration from a fresh root, chance and the other
  players sampled at every node visited, all of the traverser's actions explored; "simple" or
  "pluribus" averaging, linear weighting, negative-regret pruning with a floor) with the same
  settings and the same stream of uniforms: given one seed both solvers draw the same samples
  and reach the same tables, bit for bit (tests/test_multiplayer_compiled.py).
* `CompiledOutcomeSampling`: the algorithm of `sog.multiplayer.mccfr.OutcomeSamplingMCCFR`
  (one sampled trajectory per player per iteration, epsilon-on-policy exploration at the
  traverser's decisions, importance-weighted regrets, stochastically weighted average), same
  samples and tables as it, bit for bit.

A chance node deals the j-th card left (increasing ids) with j drawn as the world-state
solvers draw it (`u * cum[-1]` against the cumulative probabilities), so the deals agree too.
Each traversal is one loop over an explicit stack (depth <= the skeleton's), no recursion, so
the kernels are cached on disk by numba. Tables: float64 [M * C, K] regrets and average sums
over every (decision, code) row (`dealt`: rows that no deal reaches stay zero); uniforms come
in blocks of `sog.multiplayer.mccfr.UNIFORM_BLOCK` from `numpy.random.default_rng(seed)`.
"""
from __future__ import annotations

import abc
import itertools

import numba
import numpy as np

from sog.multiplayer.api import Game
from sog.multiplayer.dealt import CHANCE_NODE, TERMINAL_NODE, DealtGame
from sog.multiplayer.leduc import STARTING_MONEY
from sog.multiplayer.mccfr import UNIFORM_BLOCK, MCCFRConfigError, pluribus_settings
from sog.multiplayer.policy import Policy

TRAVERSE, UPDATE = 0, 1
STACK = float(STARTING_MONEY)


@numba.njit(cache=True, inline="always")
def _utility(node, p, cards, n, stake, live, ranks):
    """p's return (chips) at terminal `node` with the deal `cards`, summed as the games sum it
    (a stack of STACK chips less the stake, plus the share, less STACK)."""
    pub = cards[n] if cards[n] >= 0 else ranks.shape[1] - 1
    best, winners, pot = -(1 << 62), 0, 0.0
    for i in range(n):
        pot += stake[node, i]
        if live[node, i]:
            r = ranks[cards[i], pub]
            if r > best:
                best, winners = r, 1
            elif r == best:
                winners += 1
    if live[node, p] and ranks[cards[p], pub] == best:
        return ((STACK - stake[node, p]) + pot / winners) - STACK
    return -stake[node, p]


@numba.njit(cache=True, inline="always")
def _deal(node, slot, cards, used, u, cum):
    """Deal the card of chance `node`'s slot drawn by uniform u; returns it."""
    left = 0
    for c in range(len(used)):
        left += not used[c]
    x = u * cum[left, left - 1]
    j = left - 1
    for i in range(left):
        if x < cum[left, i]:
            j = i
            break
    for c in range(len(used)):
        if not used[c]:
            if j == 0:
                cards[slot[node]] = c
                used[c] = True
                return c
            j -= 1
    return -1


@numba.njit(cache=True, inline="always")
def _sigma(regret, row, m, out):
    """Regret matching at `row` over its m actions into out[:m] (Python's summation order)."""
    total = 0.0
    for j in range(m):
        x = regret[row, j]
        out[j] = max(0.0, x)
        total += out[j]
    for j in range(m):
        out[j] = out[j] / total if total > 0.0 else 1.0 / m


@numba.njit(cache=True, inline="always")
def _pick(probs, m, u):
    acc = 0.0
    for j in range(m):
        acc += probs[j]
        if u < acc:
            return j
    return m - 1


@numba.njit(cache=True)
def _external(p, mode, prune, simple, floor_on, threshold, floor, kind, actor, first, nkids, slot, decision,
              stake, live, ranks, num_codes, cum, regret, avg, u, ui, cards, used, st_node, st_j, st_row, st_v,
              st_vals, st_sig, st_ok):
    """One traversal for player p from the root (mode TRAVERSE: Traverse-MCCFR(-P); UPDATE:
    Update-Strategy); returns (p's sampled value, the next uniform's index)."""
    n, d1 = cards.shape[0] - 1, ranks.shape[1]
    sp, st_node[0], st_j[0] = 0, 0, -1
    ret, returning = 0.0, False
    while True:
        node = st_node[sp]
        k = kind[node]
        if not returning:
            if k == TERMINAL_NODE:
                ret = _utility(node, p, cards, n, stake, live, ranks) if mode == TRAVERSE else 0.0
                returning = True
                sp -= 1
                if sp < 0:
                    return ret, ui
                continue
            if k == CHANCE_NODE:
                _deal(node, slot, cards, used, u[ui], cum)
                ui += 1
                st_j[sp] = 0
                sp += 1
                st_node[sp], st_j[sp] = first[node], -1
                continue
            a, m = actor[node], nkids[node]
            row = decision[node] * num_codes + cards[a] * d1 + cards[n] + 1
            st_row[sp] = row
            sig = st_sig[sp]
            _sigma(regret, row, m, sig)
            if (mode == TRAVERSE) == (a != p):        # one sampled action
                if mode == UPDATE or (simple and a == (p + 1) % n):
                    for j in range(m):
                        avg[row, j] += sig[j]
                j = _pick(sig, m, u[ui])
                ui += 1
                st_j[sp] = j
                sp += 1
                st_node[sp], st_j[sp] = first[node] + j, -1
                continue
            skip = prune
            st_v[sp] = 0.0
            j = 0
            while j < m:
                ok = not (skip and regret[row, j] <= threshold and kind[first[node] + j] != TERMINAL_NODE)
                st_ok[sp, j] = ok
                if ok:
                    break
                j += 1
            for i in range(j + 1, m):
                st_ok[sp, i] = not (skip and regret[row, i] <= threshold
                                    and kind[first[node] + i] != TERMINAL_NODE)
            if j == m:                                 # every action pruned
                ret = 0.0
                returning = True
                sp -= 1
                if sp < 0:
                    return ret, ui
                continue
            st_j[sp] = j
            sp += 1
            st_node[sp], st_j[sp] = first[node] + j, -1
            continue
        # a child of frame sp returned `ret`
        if k == CHANCE_NODE:
            c = cards[slot[node]]
            used[c] = False
            cards[slot[node]] = -1
            sp -= 1
            if sp < 0:
                return ret, ui
            continue
        a, m = actor[node], nkids[node]
        if (mode == TRAVERSE) == (a != p):
            sp -= 1
            if sp < 0:
                return ret, ui
            continue
        j = st_j[sp]
        if mode == TRAVERSE:
            st_vals[sp, j] = ret
            st_v[sp] += st_sig[sp, j] * ret
        j += 1
        while j < m and not (mode == UPDATE or st_ok[sp, j]):
            j += 1
        if j < m:
            st_j[sp] = j
            sp += 1
            st_node[sp], st_j[sp] = first[node] + j, -1
            returning = False
            continue
        if mode == TRAVERSE:
            row, v = st_row[sp], st_v[sp]
            for i in range(m):
                if st_ok[sp, i]:
                    regret[row, i] += st_vals[sp, i] - v
                    if floor_on and regret[row, i] < floor:
                        regret[row, i] = floor
            ret = v
        sp -= 1
        if sp < 0:
            return ret, ui


@numba.njit(cache=True)
def _outcome(p, epsilon, kind, actor, first, nkids, slot, decision, stake, live, ranks, num_codes, cum,
             regret, avg, u, ui, cards, used, st_node, st_row, st_j, st_sig, st_samp, st_reach):
    """One outcome-sampling episode for player p (OpenSpiel's rule, no baseline); returns
    (p's sampled value, the next uniform's index). st_reach [depth, 3]: own, others', sample."""
    n, d1 = cards.shape[0] - 1, ranks.shape[1]
    node, sp = 0, 0
    mine, others, sample = 1.0, 1.0, 1.0
    while kind[node] != TERMINAL_NODE:
        if kind[node] == CHANCE_NODE:
            _deal(node, slot, cards, used, u[ui], cum)
            ui += 1
            node = first[node]
            continue
        a, m = actor[node], nkids[node]
        row = decision[node] * num_codes + cards[a] * d1 + cards[n] + 1
        sig, q = st_sig[sp], st_samp[sp]
        _sigma(regret, row, m, sig)
        for j in range(m):
            q[j] = epsilon * (1.0 / m) + (1.0 - epsilon) * sig[j] if a == p else sig[j]
        j = _pick(q, m, u[ui])
        ui += 1
        st_node[sp], st_row[sp], st_j[sp] = node, row, j
        st_reach[sp, 0], st_reach[sp, 1], st_reach[sp, 2] = mine, others, sample
        if a == p:
            mine *= sig[j]
        else:
            others *= sig[j]
        sample *= q[j]
        node = first[node] + j
        sp += 1
    value = _utility(node, p, cards, n, stake, live, ranks)
    for i in range(n + 1):
        if cards[i] >= 0:
            used[cards[i]] = False
            cards[i] = -1
    for f in range(sp - 1, -1, -1):
        node, row, j = st_node[f], st_row[f], st_j[f]
        m, sig = nkids[node], st_sig[f]
        child = value / st_samp[f, j]                 # the sampled child's estimate; the others 0
        value = sig[j] * child
        if actor[node] == p:
            mine, others, sample = st_reach[f, 0], st_reach[f, 1], st_reach[f, 2]
            cf = value * others / sample
            for i in range(m):
                regret[row, i] += (child if i == j else 0.0) * others / sample - cf
            for i in range(m):
                avg[row, i] += mine * sig[i] / sample
    return value, ui


@numba.njit(cache=True)
def _run_external(iterations, t, bound, pluribus, strategy_interval, prune_after, prune_prob, linear_until,
                  discount_interval, threshold, floor, kind, actor, first, nkids, slot, decision, stake, live,
                  ranks, num_codes, cum, regret, avg, u, ui, cards, used, st_node, st_j, st_row, st_v, st_vals,
                  st_sig, st_ok):
    """Up to `iterations` external-sampling iterations after iteration t, while at least `bound`
    uniforms are left (prune_after < 0: no pruning); returns (iterations run, next uniform)."""
    n = cards.shape[0] - 1
    done = 0
    while done < iterations and len(u) - ui >= bound:
        t += 1
        for p in range(n):
            if pluribus and t % strategy_interval == 0:
                _, ui = _external(p, UPDATE, False, False, prune_after >= 0, threshold, floor, kind, actor, first,
                                  nkids, slot, decision, stake, live, ranks, num_codes, cum, regret, avg, u, ui,
                                  cards, used, st_node, st_j, st_row, st_v, st_vals, st_sig, st_ok)
            prune = False
            if prune_after >= 0 and t > prune_after:
                prune = u[ui] >= prune_prob
                ui += 1
            _, ui = _external(p, TRAVERSE, prune, not pluribus, prune_after >= 0, threshold, floor, kind, actor,
                              first, nkids, slot, decision, stake, live, ranks, num_codes, cum, regret, avg, u, ui,
                              cards, used, st_node, st_j, st_row, st_v, st_vals, st_sig, st_ok)
        if t < linear_until and t % discount_interval == 0:
            k = t / discount_interval
            d = k / (k + 1.0)
            regret *= d
            avg *= d
        done += 1
    return done, ui


@numba.njit(cache=True)
def _run_outcome(iterations, bound, epsilon, kind, actor, first, nkids, slot, decision, stake, live, ranks,
                 num_codes, cum, regret, avg, u, ui, cards, used, st_node, st_row, st_j, st_sig, st_samp, st_reach):
    """Up to `iterations` outcome-sampling iterations while at least `bound` uniforms are left;
    returns (iterations run, next uniform)."""
    n = cards.shape[0] - 1
    done = 0
    while done < iterations and len(u) - ui >= bound:
        for p in range(n):
            _, ui = _outcome(p, epsilon, kind, actor, first, nkids, slot, decision, stake, live, ranks, num_codes,
                             cum, regret, avg, u, ui, cards, used, st_node, st_row, st_j, st_sig, st_samp, st_reach)
        done += 1
    return done, ui


def _cumulative(deck: int) -> np.ndarray:
    """float [D + 1, D]: row k, the cumulative probabilities of k equally likely cards, summed
    as `itertools.accumulate` sums them (the world-state tree's chance nodes)."""
    out = np.zeros((deck + 1, deck))
    for k in range(1, deck + 1):
        out[k, :k] = list(itertools.accumulate([1.0 / k] * k))
    return out


class _Compiled(abc.ABC):
    """Tables, uniforms and policies shared by the compiled solvers."""

    def __init__(self, game: Game, seed: int, dealt: DealtGame | None):
        self.game, self.num_players = game, game.num_players
        self.dealt = dg = DealtGame(game) if dealt is None else dealt
        self.rng = np.random.default_rng(seed)
        self._u, self._ui = np.zeros(0), 0
        self.regret = np.zeros((dg.num_rows, game.num_actions))
        self.avg = np.zeros((dg.num_rows, game.num_actions))
        self.iterations = 0
        self._cum = _cumulative(dg.deck_size)
        self._cards = np.full(dg.num_players + 1, -1, dtype=np.int64)
        self._used = np.zeros(dg.deck_size, dtype=bool)
        depth, width = dg.depth + 1, game.num_actions
        self._st_node, self._st_j, self._st_row = (np.zeros(depth, dtype=np.int64) for _ in range(3))
        self._st_v = np.zeros(depth)
        self._st_vals, self._st_sig = np.zeros((depth, width)), np.zeros((depth, width))
        self._st_ok = np.zeros((depth, width), dtype=bool)
        # an iteration draws at most, per player, a uniform per skeleton node in each of two
        # passes and the pruning draw
        self._bound = dg.num_players * (2 * dg.num_nodes + 1)

    def _ensure(self, count: int) -> None:
        """At least `count` uniforms left, new blocks appended as the world-state solvers draw them."""
        blocks = -(-(count - (len(self._u) - self._ui)) // UNIFORM_BLOCK)
        if blocks > 0:
            self._u = np.concatenate([self._u[self._ui:]] + [self.rng.random(UNIFORM_BLOCK) for _ in range(blocks)])
            self._ui = 0

    def _args(self):
        dg = self.dealt
        return (dg.kind, dg.actor, dg.first, dg.nkids, dg.slot, dg.decision, dg.stake, dg.live, dg.ranks,
                dg.num_codes, self._cum, self.regret, self.avg)

    @abc.abstractmethod
    def _batch(self, iterations: int) -> tuple[int, int]:
        """Run up to `iterations` iterations while the uniforms last; (iterations run, next uniform)."""

    def run(self, iterations: int) -> None:
        """`iterations` more iterations (compiled, in batches)."""
        left = int(iterations)
        while left > 0:
            self._ensure(2 * self._bound)
            done, self._ui = self._batch(left)
            self.iterations += done
            left -= done

    def iteration(self) -> None:
        """One iteration: an update per player."""
        self.run(1)

    def _policy(self, weights: np.ndarray) -> Policy:
        rows, keys = self.dealt.keys()
        acts, counts = self.dealt.row_actions(rows)
        w = np.maximum(weights[rows], 0.0)
        w[np.arange(w.shape[1])[None, :] >= counts[:, None]] = 0.0
        total = w.sum(axis=1)
        probs = np.where(total[:, None] > 0, w / np.where(total > 0, total, 1.0)[:, None], 1.0 / counts[:, None])
        return {key: [(int(a), float(q)) for a, q in zip(acts[i, :counts[i]], probs[i, :counts[i]])]
                for i, key in enumerate(keys)}

    def average_policy(self) -> Policy:
        """The normalised average-strategy sums at every information state of the game (uniform
        where none were added), as an OpenSpiel-style policy dict."""
        return self._policy(self.avg)

    def current_policy(self) -> Policy:
        """The current regret-matching policy at every information state of the game."""
        return self._policy(self.regret)


class CompiledExternalSampling(_Compiled):
    """`ExternalSamplingMCCFR` (same arguments, same results) compiled, on Kuhn or Leduc poker;
    `dealt` shares a skeleton (and its keys) between solvers."""

    def __init__(self, game: Game, seed: int = 0, *, dealt: DealtGame | None = None, **settings):
        s = pluribus_settings(game, **settings)
        super().__init__(game, seed, dealt)
        self.linear_until, self.discount_interval = s["linear_until"], s["discount_interval"]
        self.prune_after, self.prune_prob = s["prune_after"], s["prune_prob"]
        self.prune_threshold, self.regret_floor = s["prune_threshold"], s["regret_floor"]
        self.averaging, self.strategy_interval = s["averaging"], s["strategy_interval"]

    def _batch(self, iterations: int) -> tuple[int, int]:
        return _run_external(iterations, self.iterations, self._bound, self.averaging == "pluribus",
                             self.strategy_interval, -1 if self.prune_after is None else self.prune_after,
                             self.prune_prob, self.linear_until, self.discount_interval, self.prune_threshold,
                             self.regret_floor, *self._args(), self._u, self._ui, self._cards, self._used,
                             self._st_node, self._st_j, self._st_row, self._st_v, self._st_vals, self._st_sig,
                             self._st_ok)


class CompiledOutcomeSampling(_Compiled):
    """`OutcomeSamplingMCCFR` (same arguments, same results) compiled, on Kuhn or Leduc poker."""

    def __init__(self, game: Game, seed: int = 0, *, epsilon: float = 0.6, dealt: DealtGame | None = None):
        if not 0.0 < epsilon <= 1.0:
            raise MCCFRConfigError(f"epsilon must be in (0, 1], got {epsilon}")
        super().__init__(game, seed, dealt)
        self.epsilon = float(epsilon)
        self._st_reach = np.zeros((self.dealt.depth + 1, 3))
        self._st_samp = np.zeros_like(self._st_sig)

    def _batch(self, iterations: int) -> tuple[int, int]:
        return _run_outcome(iterations, self._bound, self.epsilon, *self._args(), self._u, self._ui, self._cards,
                            self._used, self._st_node, self._st_row, self._st_j, self._st_sig, self._st_samp,
                            self._st_reach)
