"""The `sog` command line. Each command prints one JSON object on stdout; human
output (progress, tables, Ray's lines) goes to stderr. `sog uci` and `sog gtp` are the
exceptions: their stdout speaks the protocol (and no JSON follows). Errors a user can cause (unknown
game, bad policy file, bad option) exit with status 2 and a one-line message.
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import signal
import sys
import time
from pathlib import Path

from launch.console import UserError, say

# every command, in `sog --help`'s order, with its one-line help: `sog --help` lists them without
# importing the commands' modules (the commands of other modules give the same line to their parser)
COMMANDS = {
    "solve": "solve a small game exactly with CFR on its public tree",
    "exploitability": "exact exploitability of a policy or an agent",
    "bench": "benchmarks against reference implementations",
    "baselines": "exact exploitability of baselines at a fixed budget",
    "bench-mccfr": "our MCCFR samplers vs OpenSpiel's at equal wall time",
    "eval": "evaluate a run's checkpoints: eval.csv, eval.png",
    "diagnose": "a checkpoint's value/policy errors vs exact values",
    "doctor": "JAX and CUDA devices, Ray resources, roles' devices",
    "tournament": "round robin / gauntlet between agents: Elo, AIVAT",
    "lbr": "local best response win rate against an agent (poker)",
    "uci": "host an agent in a chess GUI (UCI on stdin/stdout)",
    "gtp": "host an agent on a Go server or GUI (GTP)",
    "acpc": "play an agent at an ACPC poker dealer",
    "buckets": "hold'em hand buckets per round, cached on disk",
    "blueprint": "MCCFR blueprint of a small hold'em game (resumable)",
    "train": "self-play training of a CVPN (Ray, or --sync)",
}


def emit(result: dict) -> None:
    print(json.dumps(result), flush=True)


def cmd_solve(args) -> dict:
    from launch import multiplayer
    from launch.games import named_game
    from sog import threads
    from sog.policy.files import save_policy
    from sog.search.cfr import CFRConfig, CFRSolver
    from sog.search.full_tree import (
        exploitability,
        full_tree,
        policy_value,
        tabular_from_array,
    )

    if multiplayer.is_multiplayer(args.game):
        return multiplayer.solve(args)
    if args.algorithm in multiplayer.ALGORITHMS or args.seconds is not None or args.seed is not None:
        raise UserError("--algorithm external|outcome|pluribus, --seconds and --seed are for games of "
                        "more than two players, e.g. kuhn_poker(players=3)")
    args.algorithm = args.algorithm or "cfr+"
    if args.iterations < 1:
        raise UserError("--iterations must be at least 1")
    if args.threads < 1:
        raise UserError(f"--threads must be at least 1, got {args.threads}")
    game = named_game(args.game)
    _check_out_folder(args.out)
    alternating = not args.simultaneous
    with threads.using(args.threads):
        t0 = time.perf_counter()
        ft = full_tree(game)
        solver = CFRSolver(ft.ct, config=CFRConfig(args.algorithm, alternating=alternating))
        step = max(1, args.iterations // 20)
        while solver.iterations < args.iterations:
            solver.iterate(min(step, args.iterations - solver.iterations))
            say(f"\r{game.spec.name}: iteration {solver.iterations}/{args.iterations}", end="")
        seconds = time.perf_counter() - t0
        say()
        avg = solver.average_policy()
        expl = exploitability(game, avg)
    result = dict(game=game.spec.name, algorithm=args.algorithm, alternating=alternating,
                  iterations=solver.iterations, public_states=ft.ct.num_nodes,
                  exploitability=expl, exploitability_mbb=1000 * expl,
                  game_value=policy_value(game, avg), seconds=seconds)
    if args.out:
        save_policy(tabular_from_array(game, avg), args.out)
        result["policy"] = args.out
    rule = "alternating" if alternating else "simultaneous"
    say(f"exploitability {1000 * expl:.3f} mbb/h after {solver.iterations} iterations of {args.algorithm.upper()} "
        f"with {rule} updates in {seconds:.2f} s")
    return result


def _check_out_folder(path: str | None) -> None:
    """Refuse an output path whose folder does not exist before any work is done."""
    if path is not None and not Path(path).parent.is_dir():
        raise UserError(f"cannot write {path}: folder {Path(path).parent} does not exist")
    if path is not None and Path(path).is_dir():
        raise UserError(f"cannot write {path}: it is a folder; give a file name")


def _seed_paths(path: str, seeds: int) -> list[str]:
    """The policy file of each seed: `path` itself for one seed, else the seed inserted
    before the suffix (pol.json -> pol.seed0.json, pol.seed1.json, ...)."""
    if seeds == 1:
        return [path]
    p = Path(path)
    return [str(p.with_name(f"{p.stem}.seed{k}{p.suffix}")) for k in range(seeds)]


def cmd_exploitability(args) -> dict:
    from launch.games import named_game
    from sog.policy import PolicyError
    from sog.policy.files import load_policy
    from sog.search.full_tree import policy_value

    game = named_game(args.game)
    if args.agent == "sog":
        if args.versus is not None:
            raise UserError("--versus takes --agent SPEC or --policy FILE, not the SoG search")
        return _search_agent_exploitability(game, args)
    if args.agent is not None or args.versus is not None:
        return _agent_exploitability(game, args)
    if args.policy is None:
        raise UserError("give --policy FILE, or --agent sog --search S,C --value oracle|PATH")
    if args.out is not None:
        raise UserError("--out writes a search agent's policy: use it with --agent sog")
    try:
        policy = load_policy(args.policy, game)
    except PolicyError as e:
        raise UserError(str(e)) from None
    t0 = time.perf_counter()
    return dict(game=game.spec.name, policy=args.policy, **_exploitability(game, policy),
                game_value=policy_value(game, policy), seconds=time.perf_counter() - t0)


def _exploitability(game, policy, key: str = "") -> dict:
    """{key + exploitability, exploitability_mbb, best_response_values}: a policy's (tabular or
    `agent_policy` array) exact best-response values and their mean, NashConv / 2."""
    from sog.search.full_tree import best_response_values

    br = best_response_values(game, policy)
    return {f"{key}exploitability": float(br.sum() / 2), f"{key}exploitability_mbb": 500 * float(br.sum()),
            f"{key}best_response_values": br.tolist()}


def _agent_exploitability(game, args) -> dict:
    """`sog exploitability --agent SPEC|--policy FILE [--versus SPEC]`: the exact exploitability of an agent
    (`sog.eval.exact_agents`: its strategy for every hand, hand by hand where a search samples deals), and
    with --versus the other's and the exact head to head. UserError for a game too large, a bad spec or
    file, an agent with no strategy."""
    from sog.agents.api import AgentError
    from sog.agents.spec import make_agent
    from sog.eval.exact_agents import AgentPolicyError, agent_policy, head_to_head
    from sog.policy import PolicyError
    from sog.policy.files import load_policy
    from sog.search.full_tree import policy_array, refuse_too_large
    from sog.search.tree import TreeTooLarge

    if (args.agent is None) == (args.policy is None):
        raise UserError("--versus measures --agent SPEC or --policy FILE against it: give one of them")
    if args.out is not None:
        raise UserError("--out writes a search agent's policy: use it with --agent sog")
    try:
        refuse_too_large(game)
    except TreeTooLarge as e:
        raise UserError(str(e)) from None
    t0 = time.perf_counter()
    names = [args.agent or args.policy] + ([args.versus] if args.versus is not None else [])
    policies = []
    for i, name in enumerate(names):
        try:
            if i == 0 and args.policy is not None:
                policies.append(policy_array(game, load_policy(args.policy, game)))
            else:
                policies.append(agent_policy(game, make_agent(name, game)))
        except (PolicyError, AgentPolicyError, AgentError) as e:
            raise UserError(str(e)) from None
    out = {"game": game.spec.name, "agent": names[0], "seconds": 0.0}
    for name, policy, key in zip(names, policies, ("", "versus_")):
        out.update(_exploitability(game, policy, key))
        say(f"{name}: exploitability {out[key + 'exploitability']:.6f} a hand "
            f"({out[key + 'exploitability_mbb']:.2f} mbb/h)")
    if args.versus is not None:
        h2h = head_to_head(game, *policies)
        out.update({"versus": args.versus, "head_to_head": h2h, "head_to_head_mbb": 1000 * h2h})
        say(f"{names[0]} against {args.versus}: {h2h:+.6f} a hand, both seats ({1000 * h2h:+.2f} mbb/h)")
    out["seconds"] = time.perf_counter() - t0
    return out


def _value_function(game, spec: str, oracle_iterations: int = 50, oracle_tolerance: float | None = None):
    from launch.values import make_value_function

    try:
        return make_value_function(spec, game, oracle_iterations, oracle_tolerance)
    except (ValueError, FileNotFoundError) as e:
        raise UserError(str(e)) from None


def _search_settings(text: str, value_cache: str | None = "auto", base=None):
    """'S,C' read over `base` (a `SearchSettings`; default: the defaults), with `value_cache` "auto" |
    "on" | "off" (None: `base`'s)."""
    from sog.search.settings import SearchSettings, parse_search

    base = base if base is not None else SearchSettings()
    cache = {"on": True, "off": False, None: base.value_cache}.get(value_cache, value_cache)
    try:
        return parse_search(text, dataclasses.replace(base, value_cache=cache))
    except ValueError as e:
        raise UserError(str(e)) from None


def _value_search_base(value: str, args) -> tuple:
    """The search settings `sog exploitability --value VALUE` starts from and where they come from:
    (a `SearchSettings`, a label) the run's (`evaluate.run_search_settings`: the config.yaml of a run directory VALUE or of the
    run holding checkpoint VALUE) for a network, else the defaults; `--alternating` /
    `--simultaneous` override the update rule."""
    from launch import evaluate
    from sog.search.settings import SearchSettings

    if args.alternating and args.simultaneous:
        raise UserError("--alternating and --simultaneous: give one of them")
    base, source = (SearchSettings(), "defaults") if value in ("oracle", "fresh") else \
        evaluate.run_search_settings(Path(value))
    rule = True if args.alternating else False if args.simultaneous else None
    if rule is not None and rule != base.alternating:
        base, source = dataclasses.replace(base, alternating=rule), \
            f"{source}, {'--alternating' if rule else '--simultaneous'}"
    return base, source


def _search_agent_exploitability(game, args) -> dict:
    from launch import evaluate
    from sog.eval.search_policy import decision_state_count, search_exploitability
    from sog.policy.files import save_policy
    from sog.search.resolve import ContinualResolver

    if args.agent != "sog":
        raise UserError(f"unknown search agent {args.agent!r}; the only one is 'sog'")
    if args.seeds < 1:
        raise UserError("--seeds must be at least 1")
    _check_out_folder(args.out)
    base, source = _value_search_base(args.value, args)
    settings = _search_settings(args.search, None, base)
    say(evaluate.settings_line(settings, source))
    value_fn = _value_function(game, args.value, args.oracle_iterations, args.oracle_tolerance)
    resolver = ContinualResolver(game, value_fn, settings)
    total = decision_state_count(game)

    def progress(seed, k):
        say(f"\rseed {seed + 1}/{args.seeds}: search {k}/{total}", end="")

    if args.workers < 1:
        raise UserError("--workers must be at least 1")
    if args.workers > 1 and args.value != "oracle":
        raise UserError("--workers > 1 needs --value oracle (the resolver is pickled to each "
                        "worker process)")
    paths = None if args.out is None else _seed_paths(args.out, args.seeds)
    on_policy = None if paths is None else (lambda seed, policy: save_policy(policy, paths[seed]))
    out = search_exploitability(game, resolver, args.seeds, progress, args.workers, on_policy)
    say()
    say(f"SoG({settings.simulations}, {settings.per_phase:g}) on {game.spec.name}: exploitability "
        f"min {1000 * out['min']:.2f} / mean {1000 * out['mean']:.2f} / max {1000 * out['max']:.2f} "
        f"mbb/h over {args.seeds} seeds in {out['seconds']:.1f} s")
    result = dict(game=game.spec.name, agent="sog", search=args.search, value=args.value,
                  seeds=args.seeds, searches_per_seed=total, min_mbb=1000 * out["min"],
                  mean_mbb=1000 * out["mean"], max_mbb=1000 * out["max"],
                  per_seed_mbb=[1000 * v for v in out["values"]], seconds=out["seconds"],
                  workers=args.workers, search_settings=dataclasses.asdict(settings), search_settings_from=source)
    if paths is not None:
        result["policies"] = paths
    if args.value == "oracle":
        result["oracle"] = dict(iterations=args.oracle_iterations, tolerance=args.oracle_tolerance,
                                calls=value_fn.calls,
                                cfr_iterations_per_call=value_fn.iterations_run / max(value_fn.calls, 1),
                                mean_gap_mbb=1000 * value_fn.gap_total / max(value_fn.calls, 1))
    return result


def _exactly_solvable(game) -> bool:
    """Whether the exact tools (oracle, best response) can take `game` (`refuse_too_large`):
    not chess or Go, whose trees are far beyond exact solving."""
    from sog.search.full_tree import refuse_too_large
    from sog.search.tree import TreeTooLarge

    try:
        refuse_too_large(game)
    except TreeTooLarge:
        return False
    return True


def cmd_bench(args) -> dict:
    from launch import (
        bench,
        bench_gpu,
        bench_holdem,
        bench_modicum,
        bench_multiplayer,
        bench_network,
        bench_rules,
        bench_selfplay,
    )
    from launch.games import named_game
    from launch.values import fresh_cvpn
    from sog.config import load_config

    if args.what == "gpu":
        return bench_gpu.run_command(args)
    if args.what == "selfplay":
        return bench_selfplay.run_command(args)
    if args.max_seconds is not None and not 0 <= args.max_seconds < float("inf"):
        raise UserError(f"--max-seconds must be a finite number >= 0, got {args.max_seconds}")
    if args.what == "cfr":
        if not args.target_mbb > 0:
            raise UserError(f"--target-mbb must be positive, got {args.target_mbb}")
        return bench.bench_cfr(named_game(args.game), target_mbb=args.target_mbb,
                               max_seconds=bench.CFR_MAX_SECONDS if args.max_seconds is None else args.max_seconds,
                               log=say)
    if args.what == "search":
        game = named_game(args.game)
        values = {"oracle": _value_function(game, "oracle")} if (
            _exactly_solvable(game) and bench.oracle_fits(game, log=say)) else {}
        network = load_config(args.config).network if args.config else None
        values["cvpn" if args.value == "fresh" else args.value] = (
            fresh_cvpn(game, config=network) if args.value == "fresh" else _value_function(game, args.value))
        searches = args.search or ["100,1", "10,0.01"]
        return bench.bench_search(game, values, [_search_settings(s, value_cache=args.value_cache) for s in searches],
                                  args.searches, log=say, max_seconds=(
                                      bench.SEARCH_ROW_SECONDS if args.max_seconds is None else args.max_seconds))
    if args.what == "holdem":
        return bench_holdem.run(args)
    if args.what == "rules":
        return bench_rules.run(log=say)
    if args.what == "network":
        return bench_network.run_command(args, log=say)
    if args.what == "multiplayer":
        return bench_multiplayer.run(args)
    if args.what == "modicum":
        return bench_modicum.run(args)
    raise UserError(f"unknown benchmark {args.what!r}")


def cmd_train(args) -> dict:
    from sog.config import ConfigError, load_config

    try:
        config = load_config(args.config, args.set or [])
    except ConfigError as e:
        raise UserError(str(e)) from None
    # the training modules import JAX and Ray (seconds): once the config is known to be good
    from launch.train import train
    from launch.training_run import TrainError
    from learners.checkpoint import CheckpointError

    run_dir = args.run_dir or str(Path("runs") / Path(args.config).name.removesuffix(".yaml"))
    try:
        summary = train(config, run_dir, sync=args.sync, log=say)
    except (CheckpointError, TrainError, ConfigError) as e:
        raise UserError(str(e)) from None
    if summary["stop_reason"] == "interrupted":    # saved and summed up: printed, then exit status 130
        raise Interrupted(summary)
    return summary


def build_parser() -> argparse.ArgumentParser:
    """Every command's parser (each command's module imported)."""
    from launch import (
        acpc,
        baselines,
        bench,
        bench_gpu,
        bench_holdem,
        bench_mccfr,
        bench_modicum,
        bench_multiplayer,
        bench_selfplay,
        blueprint,
        buckets,
        diagnose,
        doctor,
        evaluate,
        gtp,
        tournament,
        uci,
    )

    p, sub = _top_parser()

    s = sub.add_parser("solve", help=COMMANDS["solve"])
    s.add_argument("--game", required=True,
                   help="the game, by sog's or OpenSpiel's name with parameters (kuhn_poker, leduc_poker, "
                        "'kuhn_poker(players=3)', 'universal_poker(...)')")
    s.add_argument("--iterations", type=int, default=1000, help="solver iterations (default 1000)")
    s.add_argument("--algorithm", choices=["cfr+", "cfr", "dcfr", "external", "outcome", "pluribus"],
                   help="two players: cfr+ (default), cfr, dcfr on the public tree; more players "
                        "(kuhn_poker(players=3), leduc_poker(players=4), universal_poker(numPlayers=3,...)): "
                        "MCCFR, external (default), outcome or pluribus (launch.multiplayer)")
    s.add_argument("--seconds", type=float, help="more than two players: stop after this many seconds")
    s.add_argument("--seed", type=int, help="more than two players: the sampling seed (default 0)")
    s.add_argument("--simultaneous", action="store_true",
                   help="update both players at once, as GT-CFR does (default: alternating updates, "
                        "the standard CFR+ of Tammelin and OpenSpiel's CFRPlusSolver)")
    s.add_argument("--out", help="write the average policy as JSON (OpenSpiel information-state keys); "
                                 "an existing file is replaced (atomically)")
    s.add_argument("--threads", type=int, default=1,
                   help="threads of the passes over large poker trees (sog.threads: the same results; default 1)")
    s.set_defaults(func=cmd_solve)

    e = sub.add_parser("exploitability", help=COMMANDS["exploitability"])
    e.add_argument("--game", required=True,
                   help="a two-player game small enough for an exact best response (kuhn_poker, "
                        "leduc_poker, liars_dice, a small holdem(...), scotland_yard, tic_tac_toe)")
    e.add_argument("--policy", help="tabular policy JSON (see `sog solve --out`)")
    e.add_argument("--agent", help="measure an agent instead of a policy file: 'sog' (SoG's search, with "
                                   "--search and --value) or an agent spec (blueprint:, endgame:, modicum: on a "
                                   "small hold'em game, tabular:FILE, random; searches on sampled deals asked hand "
                                   "by hand)")
    e.add_argument("--versus", metavar="SPEC",
                   help="with --agent SPEC or --policy: also the exact head to head against this agent spec "
                        "(both seats, averaged) and its exploitability")
    e.add_argument("--search", default="100,1", help="S,C of SoG(S, C), or S,C,EPS with off-support smoothing EPS")
    e.add_argument("--value", default="oracle", help="'oracle' or a run directory / checkpoint")
    e.add_argument("--seeds", type=int, default=1,
                   help="search: independent searches (seeds 0..N-1), each measured; the mean and range printed")
    e.add_argument("--oracle-iterations", type=int, default=50,
                   help="oracle: CFR iterations per call (warm-started)")
    e.add_argument("--oracle-tolerance", type=float,
                   help="oracle: iterate on until the queried subgames' best-response gap is at most "
                        "this (game units; see sog.search.oracle)")
    e.add_argument("--alternating", action="store_true",
                   help="search: alternating CFR+ updates (default: a run's search.alternating for --value RUN, "
                        "else simultaneous, as the paper)")
    e.add_argument("--simultaneous", action="store_true",
                   help="search: simultaneous CFR+ updates, whatever the run's config says")
    e.add_argument("--workers", type=int, default=1,
                   help="search the subtrees below the first public states that split in this many "
                        "processes (oracle only; the same policy as one process)")
    e.add_argument("--out", metavar="FILE",
                   help="search: write the composed SoG(S, C) policy whose exploitability is reported "
                        "as policy JSON (as `sog solve --out`; check it with --policy FILE); with "
                        "--seeds N > 1 one file per seed, the seed inserted before the suffix "
                        "(pol.json -> pol.seed0.json, pol.seed1.json, ...), listed under 'policies'; "
                        "an existing file is replaced (atomically), each as its seed finishes")
    e.set_defaults(func=cmd_exploitability)

    b = sub.add_parser("bench", help=COMMANDS["bench"])
    b.add_argument("what", choices=["cfr", "search", "holdem", "selfplay", "rules", "network", "multiplayer",
                                    "modicum", "gpu"],
                   help="cfr: time to --target-mbb against OpenSpiel's and LiteEFG's CFR+; search: GT-CFR searches/s; "
                        "holdem: a 52-card river or turn solve; selfplay: a training run's throughput; rules: "
                        "rule operations against OpenSpiel, python-chess, pgx; network: the CVPN's ms a call by "
                        "batch; multiplayer: n-player MCCFR against OpenSpiel; modicum: Modicum's search at its "
                        "spots; gpu: the accelerator check (doctor, inference sweep, learner, a short run)")
    b.add_argument("--game", default="leduc_poker", help="cfr, search, multiplayer: the game (default leduc_poker)")
    b.add_argument("--target-mbb", type=float, default=1.0,
                   help="cfr: time each solver to this exploitability, mbb/h (default 1)")
    b.add_argument("--max-seconds", type=float,
                   help=f"cfr: give a solver up after this many seconds (default {bench.CFR_MAX_SECONDS:g}); "
                        f"search: end a row's searches after this many seconds, at least one search "
                        f"(default {bench.SEARCH_ROW_SECONDS:g})")
    b.add_argument("--search", nargs="+", action="extend", default=None,
                   help="search: S,C settings (default 100,1 10,0.01; repeatable)")
    b.add_argument("--value", default="fresh",
                   help="search: the CVPN, 'fresh' (initialised, untrained; the network of --config "
                        "if given) or a checkpoint")
    b.add_argument("--searches", type=int, default=20,
                   help="search: searches per setting, at most (see --max-seconds); modicum: spots")
    b.add_argument("--value-cache", choices=["auto", "on", "off"], default="auto",
                   help="search: the searches' evaluation cache (search.value_cache; auto: on for "
                        "perfect-information games)")
    bench_holdem.add_arguments(b)
    bench_selfplay.add_arguments(b)
    bench_multiplayer.add_arguments(b)
    bench_modicum.add_arguments(b)
    bench_gpu.add_arguments(b)
    b.add_argument("--batches", help="network: batch sizes, comma-separated (default 1,8,64,512,4096)")
    b.set_defaults(func=cmd_bench)

    baselines.add_parser(sub)
    bench_mccfr.add_parser(sub)
    evaluate.add_parser(sub)
    diagnose.add_parser(sub)
    doctor.add_parser(sub)
    tournament.add_parser(sub)          # `sog tournament` and `sog lbr`
    uci.add_parser(sub)
    gtp.add_parser(sub)
    acpc.add_parser(sub)
    buckets.add_parser(sub)
    blueprint.add_parser(sub)

    add_train_parser(sub)
    return p


def _top_parser() -> tuple[argparse.ArgumentParser, argparse._SubParsersAction]:
    """The `sog` parser with no command yet, and its commands' subparsers action."""
    p = argparse.ArgumentParser(prog="sog", description=__doc__.split("\n\n")[0])
    return p, p.add_subparsers(dest="command", required=True)


def add_train_parser(sub) -> None:
    """`sog train`'s parser, in the subparsers action `sub`."""
    t = sub.add_parser("train", help=COMMANDS["train"])
    t.add_argument("--config", required=True, help="a config file or a shipped config name (e.g. leduc)")
    t.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="override a config value, e.g. --set run.minutes=10 (repeatable)")
    t.add_argument("--run-dir", help="run directory (default runs/<config name>); an existing one is resumed")
    t.add_argument("--sync", action="store_true", help="one process, no Ray (debugging, fast tests)")
    t.set_defaults(func=cmd_train)


