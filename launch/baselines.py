"""`sog baselines --game GAME --budget SECONDS [--only NAME,...] [--seed S]`.

Runs every full-game baseline for the same wall-clock budget and measures the
exact exploitability of the policy it produces (`sog.search.full_tree`):

    outcome     outcome-sampling MCCFR (average policy)
    external    external-sampling MCCFR (average policy)
    pluribus    Pluribus' MCCFR (linear weighting, negative-regret pruning)
    uct         self-play UCT, normalised visit counts (Heinrich and Silver 2015)
    smooth_uct  self-play Smooth UCT, normalised visit counts
    ismcts      independent IS-MCTS searches at every information state (visit counts);
                the number of simulations per search is calibrated so that all the
                searches fit the budget; skipped when even one simulation per
                information state would take more than twice the budget

The budget covers running the baseline and extracting its policy, not the
exploitability computation. `run(args)` returns a JSON-able dict (one row per
baseline) and prints a table to stderr. `add_parser(subparsers)` adds the
command to an argparse subparsers object, with `run` as its `func`.
"""
from __future__ import annotations

import time

from launch.console import UserError, say
from sog.agents.sampling.common import decision_infostates
from sog.agents.sampling.ismcts import ISMCTS, ismcts_policy
from sog.agents.sampling.mccfr import ExternalSamplingMCCFR, OutcomeSamplingMCCFR, PluribusMCCFR
from sog.agents.sampling.uct import UCT, SmoothUCT
from sog.games import UnknownGameError, load_game
from sog.search.full_tree import best_response_values, refuse_too_large

BASELINES = ("outcome", "external", "pluribus", "uct", "smooth_uct", "ismcts")


def add_parser(subparsers):
    p = subparsers.add_parser("baselines", help="exact exploitability of baselines at a fixed budget")
    p.add_argument("--game", required=True,
                   help="a two-player game with an exact best response (kuhn_poker, leduc_poker, ...)")
    p.add_argument("--budget", type=float, required=True, help="wall-clock seconds per baseline")
    p.add_argument("--only", default=None,
                   help=f"comma-separated subset of: {', '.join(BASELINES)}")
    p.add_argument("--seed", type=int, default=0, help="the baselines' sampling seed (default 0)")
    p.set_defaults(func=run)
    return p


def _selected(only: str | None) -> list[str]:
    if not only:
        return list(BASELINES)
    names = [n.strip() for n in only.split(",") if n.strip()]
    unknown = [n for n in names if n not in BASELINES]
    if unknown or not names:
        raise UserError(f"unknown baseline(s) {', '.join(unknown) or repr(only)}; "
                        f"choose from {', '.join(BASELINES)}")
    return list(dict.fromkeys(names))


def _run_sampler(cls, game, budget: float, seed: int) -> dict:
    """MCCFR / UCT / Smooth UCT: run for `budget` seconds, then take the average policy."""
    solver = cls(game, seed=seed)
    t0 = time.perf_counter()
    solver.run(seconds=budget)
    policy = solver.policy()
    return {"policy": policy, "iterations": solver.iterations, "seconds": time.perf_counter() - t0}


def _run_ismcts(game, budget: float, seed: int) -> dict:

    t0 = time.perf_counter()
    infos = [(pub, int(s)) for pub, _, slots in decision_infostates(game) for s in slots]
    # Calibrate: a search of k simulations takes about a + b k seconds (fitted on a spread
    # of information states at k = 2 and k = 16).
    probe = ISMCTS(game, seed=seed)
    sample = infos[:: max(1, len(infos) // 20)][:20]
    cost = {}
    for k in (2, 16):
        t = time.perf_counter()
        for pub, s in sample:
            probe.search(pub, s, simulations=k)
        cost[k] = (time.perf_counter() - t) / len(sample)
    b = max((cost[16] - cost[2]) / 14, 1e-9)
    a = max(cost[2] - 2 * b, 0.0)
    remaining = budget - (time.perf_counter() - t0)
    estimate_one = (a + b) * len(infos)
    if estimate_one > 2 * budget:
        return {"skipped": f"one simulation at each of {len(infos)} information states would "
                           f"take ~{estimate_one:.1f} s, over twice the budget",
                "information_states": len(infos)}
    simulations = max(1, int((remaining / len(infos) - a) / b))
    policy = ismcts_policy(game, simulations, "visits", seed=seed)
    return {"policy": policy, "iterations": simulations, "seconds": time.perf_counter() - t0,
            "information_states": len(infos), "simulations_per_search": simulations}


def run(args) -> dict:

    if not args.budget > 0:
        raise UserError(f"--budget must be positive, got {args.budget}")
    names = _selected(args.only)
    try:
        game = load_game(args.game)
    except UnknownGameError as e:
        raise UserError(str(e)) from None
    refuse_too_large(game)      # every baseline ends in an exact best response
    seed = int(getattr(args, "seed", 0) or 0)
    samplers = {"outcome": OutcomeSamplingMCCFR, "external": ExternalSamplingMCCFR,
                "pluribus": PluribusMCCFR, "uct": UCT, "smooth_uct": SmoothUCT}
    units = {"outcome": "iterations", "external": "iterations", "pluribus": "iterations",
             "uct": "episodes", "smooth_uct": "episodes", "ismcts": "simulations per search"}
    rows = []
    for name in names:
        say(f"{game.spec.name}: running {name} for {args.budget:g} s ...")
        out = (_run_ismcts(game, args.budget, seed) if name == "ismcts"
               else _run_sampler(samplers[name], game, args.budget, seed))
        row = {"name": name, "units": units[name]}
        if "skipped" in out:
            row.update(skipped=out.pop("skipped"), **out)
            rows.append(row)
            continue
        policy = out.pop("policy")
        t = time.perf_counter()
        br = best_response_values(game, policy)
        expl = float(br.sum() / 2)
        row.update(out, exploitability=expl, exploitability_mbb=1000 * expl,
                   best_response_values=[float(x) for x in br],
                   eval_seconds=time.perf_counter() - t)
        rows.append(row)
    done = [r for r in rows if "exploitability" in r]
    best = min(done, key=lambda r: r["exploitability"])["name"] if done else None
    result = {"game": game.spec.name, "budget_seconds": float(args.budget), "seed": seed,
              "baselines": rows, "best": best}
    say(_table(result))
    return result


def _table(result: dict) -> str:
    lines = [f"{result['game']}, {result['budget_seconds']:g} s per baseline:",
             f"{'baseline':<11} {'exploitability':>15} {'mbb':>10} {'iterations':>11} {'seconds':>8}  units"]
    for r in result["baselines"]:
        if "skipped" in r:
            lines.append(f"{r['name']:<11} skipped: {r['skipped']}")
            continue
        lines.append(f"{r['name']:<11} {r['exploitability']:>15.6f} {r['exploitability_mbb']:>10.1f} "
                     f"{r['iterations']:>11} {r['seconds']:>8.2f}  {r['units']}")
    return "\n".join(lines)
