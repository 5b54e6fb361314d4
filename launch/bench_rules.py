"""Speed of the rule operations GT-CFR uses, for the chess and Go candidates.

Per operation on positions of random games (same positions for every library):
legal moves of a state seen before (OpenSpiel caches them), apply a move to a copy
(clone + apply: the search keeps every node's state), expand (copy, apply, then the
child's legal moves: what a new search node costs), terminal check. Prints microseconds per call. pgx is timed per single
state through its jitted step (the search expands one node at a time), after
compilation. python-chess and pgx come with the test extra (`pip install -e ".[test]"`); a
candidate that is not installed is left out.

    sog bench rules
"""
from __future__ import annotations

import random
import time

import numpy as np


def _time(fn, items, repeat=3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        for x in items:
            fn(x)
        best = min(best, (time.perf_counter() - t) / len(items))
    return best * 1e6


def _openspiel_states(name, params, n_games=20, plies=60, seed=0):
    import pyspiel  # here: the CLI starts without OpenSpiel's C++ library until a command needs it

    rng = random.Random(seed)
    game = pyspiel.load_game(name, params)
    states = []
    for _ in range(n_games):
        s = game.new_initial_state()
        for _ in range(rng.randrange(plies)):
            if s.is_terminal():
                break
            s.apply_action(rng.choice(s.legal_actions()))
        if not s.is_terminal():
            states.append(s)
    return states


def openspiel(name, params):
    states = _openspiel_states(name, params)
    moves = [s.legal_actions()[0] for s in states]
    pairs = list(zip(states, moves))

    def apply(p):
        c = p[0].clone()
        c.apply_action(p[1])
        return c
    return {"legal": _time(lambda s: s.legal_actions(), states),
            "apply": _time(apply, pairs),
            "expand": _time(lambda p: apply(p).legal_actions(), pairs),
            "terminal": _time(lambda s: s.is_terminal(), states)}


def python_chess():
    import chess  # the test extra's second chess implementation
    boards = [chess.Board(s.to_string()) for s in _openspiel_states("chess", {})]
    moves = [next(iter(b.legal_moves)) for b in boards]
    pairs = list(zip(boards, moves))

    def apply(p):
        c = p[0].copy(stack=False)
        c.push(p[1])
        return c
    return {"legal": _time(lambda b: list(b.legal_moves), boards),
            "apply": _time(apply, pairs),
            "expand": _time(lambda p: list(apply(p).legal_moves), pairs),
            "terminal": _time(lambda b: b.is_game_over(claim_draw=True), boards)}


def pgx_env(env_id):
    import jax
    import pgx
    env = pgx.make(env_id)
    init, step = jax.jit(env.init), jax.jit(env.step)
    rng = np.random.default_rng(0)
    states = []
    for g in range(10):
        s = init(jax.random.PRNGKey(g))
        for _ in range(rng.integers(40)):
            legal = np.flatnonzero(np.asarray(s.legal_action_mask))
            s = step(s, int(rng.choice(legal)))
        states.append(s)
    acts = [int(np.flatnonzero(np.asarray(s.legal_action_mask))[0]) for s in states]
    pairs = list(zip(states, acts))
    jax.block_until_ready(step(states[0], acts[0]))
    return {"legal": _time(lambda s: np.asarray(s.legal_action_mask), states),
            "apply": _time(lambda p: jax.block_until_ready(step(p[0], p[1])), pairs),
            "expand": _time(lambda p: np.asarray(step(p[0], p[1]).legal_action_mask), pairs),
            "terminal": _time(lambda s: bool(s.terminated), states)}


def run(log=print) -> dict:
    """{candidate: {operation: microseconds per call}}; a table on `log` as it goes."""
    candidates = {"chess openspiel": lambda: openspiel("chess", {}),
                  "chess python-chess": python_chess,
                  "go9 openspiel": lambda: openspiel("go", {"board_size": 9, "komi": 7.5}),
                  "chess pgx": lambda: pgx_env("chess"), "go9 pgx": lambda: pgx_env("go_9x9")}
    cols = ("legal", "apply", "expand", "terminal")
    log(f"{'us per call':22s}" + "".join(f"{c:>10s}" for c in cols))
    rows = {}
    for name, measure in candidates.items():
        try:
            rows[name] = measure()
        except ImportError:
            log(f"{name:22s} not installed")
            continue
        log(f"{name:22s}" + "".join(f"{rows[name][c]:10.2f}" for c in cols))
    return {"microseconds_per_call": rows}
