"""Monte Carlo CFR baselines on the world-state level.

* `OutcomeSamplingMCCFR`: outcome sampling (Lanctot, Waugh, Zinkevich and
  Bowling, "Monte Carlo Sampling for Regret Minimization in Extensive Games",
  NIPS 2009; Lanctot's thesis 2013), alternating updates, epsilon-on-policy
  exploration (epsilon = 0.6, the standard choice, also OpenSpiel's) at the
  traverser's decisions, importance-weighted (counterfactual value / sample
  probability) regrets and the stochastically-weighted average strategy
  (increment `own reach * sigma / sample reach` at the traverser's nodes).
* `ExternalSamplingMCCFR`: external sampling (same paper): chance and the
  opponent are sampled (the opponent from its current regret-matching policy),
  the traverser's actions are enumerated; the traverser alternates (one
  traversal per player per iteration, each with a fresh deal). The average
  strategy uses "simple" averaging: at a sampled opponent decision its whole
  current policy row is added to its average-strategy sums (the opponent's own
  reach is sampled, and the constant per-information-state factor from the
  enumerated traverser and chance cancels when the row is normalised).
* `PluribusMCCFR`: the blueprint algorithm of Pluribus (Brown and Sandholm,
  "Superhuman AI for multiplayer poker", Science 2019, supplement Algorithm 1
  "MCCFR with Negative-Regret Pruning"): external sampling with
  - linear weighting: for `t < linear_until`, every `discount_interval`
    iterations regrets and average-strategy sums are multiplied by
    `d = (t / I) / (t / I + 1)` (Pluribus: I = 10 minutes, for 400 minutes;
    here counted in iterations);
  - negative-regret pruning: after `prune_after` iterations, a traversal runs
    unpruned with probability `prune_prob` (Pluribus: 5%) and otherwise skips
    traverser actions whose regret is at or below `prune_threshold` (Pluribus:
    -300,000,000 in its units; here `-300 * spec.max_utility` by default),
    except actions that immediately reach a terminal (as in Pluribus; the
    "last betting round" exception is poker-specific and not applied);
  - a regret floor (Pluribus: -310,000,000; here `-310 * max_utility`);
  - the average strategy is accumulated by a separate Update-Strategy pass
    every `strategy_interval` iterations: the player's own actions are
    sampled from its current policy, other players' actions enumerated and
    chance sampled. Pluribus increments a counter of the sampled action; we
    add the whole current policy row at each visited own decision (its
    expectation, so the same average with less variance) and then sample.
    Pluribus tracks the average only on the first betting round and uses
    current-strategy snapshots later because six-player poker has no
    convergence guarantee; in two-player zero-sum games we track it everywhere.

Vectorised: every variant runs its traversals in batches (`batch` iterations at
a time, i.e. `batch` traversals per player) over a flat world-state tree
(`sog.agents.sampling.world_tree.WorldTree`): a batch moves all its trajectories one
level down per step with array operations (regret matching, sampling, child
lookup) and backs values up level by level, so there is no Python call per
world state. All traversals of a batch sample with the same current policy and
their regret and average-strategy increments are summed into the tables after
the batch (minibatch MCCFR: each increment is still an unbiased estimate of
the counterfactual regret at that policy); `batch=1` is the textbook one
traversal per update. An iteration is still one traversal per player, so
iteration counts compare directly with OpenSpiel's samplers.

Storage: information state = (public state, actor slot) -> a row of float
[R, A] regret and average-sum tables (a block of N rows per decision public
state); `regrets` / `avg_sums` show them as `dict pub -> [N, A]` views, and
`policy()` is directly a `TabularPolicy`. All randomness comes from one
`numpy.random.Generator` seeded by `seed`, so runs are reproducible.
"""
from __future__ import annotations

import abc

import numpy as np

from sog.agents.sampling.common import Budget
from sog.agents.sampling.world_tree import CHANCE, DECISION, TERMINAL, WorldTree
from sog.games.api import Game
from sog.policy import TabularPolicy

__all__ = ["OutcomeSamplingMCCFR", "ExternalSamplingMCCFR", "PluribusMCCFR", "regret_matching"]

