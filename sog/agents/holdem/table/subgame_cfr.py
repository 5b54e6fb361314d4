"""Linear CFR on a depth-limited subgame with Pluribus's continuation strategies at its leaves.

The game solved (`SubgameCFR`): a `sog.agents.holdem.table.subgame_tree.SubgameTree` over a fixed set of D
deals (`subgame_deals`: private cards and run-outs, each with a chance weight w[d]), i.e. CFR with
the chance events sampled once per search (every deal listed on small games: then it is the
exact subgame). Every decision's strategy is a row per (decision, the actor's hand); at each
continuation leaf every player still able to bet (a "chooser": not folded, not all-in) picks one
of the four continuation strategies (`table_agents.CONTINUATIONS`: blueprint, biased toward
fold, call, raise) at once, not seeing the others' picks, a row per (leaf, chooser, its hand).
After the leaf the hand is played out by those strategies: the leaf's utilities are rollouts
(`Table.rollout`, in big blinds) of every deal under profiles of picks (`leaf_utilities`, one
rollout per (leaf, deal, profile), common random numbers across profiles). Where the 4^c
profiles of c choosers are at most `profiles` all are rolled out and a leaf's value is the exact
expectation sum_s prod_i tau_i(pick_i^s) U^s; beyond that (three or more choosers by default)
only the 1 + 3c profiles with at most one chooser off the blueprint are, and the value is their
additive model U(c) ~ U(0) + sum_i (U(c_i alone) - U(0)) (exact when the deviations' effects
add up; an approximation of the joint play otherwise). Terminal leaves are valued once.

Vector form: an iteration is a forward pass (each player's reach per hand, [S, n, H]) and a
backward pass (every seat's value per deal, [S, D, n]) over the subgame's depths, vectorised
over nodes of a depth, deals and hands (no Python loop over hands or information sets);
the counterfactual regret of (decision x, actor q's hand h, slot a) is
    sum over deals d with q holding h of  w[d] prod_{p != q} reach_p(x, d) (v_q(child_a, d) - v_q(x, d)),
simultaneous updates of all players, linear weighting (iteration t's regrets and average
strategy contributions weighted by t, Pluribus's linear CFR), regret matching with the
blueprint where no regret is positive (so 0 iterations play the blueprint). Hands are
compacted per seat to those appearing in the deals (H <= D), or to the information-state `keys`
given for them (a search's bucketed hands).

Monte Carlo linear CFR (`sample` = k, 0 < k < D, for large subgames): each iteration samples k
of the D deals uniformly without replacement (chance sampled per iteration, seeded) and runs
the same passes on them alone, their weights scaled by D / k, so every regret and leaf-regret
increment is an unbiased estimate of the full iteration's at about k / D of its cost.
"""
from __future__ import annotations

import itertools
import time

import numpy as np

from sog.agents.holdem.table.agents import CONTINUATIONS, ContinuationAgent, TableAgent

PICKS = len(CONTINUATIONS)


class _Prepared(TableAgent):
    """`base` with a fixed context (its `prepare` of the rollout rows, computed once)."""

    def __init__(self, base: TableAgent, ctx):
        self.base, self.ctx, self.name = base, ctx, base.name

    def prepare(self, table, cards):
        return self.ctx

    def probs(self, table, nodes, deals, seats, ctx):
        return self.base.probs(table, nodes, deals, seats, ctx)


def profiles(choosers: int, limit: int) -> np.ndarray:
    """int64 [S, c]: the continuation picks of `choosers` players per profile: all S = 4^c
    (`itertools.product` order) where that is at most `limit`, else the 1 + 3c profiles with at
    most one player off the blueprint (row 0 everyone's blueprint, row 1 + 3i + k - 1 player i
    on pick k = 1..3), the additive model's (module doc)."""
    if PICKS ** choosers <= limit:
        return np.array(list(itertools.product(range(PICKS), repeat=choosers)), np.int64).reshape(PICKS ** choosers,
                                                                                                     choosers)
    out = np.zeros((1 + (PICKS - 1) * choosers, choosers), np.int64)
    for i in range(choosers):
        out[1 + (PICKS - 1) * i + np.arange(PICKS - 1), i] = np.arange(1, PICKS)
    return out


