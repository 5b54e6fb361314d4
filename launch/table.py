"""`sog tournament --config FILE` with `players:`: one candidate against n - 1 copies of a reference.

The tournament mode of a hold'em table of 2 to 6 players (`sog.eval.table.tournament`): every match
plays `deals` deals, each replayed with the candidate in every seat (duplicate deals, seats
rotated, common random numbers), and reports the candidate's win rate in mbb/hand with 95%
intervals four ways: one hand per deal with no variance reduction (`plain`), the same with
AIVAT (`plain_aivat`), all rotations (`duplicate`), rotations and AIVAT
(`duplicate_aivat`), each with the hands a 95% interval narrower than `target_width`
mbb/hand would take, and hands/s. The config (YAML; configs/tournaments/sixmax.yaml):

    game: configs/blueprints/sixmax_small.yaml   # a blueprint config: its game, players, bet sizes;
                                                 # or a holdem(...) string (with players, bet_sizes)
    players: 6                                   # 2..6; the key that selects this mode
    bet_sizes: {sizes: [[[1.0]], ...], all_in: true}   # holdem(...) fullgame no-limit only
    agents:                                      # name: spec
      blueprint: blueprint:configs/blueprints/sixmax_small.yaml   # its run.out/blueprint.npz
      bp_file: blueprint:configs/blueprints/sixmax_small.yaml?file=runs/x/blueprint.npz
      suct_avg: blueprint:configs/blueprints/lhe_smooth_uct.yaml?policy=average   # a uct config (sog.agents.
                                                 # sampled_uct): greedy (its blueprint.npz, the default) or
                                                 # average (blueprint_average.npz)
      call: call                                 # always check / call
      random: random                             # uniform over the legal actions
      search: search:configs/blueprints/sixmax_small.yaml?iterations=100&deals=64   # Pluribus's real-time
                                                 # search over that blueprint (sog.agents.holdem.table.search;
                                                 # options: SearchSettings' fields, and file=PATH)
      endgame: endgame:configs/blueprints/hunl_small.yaml?iterations=200&first_round=2   # full-range
                                                 # end-game solving from the turn on over that blueprint
                                                 # (sog.agents.holdem.table.endgame, two players; options:
                                                 # iterations, first_round, resolve=safe|unsafe|none,
                                                 # max_nodes, file=PATH)
      modicum: modicum:configs/blueprints/hunl_small.yaml?search.iterations=100&endgame.iterations=500
                                                 # Modicum over that blueprint (sog.agents.holdem.table.modicum,
                                                 # two players): the search on the flop, end-game solving
                                                 # from the turn on; options: the search's and endgame's,
                                                 # prefixed search. and endgame., too_large=blueprint|search
                                                 # (who plays a round too large to solve), and file=PATH
    matches: [[blueprint, call], [call, blueprint]]   # [candidate, reference] pairs
    deals: 19200                                 # per match (whole batches)
    batch: 120                                   # deals per lockstep batch (a seeding unit; smaller for
                                                 # slow agents such as search, which play batch x n hands at once)
    cpu_seconds: 0                               # > 0: a match stops after the batch passing this CPU time
    seed: 0
    aivat: true
    aivat_values: checkdown                      # AIVAT's value function: checkdown (nobody bets again), or
                                                 # an agent's name (blueprint, call, random): its self-play
                                                 # from the node, by aivat_rollouts (256) rollouts
                                                 # (sog.eval.table.rollout_values; hunl_small: hands / 1.6-8)
    target_width: 50
    out: tournaments/sixmax                      # report.json, report.txt, chips.npz; batches/: each
                                                 # finished batch, kept so a stopped run resumes

Every finished batch is kept in OUT/batches/ (`launch.table_batches`): the same command run
again plays only the batches missing (a killed run loses the batch in flight; a larger `deals`
or `cpu_seconds` extends a match), and another config, seed or blueprint never reuses them.
`--games G` sets `deals`; `--workers` does not apply (one process, vectorised over hands).
Every agent plays inside the table's action abstraction (a blueprint's must be the table's
game and bet sizes, its file of the config's fingerprint). Bad configs (players outside 2..6,
a stack below the big blind, an unknown agent kind or name, a blueprint of another game or
configuration, a missing blueprint file) are one line on stderr and exit status 2, before
any hand is played.

`run_lbr` is `sog lbr --config BLUEPRINT.yaml --agent SPEC`: the fold / call LBR at a two-player
config's table against one of these agents (`sog.eval.table.lbr`: the range of a search or modicum agent
whose searches sample deals is its own model of it, as a search's strategy is for the hand it holds).
"""
from __future__ import annotations

