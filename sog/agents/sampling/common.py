"""Shared machinery of the sampling baselines (MCCFR, UCT, IS-MCTS).

`WorldStepper` is a memoising front-end to `sog.games.world`: the baselines walk
the same world states over and over, so transitions, legal-action lists and
chance distributions are cached per world state (the cache is dropped when it
grows past `max_cache` entries, which only matters for large games).
`sample_index` draws from a small discrete distribution without the overhead
of `Generator.choice`. `Budget` implements the `run(iterations=None,
seconds=None)` contract every baseline shares.
"""
from __future__ import annotations

import time
from collections.abc import Hashable, Iterator

import numpy as np

from sog.games import world as W
from sog.games.api import CHANCE, DECISION, TERMINAL, Game
from sog.games.traverse import decision_states
from sog.games.world import World
from sog.limits import SEARCH_LIMITS

__all__ = ["WorldStepper", "sample_index", "Budget", "SEARCH_LIMITS", "decision_infostates", "CHANCE",
           "DECISION", "TERMINAL", "World"]


def sample_index(rng: np.random.Generator, p: np.ndarray) -> int:
    """An index drawn with probabilities proportional to p (float [k], sum > 0)."""
    c = np.cumsum(p)
    i = int(np.searchsorted(c, rng.random() * c[-1], side="right"))
    return min(i, len(p) - 1)


class WorldStepper:
    """Memoised world-state transitions for one game."""

    def __init__(self, game: Game, max_cache: int = 2_000_000):
        self.game = game
        self.max_cache = max_cache
        self._next: dict = {}
        self._chance: dict = {}
        self._legal: dict = {}
        init = np.asarray(game.initial_ranges(), dtype=np.float64)
        joint = init[0][:, None] * init[1][None, :] * game.chance_weights(game.root())
        self._deal_cdf = np.cumsum(joint.ravel())
        self._n = init.shape[1]
        self.root = game.root()

    # ---- static facts ----------------------------------------------------
    def kind(self, pub) -> int:
        return self.game.cached("kind", pub)

    def actor(self, pub) -> int:
        return self.game.cached("actor", pub)

    def legal(self, pub, slot: int) -> np.ndarray:
        """int [k]: legal actions of the actor's `slot` at `pub`."""
        key = (pub, slot)
        out = self._legal.get(key)
        if out is None:
            out = np.flatnonzero(self.game.cached("legal_mask", pub)[slot])
            self._legal[key] = out
        return out

    # ---- transitions -------------------------------------------------------
    def deal(self, rng: np.random.Generator) -> World:
        """The private deal, with the same distribution as `sog.games.world.deal`."""
        i = int(np.searchsorted(self._deal_cdf, rng.random() * self._deal_cdf[-1], side="right"))
        i = min(i, len(self._deal_cdf) - 1)
        return World(self.root, (i // self._n, i % self._n))

    def child(self, world: World, action: int) -> World:
        key = (world, action)
        out = self._next.get(key)
        if out is None:
            if len(self._next) > self.max_cache:
                self._next.clear()
            out = W.apply_action(self.game, world, int(action))
            self._next[key] = out
        return out

    def chance(self, world: World) -> tuple[np.ndarray, list[World]]:
        """(probabilities [k], next worlds) of a chance world state."""
        out = self._chance.get(world)
        if out is None:
            if len(self._chance) > self.max_cache:
                self._chance.clear()
            outcomes = W.chance_outcomes(self.game, world)
            out = (np.array([p for p, _ in outcomes]), [w for _, w in outcomes])
            self._chance[world] = out
        return out

    def sample_chance(self, world: World, rng: np.random.Generator) -> World:
        probs, worlds = self.chance(world)
        return worlds[sample_index(rng, probs)]

    def returns(self, world: World, player: int) -> float:
        u = float(self.game.cached("utility", world.pub)[world.slots[0], world.slots[1]])
        return u if player == 0 else -u


def decision_infostates(game: Game) -> Iterator[tuple[Hashable, int, np.ndarray]]:
    """Breadth-first over the public tree: (decision pub, actor, possible actor slots)."""
    for pub, actor in decision_states(game):
        possible = game.cached("possible_mask", pub)[actor]
        legal_any = game.cached("legal_mask", pub).any(axis=1)
        yield pub, actor, np.flatnonzero(possible & legal_any)


class Budget:
    """Stops a `run(iterations=None, seconds=None)` loop at whichever limit comes first
    (`SEARCH_LIMITS`' included)."""

    def __init__(self, iterations: int | None, seconds: float | None):
        if iterations is None and seconds is None:
            raise ValueError("give iterations, seconds or both")
        if iterations is not None and iterations < 0:
            raise ValueError(f"iterations must be >= 0, got {iterations}")
        self.iterations = iterations
        self.deadline = None if seconds is None else time.perf_counter() + float(seconds)
        self.done = 0
        self.outer = SEARCH_LIMITS.current()
        self.start = time.perf_counter()

    def more(self) -> bool:
        """Whether no limit is reached yet."""
        return (self.iterations is None or self.done < self.iterations) and (
            self.deadline is None or time.perf_counter() < self.deadline) and (
            self.done == 0 or self.outer.more(self.done, self.start))

    def chunk(self, size: int) -> int:
        """How many iterations the next batch of at most `size` may run (>= 1 while `more()`)."""
        return size if self.iterations is None else min(size, self.iterations - self.done)

    def __iter__(self):
        while self.more():
            yield self.done
            self.done += 1
