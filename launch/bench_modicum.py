"""`sog bench modicum --config BLUEPRINT.yaml [--file PATH] [--searches 8] [--seed 0] [--options O] [--reference O]`.

Modicum's depth-limited search (`sog.agents.holdem.table.search.SearchAgent` inside `modicum:`) timed on
the spots it plays: the first decision of the first searched round (`search.first_round`, the flop
by default) on deals of the blueprint playing itself (`--seed`), one spot a deal, each spot searched
by two `modicum:` agents of the same blueprint, interleaved spot by spot so that load from other
processes hits both alike: the candidate (`--options`, default the range search `search.ranges=4096`)
and the reference (`--reference`, default the sampled-deal search `search.ranges=0`, 64 deals). Each
search is one `SearchAgent.decide` at the spot, the first there, so it solves.

Printed and returned (JSON): per agent the wall and CPU seconds a search (mean, median, max; CPU
seconds of the process, every thread), CFR iterations and subgame public states a search; the
ratios candidate / reference; where the candidate is a range search, the seconds of one showdown
matrix for the searched round's all-in run-outs (`sog.agents.holdem.table.range_search.showdown_matrix`, the
first spot's board, computed once more outside the searches); the process's peak resident memory
(both agents and the blueprint together) and the megabytes of showdown matrices each agent keeps.
"""
from __future__ import annotations

import resource
import statistics
import time

import numpy as np

from launch.console import UserError, say
from sog.agents.api import AgentError
from sog.agents.holdem.table.agents import canonical
from sog.agents.holdem.table.endgame import board_at
from sog.agents.holdem.table.range_search import showdown_matrix
from sog.agents.holdem.table.search import search_root
from sog.agents.registry import make_agent
from sog.games.api import DECISION

DEFAULT_OPTIONS = "search.ranges=4096"
DEFAULT_REFERENCE = "search.ranges=0"


def add_arguments(b) -> None:
    """The options of `sog bench modicum` on the `sog bench` parser (`--config`, `--searches` and `--seed`
    are shared with other benchmarks)."""
    b.add_argument("--file", default=None, help="modicum: the blueprint file (default: the config's run.out)")
    b.add_argument("--options", default=DEFAULT_OPTIONS,
                   help=f"modicum: the candidate's modicum: options, '&'-separated (default {DEFAULT_OPTIONS})")
    b.add_argument("--reference", default=DEFAULT_REFERENCE,
                   help=f"modicum: the reference's modicum: options (default {DEFAULT_REFERENCE})")


def _agent(config: str, file: str | None, options: str, game):
    params = "&".join(p for p in ([f"file={file}"] if file else []) + [options] if p)
    try:
        return make_agent(f"modicum:{config}" + (f"?{params}" if params else ""), game)
    except AgentError as e:
        raise UserError(str(e)) from None


def spots(table, blueprint, first_round: int, count: int, seed: int) -> list[tuple[int, np.ndarray, int]]:
    """[(root, the deal's cards int64 [n h + b], seat)]: up to `count` spots, one a deal, where the
    blueprint playing itself first reaches a decision of round `first_round` (the round's first
    decision: a search's root), no two with the same root, canonical board and seat (a search
    there would be the one kept)."""
    rng = np.random.default_rng(seed)
    cards = table.deal(rng, 8 * count)
    paths, _ = table.play(blueprint, blueprint, cards, np.arange(len(cards)), np.zeros(len(cards), np.int64), rng)
    bt, out, seen = table.betting, [], set()
    for h in range(len(cards)):
        at = np.flatnonzero((bt.kind[paths[:, h]] == DECISION) & (bt.round[paths[:, h]] == first_round))
        if not len(at):
            continue
        node = int(paths[at[0], h])
        key = (node, int(bt.actor[node]), *canonical(table, board_at(table, node, cards[h])))
        if search_root(table, node) == node and key not in seen:
            seen.add(key)
            out.append((node, cards[h], int(bt.actor[node])))
        if len(out) == count:
            break
    return out