import copy
import dataclasses
import functools
import json
import os
import re
import time
from pathlib import Path

import numpy as np

from launch.console import UserError, say
from launch.table_batches import BatchStore, agent_digest
from sog.agents.api import AgentError
from sog.agents.spec import parse_spec
from sog.eval.table.rollout_values import ROLLOUTS, rollout_values
from sog.eval.table.tournament import (
    BATCH_DEALS,
    ESTIMATORS,
    TARGET_WIDTH,
    CallAgent,
    Table,
    TableError,
    UniformAgent,
    estimates,
    play_match,
)
from sog.files import atomic_write, load_yaml
from sog.multiplayer.api import MAX_PLAYERS, MIN_PLAYERS

KEYS = ("game", "players", "bet_sizes", "agents", "matches", "deals", "batch", "cpu_seconds", "seed", "aivat",
        "aivat_values", "aivat_rollouts", "target_width", "out")
ROLLING = ("blueprint", "call", "random")         # the kinds whose rollouts can value AIVAT's terms (cheap)
KINDS = ("blueprint", "search", "endgame", "modicum", "call", "random")
SEARCHING = ("search", "endgame", "modicum")     # the kinds with settings of their own
POLICY_FILES = {"greedy": "blueprint.npz", "average": "blueprint_average.npz"}   # a uct config's policies
_NAME = re.compile(r"[A-Za-z0-9_.+-]+")


def is_table_config(path: str) -> bool:
    """Whether a tournament YAML is of this mode (it has a `players` key)."""
    try:
        raw = load_yaml(Path(path).read_text())
    except Exception:       # noqa: BLE001 - the two-player loader reports unreadable files
        return False
    return isinstance(raw, dict) and "players" in raw


@dataclasses.dataclass
class TableConfig:
    path: str
    game: object                   # sog.multiplayer.holdem.Holdem
    players: int
    agents: dict                   # name -> spec
    matches: list                  # [(candidate, reference)]
    deals: int
    batch: int                     # deals per lockstep batch (a seeding unit)
    cpu_seconds: float             # a match stops after the batch passing this CPU time (0: never)
    seed: int
    aivat: bool
    target_width: float
    out: str | None
    blueprint_config: object = None     # the BlueprintConfig `game` named, if any
    aivat_values: str = "checkdown"     # or an agent's name: its self-play rollouts value AIVAT's terms
    aivat_rollouts: int = ROLLOUTS      # rollouts per (deal, node) then


def _int(raw, key, where, lo, default=None):
    v = raw.get(key, default)
    if isinstance(v, bool) or not isinstance(v, int) or v < lo:
        raise UserError(f"{where}: {key}: {v!r} must be an integer >= {lo}")
    return v


