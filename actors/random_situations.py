"""Random situations (DeepStack's): public belief states off the self-play distribution.

Self-play, and the query solver's queries that follow it, meet rarely played lines (Leduc's
second-round states after raises) with few and similar beliefs, and the network's errors
there are systematic; a best response, which visits every information state, finds them.
With `solver.q_random` > 0 the query solver also solves random situations
(`actors.query_solver`): a public state and both players' ranges drawn by `random_situation`,
whose targets go to the replay buffer as every other solve's.

A situation is one point of a random walk down the public tree from the root:

* at a decision node each of the actor's slots draws a random behaviour strategy over its
  legal actions, Dirichlet(`DIRICHLET_ALPHA`) (one draw per information state met, so a
  walk follows one random strategy profile), and the walk takes a child uniformly among the
  public observations (in poker: the legal actions);
* at a chance node it takes a child by its probability `Child.prob`; at a chance node too
  wide to expand (`sog.search.gtcfr.wide_chance`: HUNL's flop) among `WIDE_CHANCE_DRAWS`
  uniform draws (`Game.sample_chance_children`; card deals are uniform);
* a child is taken only if it is not terminal and both players' ranges there have mass,
  else the next in a random order drawn by those weights; the walk ends where no child
  qualifies.

The ranges along the walk are reach probabilities: the initial ranges (private chance)
times each player's own strategy probabilities of the actions that lead there, carried
through the children's slot maps (`Child.actor_map` for the actor, `state_maps` otherwise,
so card removal and Scotland Yard's hidden moves are exact), normalised to sum 1 per player
at each step (a range's scale changes neither a solve's strategies nor its targets in
network units, and long walks would underflow). `random_situation` returns one of the
walk's states after the root, uniformly (the root when the walk has no other): the depth is
uniform along the walk. Everything is a function of the generator's state.
"""
from __future__ import annotations

from collections.abc import Callable, Hashable

import numpy as np

from sog.games.api import CHANCE, TERMINAL, Game
from sog.search.gtcfr import wide_chance
from sog.search.resolve import carry
from sog.search.settings import SearchSettings

DIRICHLET_ALPHA = 1.0     # concentration of each information state's random strategy (1: uniform on the simplex)
WIDE_CHANCE_DRAWS = 16    # outcomes drawn at a chance node too wide to enumerate

Strategy = Callable[[Hashable, np.ndarray, np.random.Generator], np.ndarray]
"""(pub, legal bool [N, A], rng) -> float [N, A]: the actor's strategy per slot at `pub`
(rows of slots without a legal action are ignored)."""


def dirichlet_strategy(pub, legal: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """float [N, A]: per slot a Dirichlet(`DIRICHLET_ALPHA`) draw over its legal actions (normalised
    gamma variates, one `rng.gamma` call for all slots); 0 on illegal actions and empty rows."""
    g = rng.gamma(DIRICHLET_ALPHA, size=legal.shape) * legal
    total = g.sum(1, keepdims=True)
    return np.divide(g, total, out=np.zeros_like(g), where=total > 0)


def random_walk(game: Game, rng: np.random.Generator, settings: SearchSettings,
                strategy: Strategy = dirichlet_strategy) -> list[tuple[Hashable, np.ndarray]]:
    """The walk of the module doc: [(pub, ranges float [2, N])], the root first, every state
    non-terminal, each player's range summing to 1 over its possible slots."""
    pub = game.root()
    ranges = _normalised(game.initial_ranges() * game.cached("possible_mask", pub))
    path = [(pub, ranges)]
    while True:
        step = _step(game, rng, settings, strategy, pub, ranges)
        if step is None:
            return path
        pub, ranges = step
        path.append(step)


def random_situation(game: Game, rng: np.random.Generator,
                     settings: SearchSettings) -> tuple[Hashable, np.ndarray]:
    """One query (pub, ranges float [2, N]): a state of `random_walk` after the root, uniformly
    (the root if the walk is only the root)."""
    path = random_walk(game, rng, settings)
    return path[int(rng.integers(1, len(path)))] if len(path) > 1 else path[0]


def _step(game: Game, rng, settings, strategy: Strategy, pub, ranges: np.ndarray):
    """The walk's next (pub, ranges) from `pub`, or None where no child qualifies."""
    kind = game.cached("kind", pub)
    if kind == TERMINAL:
        return None
    if kind == CHANCE:
        wide = wide_chance(game, settings, pub)
        kids = (game.sample_chance_children(pub, WIDE_CHANCE_DRAWS, rng) if wide
                else game.cached("children", pub))
        weights = np.ones(len(kids)) if wide else np.array([c.prob for c in kids], dtype=float)
        sigma = actor = None
    else:
        kids = game.cached("children", pub)
        weights = np.ones(len(kids))
        actor = game.cached("actor", pub)
        legal = game.cached("legal_mask", pub) & game.cached("possible_mask", pub)[actor][:, None]
        sigma = strategy(pub, legal, rng) * legal
    keep = np.flatnonzero(weights > 0)
    race = rng.exponential(size=len(keep)) / weights[keep]     # an order drawn by the weights
    for k in keep[np.argsort(race, kind="stable")].tolist():
        child = kids[k]
        if game.cached("kind", child.pub) == TERMINAL:
            continue
        new = carry(ranges, child.state_maps)
        if sigma is not None:
            amap = child.actor_map
            ok = amap >= 0
            new[actor] = np.bincount(amap[ok], (ranges[actor][:, None] * sigma)[ok], minlength=ranges.shape[1])
        new = new * game.cached("possible_mask", child.pub)
        if (new.sum(1) > 0).all():
            return child.pub, _normalised(new)
    return None


def _normalised(ranges: np.ndarray) -> np.ndarray:
    """float [2, N]: each row divided by its sum (rows summing to 0 stay 0)."""
    total = ranges.sum(1, keepdims=True)
    return np.divide(ranges, total, out=np.zeros_like(ranges, dtype=float), where=total > 0)
