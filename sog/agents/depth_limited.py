"""A nested-solving agent with multi-valued leaves, after Brown, Sandholm and Amos,
"Depth-Limited Solving for Imperfect-Information Games" (NeurIPS 2018); the solver
is `sog.search.multivalued`.

`DepthLimitedAgent` is an agent for the poker games. At
  each decision it uses the depth-limited subgame rooted at the start of the
  current round (`resolve="round"`; or re-solved at the current public state,
  `resolve="decision"`), whose root ranges come from its own previous solve:
  the average-policy reach at the leaf this round started from, passed
  through the board card's card removal. The last round is solved to the end
  of the game (no leaves). Two ways to treat the opponent's beliefs:
  - `safety="unsafe"`: *unsafe* nested solving as in the paper's HUNL agent
    (its appendix): beliefs Bayes-updated assuming the opponent played the
    previous solution, no gadget (a zero belief falls back to uniform over
    the possible slots). In Leduc this is very exploitable: even re-solving
    round 2 at the *equilibrium's* ranges is exploitable by ~107 mbb/h, and
    with the depth-limited solution's beliefs by 250 to 1050 mbb/h.
  - `safety="gadget"` (default): safe re-solving with DeepStack's
    Terminate / Follow gadget (`sog.search.gtcfr.Gadget`) for the opponent at
    the new root, whose Terminate values are the opponent's exact
    best-response counterfactual values against our previous solution in
    its trunk and our blueprint below (one vectorised best-response pass of
    the subtree); with `gadget_alpha = 1` (the default) the re-solved
    strategy then does not let any opponent slot gain over what that
    composition concedes (up to convergence).
  The agent's solves depend only on the public history and its seat, so they
  are cached, and its full-game policy can be assembled and measured exactly
  (`nested_policy`).

The blueprint comes from one of our MCCFR variants (`sog.agents.sampling.mccfr`:
outcome, external, Pluribus), from public-tree CFR+ ("cfr"), or any
`TabularPolicy` (`make_blueprint`). The spec string is parsed by `agent_from_spec`.
"""
from __future__ import annotations

import time
from collections.abc import Hashable, Sequence

import numpy as np

from sog.agents.api import AgentError
from sog.agents.policy_agents import MCCFR_VARIANTS, BaseAgent
from sog.agents.spec import take_params
from sog.games.api import CHANCE, Game
from sog.policy import PolicyError, TabularPolicy, load_policy
from sog.search.cfr import (
    CFRConfig,
    CFRSolver,
    Levels,
    evaluate_policy,
)
from sog.search.full_tree import (
    full_tree,
    tabular_from_array,
)
from sog.search.gtcfr import Gadget
from sog.search.multivalued import (
    APPROACHES,
    DEFAULT_CONFIG,
    Continuations,
    DepthLimitedSolution,
    as_array,
    compose,
    make_continuations,
    normalised,
    solve_depth_limited,
)
from sog.search.tree import CompiledTree, PublicTree, compile_tree

SAFETY = ("unsafe", "gadget")
BLUEPRINTS = ("external", "outcome", "pluribus", "cfr")


def make_blueprint(game: Game, kind: str = "external", iterations: int | None = 20000,
                   seconds: float | None = None, seed: int = 0) -> np.ndarray:
    """A full-game blueprint [m, N, A]: MCCFR ("external", "outcome", "pluribus") or
    public-tree alternating CFR+ ("cfr"), for `iterations` and/or `seconds`."""
    if kind not in BLUEPRINTS:
        raise ValueError(f"unknown blueprint {kind!r}; choose one of {', '.join(BLUEPRINTS)}")
    if iterations is None and seconds is None:
        raise ValueError("a blueprint needs iterations and/or seconds")
    if kind == "cfr":
        solver = CFRSolver(full_tree(game).ct, config=DEFAULT_CONFIG)
        deadline = None if seconds is None else time.perf_counter() + seconds
        while (iterations is None or solver.iterations < iterations) and (
                deadline is None or time.perf_counter() < deadline):
            solver.iterate(1)
        return normalised(game, solver.average_policy())
    solver = MCCFR_VARIANTS[kind](game, seed=seed)
    solver.run(iterations, seconds)
    return as_array(game, solver.policy())


