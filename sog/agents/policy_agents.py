"""Agents behind the Agent API (`sog.agents.api`): random, tabular, and the baselines.

* `RandomAgent(game)`: uniform over the legal actions.
* `TabularAgent(game, policy)`: samples from a `TabularPolicy` at
  (history[-1], slot); `strategy` returns that row.
* `MCCFRAgent(game, variant, iterations=..., seconds=...)`: runs outcome /
  external / Pluribus MCCFR (`sog.agents.sampling.mccfr`) on the full game once, at the
  first `reset`, `act` or `strategy` (or an explicit `train()`), then plays its
  average policy like a `TabularAgent`. The solver has its own seed (`seed`),
  so the trained policy does not depend on the game seeds.
* `UCTAgent`, `SmoothUCTAgent`, `ISMCTSAgent`: at each decision, a fresh search
  of `simulations` simulations from the current information state (pub, slot):
  `sog.agents.sampling.ismcts.ISMCTS.search`, which determinises the opponent's slot
  from a uniform belief (times the deal's chance weights and the possible
  mask) and runs per-player-tree MCTS (`sog.agents.sampling.uct.MCTSEngine`). The three
  differ in selection and defaults: UCT selects with UCB1 (c: the Heinrich and
  Silver paper's value, `uct.paper_defaults`) and plays the most visited
  action; Smooth UCT selects with Smooth UCB (paper's c and d) and samples from
  the root's visit counts (its average policy); IS-MCTS selects with UCB1 with
  c = `spec.max_utility` and samples from the visit counts (`kind` picks
  "visits", "max_visits" or "max_value"). In a perfect-information game there
  is nothing to determinise and the search is plain (Smooth) UCT.

Every agent checks that it is asked at a decision node of its own seat with a
possible slot (`IllegalActionError` otherwise), that the action it returns is
legal there, and draws every random choice from `self.rng`, which `reset`
seeds; the same seeds give the same actions.
"""
from __future__ import annotations

import abc
from collections.abc import Hashable, Sequence

import numpy as np

from sog.agents.api import Agent, AgentError
from sog.agents.sampling.common import sample_index
from sog.agents.sampling.ismcts import ISMCTS, POLICY_KINDS
from sog.agents.sampling.mccfr import ExternalSamplingMCCFR, OutcomeSamplingMCCFR, PluribusMCCFR
from sog.agents.sampling.uct import paper_defaults
from sog.games.api import CHANCE, DECISION, Game
from sog.games.world import IllegalActionError
from sog.policy import TabularPolicy

__all__ = [
    "MCCFR_VARIANTS",
    "BaseAgent",
    "ISMCTSAgent",
    "MCCFRAgent",
    "RandomAgent",
    "SmoothUCTAgent",
    "TabularAgent",
    "UCTAgent",
]

MCCFR_VARIANTS = {"outcome": OutcomeSamplingMCCFR, "external": ExternalSamplingMCCFR,
                  "pluribus": PluribusMCCFR}


