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

Storage: information state = (public state, actor slot); regrets and average
sums are float [N, A] arrays per decision public state (`dict pub -> array`),
so `policy()` is directly a `TabularPolicy`. All randomness comes from one
`numpy.random.Generator` seeded by `seed`, so runs are reproducible.
"""
from __future__ import annotations

import abc

import numpy as np

from sog.agents.common import CHANCE, TERMINAL, Budget, World, WorldStepper, sample_index
from sog.eval.policy import TabularPolicy
from sog.games.api import Game

__all__ = ["OutcomeSamplingMCCFR", "ExternalSamplingMCCFR", "PluribusMCCFR", "regret_matching"]


def regret_matching(regrets: np.ndarray) -> np.ndarray:
    """float [k]: positive part normalised, uniform when no regret is positive."""
    pos = np.maximum(regrets, 0.0)
    total = pos.sum()
    if total > 0:
        return pos / total
    return np.full(len(regrets), 1.0 / len(regrets))


class _MCCFRBase(abc.ABC):
    """Tables, the run loop and policy extraction shared by the variants."""

    def __init__(self, game: Game, seed: int = 0):
        self.game = game
        self.rng = np.random.default_rng(seed)
        self.stepper = WorldStepper(game)
        n, a = game.spec.num_states, game.spec.num_actions
        self._shape = (n, a)
        self.regrets: dict = {}      # pub -> float [N, A]
        self.avg_sums: dict = {}     # pub -> float [N, A]
        self.iterations = 0
        self.nodes_touched = 0

    def _tables(self, pub) -> tuple[np.ndarray, np.ndarray]:
        r = self.regrets.get(pub)
        if r is None:
            r = self.regrets[pub] = np.zeros(self._shape)
            self.avg_sums[pub] = np.zeros(self._shape)
        return r, self.avg_sums[pub]

    def run(self, iterations: int | None = None, seconds: float | None = None) -> int:
        """Run until `iterations` more iterations or `seconds` elapse; returns iterations done now."""
        budget = Budget(iterations, seconds)
        for _ in budget:
            self.iterations += 1
            self._iteration()
        return budget.done

    @abc.abstractmethod
    def _iteration(self) -> None:
        """One iteration: a traversal per player."""

    def policy(self) -> TabularPolicy:
        """The average policy (normalised average-strategy sums; uniform where never updated)."""
        table = {}
        for pub, sums in self.avg_sums.items():
            legal = self.game.cached("legal_mask", pub)
            s = np.where(legal, sums, 0.0)
            tot = s.sum(axis=1, keepdims=True)
            unif = legal / np.maximum(legal.sum(axis=1, keepdims=True), 1)
            table[pub] = np.where(tot > 0, s / np.where(tot > 0, tot, 1.0), unif)
        return TabularPolicy(self.game, table)

    def current_policy(self) -> TabularPolicy:
        """The current regret-matching policy."""
        table = {}
        for pub, reg in self.regrets.items():
            legal = self.game.cached("legal_mask", pub)
            pos = np.where(legal, np.maximum(reg, 0.0), 0.0)
            tot = pos.sum(axis=1, keepdims=True)
            unif = legal / np.maximum(legal.sum(axis=1, keepdims=True), 1)
            table[pub] = np.where(tot > 0, pos / np.where(tot > 0, tot, 1.0), unif)
        return TabularPolicy(self.game, table)


class OutcomeSamplingMCCFR(_MCCFRBase):
    """Outcome-sampling MCCFR (Lanctot et al. 2009) with alternating updates.

    One iteration = one sampled episode per player (each with a fresh deal),
    that player being the traverser (the "update player").
    """

    def __init__(self, game: Game, seed: int = 0, epsilon: float = 0.6):
        super().__init__(game, seed)
        self.epsilon = float(epsilon)

    def _iteration(self) -> None:
        for player in (0, 1):
            self._episode(self.stepper.deal(self.rng), player, 1.0, 1.0, 1.0)

    def _episode(self, w: World, player: int, my_reach: float, opp_reach: float,
                 sample_reach: float) -> float:
        st = self.stepper
        self.nodes_touched += 1
        kind = st.kind(w.pub)
        if kind == TERMINAL:
            return st.returns(w, player)
        if kind == CHANCE:
            # Chance is sampled on-policy: its probability cancels in opp_reach / sample_reach.
            return self._episode(st.sample_chance(w, self.rng), player, my_reach, opp_reach, sample_reach)
        actor = st.actor(w.pub)
        slot = w.slots[actor]
        legal = st.legal(w.pub, slot)
        reg, avg = self._tables(w.pub)
        sigma = regret_matching(reg[slot, legal])
        k = len(legal)
        if actor == player:
            sample_p = self.epsilon / k + (1.0 - self.epsilon) * sigma
        else:
            sample_p = sigma
        i = sample_index(self.rng, sample_p)
        if actor == player:
            child_value = self._episode(st.child(w, legal[i]), player, my_reach * sigma[i], opp_reach,
                                        sample_reach * sample_p[i])
        else:
            child_value = self._episode(st.child(w, legal[i]), player, my_reach, opp_reach * sigma[i],
                                        sample_reach * sample_p[i])
        # Importance-weighted child values (zero baseline): only the sampled action is nonzero.
        values = np.zeros(k)
        values[i] = child_value / sample_p[i]
        value = float(sigma @ values)
        if actor == player:
            w_cf = opp_reach / sample_reach
            reg[slot, legal] += w_cf * (values - value)
            avg[slot, legal] += (my_reach / sample_reach) * sigma
        return value


class ExternalSamplingMCCFR(_MCCFRBase):
    """External-sampling MCCFR (Lanctot et al. 2009), alternating traversers, simple averaging."""

    def _iteration(self) -> None:
        for player in (0, 1):
            self._traverse(self.stepper.deal(self.rng), player)

    def _traverse(self, w: World, player: int) -> float:
        st = self.stepper
        self.nodes_touched += 1
        kind = st.kind(w.pub)
        if kind == TERMINAL:
            return st.returns(w, player)
        if kind == CHANCE:
            return self._traverse(st.sample_chance(w, self.rng), player)
        actor = st.actor(w.pub)
        slot = w.slots[actor]
        legal = st.legal(w.pub, slot)
        reg, avg = self._tables(w.pub)
        sigma = regret_matching(reg[slot, legal])
        if actor == player:
            values = np.array([self._traverse(st.child(w, a), player) for a in legal])
            value = float(sigma @ values)
            reg[slot, legal] += values - value
            return value
        avg[slot, legal] += sigma
        return self._traverse(st.child(w, legal[sample_index(self.rng, sigma)]), player)


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
    """

    def __init__(self, game: Game, seed: int = 0, discount_interval: int = 100,
                 linear_until: int = 4000, prune_after: int = 2000, prune_prob: float = 0.05,
                 prune_threshold: float | None = None, regret_floor: float | None = None,
                 strategy_interval: int = 1):
        super().__init__(game, seed)
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

    def _iteration(self) -> None:
        t = self.iterations
        for player in (0, 1):
            if t % self.strategy_interval == 0:
                self._update_strategy(self.stepper.deal(self.rng), player)
            prune = t > self.prune_after and self.rng.random() >= self.prune_prob
            self.pruned_traversals += prune
            self._traverse(self.stepper.deal(self.rng), player, prune)
        if t < self.linear_until and t % self.discount_interval == 0:
            k = t / self.discount_interval
            d = k / (k + 1.0)
            for table in (self.regrets, self.avg_sums):
                for arr in table.values():
                    arr *= d

    def _update_strategy(self, w: World, player: int) -> None:
        st = self.stepper
        kind = st.kind(w.pub)
        if kind == TERMINAL:
            return
        if kind == CHANCE:
            self._update_strategy(st.sample_chance(w, self.rng), player)
            return
        actor = st.actor(w.pub)
        slot = w.slots[actor]
        legal = st.legal(w.pub, slot)
        if actor == player:
            reg, avg = self._tables(w.pub)
            sigma = regret_matching(reg[slot, legal])
            avg[slot, legal] += sigma
            self._update_strategy(st.child(w, legal[sample_index(self.rng, sigma)]), player)
        else:
            for a in legal:
                self._update_strategy(st.child(w, a), player)

    def _traverse(self, w: World, player: int, prune: bool) -> float:
        st = self.stepper
        self.nodes_touched += 1
        kind = st.kind(w.pub)
        if kind == TERMINAL:
            return st.returns(w, player)
        if kind == CHANCE:
            return self._traverse(st.sample_chance(w, self.rng), player, prune)
        actor = st.actor(w.pub)
        slot = w.slots[actor]
        legal = st.legal(w.pub, slot)
        reg, _ = self._tables(w.pub)
        row = reg[slot, legal]
        sigma = regret_matching(row)
        if actor != player:
            return self._traverse(st.child(w, legal[sample_index(self.rng, sigma)]), player, prune)
        explored = np.ones(len(legal), dtype=bool)
        values = np.zeros(len(legal))
        for j, a in enumerate(legal):
            child = st.child(w, a)
            if prune and row[j] <= self.prune_threshold and st.kind(child.pub) != TERMINAL:
                explored[j] = False
                self.skipped_actions += 1
                continue
            values[j] = self._traverse(child, player, prune)
        # Skipped actions have regret <= C < 0, so their sigma is 0 unless all are negative
        # (then sigma is uniform and the skipped ones are left out of v, as in Algorithm 1).
        value = float(sigma[explored] @ values[explored])
        idx = legal[explored]
        reg[slot, idx] = np.maximum(reg[slot, idx] + values[explored] - value, self.regret_floor)
        return value
