"""`sog solve` for games of more than two players: MCCFR, the policy file, the exact NashConv.

`sog solve --game 'kuhn_poker(players=3)' [--algorithm external|outcome|pluribus]
[--iterations N] [--seconds S] [--seed K] [--out FILE]` solves n-player Kuhn or Leduc poker
(`players=3..6`), or hold'em (`universal_poker(numPlayers=N,...)`, `holdem(numPlayers=N,...)`
with N > 2, as `sog.multiplayer.holdem`), with Monte Carlo CFR:

* external: external sampling, OpenSpiel's `ExternalSamplingMCCFRSolver` algorithm (simple
  averaging at the sampled decisions of the player after the traverser);
* outcome: outcome sampling (epsilon = 0.6), OpenSpiel's `OutcomeSamplingMCCFRSolver` rule;
* pluribus: external sampling with Pluribus' Algorithm 1 options: linear weighting for the
  first half of the iterations (a discount every 1% of them), negative-regret pruning after
  the first 20% (95% of the traversals, Pluribus' thresholds), Update-Strategy averaging.

Kuhn and Leduc run compiled (`sog.multiplayer.compiled`), hold'em on the world-state solvers
(`sog.multiplayer.mccfr`); both give the same results for a seed. It runs --iterations
iterations (one update per player each), or stops at --seconds first. The average policy is
written with --out (`sog.multiplayer.policy.save_policy`: OpenSpiel information-state keys,
every information state of the game where the full tree is built, else those met), and its
exact NashConv (chips; `sog.multiplayer.best_response`, equal to OpenSpiel's
`exploitability.nash_conv`) is printed where the full tree has at most MAX_NASH_CONV_NODES
world states (null beyond). Bad input (a player count outside 2..6, a two-player algorithm,
bad settings) is a `UserError`.
"""
from __future__ import annotations

import time
from pathlib import Path

from launch.console import UserError, say
from sog.games import parse_game_string
from sog.multiplayer import PlayersError, UnknownGameError, load_game
from sog.multiplayer.best_response import Evaluator
from sog.multiplayer.compiled import CompiledExternalSampling, CompiledOutcomeSampling
from sog.multiplayer.dealt import supports
from sog.multiplayer.mccfr import ExternalSamplingMCCFR, OutcomeSamplingMCCFR
from sog.multiplayer.policy import completed, openspiel_game_string, save_policy
from sog.multiplayer.tree import TreeTooLargeError

ALGORITHMS = ("external", "outcome", "pluribus")
MAX_NASH_CONV_NODES = 5_000_000
PLAYER_PARAM = {"kuhn_poker": "players", "leduc_poker": "players", "holdem": "numPlayers",
                "universal_poker": "numPlayers"}


def is_multiplayer(text: str) -> bool:
    """Whether `sog solve --game text` is for this module: Kuhn, Leduc or hold'em
    (`holdem(...)`, `universal_poker(...)`) naming a player count other than 2; two-player
    names go to the exact CFR solver."""
    try:
        name, params = parse_game_string(text)
    except ValueError:
        return False
    key = PLAYER_PARAM.get(name)
    return key is not None and key in params and params[key] != 2


def multiplayer_game(text: str):
    """The `sog.multiplayer` game `text` names; UserError if there is none."""
    name, params = parse_game_string(text)
    key = PLAYER_PARAM[name]
    players = params.get(key, 2)
    if key == "players":
        if set(params) != {key}:
            raise UserError(f"{name} for more than two players takes players=N only, got {text!r}")
        text = name
    try:
        return load_game(text, players)
    except (PlayersError, UnknownGameError) as e:
        raise UserError(f"{name}: {e}") from None


def _solver(game, algorithm: str, iterations: int, seed: int):
    if algorithm == "outcome":
        return (CompiledOutcomeSampling if supports(game) else OutcomeSamplingMCCFR)(game, seed)
    settings = {}
    if algorithm == "pluribus":
        settings = {"linear_until": iterations // 2, "discount_interval": max(1, iterations // 100),
                    "prune_after": iterations // 5, "averaging": "pluribus"}
    return (CompiledExternalSampling if supports(game) else ExternalSamplingMCCFR)(game, seed, **settings)


def solve(args) -> dict:
    """`sog solve` on an n-player game; the result's JSON object."""
    game = multiplayer_game(args.game)
    algorithm = args.algorithm or "external"
    if algorithm not in ALGORITHMS:
        raise UserError(f"--algorithm {algorithm} is for two-player games; {game.num_players}-player games "
                        f"take {', '.join(ALGORITHMS)}")
    if args.iterations < 1:
        raise UserError("--iterations must be at least 1")
    if args.seconds is not None and not args.seconds > 0:
        raise UserError(f"--seconds must be positive, got {args.seconds}")
    if args.out is not None and (not Path(args.out).parent.is_dir() or Path(args.out).is_dir()):
        raise UserError(f"cannot write {args.out}: not a file in an existing folder")
    seed = 0 if args.seed is None else args.seed
    solver = _solver(game, algorithm, args.iterations, seed)
    name = openspiel_game_string(game)
    t0 = time.perf_counter()
    deadline = t0 + (args.seconds if args.seconds is not None else float("inf"))
    step = max(1, min(args.iterations // 100, 10_000))
    while solver.iterations < args.iterations and time.perf_counter() < deadline:
        solver.run(min(step, args.iterations - solver.iterations))
        say(f"\r{name}: iteration {solver.iterations}/{args.iterations}", end="")
    seconds = time.perf_counter() - t0
    say()
    policy = solver.average_policy()
    try:
        ev = Evaluator(game, MAX_NASH_CONV_NODES)
    except TreeTooLargeError as e:
        ev = None
        say(f"no exact NashConv: {e}")
    if ev is not None:
        policy = completed(ev.tree, policy)
    nash_conv = None if ev is None else ev.nash_conv(policy)
    result = {"game": name, "players": game.num_players, "algorithm": algorithm, "seed": seed,
              "iterations": solver.iterations, "seconds": seconds, "information_states": len(policy),
              "nash_conv": nash_conv}
    if args.out:
        save_policy(game, policy, args.out)
        result["policy"] = args.out
    if nash_conv is not None:
        say(f"NashConv {nash_conv:.6f} chips after {solver.iterations} iterations in {seconds:.2f} s")
    return result