def help_parser() -> argparse.ArgumentParser:
    """A `sog` parser whose commands have their help line and no arguments: what `main` parses
    `sog`, `sog -h` and `sog --help` with (the same text as `build_parser`'s, in a fraction of the
    time: no command's module is imported)."""
    p, sub = _top_parser()
    for name, text in COMMANDS.items():
        sub.add_parser(name, help=text)
    return p


def train_parser() -> argparse.ArgumentParser:
    """A `sog` parser that knows only `sog train`: what `main` parses a train command with, so that
    its argument and config errors (and its --help) come before any other command's imports."""
    p, sub = _top_parser()
    add_train_parser(sub)
    return p


def _user_error(e: Exception) -> bool:
    """Whether `e` is the user's error, reported in one line: a `UserError`, or a game whose tree
    is too large for an exact command (`sog.search.tree.TreeTooLarge`: checked only when a command
    imported that module, so a command that never needs it does not load the search)."""
    tree = sys.modules.get("sog.search.tree")
    return isinstance(e, UserError) or (tree is not None and isinstance(e, tree.TreeTooLarge))


def _interrupt(signum, frame):
    raise KeyboardInterrupt


class Interrupted(KeyboardInterrupt):
    """A command stopped by Ctrl-C or SIGTERM that still has its result to print (`sog train`)."""

    def __init__(self, result: dict):
        super().__init__()
        self.result = result