def parse_config(path: str) -> TableConfig:
    """The validated config of a table tournament file (`UserError` naming any problem)."""
    from launch.blueprint import parse_config as blueprint_config
    from launch.blueprint import table_holdem
    from sog.games.holdem.action_abstraction import ActionAbstractionError, BetSizes

    try:
        raw = load_yaml(Path(path).read_text())
    except OSError as e:
        raise UserError(f"{path}: cannot read the configuration ({e.strerror or e})") from None
    except Exception as e:  # noqa: BLE001 - yaml errors
        raise UserError(f"{path}: not valid YAML ({str(e).splitlines()[0]})") from None
    if not isinstance(raw, dict):
        raise UserError(f"{path}: a tournament config is a mapping")
    unknown = sorted(set(raw) - set(KEYS))
    if unknown:
        raise UserError(f"{path}: unknown key {unknown[0]!r}; known keys with players: {', '.join(KEYS)}")
    players = raw.get("players")
    if isinstance(players, bool) or not isinstance(players, int) or not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise UserError(f"{path}: players: {players!r} must be an integer from {MIN_PLAYERS} to {MAX_PLAYERS}")
    if "game" not in raw or "agents" not in raw or "matches" not in raw:
        raise UserError(f"{path}: needs 'game', 'agents' and 'matches'")
    text, bp = str(raw["game"]), None
    if text.endswith((".yaml", ".yml")):
        if "bet_sizes" in raw:
            raise UserError(f"{path}: bet_sizes come from the blueprint config {text}; leave them out")
        bp = blueprint_config(text)
        if bp.players != players:
            raise UserError(f"{path}: players: {players}, but the blueprint config {text} has {bp.players}")
        game = bp.game if players > 2 else table_holdem(text, bp.game_name, 2, bp.bet_sizes)
    else:
        sizes = None
        if raw.get("bet_sizes") is not None:
            try:
                sizes = BetSizes.parse(raw["bet_sizes"])
            except ActionAbstractionError as e:
                raise UserError(f"{path}: bet_sizes: {e}") from None
        game = table_holdem(path, text, players, sizes)
    rules = game.rules
    if game.abstraction == "fullgame" and not rules.limit:
        raise UserError(f"{path}: fullgame no-limit has a raise per chip: give bet_sizes (the pluribus abstraction)")
    big = max(rules.blinds)
    for seat, stack in enumerate(rules.stacks):
        if stack < big:
            raise UserError(f"{path}: seat {seat}'s stack {stack} is below the big blind {big}")
    agents = raw["agents"]
    if not isinstance(agents, dict) or not agents:
        raise UserError(f"{path}: agents must map names to agent specs")
    for name, spec in agents.items():
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise UserError(f"{path}: bad agent name {name!r} (letters, digits, _ . + - only)")
        if not isinstance(spec, str):
            raise UserError(f"{path}: agent {name!r}: the spec must be a string, got {spec!r}")
        try:
            kind, _, _ = parse_spec(spec)
        except AgentError as e:
            raise UserError(f"{path}: agent {name!r}: {e}") from None
        if kind not in KINDS:
            raise UserError(f"{path}: agent {name!r}: unknown agent kind {kind!r} at a table; known: "
                            f"{', '.join(KINDS)}")
    matches = raw["matches"]
    if not isinstance(matches, list) or not matches:
        raise UserError(f"{path}: matches must be a list of [candidate, reference] pairs")
    pairs = []
    for m in matches:
        if not isinstance(m, list) or len(m) != 2:
            raise UserError(f"{path}: matches: {m!r} must be a [candidate, reference] pair")
        for name in m:
            if name not in agents:
                raise UserError(f"{path}: matches: unknown agent {name!r}; agents: {', '.join(agents)}")
        pairs.append((m[0], m[1]))
    width = raw.get("target_width", TARGET_WIDTH)
    if isinstance(width, bool) or not isinstance(width, (int, float)) or width <= 0:
        raise UserError(f"{path}: target_width: {width!r} must be a positive number")
    aivat = raw.get("aivat", True)
    if not isinstance(aivat, bool):
        raise UserError(f"{path}: aivat: {aivat!r} must be true or false")
    values = raw.get("aivat_values", "checkdown")
    if values != "checkdown" and (not isinstance(values, str) or values not in agents
                                  or parse_spec(agents[values])[0] not in ROLLING):
        raise UserError(f"{path}: aivat_values: {values!r} must be checkdown or the name of a "
                        f"{', '.join(ROLLING)} agent (its self-play rollouts value the terms)")
    rollouts = _int(raw, "aivat_rollouts", path, 1, ROLLOUTS)
    cpu = raw.get("cpu_seconds", 0)
    if isinstance(cpu, bool) or not isinstance(cpu, (int, float)) or cpu < 0:
        raise UserError(f"{path}: cpu_seconds: {cpu!r} must be a number >= 0")
    out = raw.get("out")
    if out is not None and not isinstance(out, str):
        raise UserError(f"{path}: out: {out!r} must be a folder")
    return TableConfig(path, game, players, dict(agents), pairs, _int(raw, "deals", path, 1, 1200),
                       _int(raw, "batch", path, 1, BATCH_DEALS), float(cpu), _int(raw, "seed", path, 0, 0), aivat,
                       float(width), out, bp, values, rollouts)


