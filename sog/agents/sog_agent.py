"""The Student of Games agent SoG(s, c): continual re-solving with GT-CFR.

`SoGAgent` plays one seat of any game of the API from a value function (the
exact oracle or a CVPN; None for an agent whose searches run as coroutines,
`strategy_steps`, answered by their driver: self-play's games in lockstep), one
decision at a time: at each decision it re-solves from its previous search's
summary (`sog.search.resolve`; at a first decision below the game's start, from
an initial solve there) and samples its action from the re-solved average
policy at the current public state. Every random choice (the search's simulations and the action) is drawn
from seeds derived from `reset`'s seed, so a seed fixes the actions.
"""
from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np

from sog.agents.api import Agent
from sog.games.api import DECISION, Game
from sog.games.world import IllegalActionError
from sog.search.resolve import ContinualResolver, Summary
from sog.search.settings import SearchSettings
from sog.search.value_function import ValueFunction, ValueSteps, drive


class SoGAgent(Agent):
    """SoG(s, c) with `value_fn`; `last_result` keeps the latest search's result."""

    def __init__(self, game: Game, value_fn: ValueFunction | None, settings: SearchSettings = SearchSettings()):
        self.game = game
        self.resolver = ContinualResolver(game, value_fn, settings)
        self.prev: Summary | None = None
        self.last_result = None
        self._policy_at: tuple | None = None
        self.reset(0, 0)

    def reset(self, player: int, seed: int) -> None:
        super().reset(player, seed)
        self.prev, self.last_result, self._policy_at = None, None, None

    def prepare(self, deadline: float) -> None:
        """The value function's own `prepare(deadline)` where it has one (a network's
        compilations: `networks.value_function.NetworkValueFunction.prepare`)."""
        prepare = getattr(self.resolver.value_fn, "prepare", None)
        if prepare is not None:
            prepare(deadline)

    def strategy(self, history: Sequence[Hashable], slot: int) -> np.ndarray:
        """`strategy_steps` with its requests answered by the agent's value function."""
        return drive(self.strategy_steps(history, slot), self.resolver.value_fn)

    def strategy_steps(self, history: Sequence[Hashable], slot: int) -> ValueSteps[np.ndarray]:
        """float [A]: the re-solved average policy at (history[-1], slot); searches once per
        decision (a coroutine: the search's value requests)."""
        pub = history[-1]
        if self.game.cached("kind", pub) != DECISION or self.game.cached("actor", pub) != self.player:
            raise IllegalActionError(f"{self.game.spec.name}: player {self.player} does not act at {pub!r}")
        if not self.game.cached("possible_mask", pub)[self.player, slot]:
            raise IllegalActionError(f"{self.game.spec.name}: slot {slot} of player {self.player} is "
                                     f"impossible at {pub!r}")
        key = (tuple(history), slot)
        if self._policy_at is None or self._policy_at[0] != key:
            seed = int(self.rng.integers(2**63 - 1))
            result, self.prev = yield from self.resolver.search_steps(history, self.player, self.prev, seed)
            self.last_result = result
            self._policy_at = (key, result.policy)
        return self._policy_at[1][slot]

    def act(self, history: Sequence[Hashable], slot: int) -> int:
        pi = self.strategy(history, slot)
        return int(self.rng.choice(len(pi), p=pi / pi.sum()))