def profile_rollouts(table, nodes: np.ndarray, cards: np.ndarray, blueprint: TableAgent, choosers: np.ndarray,
                     picks: np.ndarray, seed: int) -> np.ndarray:
    """float64 [L, D, S, n]: every seat's chips (big blinds) from the table's nodes `nodes` (int64 [L])
    played out (`Table.rollout`) on deals `cards` (int64 [D, ...]) by the blueprint, seat choosers[i]
    biased by picks[s, i] in profile s (one rollout per (node, deal, profile); the same random
    numbers for every profile)."""
    n, d = table.players, len(cards)
    out = np.zeros((len(nodes), d, len(picks), n))
    if not len(nodes):
        return out
    codes = blueprint.prepare(table, cards)
    ctx = None if codes is None else np.tile(codes, (len(nodes),) + (1,) * (codes.ndim - 1))
    base, rows, start = _Prepared(blueprint, ctx), np.tile(cards, (len(nodes), 1)), np.repeat(nodes, d)
    for s in range(len(picks)):
        agents = [base] * n
        for i, seat in enumerate(choosers):
            agents[seat] = ContinuationAgent(base, CONTINUATIONS[picks[s, i]])
        out[:, :, s] = table.rollout(agents, rows, start, np.random.default_rng(seed)).reshape(len(nodes), d, n)
    return out