def make_agents(cfg: TableConfig, table: Table) -> dict:
    """name -> TableAgent; blueprints loaded and checked against the table (UserError)."""
    loaded = {}
    return {name: make_table_agent(name, spec, table, loaded) for name, spec in cfg.agents.items()}


def make_table_agent(name: str, spec: str, table: Table, loaded: dict | None = None):
    """The TableAgent of one spec (`KINDS`), its blueprint loaded and checked against the table
    (UserError); `loaded`: blueprints already loaded, by (config, file), shared between specs."""
    from launch.blueprint import parse_config as blueprint_config
    from sog.agents.holdem.table.endgame import EndgameAgent
    from sog.agents.holdem.table.modicum import ModicumAgent
    from sog.agents.holdem.table.search import SearchAgent

    loaded = {} if loaded is None else loaded
    try:
        kind, arg, params = parse_spec(spec)
    except AgentError as e:
        raise UserError(f"agent {name!r}: {e}") from None
    if kind not in KINDS:
        raise UserError(f"agent {name!r}: unknown agent kind {kind!r} at a table; known: {', '.join(KINDS)}")
    if kind in ("call", "random"):
        if arg is not None or params:
            raise UserError(f"agent {name!r}: {kind} takes no argument or options, got {spec!r}")
        agent = CallAgent() if kind == "call" else UniformAgent()
        agent.name = name
        return agent
    if arg is None:
        raise UserError(f"agent {name!r}: {kind}:CONFIG.yaml[?file=PATH] names a blueprint config")
    settings = None
    if kind in SEARCHING:
        settings = table_search_settings(name, kind, {k: v for k, v in params.items() if k != "file"})
    elif set(params) - {"file", "policy"}:
        raise UserError(f"agent {name!r}: unknown option {min(set(params) - {'file', 'policy'})!r}; blueprint "
                        "takes file=PATH and policy=greedy|average")
    file = params.get("file")
    if kind == "blueprint" and "policy" in params:
        if params["policy"] not in POLICY_FILES or file is not None:
            raise UserError(f"agent {name!r}: policy={params['policy']}: greedy or average (a uct config's "
                            "run.out files), without file=")
        file = str(Path(blueprint_config(arg).out) / POLICY_FILES[params["policy"]])
    if kind in ("endgame", "modicum") and table.players != 2:
        raise UserError(f"agent {name!r}: end-game solving is two-player; the table has {table.players} players")
    key = (arg, file)
    if key not in loaded:
        loaded[key] = _blueprint(name, arg, file, table)
    if settings is None:
        return loaded[key]
    return {"search": SearchAgent, "endgame": EndgameAgent, "modicum": ModicumAgent}[kind](loaded[key], settings, name)


def table_search_settings(name: str, kind: str, params: dict):
    """The `SearchSettings` (`EndgameSettings`, `ModicumSettings`) of a search (endgame, modicum) spec's
    options (UserError naming a bad one); a modicum spec's options are the other two's, prefixed
    `search.` and `endgame.`, and `too_large` (blueprint or search)."""
    from sog.agents.holdem.table.endgame import RESOLVE, EndgameSettings
    from sog.agents.holdem.table.modicum import TOO_LARGE, ModicumSettings
    from sog.agents.holdem.table.search import SearchSettings
    from sog.agents.spec import take_params

    types = {"float": float, float: float, "bool": bool, "str": RESOLVE}   # (an endgame's one text option: resolve)
    parts = {"search": SearchSettings, "endgame": EndgameSettings}
    try:
        if kind != "modicum":
            schema = {f.name: types.get(f.type, int) for f in dataclasses.fields(parts[kind])}
            return parts[kind](**take_params(kind, params, schema))
        schema = {f"{part}.{f.name}": types.get(f.type, int) for part, cls in parts.items()
                  for f in dataclasses.fields(cls)}
        values = take_params(kind, params, {**schema, "too_large": TOO_LARGE})
        defaults = ModicumSettings()            # (its search: the range search)
        return ModicumSettings(**{part: dataclasses.replace(getattr(defaults, part), **{
            k.partition(".")[2]: v for k, v in values.items() if k.startswith(part + ".")}) for part in parts},
                               too_large=values.get("too_large", defaults.too_large))
    except (AgentError, TableError) as e:
        raise UserError(f"agent {name!r}: {e}") from None