class BaseAgent(Agent):
    """Validation and sampling shared by the agents here.

    Subclasses implement `_distribution(pub, slot, legal) -> float [A]`, the
    distribution the agent plays at an information state; `act` samples it
    with `self.rng`, `strategy` returns it.
    """

    name = "agent"

    def __init__(self, game: Game):
        self.game = game
        self.player: int | None = None
        self.rng: np.random.Generator | None = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.game.spec.name})"

    def reset(self, player: int, seed: int) -> None:
        if player not in (0, 1):
            raise AgentError(f"{self!r}: player must be 0 or 1, got {player!r}")
        super().reset(player, seed)

    # ---- checks -------------------------------------------------------------
    def _decision(self, history: Sequence[Hashable], slot: int, own_seat: bool) -> tuple:
        """(pub, legal actions int [k]) after checking that (history[-1], slot) is a decision
        of a possible slot (of this agent's seat if `own_seat`)."""
        if self.rng is None:
            raise AgentError(f"{self!r}: call reset(player, seed) before act")
        if len(history) == 0:
            raise IllegalActionError(f"{self!r}: empty history")
        game, pub = self.game, history[-1]
        kind = game.cached("kind", pub)
        if kind != DECISION:
            what = "a chance node" if kind == CHANCE else "a terminal"
            raise IllegalActionError(f"{self!r} asked to act at {pub!r}, {what} of {game.spec.name}")
        actor = int(game.cached("actor", pub))
        if own_seat and actor != self.player:
            raise IllegalActionError(
                f"{self!r} plays seat {self.player} but player {actor} acts at {pub!r}")
        n = game.spec.num_states
        if not isinstance(slot, (int, np.integer)) or not 0 <= slot < n \
                or not game.cached("possible_mask", pub)[actor][slot]:
            raise IllegalActionError(f"{self!r}: slot {slot!r} of player {actor} is not possible at {pub!r}")
        legal = np.flatnonzero(game.cached("legal_mask", pub)[slot])
        if len(legal) == 0:
            raise IllegalActionError(f"{self!r}: no legal action for slot {slot} at {pub!r}")
        return pub, legal

    def _checked(self, pub, slot: int, action, legal: np.ndarray) -> int:
        """`action` as an int after checking that it is legal."""
        if not isinstance(action, (int, np.integer)) or int(action) not in legal:
            names = [self.game.action_name(pub, int(a)) for a in legal]
            raise IllegalActionError(f"{self!r} chose illegal action {action!r} at {pub!r} "
                                     f"(slot {slot}); legal: {names}")
        return int(action)

    def _normalised(self, pub, probs: np.ndarray, legal: np.ndarray) -> np.ndarray:
        """float [A]: probs restricted to the legal actions and normalised."""
        out = np.zeros(self.game.spec.num_actions)
        p = np.asarray(probs, dtype=np.float64)[legal]
        if not np.all(np.isfinite(p)) or np.any(p < 0) or p.sum() <= 0:
            raise AgentError(f"{self!r}: invalid action distribution {probs!r} at {pub!r}")
        out[legal] = p / p.sum()
        return out

    # ---- the protocol ----------------------------------------------------
    @abc.abstractmethod
    def _distribution(self, history: Sequence[Hashable], slot: int, legal: np.ndarray) -> np.ndarray:
        """float [A]: the action distribution at (history[-1], slot), zero off `legal`."""

    def act(self, history: Sequence[Hashable], slot: int) -> int:
        pub, legal = self._decision(history, slot, own_seat=True)
        probs = self._normalised(pub, self._distribution(history, slot, legal), legal)
        action = legal[sample_index(self.rng, probs[legal])]
        return self._checked(pub, slot, action, legal)

    def strategy(self, history: Sequence[Hashable], slot: int) -> np.ndarray | None:
        pub, legal = self._decision(history, slot, own_seat=False)
        return self._normalised(pub, self._distribution(history, slot, legal), legal)


class RandomAgent(BaseAgent):
    """Uniformly random over the legal actions."""

    name = "random"

    def _distribution(self, history, slot, legal):
        out = np.zeros(self.game.spec.num_actions)
        out[legal] = 1.0
        return out


class TabularAgent(BaseAgent):
    """Plays a `TabularPolicy` (uniform where the policy does not list a public state)."""

    name = "tabular"

    def __init__(self, game: Game, policy: TabularPolicy):
        super().__init__(game)
        if not isinstance(policy, TabularPolicy):
            raise AgentError(f"TabularAgent needs a TabularPolicy, got {type(policy).__name__}")
        if policy.game.spec != game.spec:
            raise AgentError(f"policy is for {policy.game.spec.name}, not {game.spec.name}")
        self.policy = policy

    def _distribution(self, history, slot, legal):
        return self.policy.action_probs(history[-1], slot)


class MCCFRAgent(TabularAgent):
    """Trains a full-game MCCFR variant once, then plays its average policy.

    MCCFRAgent(game, variant="external", iterations=None, seconds=None, seed=0, **solver_kwargs):
    variant is "outcome", "external" or "pluribus" (`MCCFR_VARIANTS`); the budget is
    `iterations` and/or `seconds` (whichever ends first); solver_kwargs go to the
    solver (epsilon for outcome sampling, the Pluribus schedule parameters).
    """

    name = "mccfr"

    def __init__(self, game: Game, variant: str = "external", iterations: int | None = None,
                 seconds: float | None = None, seed: int = 0, **solver_kwargs):
        BaseAgent.__init__(self, game)
        if variant not in MCCFR_VARIANTS:
            raise AgentError(f"unknown MCCFR variant {variant!r}; choose one of {', '.join(MCCFR_VARIANTS)}")
        if iterations is None and seconds is None:
            raise AgentError("MCCFRAgent needs a budget: iterations and/or seconds")
        if (iterations is not None and iterations < 0) or (seconds is not None and seconds < 0):
            raise AgentError("MCCFR budget must be non-negative")
        self.variant = variant
        self.iterations, self.seconds = iterations, seconds
        try:
            self.solver = MCCFR_VARIANTS[variant](game, seed=seed, **solver_kwargs)
        except (TypeError, ValueError) as e:
            raise AgentError(f"bad parameters for MCCFR {variant}: {e}") from None
        self._policy: TabularPolicy | None = None

    def __repr__(self) -> str:
        return f"MCCFRAgent({self.game.spec.name}, {self.variant})"

    def train(self) -> TabularPolicy:
        """Run the solver for its budget (once) and return its average policy."""
        if self._policy is None:
            self.solver.run(self.iterations, self.seconds)
            self._policy = self.solver.policy()
        return self._policy

    @property
    def policy(self) -> TabularPolicy:
        return self.train()

    def reset(self, player: int, seed: int) -> None:
        super().reset(player, seed)
        self.train()