def main(argv=None) -> int:
    """The `sog` command. Run as a program (argv None), SIGTERM (what `kill` and cluster
    schedulers send) stops a command as Ctrl-C does: its cleanups run (a tournament ends its
    worker processes, a training run saves its checkpoint and buffers) and it exits with 130."""
    if argv is None:
        signal.signal(signal.SIGTERM, _interrupt)
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv in ([], ["-h"], ["--help"]):
        help_parser().parse_args(argv)                 # the help, or the usage error: it exits
    if argv[:1] == ["train"]:
        args = train_parser().parse_args(argv)
    else:
        from launch.blueprint_agent import register_blueprint_agent
        from launch.values import register_sog_agent

        register_sog_agent()
        register_blueprint_agent()
        args = build_parser().parse_args(argv)
    stdout = sys.stdout
    try:
        # stdout is the result's alone: anything else printed to it while the command runs
        # (Ray prints its workers' and raylet's lines to the driver's sys.stdout) goes to stderr
        with contextlib.redirect_stdout(sys.stderr):
            if getattr(args, "protocol", False):     # `sog uci`, `sog gtp`: stdout is the protocol's
                args.func(args, sys.stdin, stdout)
                return 0
            result = args.func(args)
        emit(result)
    except Exception as e:
        if not _user_error(e):
            raise
        say(f"sog {args.command}: error: {e}")
        return 2
    except KeyboardInterrupt as e:
        if isinstance(e, Interrupted):
            emit(e.result)
        say(f"\nsog {args.command}: interrupted")
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