def _blueprint(name: str, arg: str, file, table: Table):
    """The `BlueprintAgent` of blueprint config `arg` (its file `file`, else run.out/blueprint.npz),
    checked against the table (UserError)."""
    from launch.blueprint import game_label, load_buckets, table_holdem
    from launch.blueprint import parse_config as blueprint_config
    from sog.eval.table.tournament import BlueprintAgent
    from sog.games.holdem.deal_buckets import DealBucketError, DealBuckets

    bp = blueprint_config(arg)
    game = bp.game if bp.players != 2 else table_holdem(arg, bp.game_name, 2, bp.bet_sizes)   # the table's twin
    if repr(game) != repr(table.game):
        raise UserError(f"agent {name!r}: the blueprint of {arg} plays {game_label(bp.game)}; the table is "
                        f"{table.game!r}")
    if bp.bet_sizes != getattr(table.game, "bet_sizes", None) or bp.players != table.players:
        raise UserError(f"agent {name!r}: the blueprint of {arg} has other bet sizes or players than the table")
    if bp.settings.traverser != "sampled":
        raise UserError(f"agent {name!r}: {arg}: table play needs a sampled-deal blueprint (mccfr.traverser: "
                        "sampled)")
    file = Path(file or Path(bp.out) / "blueprint.npz")
    if not file.is_file():
        raise UserError(f"agent {name!r}: no blueprint file {file} (train it: sog blueprint --config {arg})")
    try:
        cards = DealBuckets(bp.game.rules, load_buckets(bp), bp.counts, bp.recall, bp.indexer, seed=bp.buckets.seed,
                            players=bp.players)
        agent, meta = BlueprintAgent.from_file(file, table.betting, cards, name)
    except (DealBucketError, TableError) as e:
        raise UserError(f"agent {name!r}: {e}") from None
    if meta.get("fingerprint") != bp.fingerprint():
        raise UserError(f"agent {name!r}: {file} is a blueprint of another configuration than {arg}")
    agent.iterations = int(meta.get("iterations", 0))
    return agent


def format_report(report: dict) -> str:
    lines = [(f"{report['game']}: {report['players']} players, {report['deals']} deals a match, seed "
              f"{report['seed']}; mbb/hand of the candidate against {report['players'] - 1} copies of the reference "
              f"(95% interval; hands for an interval narrower than {report['target_width']:g} mbb/hand); AIVAT "
              + ("values: the check-down" if report.get("aivat_rollouts") is None else
                 f"values: {report['aivat_values']}'s self-play, {report['aivat_rollouts']} rollouts"))]
    head = f"{'candidate':>12} {'reference':>12} " + " ".join(f"{e:>34}" for e in ESTIMATORS) + "  hands/s (per CPU s)"
    lines.append(head)
    for m in report["matches"]:
        cells = []
        for e in ESTIMATORS:
            x = m["estimates"][e]
            need = x["hands_for_target"]
            cells.append(f"{x['mbb_per_hand']:+9.1f} ±{x['half_width']:7.1f} ({'-' if need is None else need:>9})")
        lines.append(f"{m['candidate']:>12} {m['reference']:>12} " + " ".join(f"{c:>34}" for c in cells)
                     + f"  {m['hands_per_second']:.0f} ({m.get('hands_per_cpu_second', float('nan')):.0f})")
    return "\n".join(lines)


