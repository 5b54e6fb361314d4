"""External-sampling MCCFR for n players, with Pluribus' linear weighting and pruning; outcome sampling.

Brown and Sandholm, "Superhuman AI for multiplayer poker" (Science 2019),
supplement Algorithm 1 (MCCFR with negative-regret pruning), on an n-player
game of `sog.multiplayer.api`. One iteration t = 1, 2, ... is one traversal per
player p = 0..n-1 in turn, each from a fresh sampled deal:

* Traverse-MCCFR(p): chance and every other player sampled (the others from
  their current regret-matching policies), all of p's actions explored; at p's
  information set I, v(h, a) from the children, v(h) = sum_a sigma(I, a) v(h, a),
  R(I, a) += v(h, a) - v(h).
* Pruning (`prune_after`: None turns it off): once t > prune_after, a traversal
  is unpruned with probability `prune_prob` (Pluribus: 0.05) and otherwise
  skips p's actions with R(I, a) <= `prune_threshold` unless they end the game
  at once or the game's state says not to prune there (`State.prunable()`:
  hold'em's last betting round, as Pluribus); skipped actions get no regret
  update and no weight in v(h). With pruning on, regrets are floored at
  `regret_floor` (Pluribus: -310M against a threshold of -300M; here by
  default -310 and -300 times the game's utility bound).
* Linear weighting: after iteration t, if t < `linear_until` and t is a
  multiple of `discount_interval`, regrets and average-strategy sums are
  multiplied by d = (t / I) / (t / I + 1), I = discount_interval (Pluribus
  counts minutes: I = 10 for the first 400; here iterations).
* Average strategy, `averaging`:
  - "simple" (default): OpenSpiel's rule for its external-sampling solvers:
    during p's traversal, at the sampled decisions of player (p + 1) mod n,
    that player's current policy row is added to its sums (in two players,
    the usual opponent-node averaging).
  - "pluribus": Update-Strategy(p) every `strategy_interval` iterations (before
    p's traversal): chance sampled, p's actions sampled from its current
    policy, every other player's actions enumerated; at p's sets the whole
    current policy row is added (the expectation of Pluribus' +1 on the sampled
    action, with less variance).

`OutcomeSamplingMCCFR` is outcome sampling (see its docstring), on the same tables.

Storage: information sets get rows as the traversals meet them (a lazily grown
`WorldTree`: a dict from key to row plus per-node lists); regrets and
average-strategy sums are numpy arrays float64 [rows, num_actions] (column j is
the row's j-th legal action), doubled in size when rows outgrow them. All
randomness comes from one `numpy.random.Generator(seed)` (uniforms drawn in
blocks), so a run is reproducible bit for bit.
"""
from __future__ import annotations

import abc

import numpy as np

from sog.errors import SogError
from sog.multiplayer.api import CHANCE, TERMINAL, Game
from sog.multiplayer.policy import Policy, rows_to_policy
from sog.multiplayer.tree import WorldTree

AVERAGING = ("simple", "pluribus")
UNIFORM_BLOCK = 1 << 16


class MCCFRConfigError(SogError, ValueError):
    """An MCCFR setting out of its range."""


def pluribus_settings(game: Game, *, linear_until: int = 0, discount_interval: int = 1,
                      prune_after: int | None = None, prune_prob: float = 0.05,
                      prune_threshold: float | None = None, regret_floor: float | None = None,
                      averaging: str = "simple", strategy_interval: int = 1) -> dict:
    """The external-sampling settings (see the module docstring) checked, defaults filled in;
    MCCFRConfigError for one out of its range."""
    if averaging not in AVERAGING:
        raise MCCFRConfigError(f"averaging must be one of {', '.join(AVERAGING)}, got {averaging!r}")
    if discount_interval < 1 or strategy_interval < 1 or linear_until < 0:
        raise MCCFRConfigError("discount_interval and strategy_interval must be >= 1, "
                               "linear_until >= 0")
    if not 0.0 <= prune_prob <= 1.0:
        raise MCCFRConfigError(f"prune_prob must be in [0, 1], got {prune_prob}")
    if prune_after is not None and prune_after < 0:
        raise MCCFRConfigError(f"prune_after must be >= 0 (or None: no pruning), got {prune_after}")
    u = float(game.max_utility)
    threshold = -300.0 * u if prune_threshold is None else float(prune_threshold)
    floor = -310.0 * u if regret_floor is None else float(regret_floor)
    if floor > threshold:
        raise MCCFRConfigError("regret_floor must be <= prune_threshold")
    return {"linear_until": int(linear_until), "discount_interval": int(discount_interval),
            "prune_after": None if prune_after is None else int(prune_after), "prune_prob": float(prune_prob),
            "prune_threshold": threshold, "regret_floor": floor, "averaging": averaging,
            "strategy_interval": int(strategy_interval)}