DEFAULT_BATCH = 1024
MIN_BATCH = 8
BATCH_GROWTH = 16


def regret_matching(regrets: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """float [n, A]: each row's positive regrets normalised over its legal actions
    (bool [n, A]); uniform over the legal actions where none is positive."""
    pos = np.where(legal, np.maximum(regrets, 0.0), 0.0)
    total = pos.sum(axis=1, keepdims=True)
    uniform = legal / np.maximum(legal.sum(axis=1, keepdims=True), 1)
    return np.where(total > 0, pos / np.where(total > 0, total, 1.0), uniform)


def sample_rows(rng: np.random.Generator, p: np.ndarray) -> np.ndarray:
    """int [n]: one column per row of p (float [n, A], rows with a positive sum), drawn
    proportionally to the row; never a zero-probability column."""
    cum = np.cumsum(p, axis=1)
    u = rng.random(len(p)) * cum[:, -1]
    j = (u[:, None] >= cum).sum(axis=1)
    last = p.shape[1] - 1 - np.argmax(p[:, ::-1] > 0, axis=1)
    return np.minimum(j, last)


def _tabulate(game: Game, tree: WorldTree, table: np.ndarray, clip) -> TabularPolicy:
    """A TabularPolicy from per-row weights (float [R, A]): clip(weights) normalised over the
    legal actions, uniform where they sum to zero."""
    out = {}
    n = tree.num_slots
    for pub, base in tree.row_base.items():
        legal = game.cached("legal_mask", pub)
        w = np.where(legal, clip(table[base:base + n]), 0.0)
        tot = w.sum(axis=1, keepdims=True)
        unif = legal / np.maximum(legal.sum(axis=1, keepdims=True), 1)
        out[pub] = np.where(tot > 0, w / np.where(tot > 0, tot, 1.0), unif)
    return TabularPolicy(game, out)


class _MCCFRBase(abc.ABC):
    """Tables, the batched run loop and policy extraction shared by the variants."""

    def __init__(self, game: Game, seed: int = 0, batch: int = DEFAULT_BATCH):
        if int(batch) < 1:
            raise ValueError(f"batch must be at least 1, got {batch}")
        self.game = game
        self.rng = np.random.default_rng(seed)
        self.tree = WorldTree(game)
        self.batch = int(batch)
        self.num_actions = game.spec.num_actions
        self._regret = np.zeros((0, self.num_actions))
        self._avg = np.zeros((0, self.num_actions))
        self.iterations = 0
        self.nodes_touched = 0

    # ---- tables --------------------------------------------------------------
    def _expand(self, nodes: np.ndarray) -> None:
        """Materialise the children of `nodes` and grow the tables to the rows they created."""
        self.tree.ensure_expanded(nodes)
        self._grow_tables()

    def _grow_tables(self) -> None:
        """Every table at least as long as the tree's allocated rows (doubling)."""
        rows = self.tree.num_rows
        if rows > len(self._regret):
            cap = max(rows, 2 * len(self._regret))
            for name in ("_regret", "_avg"):
                old = getattr(self, name)
                new = np.zeros((cap, self.num_actions))
                new[:len(old)] = old
                setattr(self, name, new)

    def _decisions(self, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(rows int [n], legal bool [n, A], current policy float [n, A]) of decision nodes."""
        rows = self.tree.row[nodes]
        legal = self.tree.children[nodes, :self.num_actions] >= 0
        return rows, legal, regret_matching(self._regret[rows], legal)

    def _block_views(self, table: np.ndarray) -> dict:
        n = self.tree.num_slots
        return {pub: table[base:base + n] for pub, base in self.tree.row_base.items()}

    @property
    def regrets(self) -> dict:
        """decision pub -> float [N, A] view of the cumulative regrets."""
        return self._block_views(self._regret)

    @property
    def avg_sums(self) -> dict:
        """decision pub -> float [N, A] view of the average-strategy sums."""
        return self._block_views(self._avg)

    # ---- running ---------------------------------------------------------------
    def run(self, iterations: int | None = None, seconds: float | None = None) -> int:
        """Run until `iterations` more iterations or `seconds` elapse (checked between
        batches); returns the iterations done now."""
        budget = Budget(iterations, seconds)
        while budget.more():
            n = self._batch_size(budget.chunk(self._growing_batch()))
            self._batch(n)
            self.iterations += n
            budget.done += n
        return budget.done

    def _growing_batch(self) -> int:
        """Batches grow with the run, `iterations / BATCH_GROWTH` (at least MIN_BATCH, at most
        `batch`): early on the policy changes fast and needs frequent updates, later
        bigger batches buy throughput at little cost in progress per iteration."""
        return min(self.batch, max(MIN_BATCH, self.iterations // BATCH_GROWTH))

    def _batch_size(self, n: int) -> int:
        """The size of the next batch given that at most n may run (hook for Pluribus)."""
        return n

    @abc.abstractmethod
    def _batch(self, n: int) -> None:
        """n iterations: n traversals per player."""

    def policy(self) -> TabularPolicy:
        """The average policy (normalised average-strategy sums; uniform where never updated)."""
        return _tabulate(self.game, self.tree, self._avg, lambda w: w)

    def current_policy(self) -> TabularPolicy:
        """The current regret-matching policy."""
        return _tabulate(self.game, self.tree, self._regret, lambda r: np.maximum(r, 0.0))

    def _prunable(self, nodes: np.ndarray) -> np.ndarray:
        """bool [n]: whether negative-regret pruning may skip actions at these traverser
        decision nodes (all of them here; hold'em's blueprint exempts the last betting round)."""
        return np.ones(len(nodes), dtype=bool)

    def _averaged(self, nodes: np.ndarray) -> np.ndarray:
        """The nodes an Update-Strategy pass goes on from (all here; Pluribus's blueprint stops
        after the first betting round)."""
        return nodes

    # ---- external-sampling machinery (shared by external and Pluribus) ----------
    def _external(self, player: int, n: int, average: bool, prune: np.ndarray | None = None,
                  threshold: float = 0.0, floor: float | None = None) -> None:
        """n external-sampling traversals for `player`, each from its own deal: chance and
        the opponent sampled (the opponent's policy row added to its average sums when
        `average`), the traverser's actions enumerated, except, in traversals flagged by
        `prune` (bool [n]), actions with regret <= threshold that do not end the game.
        Regrets are floored at `floor` when given."""
        tree, rng, A = self.tree, self.rng, self.num_actions
        node = tree.sample_roots(rng, n)
        parent = np.full(n, -1)
        action = np.zeros(n, dtype=np.int64)
        trav = np.arange(n)
        levels = []
        while len(node):
            self._expand(node)
            self.nodes_touched += len(node)
            kind, actor = tree.kind[node], tree.actor[node]
            ci = np.flatnonzero(kind == CHANCE)
            oi = np.flatnonzero((kind == DECISION) & (actor != player))
            mi = np.flatnonzero((kind == DECISION) & (actor == player))
            o_rows, _, o_sigma = self._decisions(node[oi])
            if average:
                np.add.at(self._avg, o_rows, o_sigma)
            m_rows, m_legal, m_sigma = self._decisions(node[mi])
            explored = m_legal
            if prune is not None and len(mi):
                kids = tree.children[node[mi], :A]
                skip = (prune[trav[mi]][:, None] & self._prunable(node[mi])[:, None] & m_legal
                        & (self._regret[m_rows] <= threshold)
                        & (tree.kind[np.maximum(kids, 0)] != TERMINAL))
                explored = m_legal & ~skip
                self.skipped_actions += int(skip.sum())
            ii, aa = np.nonzero(explored)
            o_act = sample_rows(rng, o_sigma) if len(oi) else np.zeros(0, dtype=np.int64)
            levels.append((node, kind, parent, action, mi, m_rows, m_sigma, explored))
            node = np.concatenate([tree.sample_chance(node[ci], rng), tree.children[node[oi], o_act],
                                   tree.children[node[mi][ii], aa]])
            parent = np.concatenate([ci, oi, mi[ii]])
            action = np.concatenate([np.zeros(len(ci), dtype=np.int64), o_act, aa])
            trav = trav[parent]
        sign = 1.0 if player == 0 else -1.0
        below = None   # (values, parent, action) of the level below
        for node, kind, parent, action, mi, rows, sigma, explored in reversed(levels):
            value = np.where(kind == TERMINAL, sign * tree.utility[node], 0.0)
            if below is not None:
                v_child, p_child, a_child = below
                at_mine = np.full(len(node), -1)
                at_mine[mi] = np.arange(len(mi))
                mine = at_mine[p_child] >= 0
                value[p_child[~mine]] = v_child[~mine]            # sampled chance / opponent
                cv = np.zeros((len(mi), A))
                cv[at_mine[p_child[mine]], a_child[mine]] = v_child[mine]
                v = (sigma * cv * explored).sum(axis=1)
                value[mi] = v
                np.add.at(self._regret, rows, np.where(explored, cv - v[:, None], 0.0))
                if floor is not None:
                    self._regret[rows] = np.maximum(self._regret[rows], floor)
            below = (value, parent, action)


class OutcomeSamplingMCCFR(_MCCFRBase):
    """Outcome-sampling MCCFR (Lanctot et al. 2009) with alternating updates.

    One iteration = one sampled episode per player (each with a fresh deal),
    that player being the traverser (the "update player"); a batch samples n
    episodes for player 0, updates, then n for player 1.
    """

    def __init__(self, game: Game, seed: int = 0, epsilon: float = 0.6, batch: int = DEFAULT_BATCH):
        super().__init__(game, seed, batch)
        self.epsilon = float(epsilon)

    def _batch(self, n: int) -> None:
        for player in (0, 1):
            self._episodes(player, n)

    def _episodes(self, player: int, n: int) -> None:
        tree, rng, A, eps = self.tree, self.rng, self.num_actions, self.epsilon
        node = tree.sample_roots(rng, n)
        traj = np.arange(n)
        my, opp, q = np.ones(n), np.ones(n), np.ones(n)   # own, others', sample reach
        value = np.zeros(n)
        steps = []
        while len(traj):
            self._expand(node)
            self.nodes_touched += len(node)
            kind = tree.kind[node]
            term = kind == TERMINAL
            value[traj[term]] = (1.0 if player == 0 else -1.0) * tree.utility[node[term]]
            nxt = np.full(len(node), -1)
            ch = kind == CHANCE
            nxt[ch] = tree.sample_chance(node[ch], rng)       # on-policy: cancels in opp / q
            dec = np.flatnonzero(kind == DECISION)
            if len(dec):
                d, t = node[dec], traj[dec]
                rows, legal, sigma = self._decisions(d)
                me = tree.actor[d] == player
                explore = eps * legal / legal.sum(axis=1, keepdims=True) + (1.0 - eps) * sigma
                sp = np.where(me[:, None], explore, sigma)
                a = sample_rows(rng, sp)
                r = np.arange(len(d))
                s_a, q_a = sigma[r, a], sp[r, a]
                steps.append((t, rows, legal, sigma, a, q_a, me, my[t], opp[t], q[t]))
                my[t] *= np.where(me, s_a, 1.0)
                opp[t] *= np.where(me, 1.0, s_a)
                q[t] *= q_a
                nxt[dec] = tree.children[d, a]
            keep = ~term
            traj, node = traj[keep], nxt[keep]
        # Back up importance-weighted values (zero baseline: only the sampled action is nonzero).
        for t, rows, legal, sigma, a, q_a, me, my0, opp0, q0 in reversed(steps):
            r = np.arange(len(t))
            child = value[t] / q_a
            v = sigma[r, a] * child
            value[t] = v
            m = np.flatnonzero(me)
            if len(m):
                vals = np.zeros((len(m), A))
                vals[np.arange(len(m)), a[m]] = child[m]
                w = (opp0[m] / q0[m])[:, None]
                np.add.at(self._regret, rows[m], np.where(legal[m], w * (vals - v[m, None]), 0.0))
                np.add.at(self._avg, rows[m], (my0[m] / q0[m])[:, None] * sigma[m])


class ExternalSamplingMCCFR(_MCCFRBase):
    """External-sampling MCCFR (Lanctot et al. 2009), alternating traversers, simple averaging."""

    def _batch(self, n: int) -> None:
        for player in (0, 1):
            self._external(player, n, average=True)


class PluribusMCCFR(_MCCFRBase):
    """Pluribus' blueprint MCCFR: external sampling + linear weighting + negative-regret pruning.

    Parameters (iteration counts stand in for Pluribus' minutes):
      discount_interval: iterations between linear-weighting discounts (Pluribus: 10 min).
      linear_until: discounting happens only while t < linear_until (Pluribus: 400 min).
      prune_after: pruning starts once t > prune_after (Pluribus: 200 min).
      prune_prob: probability that a traversal after the warm-up is *not* pruned
        (Pluribus: 0.05, i.e. 95% of traversals prune).
      prune_threshold: C; actions with regret <= C are skipped when pruning
        (default -300 * spec.max_utility).
      regret_floor: regrets are clipped from below here (default -310 * max_utility).
      strategy_interval: iterations between average-strategy passes (Pluribus: 10,000;
        1 by default here, since our games are small).
    Batches never straddle a discount: one ends at every multiple of discount_interval
    below linear_until.
    """

    def __init__(self, game: Game, seed: int = 0, discount_interval: int = 100,
                 linear_until: int = 4000, prune_after: int = 2000, prune_prob: float = 0.05,
                 prune_threshold: float | None = None, regret_floor: float | None = None,
                 strategy_interval: int = 1, batch: int = DEFAULT_BATCH):
        super().__init__(game, seed, batch)
        u = float(game.spec.max_utility)
        self.discount_interval = int(discount_interval)
        self.linear_until = int(linear_until)
        self.prune_after = int(prune_after)
        self.prune_prob = float(prune_prob)
        self.prune_threshold = -300.0 * u if prune_threshold is None else float(prune_threshold)
        self.regret_floor = -310.0 * u if regret_floor is None else float(regret_floor)
        if self.regret_floor > self.prune_threshold:
            raise ValueError("regret_floor must be <= prune_threshold")
        self.strategy_interval = int(strategy_interval)
        self.pruned_traversals = 0
        self.skipped_actions = 0

    def _batch_size(self, n: int) -> int:
        t, interval = self.iterations, self.discount_interval
        if t < self.linear_until:
            n = min(n, interval - t % interval)
        return n

    def _batch(self, n: int) -> None:
        t = self.iterations + np.arange(1, n + 1)   # the batch's iteration numbers
        for player in (0, 1):
            updates = int((t % self.strategy_interval == 0).sum())
            if updates:
                self._update_strategy(player, updates)
            prune = (t > self.prune_after) & (self.rng.random(n) >= self.prune_prob)
            self.pruned_traversals += int(prune.sum())
            self._external(player, n, average=False, prune=prune, threshold=self.prune_threshold,
                           floor=self.regret_floor)
        end = int(t[-1])
        if end < self.linear_until and end % self.discount_interval == 0:
            k = end / self.discount_interval
            d = k / (k + 1.0)
            self._regret *= d
            self._avg *= d

    def _update_strategy(self, player: int, n: int) -> None:
        """Pluribus' Update-Strategy pass, n times: the player's actions sampled from its current
        policy (whose row is added to its average sums), the other's enumerated, chance sampled."""
        tree, rng = self.tree, self.rng
        node = tree.sample_roots(rng, n)
        while len(node):
            node = self._averaged(node)
            self._expand(node)
            kind, actor = tree.kind[node], tree.actor[node]
            ci = np.flatnonzero(kind == CHANCE)
            mi = np.flatnonzero((kind == DECISION) & (actor == player))
            oi = np.flatnonzero((kind == DECISION) & (actor != player))
            rows, _, sigma = self._decisions(node[mi])
            np.add.at(self._avg, rows, sigma)
            mine = tree.children[node[mi], sample_rows(rng, sigma)] if len(mi) else np.zeros(0, np.int64)
            others = tree.children[node[oi], :self.num_actions]
            node = np.concatenate([tree.sample_chance(node[ci], rng), mine, others[others >= 0]])