# ---- the nested-solving agent -----------------------------------------------------------
class DepthLimitedAgent(BaseAgent):
    """Nested unsafe depth-limited solving with multi-valued leaves (see module doc).

    DepthLimitedAgent(game, k=4, approach="bias", blueprint="external",
    blueprint_iterations=20000, blueprint_seconds=None, blueprint_policy=None,
    bias_factor=5.0, iterations=300, resolve="round", safety="gadget", gadget_alpha=1.0,
    seed=0):
      k, approach: the continuation set ("bias" or "self_generative"), built once per
        seat at first use (self-generative: from solves at the game's root).
      blueprint: MCCFR variant or "cfr", trained once at first use for
        blueprint_iterations / blueprint_seconds with `seed`; or give
        `blueprint_policy` (a TabularPolicy or full-tree array) instead.
      iterations: CFR+ iterations per subgame solve.
      resolve: "round" (subgame rooted at the current round's start) or "decision"
        (additionally re-solved at the current public state).
      safety: "gadget" (default; safe re-solving: the opponent's root range comes from DeepStack's
        Terminate / Follow gadget, `sog.search.gtcfr.Gadget`, with Terminate values its
        exact best-response counterfactual values against our previous solution in its
        trunk and our blueprint below; the range is gadget_alpha * follow +
        (1 - gadget_alpha) * Bayes belief) or "unsafe" (the paper's unsafe nested solving:
        Bayes-updated beliefs only; very exploitable in Leduc, see the module doc).
    """

    name = "depth_limited"

    def __init__(self, game: Game, k: int = 4, approach: str = "bias", blueprint: str = "external",
                 blueprint_iterations: int | None = 20000, blueprint_seconds: float | None = None,
                 blueprint_policy: TabularPolicy | np.ndarray | None = None, bias_factor: float = 5.0,
                 iterations: int = 300, resolve: str = "round", safety: str = "gadget",
                 gadget_alpha: float = 1.0, seed: int = 0, config: CFRConfig = DEFAULT_CONFIG):
        super().__init__(game)
        if approach not in APPROACHES:
            raise AgentError(f"unknown approach {approach!r}; choose one of {', '.join(APPROACHES)}")
        if blueprint_policy is None and blueprint not in BLUEPRINTS:
            raise AgentError(f"unknown blueprint {blueprint!r}; choose one of {', '.join(BLUEPRINTS)}")
        if blueprint_policy is None and blueprint_iterations is None and blueprint_seconds is None:
            raise AgentError("the blueprint needs blueprint_iterations and/or blueprint_seconds")
        if resolve not in ("round", "decision"):
            raise AgentError(f"resolve must be 'round' or 'decision', got {resolve!r}")
        if safety not in SAFETY:
            raise AgentError(f"safety must be one of {', '.join(SAFETY)}, got {safety!r}")
        if not 0 <= gadget_alpha <= 1:
            raise AgentError(f"gadget_alpha must be in [0, 1], got {gadget_alpha}")
        if k < 1 or iterations < 1 or not bias_factor > 0:
            raise AgentError("k and iterations must be at least 1 and bias_factor positive")
        self.k, self.approach, self.bias_factor = int(k), approach, float(bias_factor)
        self.blueprint_kind = "tabular" if blueprint_policy is not None else blueprint
        self.blueprint_iterations, self.blueprint_seconds = blueprint_iterations, blueprint_seconds
        self.iterations, self.resolve, self.seed, self.config = int(iterations), resolve, int(seed), config
        self.safety, self.gadget_alpha = safety, float(gadget_alpha)
        self._below: dict[Hashable, tuple[CompiledTree, Levels, np.ndarray]] = {}
        self._blueprint = None if blueprint_policy is None else as_array(game, blueprint_policy)
        self._continuations: dict[int, Continuations] = {}
        self._solves: dict[tuple, DepthLimitedSolution] = {}
        self._last: tuple | None = None

    def __repr__(self) -> str:
        return (f"DepthLimitedAgent({self.game.spec.name}, k={self.k}, approach={self.approach}, "
                f"blueprint={self.blueprint_kind})")

    # ---- preparation (once per agent) ---------------------------------------------------
    @property
    def blueprint(self) -> np.ndarray:
        if self._blueprint is None:
            self._blueprint = make_blueprint(self.game, self.blueprint_kind, self.blueprint_iterations,
                                             self.blueprint_seconds, self.seed)
        return self._blueprint

    def blueprint_policy(self) -> TabularPolicy:
        return tabular_from_array(self.game, self.blueprint)

    def continuations(self, seat: int) -> Continuations:
        if seat not in self._continuations:
            self._continuations[seat] = make_continuations(
                self.game, self.blueprint, seat, self.k, self.approach, self.bias_factor,
                self.iterations, self.config)
        return self._continuations[seat]

    def reset(self, player: int, seed: int) -> None:
        super().reset(player, seed)
        self.continuations(player)
        self._last = None

    # ---- nested solving -------------------------------------------------------------------
    def _round_start(self, history: Sequence[Hashable], t: int) -> int:
        """The index of the first public state of the round holding history[t]."""
        game = self.game
        while t > 0 and game.cached("kind", history[t - 1]) != CHANCE:
            t -= 1
        return t

    def _ranges_from(self, prev: DepthLimitedSolution, history: Sequence[Hashable], start: int,
                     stop: int) -> np.ndarray:
        """Ranges at history[stop]: prev's ranges at the deepest of history[start..stop] in its
        tree, carried through chance edges (card removal) below it."""
        game = self.game
        j = max(i for i in range(start, stop + 1) if history[i] in prev)
        ranges = prev.ranges_at(history[j])
        for i in range(j + 1, stop + 1):
            parent, pub = history[i - 1], history[i]
            if game.cached("kind", parent) != CHANCE:
                raise AgentError(f"{self!r}: {pub!r} is beyond the previous subgame")
            child = next((c for c in game.cached("children", parent) if c.pub == pub), None)
            if child is None:
                raise AgentError(f"{self!r}: {pub!r} is not a child of {parent!r}")
            new = np.zeros_like(ranges)
            for p in (0, 1):
                ok = child.state_maps[p] >= 0
                np.add.at(new[p], child.state_maps[p][ok], ranges[p][ok] * child.prob)
            ranges = new
        possible = game.cached("possible_mask", history[stop])
        ranges = ranges * possible
        for p in (0, 1):   # unsafe beliefs: a zero range (a never-played action) falls back to uniform
            if ranges[p].sum() <= 1e-12:
                ranges[p] = possible[p] / max(possible[p].sum(), 1)
        return ranges

    def _terminate_values(self, prev: DepthLimitedSolution, seat: int, pub, own_range: np.ndarray
                          ) -> np.ndarray:
        """float [N]: the opponent's best-response counterfactual values at `pub` against our
        previous solution in its trunk and our blueprint elsewhere, for our range there."""
        game = self.game
        if pub not in self._below:
            ct = compile_tree(PublicTree(game, [pub]).expand_all())
            lv = Levels(ct)
            row_of = full_tree(game).row_of
            self._below[pub] = (ct, lv, np.array([row_of[ct.pub(p)] for p in lv.dec], dtype=np.int64))
        ct, lv, rows = self._below[pub]
        ours = compose(game, self.blueprint, {seat: prev})
        rr = np.ones((1, 2, game.spec.num_states))
        rr[0, seat] = own_range
        _, values = evaluate_policy(lv, ours[rows], rr, best_response=True)
        return values[ct.roots[0], 1 - seat]

    def _solve(self, seat: int, history: tuple, root_index: int, prev: DepthLimitedSolution | None,
               prev_start: int) -> DepthLimitedSolution:
        key = (seat, history[: root_index + 1])
        sol = self._solves.get(key)
        if sol is None:
            game, root, gadget = self.game, history[root_index], None
            if prev is None:
                ranges = game.initial_ranges()
            else:
                ranges = self._ranges_from(prev, history, prev_start, root_index)
                if self.safety == "gadget":
                    gadget = Gadget(1 - seat, self._terminate_values(prev, seat, root, ranges[seat]),
                                    ranges[1 - seat], game.cached("possible_mask", root)[1 - seat],
                                    self.gadget_alpha)
            sol = solve_depth_limited(game, root, ranges, self.continuations(seat), self.iterations,
                                      self.config, gadget=gadget)
            if len(self._solves) > 100_000:
                self._solves.clear()
            self._solves[key] = sol
        return sol

    def solution(self, history: Sequence[Hashable], seat: int | None = None) -> DepthLimitedSolution:
        """The depth-limited solution this agent uses at history[-1] (as `seat`, default the actor)."""
        history = tuple(history)
        seat = int(self.game.cached("actor", history[-1])) if seat is None else seat
        # the chain of round solves: round 1 from the game's root, each next round from the
        # previous round's solve (ranges at the leaf it ended in)
        starts = []
        t = len(history) - 1
        while True:
            r = self._round_start(history, t)
            starts.append(r)
            if r == 0:
                break
            t = r - 1
        sol, prev_start = None, 0
        for r in reversed(starts):
            sol = self._solve(seat, history, r, sol, prev_start)
            prev_start = r
        if self.resolve == "decision" and prev_start != len(history) - 1:
            sol = self._solve(seat, history, len(history) - 1, sol, prev_start)
        return sol

    def policy_rows(self, history: Sequence[Hashable]) -> np.ndarray:
        """float [N, A]: the actor's strategy per slot at decision history[-1]."""
        return self.solution(history).rows_at(history[-1])

    def _distribution(self, history, slot, legal) -> np.ndarray:
        key = (tuple(history), slot)
        if self._last is None or self._last[0] != key:
            self._last = (key, self.policy_rows(history)[slot])
        return self._last[1]