class _TreeSolver(abc.ABC):
    """The lazily grown world tree, per-row tables and uniforms of the world-state solvers."""

    def __init__(self, game: Game, seed: int):
        self.game, self.num_players = game, game.num_players
        self.rng = np.random.default_rng(seed)
        self._u: list[float] = []
        self._ui = 0
        self.tree = WorldTree(game)
        self.regret = np.zeros((64, game.num_actions))
        self.avg = np.zeros((64, game.num_actions))
        self.iterations = 0
        self.nodes_touched = 0
        self.pruned_traversals = 0
        self.skipped_actions = 0

    @abc.abstractmethod
    def iteration(self) -> None:
        """One iteration: an update per player."""

    def run(self, iterations: int) -> None:
        """`iterations` more iterations."""
        for _ in range(int(iterations)):
            self.iteration()

    # ---- policies -------------------------------------------------------------------------
    def average_policy(self) -> Policy:
        """The normalised average-strategy sums at every information set met so far (uniform
        where never updated), as an OpenSpiel-style policy dict; unmet sets are absent
        (`sog.multiplayer.policy.completed` fills them uniformly)."""
        return rows_to_policy(self.tree, self.avg)

    def current_policy(self) -> Policy:
        """The current regret-matching policy at every information set met so far."""
        return rows_to_policy(self.tree, np.maximum(self.regret, 0.0))

    # ---- randomness and tables -----------------------------------------------------
    def _uniform(self) -> float:
        if self._ui == len(self._u):
            self._u, self._ui = self.rng.random(UNIFORM_BLOCK).tolist(), 0
        self._ui += 1
        return self._u[self._ui - 1]

    def _expand(self, node: int) -> int:
        first = self.tree.expand(node)
        rows = self.tree.num_rows
        if rows > len(self.regret):
            cap = max(rows, 2 * len(self.regret))
            for name in ("regret", "avg"):
                old = getattr(self, name)
                new = np.zeros((cap, old.shape[1]))
                new[:len(old)] = old
                setattr(self, name, new)
        return first

    def _sigma(self, row: int, k: int) -> list[float]:
        """The current regret-matching policy at `row` over its k legal actions."""
        pos = [max(0.0, r) for r in self.regret[row, :k].tolist()]
        total = sum(pos)
        return [x / total for x in pos] if total > 0.0 else [1.0 / k] * k

    def _pick(self, probs) -> int:
        """An index drawn from `probs` (probabilities summing to 1)."""
        u, acc = self._uniform(), 0.0
        for j, q in enumerate(probs):
            acc += q
            if u < acc:
                return j
        return len(probs) - 1

    def _pick_cum(self, cum) -> int:
        u = self._uniform() * cum[-1]
        for j, c in enumerate(cum):
            if u < c:
                return j
        return len(cum) - 1