class _SearchAgent(BaseAgent):
    """A fresh `ISMCTS.search` from the current information state at every decision."""

    _smooth = False

    def __init__(self, game: Game, simulations: int | None = 1000, seconds: float | None = None,
                 c: float | None = None, kind: str = "visits", **smooth_kw):
        super().__init__(game)
        if simulations is None and seconds is None:
            raise AgentError(f"{type(self).__name__} needs simulations and/or seconds")
        if simulations is not None and simulations < 1:
            raise AgentError(f"simulations must be at least 1, got {simulations}")
        if seconds is not None and seconds <= 0:
            raise AgentError(f"seconds must be positive, got {seconds}")
        kind = {"average": "visits", "greedy": "max_value"}.get(kind, kind)
        if kind not in POLICY_KINDS:
            raise AgentError(f"unknown policy kind {kind!r}; choose one of {', '.join(POLICY_KINDS)}")
        self.simulations, self.seconds, self.kind = simulations, seconds, kind
        self.searcher = ISMCTS(game, uct_c=c, smooth=self._smooth, **smooth_kw)
        self.c = self.searcher.uct_c
        self._last: tuple | None = None   # (decision key, distribution) of the last search
        self.last_result = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.game.spec.name}, simulations={self.simulations}, c={self.c:g})"

    def reset(self, player: int, seed: int) -> None:
        super().reset(player, seed)
        self.searcher.rng = self.rng   # every search draws from the agent's generator
        self._last = None

    def _distribution(self, history, slot, legal) -> np.ndarray:
        """The root distribution at this decision; `strategy` then `act` share one search."""
        key = (len(history), history[-1], slot)
        if self._last is not None and self._last[0] == key:
            return self._last[1]
        result = self.searcher.search(history[-1], slot, self.simulations, self.seconds)
        self.last_result = result
        probs = result.policy(self.kind)
        self._last = (key, probs)
        return probs

    def act(self, history, slot):
        action = super().act(history, slot)
        self._last = None
        return action


class UCTAgent(_SearchAgent):
    """Online UCT: UCB1 search from the information state, plays the most visited action.

    UCTAgent(game, simulations=1000, seconds=None, c=None, kind="max_visits");
    c defaults to the Heinrich and Silver value (Kuhn 2, Leduc 20, else scaled).
    """

    name = "uct"

    def __init__(self, game: Game, simulations: int | None = 1000, seconds: float | None = None,
                 c: float | None = None, kind: str = "max_visits"):
        super().__init__(game, simulations, seconds, paper_defaults(game)[0] if c is None else c, kind)


class SmoothUCTAgent(_SearchAgent):
    """Online Smooth UCT: Smooth UCB search from the information state, plays its average policy.

    SmoothUCTAgent(game, simulations=1000, seconds=None, c=None, gamma=0.1, eta=0.9, d=None,
    kind="visits"); c and d default to the paper's values (Kuhn 1.75 / 0.001, Leduc 18 / 0.002).
    """

    name = "smooth_uct"
    _smooth = True

    def __init__(self, game: Game, simulations: int | None = 1000, seconds: float | None = None,
                 c: float | None = None, gamma: float = 0.1, eta: float = 0.9, d: float | None = None,
                 kind: str = "visits"):
        _, c_s, d_s = paper_defaults(game)
        super().__init__(game, simulations, seconds, c_s if c is None else c, kind,
                         gamma=gamma, eta=eta, d=d_s if d is None else d)


class ISMCTSAgent(_SearchAgent):
    """Online MO-ISMCTS (`sog.agents.sampling.ismcts`): UCB1 search with c = spec.max_utility by default.

    ISMCTSAgent(game, simulations=1000, seconds=None, c=None, kind="visits").
    """

    name = "ismcts"
