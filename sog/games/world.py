"""The world-state level, derived from the public tree (so consistent with it).

A world state is a public state plus both players' information-state slots:
that is all the games here need to know the full state (poker: the betting
and board plus both hands; Scotland Yard: the public positions plus Mr X's
station). Self-play, expansion sampling and the sampling baselines work here.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Hashable

import numpy as np

from sog.errors import SogError
from sog.games.api import CHANCE, DECISION, TERMINAL, Game


class IllegalActionError(SogError, ValueError):
    """An action that is not legal in the given world or information state."""


@dataclasses.dataclass(frozen=True)
class World:
    """pub: the public state; slots: (player 0's slot, player 1's slot)."""

    pub: Hashable
    slots: tuple[int, int]


def kind(game: Game, world: World) -> int:
    return game.cached("kind", world.pub)


def deal(game: Game, rng: np.random.Generator) -> World:
    """Sample the private deal: s0 from its marginal, s1 given s0 (card removal)."""
    init = game.initial_ranges()
    s0 = int(rng.choice(len(init[0]), p=init[0] / init[0].sum()))
    w1 = init[1] * game.chance_weights(game.root())[s0]
    s1 = int(rng.choice(len(w1), p=w1 / w1.sum()))
    return World(game.root(), (s0, s1))


def legal_actions(game: Game, world: World) -> np.ndarray:
    """int [k]: legal actions of the actor in this world state."""
    if kind(game, world) != DECISION:
        return np.zeros(0, dtype=np.int64)
    actor = game.cached("actor", world.pub)
    return np.flatnonzero(game.cached("legal_mask", world.pub)[world.slots[actor]])


def apply_action(game: Game, world: World, action: int) -> World:
    """The world state after the actor plays `action`; IllegalActionError if it may not."""
    if kind(game, world) != DECISION:
        raise IllegalActionError(f"no player acts at {world.pub!r} ({game.spec.name})")
    actor = game.cached("actor", world.pub)
    s_act, s_oth = world.slots[actor], world.slots[1 - actor]
    legal = game.cached("legal_mask", world.pub)[s_act]
    if not (0 <= action < len(legal)) or not legal[action]:
        names = [game.action_name(world.pub, int(a)) for a in np.flatnonzero(legal)]
        raise IllegalActionError(
            f"illegal action {action} at {world.pub!r} in {game.spec.name}; legal: {names}")
    for child in game.cached("children", world.pub):
        c_act, c_oth = child.actor_map[s_act, action], child.state_maps[1 - actor][s_oth]
        if c_act >= 0 and c_oth >= 0:
            slots = [0, 0]
            slots[actor], slots[1 - actor] = int(c_act), int(c_oth)
            return World(child.pub, (slots[0], slots[1]))
    raise AssertionError(f"{game.spec.name}: no child of {world.pub!r} for action {action}")


def chance_outcomes(game: Game, world: World) -> list[tuple[float, World]]:
    """[(probability, next world)] of a chance node, conditioned on both slots."""
    if kind(game, world) != CHANCE:
        raise IllegalActionError(f"{world.pub!r} is not a chance node")
    out = []
    for child in game.cached("children", world.pub):
        c0, c1 = child.state_maps[0][world.slots[0]], child.state_maps[1][world.slots[1]]
        if c0 >= 0 and c1 >= 0:
            out.append((child.prob, World(child.pub, (int(c0), int(c1)))))
    total = sum(p for p, _ in out)
    return [(p / total, w) for p, w in out]


def sample_chance(game: Game, world: World, rng: np.random.Generator) -> World:
    """The world after the chance node `world`, drawn by `Game.sample_chance_child` (one
    `rng.choice`: the same draw as over `chance_outcomes`)."""
    if kind(game, world) != CHANCE:
        raise IllegalActionError(f"{world.pub!r} is not a chance node")
    child = game.sample_chance_child(world.pub, world.slots, rng)
    return World(child.pub, (int(child.state_maps[0][world.slots[0]]), int(child.state_maps[1][world.slots[1]])))


def returns(game: Game, world: World) -> float:
    """Player 0's utility at a terminal world state (player 1 gets the negative)."""
    if kind(game, world) != TERMINAL:
        raise IllegalActionError(f"{world.pub!r} is not terminal")
    return float(game.cached("utility", world.pub)[world.slots[0], world.slots[1]])


def sample_world(game: Game, pub, player: int, slot: int, opponent_range: np.ndarray,
                 rng: np.random.Generator) -> World:
    """A world state consistent with `player` holding `slot` at `pub`.

    The opponent's slot is drawn proportionally to opponent_range (float [N],
    its reach) times the deal's chance weights and the possible mask.
    """
    cw = game.chance_weights(pub)
    cw = cw[slot] if player == 0 else cw[:, slot]
    w = opponent_range * cw * game.cached("possible_mask", pub)[1 - player]
    if w.sum() <= 0:
        raise ValueError(f"no opponent slot is consistent with slot {slot} at {pub!r}")
    other = int(rng.choice(len(w), p=w / w.sum()))
    slots = [0, 0]
    slots[player], slots[1 - player] = slot, other
    return World(pub, (slots[0], slots[1]))