class ExternalSamplingMCCFR(_TreeSolver):
    """Pluribus-style external-sampling MCCFR on an n-player game; see the module docstring.

    `linear_until=0` turns linear weighting off; `prune_after=None` turns pruning off.
    """

    def __init__(self, game: Game, seed: int = 0, **settings):
        s = pluribus_settings(game, **settings)
        super().__init__(game, seed)
        self.linear_until, self.discount_interval = s["linear_until"], s["discount_interval"]
        self.prune_after, self.prune_prob = s["prune_after"], s["prune_prob"]
        self.prune_threshold, self.regret_floor = s["prune_threshold"], s["regret_floor"]
        self.averaging, self.strategy_interval = s["averaging"], s["strategy_interval"]

    # ---- traversals --------------------------------------------------------------------
    def _traverse(self, node: int, p: int, prune: bool) -> float:
        """Traverse-MCCFR(-P) from `node` for traverser p; returns p's sampled value v(h)."""
        tree = self.tree
        self.nodes_touched += 1
        actor = tree.player[node]
        if actor == TERMINAL:
            return tree.utility[node][p]
        first = tree.first[node]
        if first < 0:
            first = self._expand(node)
        if actor == CHANCE:
            return self._traverse(first + self._pick_cum(tree.cum[node]), p, prune)
        row = tree.row[node]
        k = len(tree.actions[node])
        sigma = self._sigma(row, k)
        if actor != p:
            if self.averaging == "simple" and actor == (p + 1) % self.num_players:
                avg = self.avg[row]
                for j in range(k):
                    avg[j] += sigma[j]
            return self._traverse(first + self._pick(sigma), p, prune)
        values = [0.0] * k
        explored = [True] * k
        v = 0.0
        skip = prune and tree.prunable[node]
        for j in range(k):
            if skip and self.regret[row, j] <= self.prune_threshold and tree.player[first + j] != TERMINAL:
                explored[j] = False
                self.skipped_actions += 1
                continue
            values[j] = self._traverse(first + j, p, prune)
            v += sigma[j] * values[j]
        regret = self.regret[row]       # after the children: meeting new rows may have regrown the table
        for j in range(k):
            if explored[j]:
                regret[j] += values[j] - v
                if self.prune_after is not None and regret[j] < self.regret_floor:
                    regret[j] = self.regret_floor
        return v

    def _update_strategy(self, node: int, p: int) -> None:
        """Pluribus' Update-Strategy(p) from `node`."""
        tree = self.tree
        actor = tree.player[node]
        if actor == TERMINAL:
            return
        first = tree.first[node]
        if first < 0:
            first = self._expand(node)
        if actor == CHANCE:
            self._update_strategy(first + self._pick_cum(tree.cum[node]), p)
        elif actor == p:
            row = tree.row[node]
            sigma = self._sigma(row, len(tree.actions[node]))
            avg = self.avg[row]
            for j, q in enumerate(sigma):
                avg[j] += q
            self._update_strategy(first + self._pick(sigma), p)
        else:
            for j in range(len(tree.actions[node])):
                self._update_strategy(first + j, p)

    # ---- running -------------------------------------------------------------------------
    def iteration(self) -> None:
        """One iteration of Algorithm 1: a traversal per player, then the linear discount."""
        t = self.iterations + 1
        for p in range(self.num_players):
            if self.averaging == "pluribus" and t % self.strategy_interval == 0:
                self._update_strategy(0, p)
            prune = (self.prune_after is not None and t > self.prune_after
                     and self._uniform() >= self.prune_prob)
            self.pruned_traversals += prune
            self._traverse(0, p, prune)
        if t < self.linear_until and t % self.discount_interval == 0:
            k = t / self.discount_interval
            d = k / (k + 1.0)
            rows = self.tree.num_rows
            self.regret[:rows] *= d
            self.avg[:rows] *= d
        self.iterations = t


class OutcomeSamplingMCCFR(_TreeSolver):
    """Outcome-sampling MCCFR on an n-player game (Lanctot et al. 2009; OpenSpiel's
    `OutcomeSamplingMCCFRSolver` rule, no baseline): an iteration is one episode per player
    p = 0..n-1, each one sampled trajectory from the root: chance and the other players on
    policy, p from epsilon * uniform + (1 - epsilon) * its current policy. Backing up, the
    sampled child's value estimate is its value / its sample probability (the others' 0), a
    node's value sum_a sigma(I, a) v(a); at p's sets R(I, a) += v(a) pi_-i / q - v pi_-i / q
    (pi_-i: the others' and chance's reach, chance's cancelling against its sampling; q: the
    trajectory's sample probability to the node) and the average sums += pi_i sigma(I, a) / q
    (stochastically weighted averaging)."""

    def __init__(self, game: Game, seed: int = 0, *, epsilon: float = 0.6):
        if not 0.0 < epsilon <= 1.0:
            raise MCCFRConfigError(f"epsilon must be in (0, 1], got {epsilon}")
        super().__init__(game, seed)
        self.epsilon = float(epsilon)

    def _episode(self, node: int, p: int, mine: float, others: float, sample: float) -> float:
        tree = self.tree
        actor = tree.player[node]
        if actor == TERMINAL:
            return tree.utility[node][p]
        first = tree.first[node]
        if first < 0:
            first = self._expand(node)
        if actor == CHANCE:
            return self._episode(first + self._pick_cum(tree.cum[node]), p, mine, others, sample)
        row = tree.row[node]
        k = len(tree.actions[node])
        sigma = self._sigma(row, k)
        q = ([self.epsilon * (1.0 / k) + (1.0 - self.epsilon) * x for x in sigma] if actor == p else sigma)
        j = self._pick(q)
        if actor == p:
            child = self._episode(first + j, p, mine * sigma[j], others, sample * q[j]) / q[j]
        else:
            child = self._episode(first + j, p, mine, others * sigma[j], sample * q[j]) / q[j]
        value = sigma[j] * child
        if actor == p:
            regret, avg = self.regret[row], self.avg[row]
            cf = value * others / sample
            for i in range(k):
                regret[i] += (child if i == j else 0.0) * others / sample - cf
            for i in range(k):
                avg[i] += mine * sigma[i] / sample
        return value

    def iteration(self) -> None:
        for p in range(self.num_players):
            self._episode(0, p, 1.0, 1.0, 1.0)
        self.iterations += 1