def _summary(walls: list[float], cpus: list[float], search) -> dict:
    s = search.stats()
    return {"searches": len(walls), "wall_seconds": {"mean": statistics.fmean(walls), "median": statistics.median(walls),
                                                     "max": max(walls)},
            "cpu_seconds": {"mean": statistics.fmean(cpus), "median": statistics.median(cpus), "max": max(cpus)},
            "iterations_per_search": s["iterations_per_search"], "nodes_per_search": s["subgame_nodes_per_search"],
            "showdown_matrices_mb": s.get("showdown_matrices_mb", 0.0)}


def run(args) -> dict:
    from launch.blueprint import parse_config
    from launch.blueprint_agent import register_blueprint_agent

    if not args.config:
        raise UserError("sog bench modicum needs --config BLUEPRINT.yaml (a two-player blueprint config)")
    if args.searches < 1:
        raise UserError(f"--searches must be at least 1, got {args.searches}")
    register_blueprint_agent()
    game = parse_config(args.config).game
    agents = {"candidate": _agent(args.config, args.file, args.options, game),
              "reference": _agent(args.config, args.file, args.reference, game)}
    table, modicum = agents["candidate"].table, agents["candidate"].modicum
    round_ = modicum.settings.search.first_round
    found = spots(table, modicum.blueprint, round_, args.searches, args.seed)
    if not found:
        raise UserError(f"no deal of the blueprint playing itself reached round {round_} (try more --searches)")
    say(f"{len(found)} spots of round {round_}; candidate modicum:?{args.options}, reference modicum:?{args.reference}")
    times = {name: ([], []) for name in agents}
    for i, (node, cards, seat) in enumerate(found):
        for name, agent in agents.items():
            t0, c0 = time.perf_counter(), time.process_time()
            agent.modicum.search.decide(table, node, cards, seat)
            times[name][0].append(time.perf_counter() - t0)
            times[name][1].append(time.process_time() - c0)
        say(f"spot {i + 1}/{len(found)}: candidate {times['candidate'][0][-1]:.2f} s, "
            f"reference {times['reference'][0][-1]:.2f} s (wall)")
    out = {"config": args.config, "round": round_, "seed": args.seed,
           "candidate_options": args.options, "reference_options": args.reference}
    for name, agent in agents.items():
        out[name] = _summary(*times[name], agent.modicum.search)
    for kind in ("wall_seconds", "cpu_seconds"):
        out[f"{kind}_ratio"] = out["candidate"][kind]["mean"] / max(out["reference"][kind]["mean"], 1e-12)
    search = agents["candidate"].modicum.search
    if search.settings.ranges:
        node, cards, _ = found[0]
        board = np.array(canonical(table, board_at(table, node, cards)), dtype=np.int64)
        to_come = int(table.game.board_due[-1]) - len(board)
        if to_come > 0:
            t0 = time.perf_counter()
            showdown_matrix(table.deck, board, to_come, 1.0, np.random.default_rng(0))
            out["showdown_matrix_seconds"] = time.perf_counter() - t0
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    for name in agents:
        c = out[name]
        say(f"{name}: {c['wall_seconds']['mean']:.2f} s wall, {c['cpu_seconds']['mean']:.2f} CPU s a search "
            f"(median {c['wall_seconds']['median']:.2f}, max {c['wall_seconds']['max']:.2f}); "
            f"{c['iterations_per_search']:.0f} iterations, {c['nodes_per_search']:.0f} public states")
    say(f"candidate / reference: wall x{out['wall_seconds_ratio']:.2f}, CPU x{out['cpu_seconds_ratio']:.2f}; "
        f"peak RSS {out['peak_rss_mb']:.0f} MB" +
        (f"; one showdown matrix {out['showdown_matrix_seconds']:.2f} s" if "showdown_matrix_seconds" in out else ""))
    return out