def nested_policy(agent: DepthLimitedAgent) -> TabularPolicy:
    """The agent's full-game policy (both seats): its nested solves at every decision
    public state, assembled into a table (its solves depend only on the public history)."""
    game = agent.game
    ft = full_tree(game)
    ct = ft.ct
    table = {}
    for pos in ft.levels.dec:
        path = []
        p = int(pos)
        while p >= 0:
            path.append(ct.pub(p))
            p = int(ct.parent[p])
        table[ct.pub(int(pos))] = agent.policy_rows(path[::-1])
    return TabularPolicy(game, table)


# ---- the spec string -----------------------------------------------------------------
_SCHEMA = {"k": int, "approach": APPROACHES, "blueprint": BLUEPRINTS, "blueprint_iterations": int,
           "blueprint_seconds": float, "bias_factor": float, "iterations": int,
           "resolve": ("round", "decision"), "safety": SAFETY, "gadget_alpha": float, "seed": int}


def agent_from_spec(game: Game, arg: str | None, params: dict) -> DepthLimitedAgent:
    """`depth_limited[:BLUEPRINT.json]?k=4&approach=bias&blueprint=external&blueprint_iterations=20000
    &bias_factor=5&iterations=300&resolve=round&safety=gadget&gadget_alpha=1&seed=0`; a policy
    file as the ':' argument replaces the MCCFR blueprint."""
    kw = take_params("depth_limited", params, _SCHEMA,
                     minimum={"k": 1, "iterations": 1, "blueprint_iterations": 0,
                              "blueprint_seconds": 0, "bias_factor": 1e-9})
    if arg is not None:
        try:
            kw["blueprint_policy"] = load_policy(arg, game)
        except (PolicyError, OSError) as e:
            raise AgentError(f"agent 'depth_limited': {e}") from None
    return DepthLimitedAgent(game, **kw)