def leaf_utilities(table, tree, cards: np.ndarray, blueprint: TableAgent, choosers: np.ndarray, picks: np.ndarray,
                   seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(term float64 [Lt, D, n], cont float64 [Lc, D, S, n]): every seat's chips (big blinds) at
    the terminal leaves, and from the continuation leaves played out on deals `cards` (int64
    [D, ...]) under every profile of `picks` (`profile_rollouts`)."""
    term = profile_rollouts(table, tree.nodes[tree.term], cards, blueprint, np.zeros(0, np.int64),
                            np.zeros((1, 0), np.int64), seed)[:, :, 0]
    return term, profile_rollouts(table, tree.nodes[tree.cont], cards, blueprint, choosers, picks, seed)


def regret_match(regrets: np.ndarray, default: np.ndarray) -> np.ndarray:
    """float64 [..., A]: positive regrets normalised per row, `default` where none is positive."""
    pos = np.maximum(regrets, 0.0)
    total = pos.sum(axis=-1, keepdims=True)
    return np.where(total > 0, pos / np.where(total > 0, total, 1.0), default)


def per_pick(mine: np.ndarray, cont: np.ndarray) -> list:
    """Per chooser i, float64 [Lc, D, 4, n]: every seat's leaf utility when chooser i picks k and the
    other choosers pick by their distributions mine (float [Lc, c, D, 4]), from the utilities of all
    4^c profiles cont (float [Lc, D, 4^c, n], `profiles`' product order): cont read as a tensor with
    one axis of 4 per chooser, the others' axes contracted with their distributions."""
    lc, c, d = mine.shape[:3]
    tensor = cont.reshape((lc, d) + (PICKS,) * c + cont.shape[-1:])
    out = []
    for i in range(c):
        x = tensor
        for j in reversed(range(c)):          # the last axes first, so chooser j's stays at 2 + j
            if j != i:
                x = (x * mine[:, j].reshape((lc, d) + (1,) * j + (PICKS,) + (1,) * (x.ndim - 3 - j))).sum(axis=2 + j)
        out.append(x)
    return out


class SubgameCFR:
    """Linear CFR on `tree` over the deals `hands` (int64 [D, n], -1 for seats not in) with chance
    weights `weights` (float [D]) (module doc). `blueprint` float [Dn, N, K]: the blueprint's
    distribution at each decision for every hand of the deck (the regret-matching default);
    `term`, `cont`: `leaf_utilities`; `choosers` int64 [c]: the seats picking continuations;
    `picks` int64 [S, c]: the profiles; `sample`: deals an iteration (0: all; module doc), drawn
    from `seed`; `frozen` bool [Dn]: decisions that play their `blueprint` rows throughout (a
    searcher's own earlier actions in the round, Pluribus's frozen strategy); `keys` int64 [D, n]:
    each deal's information state per seat where it is not the hand (-1 for seats not in; hands
    sharing a key share their rows, which start from the blueprint's row of the first hand met with
    it; None: the hands)."""

    def __init__(self, tree, hands: np.ndarray, weights: np.ndarray, blueprint: np.ndarray, term: np.ndarray,
                 cont: np.ndarray, choosers: np.ndarray, picks: np.ndarray, sample: int = 0, seed: int = 0,
                 frozen: np.ndarray | None = None, keys: np.ndarray | None = None):
        self.tree, self.weights = tree, np.asarray(weights, dtype=np.float64)
        self.sample = int(sample) if 0 < sample < len(hands) else 0
        self.rng = np.random.default_rng(seed)
        n = hands.shape[1]
        keys = hands if keys is None else keys
        self.uniq, first = zip(*(np.unique(keys[:, p], return_index=True) for p in range(n)))
        self.loc = np.stack([np.searchsorted(u, keys[:, p]) for p, u in enumerate(self.uniq)], axis=1)    # [D, n]
        self.width = h = max(len(u) for u in self.uniq)
        actor = tree.actor[tree.dec]
        pad = np.stack([np.pad(hands[i, p], (0, h - len(i)), mode="edge") for p, i in enumerate(first)])  # [n, H]
        self.default = blueprint[np.arange(len(tree.dec))[:, None], np.maximum(pad[actor], 0)]          # [Dn, H, K]
        k = blueprint.shape[2]
        self.regrets, self.average = np.zeros((len(tree.dec), h, k)), np.zeros((len(tree.dec), h, k))
        self.term, self.cont = term, cont
        self.choosers, self.picks = np.asarray(choosers, np.int64), np.asarray(picks, np.int64)
        self.joint = np.array_equal(self.picks, profiles(len(self.choosers), PICKS ** len(self.choosers)))
        self.leaf_regrets = np.zeros((len(self.choosers), len(tree.cont), h, PICKS))
        self.leaf_default = np.zeros(PICKS)
        self.leaf_default[CONTINUATIONS.index("blueprint")] = 1.0
        self.iterations = 0
        self.frozen = None if frozen is None or not np.any(frozen) else np.asarray(frozen, bool)[:, None, None]

    def strategy(self) -> np.ndarray:
        """float64 [Dn, H, K]: the current strategy (regret matching, the blueprint by default; the
        `frozen` decisions' blueprint rows)."""
        sigma = regret_match(self.regrets, self.default)
        return sigma if self.frozen is None else np.where(self.frozen, self.default, sigma)

    def run(self, iterations: int, seconds: float = 0.0) -> int:
        """At most `iterations` iterations, stopping after `seconds` (0: no limit); returns how many ran."""
        t0, done = time.perf_counter(), 0
        while done < iterations and not (seconds > 0 and time.perf_counter() - t0 >= seconds):
            self.iterate()
            done += 1
        return done

    def iterate(self) -> None:
        """One iteration of simultaneous linear CFR, on a sample of the deals with `sample`
        (module doc)."""
        tree, loc, weights, term, cont = self.tree, self.loc, self.weights, self.term, self.cont
        if self.sample:
            d = np.sort(self.rng.choice(len(loc), self.sample, replace=False))
            loc, term, cont = loc[d], term[:, d], cont[:, d]
            weights = weights[d] * (len(self.loc) / self.sample)
        t = self.iterations = self.iterations + 1
        n, (nodes, width) = loc.shape[1], tree.kids.shape
        sigma = self.strategy()
        reach = np.ones((nodes, n, self.width))                    # each seat's own reach per hand
        for lv in tree.levels:
            j, slot = np.nonzero(tree.kids[lv] >= 0)
            src, dst = lv[j], tree.kids[lv[j], slot]
            reach[dst] = reach[src]
            reach[dst, tree.actor[src]] *= sigma[tree.dec_of[src], :, slot]
        value = np.zeros((nodes, len(loc), n))
        value[tree.term] = term
        if len(tree.cont):
            rest = self._rest(reach, tree.cont, self.choosers[None, :], loc, weights)
            value[tree.cont] = self._leaves(rest, t, loc, cont)
        for lv in reversed(tree.levels):
            at = sigma[tree.dec_of[lv][:, None], loc[:, tree.actor[lv]].T]                   # [m, D, K]
            kids = tree.kids[lv]
            at = np.transpose(at * (kids >= 0)[:, None, :], (0, 2, 1))[..., None]            # [m, K, D, 1]
            value[lv] = (at * value[np.maximum(kids, 0)]).sum(axis=1)
        dec, actor = tree.dec, tree.actor[tree.dec]
        deals = np.arange(len(loc))[None, :]
        kids = tree.kids[dec]                                                                   # [Dn, K]
        mine = value[dec[:, None], deals, actor[:, None]]                                       # [Dn, D]
        kid_v = value[np.maximum(kids, 0)[:, :, None], deals[:, None], actor[:, None, None]]    # [Dn, K, D]
        rest = self._rest(reach, dec, actor[:, None], loc, weights)[:, :, 0]                    # [Dn, D]
        gain = (kid_v - mine[:, None, :]) * (kids >= 0)[:, :, None] * rest[:, None]
        index = (np.arange(len(dec))[:, None] * self.width + loc[:, actor].T).ravel()           # [Dn x D]
        self._scatter(self.regrets, index, t * np.transpose(gain, (0, 2, 1)).reshape(-1, width))
        own = reach[dec, actor]                                                                 # [Dn, H]
        self.average += t * own[:, :, None] * sigma

    @staticmethod
    def _rest(reach: np.ndarray, at: np.ndarray, player: np.ndarray, loc: np.ndarray,
              weights: np.ndarray) -> np.ndarray:
        """float64 [m, D, j]: weights[d] x the product of the reaches on deal d of every seat but
        player[i, j] at local node at[i] (reach float [S, n, H]: each seat's own, per hand; loc
        int [D, n]: each deal's hands, compacted)."""
        n = loc.shape[1]
        pi = reach[at][:, np.arange(n)[None, :], loc]                                          # [m, D, n]
        out = np.empty((len(at), len(loc), player.shape[1]))
        for j in range(player.shape[1]):
            mask = np.arange(n)[None, None, :] == np.broadcast_to(player[:, j], (len(at),))[:, None, None]
            out[:, :, j] = np.where(mask, 1.0, pi).prod(axis=-1)
        return out * weights[None, :, None]

    def _leaves(self, rest: np.ndarray, t: int, loc: np.ndarray, cont: np.ndarray) -> np.ndarray:
        """float64 [Lc, D, n]: every seat's value at the continuation leaves under the choosers'
        current picks (module doc), updating their pick regrets; rest [Lc, D, c]: w x the reach of
        all but chooser i; loc, cont: the iteration's deals' hands and leaf utilities."""
        c = len(self.choosers)
        if c == 0:
            return cont[:, :, 0]
        tau = regret_match(self.leaf_regrets, self.leaf_default)                                # [c, Lc, H, 4]
        mine = np.stack([tau[i][:, loc[:, p]] for i, p in enumerate(self.choosers)], axis=1)     # [Lc, c, D, 4]
        if self.joint:
            full = per_pick(mine, cont)                                                         # c x [Lc, D, 4, n]
            value = (mine[:, 0, :, :, None] * full[0]).sum(axis=2)
        else:
            base = cont[:, :, 0]                                                                # [Lc, D, n]
            lc, d = base.shape[:2]
            delta = np.zeros((lc, d, c, PICKS, base.shape[2]))
            delta[:, :, :, 1:] = cont[:, :, 1:].reshape(lc, d, c, PICKS - 1, -1) - base[:, :, None, None]
            shift = np.einsum("lidk,ldikn->ldin", mine, delta)                                  # [Lc, D, c, n]
            value = base + shift.sum(axis=2)
        for i, p in enumerate(self.choosers):
            if self.joint:
                q = full[i][..., p]
            else:
                q = (value[:, :, p] - shift[:, :, i, p])[..., None] + delta[:, :, i, :, p]
            gain = (q - value[:, :, p, None]) * rest[:, :, i, None]
            index = (np.arange(len(q))[:, None] * self.width + loc[None, :, p]).ravel()
            self._scatter(self.leaf_regrets[i], index, t * gain.reshape(-1, PICKS))
        return value

    @staticmethod
    def _scatter(table: np.ndarray, index: np.ndarray, rows: np.ndarray) -> None:
        """table[..] (float [X, H, A], flattened to [X H, A]) += rows summed by flat row index."""
        flat = table.reshape(-1, table.shape[-1])
        for a in range(rows.shape[1]):
            flat[:, a] += np.bincount(index, weights=rows[:, a], minlength=len(flat))

    def average_strategy(self) -> np.ndarray:
        """float64 [Dn, H, K]: the linearly weighted average strategy, the blueprint where nothing
        has been averaged yet."""
        total = self.average.sum(axis=-1, keepdims=True)
        return np.where(total > 0, self.average / np.where(total > 0, total, 1.0), self.default)
