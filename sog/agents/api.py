"""The agent API: one interface for every player of a game (SoG, baselines,
tabular policies, random, external engines).

An agent plays one seat of one game at a time. The runner calls `reset` at the
start of every game, then `act` at each of the agent's decisions with the
public history so far and the agent's own information-state slot, and nothing
else: an agent never sees the opponent's private information.

    history: the public states from the game's root to the current one,
             inclusive (history[-1] is where the agent must act)
    slot:    the agent's information-state slot at history[-1]

`act` returns an abstract action (an int legal at (history[-1], slot)).
Agents whose strategy at their own decisions is known return it from
`strategy` (float [A], sums to 1 over legal actions) so that AIVAT can use it;
others return None. Agents keep whatever state they need between calls of one
game (continual re-solving keeps its last search).

Agents that hold outside resources (an external engine's process) open them
when they need them and release them in `close`; whoever plays a match closes
both agents when it ends (`with agent:` does). A closed agent may be reset and
used again: it reopens what it needs.
"""
from __future__ import annotations

import abc
from collections.abc import Hashable, Sequence
from typing import Self

import numpy as np

from sog.errors import SogError
from sog.games.api import Game


class AgentError(SogError, ValueError):
    """A bad agent spec, or an agent used with the wrong game."""


class AgentFailure(SogError, RuntimeError):
    """An agent could not move during a game: an external engine crashed, did not answer
    within its timeout, or answered a move that is not legal. It ends that game, not the
    match or tournament around it."""


class Agent(abc.ABC):
    """One seat of one game; see the module docstring for the protocol."""

    game: Game

    def reset(self, player: int, seed: int) -> None:
        """Start a new game in seat `player`, seeding every random choice."""
        self.player = player
        self.rng = np.random.default_rng(seed)

    @abc.abstractmethod
    def act(self, history: Sequence[Hashable], slot: int) -> int:
        """The action to play at history[-1] with information-state slot `slot`."""

    def strategy(self, history: Sequence[Hashable], slot: int) -> np.ndarray | None:
        """float [A]: the agent's action distribution at this decision, if known."""
        return None

    def prepare(self, deadline: float) -> None:
        """Work done before a game's clock runs, until `deadline` (a `time.perf_counter()` time,
        seconds): a network agent compiles its network's batch sizes; nothing for most agents."""

    def close(self) -> None:
        """Release outside resources (engine processes); nothing for most agents."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