def run(args) -> dict:
    cfg = parse_config(args.config)
    out = Path(args.out or cfg.out or Path("tournaments") / Path(args.config).name.removesuffix(".yaml"))
    if getattr(args, "games", None) is not None:
        if args.games < 1:
            raise UserError("--games must be at least 1")
        cfg.deals = args.games
    t0 = time.perf_counter()
    try:
        table = Table(cfg.game)
    except TableError as e:
        raise UserError(str(e)) from None
    agents = make_agents(cfg, table)
    valuer = None if cfg.aivat_values == "checkdown" else copy.copy(agents[cfg.aivat_values])   # (its own lookups)
    values = None if valuer is None else functools.partial(rollout_values, agent=valuer, rollouts=cfg.aivat_rollouts)
    digests: dict = {}
    stores = {}                                 # (candidate, reference) -> (BatchStore, its kept batches)
    for cand, ref in cfg.matches:
        store = BatchStore(out / "batches", {
            "game": repr(cfg.game), "players": cfg.players, "seed": cfg.seed, "batch": cfg.batch, "aivat": cfg.aivat,
            "candidate": [cfg.agents[cand], agent_digest(agents[cand], digests)],
            "reference": [cfg.agents[ref], agent_digest(agents[ref], digests)],
            "values": None if valuer is None else [cfg.agents[cfg.aivat_values], cfg.aivat_rollouts,
                                                   agent_digest(valuer, digests)]})
        stores[(cand, ref)] = store, store.load()
    setup = time.perf_counter() - t0
    say(f"table: {cfg.game!r}, {len(table.betting.kind):,} betting nodes; agents ready in {setup:.1f} s")
    quiet = getattr(args, "quiet", False)
    matches, chips = [], {}
    for cand, ref in cfg.matches:
        a, b = agents[cand], agents[ref]
        for agent in (a, b):
            if hasattr(agent, "lookups"):
                agent.lookups = agent.misses = 0

        def progress(done, total, label=f"{cand} vs {cfg.players - 1} x {ref}"):
            if not quiet:
                say(f"\r{label}: {done}/{total} deals", end="" if done < total else "\n")
        store, done = stores[(cand, ref)]
        t, cpu = time.perf_counter(), time.process_time()
        result = play_match(table, a, b, cfg.deals, seed=cfg.seed, batch=cfg.batch, aivat=cfg.aivat,
                            progress=progress, cpu_seconds=cfg.cpu_seconds, values=values, done=done,
                            on_batch=store.save)
        seconds, cpu = time.perf_counter() - t, time.process_time() - cpu
        kept = sum(1 for i in done if i < len(result.raw) // cfg.batch)
        now = result.hands - kept * cfg.batch * cfg.players          # the hands this run played
        if kept:
            say(f"{cand} vs {cfg.players - 1} x {ref}: {kept} batches ({kept * cfg.batch} deals) kept from an earlier "
                f"run in {out / 'batches'}")
        est = estimates(result, cfg.target_width)
        matches.append({"candidate": cand, "reference": ref, "hands": result.hands, "deals": len(result.raw),
                        "batches_kept": kept, "seconds": seconds, "hands_per_second": now / seconds,
                        "cpu_seconds": cpu, "hands_per_cpu_second": now / max(cpu, 1e-9),
                        "load_average": os.getloadavg()[0],
                        "play_hands_per_second": result.hands / max(result.play_seconds, 1e-9),
                        "value_seconds": result.value_seconds, "estimates": est,
                        "agents": {"candidate": a.stats(), "reference": b.stats()}})
        chips[f"{cand}|{ref}|raw"], chips[f"{cand}|{ref}|aivat"] = result.raw, result.aivat
        x = est["duplicate_aivat" if cfg.aivat else "duplicate"]
        say(f"{cand} vs {cfg.players - 1} x {ref}: {x['mbb_per_hand']:+.1f} ± {x['half_width']:.1f} mbb/hand "
            f"({result.hands} hands; {now} played now, {now / seconds:.0f} hands/s)")
    report = {"command": "tournament", "mode": "table", "config": args.config, "game": repr(cfg.game),
              "players": cfg.players, "deals": matches[0]["deals"], "seed": cfg.seed, "aivat": cfg.aivat,
              "aivat_values": cfg.aivat_values, "aivat_rollouts": cfg.aivat_rollouts if values is not None else None,
              "batch_deals": cfg.batch, "cpu_seconds": cfg.cpu_seconds, "target_width": cfg.target_width,
              "setup_seconds": setup,
              "matches": matches, "out": str(out)}
    out.mkdir(parents=True, exist_ok=True)
    text = format_report(report)
    atomic_write(out / "report.json", lambda f: f.write(json.dumps(report, indent=1).encode()))
    atomic_write(out / "report.txt", lambda f: f.write((text + "\n").encode()))
    atomic_write(out / "chips.npz", lambda f: np.savez_compressed(f, **chips))
    say(text)
    say(f"results in {out}/ (report.txt, report.json, chips.npz: per deal and candidate seat, big blinds)")
    return report


def run_lbr(args) -> dict:
    """`sog lbr --config BLUEPRINT.yaml --agent SPEC [--versus SPEC] [--hands N] [--seed S]`: the fold /
    call LBR at the two-player table of a blueprint config against a table agent (`sog.eval.table.lbr`:
    a blueprint, end-game solving, search, Modicum, call or random), LBR in both seats of
    every deal; with `--versus`, against both agents on the same deals, and the paired difference.
    Returns the JSON-able report; bad input (a config of more players, an agent of another game
    or configuration, a missing blueprint file) is a UserError before any hand."""
    from launch.blueprint import parse_config as blueprint_config
    from launch.blueprint import table_holdem
    from sog.eval.lbr import LBRError
    from sog.eval.table.lbr import TableLBR, table_lbr_match, table_lbr_paired

    if args.hands < 1:
        raise UserError("--hands must be at least 1")
    if args.bets:
        raise UserError("--bets: LBR at a table is the fold/call LBR (bets only on small poker games)")
    bp = blueprint_config(args.config)
    if bp.players != 2:
        raise UserError(f"{args.config}: LBR plays heads-up; the config has {bp.players} players")
    t0 = time.perf_counter()
    try:
        table = Table(table_holdem(args.config, bp.game_name, 2, bp.bet_sizes))
    except TableError as e:
        raise UserError(str(e)) from None
    specs = [args.agent] + ([args.versus] if args.versus is not None else [])
    loaded: dict = {}                                   # a blueprint both agents play is loaded once
    agents = [make_table_agent(role, spec, table, loaded) for role, spec in zip(("opponent", "versus"), specs)]
    try:
        lbrs = [TableLBR(table, agent, seed=args.seed) for agent in agents]
    except LBRError as e:
        raise UserError(str(e)) from None
    setup = time.perf_counter() - t0
    say(f"table: {table.game!r}, {len(table.betting.kind):,} betting nodes; agents ready in {setup:.1f} s")

    def progress(done, total):
        say(f"\rLBR vs {' and '.join(specs)}: {2 * done}/{2 * total} hands", end="" if done < total else "\n")

    try:
        if args.versus is None:
            out = table_lbr_match(table, agents[0], args.hands, seed=args.seed, lbr=lbrs[0], progress=progress)
        else:
            out = table_lbr_paired(table, *agents, args.hands, seed=args.seed, progress=progress, lbrs=lbrs)
    except LBRError as e:
        raise UserError(str(e)) from None
    report = {"command": "lbr", "mode": "table", "config": args.config, "agent": args.agent, "seed": args.seed,
              "iterations": getattr(agents[0], "iterations", None), "setup_seconds": setup}
    for spec, res in zip(specs, [out] if args.versus is None else [out["first"], out["second"]]):
        lo, hi = res["ci95_mbb"]
        say(f"LBR (fold/call) against {spec} at the table of {args.config}: {res['mbb_per_hand']:+.1f} mbb/hand, "
            f"95% interval [{lo:+.1f}, {hi:+.1f}] over {res['hands']} hands ({res['seconds']:.1f} s, "
            f"{res['hands_per_second']:.2f} hands/s, {res['seconds_per_lbr_decision']:.4f} s per LBR decision)"
            + ("; its range is the agent's model (its searches sample deals)" if res["opponent_range"] == "model"
               else ""))
    if args.versus is None:
        return {**report, **out}
    diff = out["difference"]
    lo, hi = diff["ci95_mbb"]
    say(f"difference, against {args.agent} minus against {args.versus}, paired over {diff['deals']} deals: "
        f"{diff['mbb_per_hand']:+.1f} mbb/hand, 95% interval [{lo:+.1f}, {hi:+.1f}]"
        + (f" (AIVAT {diff['aivat']['mbb_per_hand']:+.1f} [{diff['aivat']['ci95_mbb'][0]:+.1f}, "
           f"{diff['aivat']['ci95_mbb'][1]:+.1f}])" if diff["aivat"] else ""))
    return {**report, "versus": args.versus, "versus_iterations": getattr(agents[1], "iterations", None), **out}
