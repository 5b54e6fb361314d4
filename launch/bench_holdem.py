"""`sog bench holdem`: solving a hold'em subgame with the public-tree CFR engine.

The subgame: limit hold'em on a 52-card deck (`GAME`: blinds 10 / 5, the 1326 hands of two
cards), both players calling and checking to the street asked for (`--street river`: the
river's betting; `turn`: the turn's betting, the river card's chance node with its 44
children and every river below), on the board `--board`, with uniform ranges over the
hands that the board does not block. Alternating CFR+ runs there through the poker
protocol's terminal values (no [N, N] payoff matrix; `sog.games.poker`), and, for the river
with `--dense`, once more through the dense payoff matrices, as a ratio. The passes and terminal
values run on `--threads` threads (default: the CPUs available; `sog.threads`: the same results
to the bit), and with `--compare-threads` once more on one, as a ratio.

Printed: the tree's size, compile seconds, CFR+ iterations per second, the exact
exploitability of the average policy (NashConv / 2 of the subgame with its root ranges, by
one best-response pass) in mbb (of the big blind) and in % of the pot, the iterations and
seconds to reach `--target-pot` % of the pot, and the peak resident memory of the process.
"""
from __future__ import annotations

import resource
import time

import numpy as np

from launch.console import UserError, say
from sog import threads
from sog.games import load_game
from sog.games.api import CHANCE
from sog.search.cfr import CFRConfig, CFRSolver, Levels, evaluate_entries
from sog.search.tree import PublicTree, compile_tree

GAME = ("holdem(betting=limit,numRanks=13,numSuits=4,numHoleCards=2,numRounds=4,numBoardCards=0 3 1 1,"
        "blind=10 5,raiseSize=10 10 20 20,firstPlayer=2 1 1 1,maxRaises=3 4 4 4)")
BOARD = "As Kh 7d 2c 9s"
STREETS = {"river": 3, "turn": 2}      # board deals before the subgame's root


def subgame_root(game, board: list[int], deals: int):
    """The public state after calls and checks to the street whose deal is number `deals`."""
    cuts = (3, 4, 5)
    pub, dealt = (), 0
    while dealt < deals:
        if game.kind(pub) == CHANCE:
            lo = 0 if dealt == 0 else cuts[dealt - 1]
            pub += (tuple(board[lo:cuts[dealt]]),)
            dealt += 1
        else:
            pub += (1,)                    # call / check
    return pub


def parse_board(game, text: str) -> list[int]:
    names = {game.deck.card_name(c).lower(): c for c in range(game.deck.size)}
    cards = text.replace(",", " ").lower().split()
    if len(cards) != 5 or any(c not in names for c in cards) or len(set(cards)) != 5:
        raise UserError(f"--board needs five distinct cards like {BOARD!r}, got {text!r}")
    return [names[c] for c in cards]


def exploitability(lv: Levels, sigma: np.ndarray, root_ranges: np.ndarray) -> float:
    """NashConv / 2 of the subgame with fixed root ranges [1, 2, N], in big blinds, of the policy
    over the legal entries sigma [E] (no dense [m, N, A] copy: 138 MB on the turn)."""
    _, values = evaluate_entries(lv, sigma, root_ranges, best_response=True)
    root = lv.ct.roots[0]
    return float(sum(root_ranges[0, p] @ values[root, p] for p in (0, 1)) / 2)


def solve(game, root, iterations: int, target_pot: float, check_every: int) -> dict:
    t0 = time.perf_counter()
    ct = compile_tree(PublicTree(game, [root]).expand_all())
    compile_seconds = time.perf_counter() - t0
    lv = Levels(ct)
    possible = game.possible_mask(root).astype(np.float64)
    ranges = (possible / possible.sum(1, keepdims=True))[None]
    pot = game.pot(root) / game.big_blind
    config = CFRConfig("cfr+", alternating=True)
    t0 = time.perf_counter()      # one iteration of a throwaway solver: the kernels compiled, or loaded
    CFRSolver(ct, root_ranges=ranges, config=config, levels=lv).iterate(1)    # from numba's cache
    warmup_seconds = time.perf_counter() - t0
    solver = CFRSolver(ct, root_ranges=ranges, config=config, levels=lv)
    seconds, reached = 0.0, None
    while solver.iterations < iterations:
        t0 = time.perf_counter()
        solver.iterate(min(check_every, iterations - solver.iterations))
        seconds += time.perf_counter() - t0
        expl = exploitability(lv, solver.average_entries(), ranges)
        say(f"  {solver.iterations:5d} iterations  {seconds:7.2f} s  {100 * expl / pot:8.3f} % of the pot")
        if reached is None and 100 * expl / pot <= target_pot:
            reached = dict(iterations=solver.iterations, seconds=seconds)
    return dict(nodes=int(ct.num_nodes), terminals=int(len(ct.terminals)), dense_payoffs=game.dense_payoffs,
                compile_seconds=compile_seconds, warmup_seconds=warmup_seconds, iterations=solver.iterations,
                seconds=seconds,
                iterations_per_s=solver.iterations / seconds, pot_bb=pot,
                exploitability_mbb=1000 * expl, exploitability_pot_pct=100 * expl / pot,
                target_pot_pct=target_pot, reached_target=reached,
                peak_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


def run(args) -> dict:
    if args.iterations < 1 or args.check_every < 1:
        raise UserError("--iterations and --check-every must be at least 1")
    if args.threads is not None and args.threads < 1:
        raise UserError(f"--threads must be at least 1, got {args.threads}")
    game = load_game(GAME)
    board = parse_board(game, args.board)
    root = subgame_root(game, board, STREETS[args.street])
    k = args.threads or threads.available()
    say(f"hold'em {args.street} subgame, board {args.board}: fast terminal values, {k} thread(s)")
    with threads.using(k):
        fast = solve(game, root, args.iterations, args.target_pot, args.check_every)
    out = {"benchmark": "holdem", "street": args.street, "board": args.board, "game": GAME, "threads": k,
           "fast": fast}
    if k > 1 and args.compare_threads:
        say("the same on one thread")
        out["one_thread"] = solve(game, root, args.iterations, args.target_pot, args.check_every)
        out["one_thread_over_threads_seconds"] = out["one_thread"]["seconds"] / fast["seconds"]
    if args.dense:
        dense = load_game(GAME)
        dense.dense_payoffs = True
        say("the same with dense payoff matrices")
        with threads.using(k):
            out["dense"] = solve(dense, root, args.iterations, args.target_pot, args.check_every)
        out["dense_over_fast_seconds"] = out["dense"]["seconds"] / out["fast"]["seconds"]
    return out


def add_arguments(b) -> None:
    """The options of `sog bench holdem` on the `sog bench` parser."""
    b.add_argument("--street", choices=sorted(STREETS), default="river", help="holdem: the subgame")
    b.add_argument("--board", default=BOARD, help="holdem: five cards, e.g. 'As Kh 7d 2c 9s' "
                                                  "(the turn subgame uses the first four)")
    b.add_argument("--iterations", type=int, default=1000, help="holdem: CFR+ iterations")
    b.add_argument("--check-every", type=int, default=100, help="holdem: iterations between checks")
    b.add_argument("--target-pot", type=float, default=0.5, help="holdem: target, %% of the pot")
    b.add_argument("--dense", action="store_true", help="holdem: also with dense payoff matrices")
    b.add_argument("--threads", type=int, default=None,
                   help="holdem: threads of the CFR passes and terminal values (default: the CPUs available)")
    b.add_argument("--compare-threads", action="store_true",
                   help="holdem: with more than one thread, also solve on one thread (the ratio)")
