"""Head-to-head play between agents on the world-state level (`sog.games.world`).

`play_game(game, (agent0, agent1), seed)` plays one game: the private deal and
every chance event are drawn from a generator seeded by `seed`; each agent is
reset with its seat and a seed derived from `seed`, and asked to act with the
public history (root to now) and its own slot only. `play_match` plays
`games` games alternating seats (agent `a` is player 0 in even games) and
reports a's mean return with a normal 95% confidence interval. Everything is
a deterministic function of the seed (as long as the agents are: time-budgeted
search is not).

`policy_pair_value(game, policy0, policy1)` is the exact expected return of
player 0 when player 0 follows policy0 and player 1 follows policy1 (full
public tree), for checking match estimates of tabular agents.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from sog.agents.api import Agent
from sog.games import world as W
from sog.games.api import CHANCE, DECISION, Game
from sog.games.world import IllegalActionError
from sog.policy import TabularPolicy
from sog.search.full_tree import pair_value
from sog.seeding import derive_seed

__all__ = ["Z95", "IllegalActionError", "game_seeds", "play_game", "play_match", "policy_pair_value"]

Z95 = 1.959963984540054


def game_seeds(seed: int) -> tuple[int, int, int]:
    """The (chance, player 0, player 1) seeds of the game seeded `seed` (`play_game`'s, and
    LBR's, so that a seed deals the same cards whoever plays)."""
    return derive_seed(seed, 0), derive_seed(seed, 1), derive_seed(seed, 2)


def play_game(game: Game, agents: Sequence[Agent], seed: int, max_steps: int = 1_000_000,
              observe: Callable[[int, tuple, int], object] | None = None,
              opening: Sequence[int] = ()) -> dict:
    """Play one game with agents[0] as player 0 and agents[1] as player 1.

    Returns dict(returns=[u0, u1], history=[actions of the players, in order],
    actors=[who played each of them], pubs=[every public state visited, root first],
    deal=[slot of player 0, slot of player 1] at the root, seed, opening=the number of
    opening actions). `opening`: actions played for the agents first (a tournament's
    opening, `sog.eval.openings`; the agents see them in the history, and they head
    `history` and `actors`). With `observe`,
    `observe(actor, history, slot)` is called before each of the agents' decisions and its
    results are returned as `observed` (one per such decision; AIVAT records strategies this way).
    Raises IllegalActionError naming the agent, the state and the action if an agent
    returns an action that is not legal.
    """
    if len(agents) != 2:
        raise ValueError(f"play_game needs two agents, got {len(agents)}")
    chance_seed, seed0, seed1 = game_seeds(seed)
    rng = np.random.default_rng(chance_seed)
    for player, (agent, s) in enumerate(zip(agents, (seed0, seed1))):
        agent.reset(player, s)
    world = W.deal(game, rng)
    deal = list(world.slots)
    pubs = [world.pub]
    actions, actors, observed = [], [], []
    for action in opening:
        actors.append(int(game.cached("actor", world.pub)))
        world = W.apply_action(game, world, int(action))
        actions.append(int(action))
        pubs.append(world.pub)
    for _ in range(max_steps):
        kind = game.cached("kind", world.pub)
        if kind == CHANCE:
            world = W.sample_chance(game, world, rng)
        elif kind == DECISION:
            actor = int(game.cached("actor", world.pub))
            slot = world.slots[actor]
            if observe is not None:
                observed.append(observe(actor, tuple(pubs), slot))
            action = agents[actor].act(tuple(pubs), slot)
            legal = W.legal_actions(game, world)
            if not isinstance(action, (int, np.integer)) or int(action) not in legal:
                names = [game.action_name(world.pub, int(a)) for a in legal]
                raise IllegalActionError(
                    f"agent {agents[actor]!r} (player {actor}) returned illegal action {action!r} "
                    f"at {world.pub!r} with slot {slot} in {game.spec.name}; legal: {names}")
            action = int(action)
            world = W.apply_action(game, world, action)
            actions.append(action)
            actors.append(actor)
        else:
            u = W.returns(game, world)
            out = {"returns": [u, -u], "history": actions, "actors": actors, "pubs": pubs,
                   "deal": deal, "seed": int(seed), "opening": len(opening)}
            if observe is not None:
                out["observed"] = observed
            return out
        pubs.append(world.pub)
    raise RuntimeError(f"{game.spec.name}: game did not end within {max_steps} steps")


def play_match(game: Game, a: Agent, b: Agent, games: int, seed: int = 0) -> dict:
    """`games` games of `a` against `b`, a in seat 0 in even games and seat 1 in odd ones.

    Returns dict(games=[per game: seed, seat of a, returns, a's return, number of actions],
    returns=[a's return per game], mean, stderr, ci95=[low, high], seat_means=[a's mean as
    player 0, as player 1], n). The interval is mean +- 1.96 standard errors (sample standard
    deviation; zero width for fewer than two games). Both agents are closed at the end
    (`Agent.close`: engine processes), also when a game raises.
    """
    if games < 1:
        raise ValueError(f"games must be at least 1, got {games}")
    results, values = [], []
    with a, b:                                   # close engine agents however the match ends
        for i in range(games):
            s, seat = derive_seed(seed, i), i % 2
            pair = (a, b) if seat == 0 else (b, a)
            g = play_game(game, pair, s)
            value = g["returns"][seat]
            values.append(value)
            results.append({"seed": s, "seat_a": seat, "returns": g["returns"], "value_a": value,
                            "actions": len(g["history"])})
    v = np.array(values)
    mean = float(v.mean())
    stderr = float(v.std(ddof=1) / math.sqrt(len(v))) if len(v) > 1 else 0.0
    seat_means = [float(v[s::2].mean()) if len(v[s::2]) else float("nan") for s in (0, 1)]
    return {"games": results, "returns": values, "mean": mean, "stderr": stderr,
            "ci95": [mean - Z95 * stderr, mean + Z95 * stderr], "seat_means": seat_means,
            "n": len(v)}


def policy_pair_value(game: Game, policy0: TabularPolicy, policy1: TabularPolicy) -> float:
    """Player 0's exact expected return when player i follows policy_i (full public tree;
    `sog.search.full_tree.pair_value`)."""
    return pair_value(game, policy0, policy1)
