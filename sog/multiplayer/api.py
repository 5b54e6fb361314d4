"""A small world-state interface for n-player games (2 to 6 players) with perfect recall.

Separate from the two-player public-tree API (`sog.games.api`): here a solver
sees single world states (histories), one at a time, as OpenSpiel's `State`
shows them. A `State` is immutable: `child(action)` returns a new one.

* `current_player()`: 0..n-1 at a decision, `CHANCE` (-1) at a chance node,
  `TERMINAL` (-4) at the end (OpenSpiel's player ids).
* `chance_outcomes()`: at a chance node, a tuple of (action, probability)
  pairs, probabilities summing to 1.
* `legal_actions()`: at a decision, a tuple of action ids in increasing order
  (ids below `Game.num_actions`).
* `returns()`: at a terminal, float [n], each player's chips won (net); the
  games here are constant-sum (the returns sum to 0), nothing in the
  interface assumes so.
* `information_state(player)`: the player's information-state key, a string
  equal to OpenSpiel's `information_state_string(player)`, so that policies
  keyed by it are OpenSpiel tabular policies as they stand (hold'em with
  several board-dealing rounds writes its board per round: see `holdem`).
* `prunable()`: at a decision, whether a pruning solver may skip the actor's
  actions here (True unless the game says otherwise: Pluribus never prunes on
  hold'em's last betting round).

Bad construction arguments (players outside 2..6) raise `PlayersError`, a
`ValueError`.
"""
from __future__ import annotations

import abc

import numpy as np

from sog.errors import SogError

CHANCE = -1
TERMINAL = -4
MIN_PLAYERS, MAX_PLAYERS = 2, 6


class PlayersError(SogError, ValueError):
    """A number of players the game does not support."""


def check_players(players) -> int:
    """`players` as an int in [MIN_PLAYERS, MAX_PLAYERS], else PlayersError."""
    if isinstance(players, bool) or not isinstance(players, (int, np.integer)):
        raise PlayersError(f"players must be an integer, got {players!r}")
    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise PlayersError(f"players must be between {MIN_PLAYERS} and {MAX_PLAYERS}, got {players}")
    return int(players)


class State(abc.ABC):
    """One world state (history) of an n-player game; immutable."""

    @abc.abstractmethod
    def current_player(self) -> int:
        """0..n-1, CHANCE or TERMINAL."""

    def is_terminal(self) -> bool:
        return self.current_player() == TERMINAL

    def is_chance(self) -> bool:
        return self.current_player() == CHANCE

    @abc.abstractmethod
    def chance_outcomes(self) -> tuple[tuple[int, float], ...]:
        """(action, probability) pairs at a chance node."""

    @abc.abstractmethod
    def legal_actions(self) -> tuple[int, ...]:
        """The acting player's legal actions, increasing; empty at a terminal."""

    @abc.abstractmethod
    def child(self, action: int) -> State:
        """The state after `action` (a legal action or a chance outcome)."""

    @abc.abstractmethod
    def returns(self) -> np.ndarray:
        """float [n]: each player's net chips at a terminal (zeros elsewhere)."""

    @abc.abstractmethod
    def information_state(self, player: int) -> str:
        """`player`'s information-state key: OpenSpiel's information_state_string(player)."""

    def prunable(self) -> bool:
        """Whether a pruning solver may skip the actor's actions at this decision."""
        return True


class Game(abc.ABC):
    """An n-player game: its size, its initial state and its OpenSpiel counterpart."""

    name: str            # OpenSpiel's short name
    num_players: int
    num_actions: int     # distinct decision actions (ids 0..num_actions-1)
    max_utility: float   # a bound on |returns| (chips)

    @abc.abstractmethod
    def initial_state(self) -> State:
        """The root (a chance node: the deal)."""

    def openspiel_params(self) -> dict:
        """Parameters for `pyspiel.load_game(self.name, params)` giving the same game."""
        return {"players": self.num_players}

    def __repr__(self) -> str:
        return f"{type(self).__name__}(players={self.num_players})"
