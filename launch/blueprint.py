"""`sog blueprint --config configs/blueprints/small.yaml`: a Pluribus-style hold'em blueprint.

Runs Algorithm 1 of Pluribus (external-sampling MCCFR, linear weighting, negative-regret
pruning, first-round average plus later-round snapshots) on the abstract game of the
configuration's buckets, with one of two traversers (`mccfr.traverser`): `world`
(`sog.agents.holdem.blueprint`: batched traversals of a world-state tree, small decks only) or
`sampled` (`sog.agents.holdem.blueprint.sampled_mccfr`: a sampled deal per traversal on the abstract betting
tree, no world tree, HUNL included: configs/blueprints/hunl_small.yaml), checkpointing to
`<out>/checkpoint.npz` every `run.checkpoint_every` iterations and at the end; a rerun with a checkpoint in
`<out>` resumes it (the same result as an uninterrupted run when both stop on iteration
counts). At the end it writes `<out>/blueprint.npz` (abstract keys and probabilities) and
`<out>/result.json`; on decks small enough for the exact tools it measures, every
`run.eval_every` iterations (off the clock), the exact exploitability of the blueprint
played in the real game (mbb/hand), kept in the checkpoint and the result's `curve`: the
policy `blueprint:CONFIG?file=<out>/blueprint.npz` plays, so `sog exploitability --agent` on
that file measures the same figure. The result's `iterations_done` and `train_seconds` count
every run of the folder (`resumed_from`: the iteration this run began at); the clock includes
the world tree's build, which the first run pays in its first batches (small.yaml's game:
~4 CPU s before the first 1,000 iterations, then ~60k iterations a CPU second), so a short
first run on a loaded machine may stop after a few thousand iterations.

The config file (YAML; see configs/blueprints/small.yaml):
  game: a holdem(...) game: limit or the fcpa / sog no-limit abstractions (its own actions),
      or fullgame no-limit with abstraction.bet_sizes
  abstraction: buckets (per round, 0 = one per suit class), recall (imperfect | perfect),
      bins, rollouts, seed (k-means), cache_dir (bucket files), file (a bucket file to use,
      which must be of this configuration), bet_sizes (fullgame no-limit: {sizes, all_in},
      checked as `sog.games.holdem.action_abstraction.BetSizes`), indexer (`table`: k-means
      tables of every round, decks of at most MAX_HANDS hands; `strength`, sampled traverser
      only: the first round's table, then on-demand hand-strength buckets,
      `sog.games.holdem.deal_buckets`)
  mccfr: Algorithm 1's options in iterations (`sog.agents.holdem.blueprint.settings.Settings`)
  uct (instead of mccfr; two-player limit): full-game self-play UCT or Smooth UCT on sampled deals
      (`sog.agents.holdem.blueprint.sampled_uct.UCTSettings`: method smooth_uct | uct, seed, batch, c_max, k, gamma,
      eta, d; configs/blueprints/lhe_smooth_uct.yaml); an iteration is one simulation; it writes the
      greedy policy (the paper's evaluation policy) as blueprint.npz and the average policy as
      blueprint_average.npz, both playable at the table (`blueprint:CONFIG.yaml[?file=PATH]`)
  run: iterations, seconds (wall-clock budget over all resumes), checkpoint_every,
      eval_every (0: never), out (folder)
Options: --out, --iterations, --seconds override run.*; --check validates the file and
prints the parsed configuration; --bench S races the blueprint solver against OpenSpiel's
C++ external-sampling MCCFR on the same universal_poker game for S seconds each
(interleaved slices, `launch.bench_mccfr.race`); --sweep "0,0;4,4" trains one blueprint
per bucket list (no checkpoints) and tabulates exploitability against iterations.

Measured (this 2-core machine shared with other jobs, 1-minute load average 9 to 20, so
wall-clock figures are several times an idle machine's; CPU seconds given where they
matter), on configs/blueprints/small.yaml's game (limit, 4 ranks x 3 suits, 2 hole cards, preflop
and a one-card flop; 66 hands), imperfect recall, Algorithm 1's schedule scaled to 2M
iterations (linear weighting until 70k every 1,750, pruning after 35k, snapshots every 35k
after 140k), seed 0; the exact exploitability (mbb/hand) of the blueprint played in the
real game (`--sweep`; the uniform policy: 1,307):

    buckets (preflop, flop)      abstract sets   250k    500k    1M      1.5M    2M
    16, 124 (lossless)           3,816           90.9    40.2    29.0    21.4    17.3
    16, 32                       606             150.3   142.0   116.1   113.5   115.1
    16, 16                       576             224.0   159.9   134.9   124.9   122.1
    16, 8                        336             277.7   166.9   156.6   139.3   136.3
    8, 8                         288             235.8   165.0   150.7   141.3   139.4
    4, 4                         144             309.1   186.0   180.3   180.1   176.8
    averaging "all" (the average strategy on every round instead of snapshots after the first):
    16, 124 (lossless)           3,816           30.3    22.8    14.8    12.2    9.9
    16, 16                       576             128.0   127.0   125.8   119.2   117.7
    perfect recall (a flop set keys the preflop class and the flop bucket):
    16, 16                       1,656           110.2   61.0    46.4    47.4    47.9
    16, 8                        1,266           183.0   82.6    70.5    64.4    59.8
The flop's last-round feature is the equity alone, and its 124 classes have about 17
distinct equities, so 32 buckets are close to what equity k-means can separate.

Speed (`--bench 120`, lossless buckets, the same schedule; interleaved 30 s slices):
against `pyspiel.ExternalSamplingMCCFRSolver` on the same universal_poker game, one
iteration = one traversal per player for both, both exploitabilities from our exact tool
(OpenSpiel's policy read by information-state string; identical to pyspiel's own on the
8-hand game):

    averaging   sog iterations (CPU s)   OpenSpiel (CPU s)    ratio    sog mbb/h   OpenSpiel mbb/h
    pluribus    828,552 (13.3)           218,432 (13.7)       3.79     25.5        108.2
    all         602,480 (13.3)           159,168 (9.9)        3.79     19.9        133.6

(per CPU second 62k vs 16k and 45k vs 16k iterations). Part of the exploitability gap is
the abstraction itself: lossless buckets merge suit-isomorphic hands (3,816 abstract sets
for OpenSpiel's 20,196 information states), so each of our iterations updates more of
the game; the iteration rate is the vectorised batches (`sog.agents.sampling.mccfr`).

The sampled traverser against the world tree on small.yaml's game (buckets 0, 16: 576
abstract sets; the schedule above scaled to 2M, seed 0), exact exploitability (mbb/hand)
and CPU seconds at equal iterations:

    iterations      world tree          sampled deals
    250k            192.0  (3.8 s)      255.5  (4.1 s)
    500k            146.7  (7.0 s)      194.9  (7.9 s)
    1M              129.2 (12.7 s)      143.4 (15.5 s)

HUNL (configs/blueprints/hunl_small.yaml: 50,969 betting nodes, buckets 0/20/20/20 with the
strength indexer), a 300-second run (`--seconds 300`) on the loaded machine: 199,096
iterations, 345,820 abstract sets, peak RSS 571 MB (`/usr/bin/time`), 57 CPU seconds of
which ~22 are setup (betting tree 7 s, strength thresholds 3 s, numba compilation ~10 s);
resumed for 100k more: 4,758 iterations per CPU second, 355,631 sets (the sets met level
off as the tree's reachable (decision, bucket) pairs are met). About half of the CPU time
is dealing and bucketing (three evaluator passes over the 1,326 hands per deal), half the
traversals.

Bad input (an unknown key, a bucket file of another configuration or a corrupt one, a
checkpoint of another game, abstraction or settings, an empty or non-increasing bet-size
list) is one line on stderr and exit status 2, before anything is written.
"""
from __future__ import annotations

import dataclasses
import json
import os
import resource
import sys
import time
from math import comb
from pathlib import Path

import numpy as np
import yaml

from launch.console import UserError, say
from launch.games import named_holdem
from sog.agents.holdem.blueprint.abstraction import CardAbstraction
from sog.agents.holdem.blueprint.files import load_checkpoint, read_checkpoint, save_blueprint, save_checkpoint
from sog.agents.holdem.blueprint.sampled_mccfr import MultiplayerBlueprintMCCFR, SampledBlueprintMCCFR
from sog.agents.holdem.blueprint.sampled_uct import SampledUCT, UCTSettings
from sog.agents.holdem.blueprint.settings import RECALL, BlueprintError, Settings, describe_abstraction, fingerprint
from sog.agents.holdem.blueprint.world_mccfr import BlueprintMCCFR
from sog.files import atomic_write
from sog.games import parse_game_string
from sog.games.holdem import Holdem
from sog.games.holdem.action_abstraction import ActionAbstractionError, BetSizes
from sog.games.holdem.buckets import BucketConfig, BucketError, load, load_or_build
from sog.games.holdem.deal_buckets import (
    INDEXERS,
    DealBucketError,
    DealBuckets,
    describe_indexer,
)
from sog.games.holdem.params import HoldemParameterError
from sog.multiplayer import PlayersError
from sog.multiplayer.api import MAX_PLAYERS
from sog.multiplayer.holdem import Holdem as TableHoldem
from sog.policy import TabularPolicy
from sog.policy.files import info_states
from sog.search.full_tree import exploitability, full_tree_limit

SECTIONS = ("game", "players", "abstraction", "mccfr", "uct", "run")
ABSTRACTION_KEYS = ("buckets", "recall", "bins", "rollouts", "seed", "cache_dir", "file", "bet_sizes", "indexer")
RUN_KEYS = ("iterations", "seconds", "checkpoint_every", "eval_every", "out")
MAX_HANDS = 120            # the world tree holds every pair of hands of a public state it meets; and the
                           # k-means tables of every round (indexer: table) are built only for decks this small
EXACT_MAX_PUBLIC_STATES = 20000


def add_parser(subparsers):
    p = subparsers.add_parser("blueprint", help="MCCFR blueprint of a small hold'em game (resumable)")
    p.add_argument("--config", required=True, help="a blueprint YAML file (configs/blueprints/small.yaml)")
    p.add_argument("--out", help="output folder (default: run.out); a checkpoint there is resumed")
    p.add_argument("--iterations", type=int, help="stop at this many iterations (over all resumes)")
    p.add_argument("--seconds", type=float, help="stop after this many training seconds (over all resumes)")
    p.add_argument("--check", action="store_true", help="validate the configuration and print it")
    p.add_argument("--bench", type=float, metavar="S",
                   help="race against OpenSpiel's C++ ExternalSamplingMCCFRSolver, S seconds each")
    p.add_argument("--sweep", help="bucket lists separated by ';' (e.g. '0,0;4,4;2,2'): one blueprint each "
                                   "for run.iterations, exploitability at every run.eval_every")
    p.set_defaults(func=run)
    return p


@dataclasses.dataclass
class BlueprintConfig:
    game_name: str
    game: object                      # a two-player `Holdem`, or `sog.multiplayer.holdem.Holdem`
    players: int
    buckets: BucketConfig             # the tables: every round (indexer table), the first (strength)
    counts: tuple[int, ...]           # buckets per round, as configured
    indexer: str
    recall: str
    cache_dir: str
    file: str | None
    bet_sizes: BetSizes | None
    settings: Settings | UCTSettings  # the mccfr section, or the uct section (sog.agents.holdem.blueprint.sampled_uct)
    iterations: int | None
    seconds: float | None
    checkpoint_every: int
    eval_every: int
    out: str

    def fingerprint(self) -> dict:
        indexer = (describe_indexer(self.indexer, self.counts, self.buckets.seed, players=self.players)
                   if self.settings.traverser == "sampled" else None)
        return fingerprint(game_label(self.game), describe_abstraction(self.buckets.to_json(), self.recall, self.bet_sizes,
                                                           indexer), self.settings)


def _mapping(value, where: str, known) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise UserError(f"{where}: {value!r} must be a mapping")
    unknown = sorted(set(value) - set(known))
    if unknown:
        raise UserError(f"{where}: unknown key {unknown[0]!r}; known: {', '.join(known)}")
    return value


def _count(value, where: str, lo: int, optional: bool = False):
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < lo:
        raise UserError(f"{where}: {value!r} must be an integer >= {lo}")
    return value


def parse_config(path: str, overrides: dict | None = None) -> BlueprintConfig:
    """The validated configuration of a blueprint YAML file (`UserError` naming any problem)."""
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise UserError(f"{path}: cannot read the configuration ({e.strerror or e})") from None
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise UserError(f"{path}: not valid YAML ({str(e).splitlines()[0]})") from None
    raw = _mapping(raw, path, SECTIONS)
    if "game" not in raw:
        raise UserError(f"{path}: no 'game'")
    players = raw.get("players", 2)
    if isinstance(players, bool) or not isinstance(players, int) or not 2 <= players <= MAX_PLAYERS:
        raise UserError(f"{path}: players: {players!r} must be an integer from 2 to {MAX_PLAYERS}")
    game = named_holdem(str(raw["game"])) if players == 2 else table_holdem(path, str(raw["game"]), players, None)
    rules = game.rules
    ab = _mapping(raw.get("abstraction"), f"{path}: abstraction", ABSTRACTION_KEYS)
    counts = ab.get("buckets")
    if not isinstance(counts, list) or not all(isinstance(k, int) and not isinstance(k, bool) for k in counts):
        raise UserError(f"{path}: abstraction.buckets: {counts!r} must be a list of integers, one per round "
                        "(0: one bucket per suit class)")
    if len(counts) != rules.num_rounds:
        raise UserError(f"{path}: abstraction.buckets: {counts} gives {len(counts)} rounds; the game has "
                        f"{rules.num_rounds}")
    indexer = ab.get("indexer", "table")
    if indexer not in INDEXERS:
        raise UserError(f"{path}: abstraction.indexer: {indexer!r} must be one of {', '.join(INDEXERS)}")
    if indexer == "strength" and any(k < 1 for k in counts[1:]):
        raise UserError(f"{path}: abstraction.buckets: {counts}: indexer strength needs a count >= 1 on every round "
                        "after the first")
    try:
        bconf = BucketConfig.for_game(game, counts if indexer == "table" else counts[:1], bins=ab.get("bins", 20),
                                      rollouts=ab.get("rollouts", 2000), seed=ab.get("seed", 0))
    except (BucketError, TypeError) as e:
        raise UserError(f"{path}: abstraction: {e}") from None
    recall = ab.get("recall", "imperfect")
    if recall not in RECALL:
        raise UserError(f"{path}: abstraction.recall: {recall!r} must be one of {', '.join(RECALL)}")
    bet_sizes = None
    if ab.get("bet_sizes") is not None:
        try:
            bet_sizes = BetSizes.parse(ab["bet_sizes"])
        except ActionAbstractionError as e:
            raise UserError(f"{path}: abstraction.bet_sizes: {e}") from None
        if len(bet_sizes.sizes) != rules.num_rounds:
            raise UserError(f"{path}: abstraction.bet_sizes: {len(bet_sizes.sizes)} rounds of sizes; the game "
                            f"has {rules.num_rounds}")
    if rules.abstraction == "fullgame" and not rules.limit and bet_sizes is None:
        raise UserError(f"{path}: a fullgame no-limit game needs abstraction.bet_sizes")
    if bet_sizes is not None and (rules.limit or rules.abstraction != "fullgame"):
        raise UserError(f"{path}: abstraction.bet_sizes apply to betting=nolimit,bettingAbstraction=fullgame "
                        f"games; {game_label(game)} has its own actions")
    if "mccfr" in raw and "uct" in raw:
        raise UserError(f"{path}: give an mccfr section or a uct section, not both")
    try:
        settings = UCTSettings.parse(raw["uct"]) if "uct" in raw else Settings.parse(raw.get("mccfr"))
    except (BlueprintError, TypeError) as e:
        raise UserError(f"{path}: {e}") from None
    if isinstance(settings, UCTSettings) and (players != 2 or bet_sizes is not None or not rules.limit):
        raise UserError(f"{path}: uct runs two-player limit hold'em on the game's own actions "
                        f"(players: 2, betting=limit, no bet_sizes)")
    if indexer == "strength" and settings.traverser != "sampled":
        raise UserError(f"{path}: abstraction.indexer strength needs mccfr.traverser: sampled")
    if players != 2:
        if settings.traverser != "sampled":
            raise UserError(f"{path}: {players} players: the world tree is two-player; set mccfr.traverser: sampled")
        game = table_holdem(path, str(raw["game"]), players, bet_sizes)
    r = {**_mapping(raw.get("run"), f"{path}: run", RUN_KEYS), **(overrides or {})}
    iterations = _count(r.get("iterations"), f"{path}: run.iterations", 1, optional=True)
    seconds = r.get("seconds")
    if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds <= 0):
        raise UserError(f"{path}: run.seconds: {seconds!r} must be a positive number")
    if iterations is None and seconds is None:
        raise UserError(f"{path}: run needs iterations, seconds or both")
    for name in ("cache_dir", "file"):
        if ab.get(name) is not None and not isinstance(ab[name], str):
            raise UserError(f"{path}: abstraction.{name}: {ab[name]!r} must be a path")
    out = r.get("out")
    if not isinstance(out, str) or not out:
        raise UserError(f"{path}: run.out must name the output folder")
    return BlueprintConfig(str(raw["game"]), game, players, bconf, tuple(counts), indexer, recall, ab.get("cache_dir", "runs/buckets"), ab.get("file"),
                           bet_sizes, settings, iterations, None if seconds is None else float(seconds),
                           _count(r.get("checkpoint_every", 10000), f"{path}: run.checkpoint_every", 1),
                           _count(r.get("eval_every", 0), f"{path}: run.eval_every", 0), out)


def game_label(game) -> str:
    """A game's name in fingerprints and messages: the two-player game's spec name, the n-player
    game's repr."""
    return game.spec.name if isinstance(game, Holdem) else repr(game)


def table_holdem(path: str, text: str, players: int, bet_sizes: BetSizes | None):
    """The n-player hold'em game of a holdem(...) string (`sog.multiplayer.holdem.Holdem`); with
    bet sizes its `pluribus` abstraction over the string's fullgame no-limit betting."""
    try:
        name, params = parse_game_string(text)
    except ValueError as e:
        raise UserError(f"{path}: game: {e}") from None
    if name not in ("holdem", "universal_poker"):
        raise UserError(f"{path}: game: {players} players need a holdem(...) game, not {name!r}")
    if bet_sizes is not None:
        params = {**params, "bettingAbstraction": "pluribus"}
    try:
        return TableHoldem(players, bet_sizes=bet_sizes, **params)
    except (HoldemParameterError, PlayersError) as e:
        raise UserError(f"{path}: game: {e}") from None


def _refuse_unsupported(cfg: BlueprintConfig) -> None:
    """What this implementation cannot run, as one line, before any work."""
    game, rules = cfg.game, cfg.game.rules
    hands = comb(rules.num_ranks * rules.num_suits, rules.hole)
    if hands > MAX_HANDS and cfg.settings.traverser == "world":
        raise UserError(f"{game_label(game)}: {hands:,} hands; the world tree holds every pair of "
                        f"hands of a public state, at most {MAX_HANDS} hands (set mccfr.traverser: sampled; "
                        "--check validates the file)")
    if hands > MAX_HANDS and cfg.indexer == "table" and rules.num_rounds > 1:
        raise UserError(f"{game_label(game)}: {hands:,} hands; k-means tables of every round "
                        f"(indexer: table) are built for at most {MAX_HANDS} hands (the 52-card turn has 55M "
                        "classes); set abstraction.indexer: strength")


def load_buckets(cfg: BlueprintConfig):
    try:
        if cfg.file is not None:
            return load(cfg.file, cfg.buckets)
        return load_or_build(cfg.buckets, cfg.cache_dir, progress=True)[0]
    except BucketError as e:
        raise UserError(str(e)) from None


def _exact_ok(game) -> bool:
    size = game.public_tree_size()
    return size is not None and size <= min(EXACT_MAX_PUBLIC_STATES, full_tree_limit(game))


def _describe(cfg: BlueprintConfig) -> dict:
    return {"game": game_label(cfg.game), "players": cfg.players, "buckets": list(cfg.counts), "indexer": cfg.indexer, "recall": cfg.recall,
            "bins": cfg.buckets.bins, "rollouts": cfg.buckets.rollouts,
            "bet_sizes": None if cfg.bet_sizes is None else [[list(s) for s in r] for r in cfg.bet_sizes.sizes],
            _section(cfg): dataclasses.asdict(cfg.settings), "iterations": cfg.iterations, "seconds": cfg.seconds,
            "checkpoint_every": cfg.checkpoint_every, "eval_every": cfg.eval_every, "out": cfg.out}


def _section(cfg: BlueprintConfig) -> str:
    """The config section of the solver: mccfr or uct."""
    return "uct" if isinstance(cfg.settings, UCTSettings) else "mccfr"


def train(cfg: BlueprintConfig, log=say) -> dict:
    """Train (or resume) the blueprint of `cfg` (see the module doc)."""
    out = Path(cfg.out)
    ckpt = out / "checkpoint.npz"
    if ckpt.exists():            # checked before any work or write: one line, nothing overwritten
        try:
            meta, _ = read_checkpoint(ckpt)
        except BlueprintError as e:
            raise UserError(str(e)) from None
        if meta.get("fingerprint") != cfg.fingerprint():
            theirs = meta.get("fingerprint") or {}
            mine = cfg.fingerprint()
            what = ("game" if theirs.get("game") != mine["game"] else "abstraction"
                    if any(theirs.get(k) != mine.get(k) for k in ("buckets", "recall", "bet_sizes", "indexer"))
                    else f"{_section(cfg)} settings" if theirs.get("settings") != mine["settings"]
                    else "configuration")
            raise UserError(f"{ckpt}: a blueprint checkpoint of another {what}"
                            + (f" ({theirs.get('game')})" if what == "game" else "") + "; use another run.out")
    _refuse_unsupported(cfg)
    buckets = load_buckets(cfg)
    solver = _solver(cfg, buckets)
    extra = {"seconds": 0.0, "curve": []}
    if ckpt.exists():
        try:
            extra = {**extra, **load_checkpoint(solver, ckpt)}
        except BlueprintError as e:
            raise UserError(str(e)) from None
        log(f"blueprint: resumed {ckpt} at iteration {solver.iterations}")
    resumed_from = solver.iterations
    uct = isinstance(solver, SampledUCT)
    exact = cfg.eval_every > 0 and cfg.players == 2 and cfg.indexer == "table" and _exact_ok(cfg.game)
    out.mkdir(parents=True, exist_ok=True)
    seconds, curve = float(extra["seconds"]), list(extra["curve"])
    load = [os.getloadavg()[0]]

    def done() -> bool:
        return ((cfg.iterations is not None and solver.iterations >= cfg.iterations)
                or (cfg.seconds is not None and seconds >= cfg.seconds))

    def measure() -> None:
        e = 1000 * exploitability(cfg.game, solver.real_policy())
        point = {"iterations": solver.iterations, "seconds": seconds, "exploitability_mbb": e,
                 "rows": solver.tree.num_rows}
        if uct:              # the blueprint is the greedy policy; the average policy's too
            point["average_exploitability_mbb"] = 1000 * exploitability(
                cfg.game, solver.real_policy(solver.policy_probs("average")))
        curve.append(point)
        log(f"blueprint: {solver.iterations} iterations, {seconds:.1f} s, {solver.tree.num_rows} abstract sets, "
            f"exploitability {e:.2f} mbb/h" + (f" (average policy {point['average_exploitability_mbb']:.2f})"
                                               if uct else ""))

    if exact and not curve and solver.iterations == 0:
        measure()
    while not done():
        step = cfg.checkpoint_every - solver.iterations % cfg.checkpoint_every
        if cfg.eval_every:
            step = min(step, cfg.eval_every - solver.iterations % cfg.eval_every)
        if cfg.iterations is not None:
            step = min(step, cfg.iterations - solver.iterations)
        t = time.perf_counter()
        solver.run(iterations=step, seconds=None if cfg.seconds is None else cfg.seconds - seconds)
        seconds += time.perf_counter() - t
        if exact and solver.iterations % cfg.eval_every == 0:
            measure()
        elif not exact:
            log(f"blueprint: {solver.iterations} iterations, {seconds:.1f} s, {solver.tree.num_rows} abstract sets")
        if solver.iterations % cfg.checkpoint_every == 0 or done():
            save_checkpoint(solver, ckpt, {"seconds": seconds, "curve": curve})
    if exact and (not curve or curve[-1]["iterations"] != solver.iterations):     # stopped by the clock between evaluations
        measure()
        save_checkpoint(solver, ckpt, {"seconds": seconds, "curve": curve})
    load.append(os.getloadavg()[0])
    save_blueprint(solver, out / "blueprint.npz")
    if uct:
        save_blueprint(solver, out / "blueprint_average.npz", solver.policy_probs("average"))
    result = {"command": "blueprint", **_describe(cfg), "iterations_done": solver.iterations,
              "resumed_from": resumed_from,
              "train_seconds": seconds, "iterations_per_second": solver.iterations / max(seconds, 1e-9),
              "abstract_sets": solver.tree.num_rows, **solver.stats(),
              "load_average": load, "cpu_seconds": time.process_time(),
              "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
              "checkpoint": str(ckpt), "blueprint": str(out / "blueprint.npz"),
              "exploitability_mbb": curve[-1]["exploitability_mbb"] if curve else None, "curve": curve}
    atomic_write(out / "result.json", lambda f: f.write(json.dumps(result, indent=1).encode()))
    return result


def _solver(cfg: BlueprintConfig, buckets) -> BlueprintMCCFR | SampledBlueprintMCCFR | SampledUCT:
    """A fresh blueprint solver of the config on these bucket tables (the world tree, or sampled deals:
    MCCFR, or UCT / Smooth UCT with a uct section)."""
    if cfg.settings.traverser == "world":
        return BlueprintMCCFR(CardAbstraction(cfg.game, buckets, cfg.recall, cfg.bet_sizes), cfg.settings)
    try:
        cards = DealBuckets(cfg.game.rules, buckets, cfg.counts, cfg.recall, cfg.indexer, seed=cfg.buckets.seed,
                            players=cfg.players)
        if isinstance(cfg.settings, UCTSettings):
            return SampledUCT(cfg.game, cards, cfg.settings)
        if cfg.players != 2:
            return MultiplayerBlueprintMCCFR(cfg.game, cards, cfg.settings)
        return SampledBlueprintMCCFR(cfg.game, cards, cfg.bet_sizes, cfg.settings)
    except (DealBucketError, BlueprintError) as e:
        raise UserError(f"{game_label(cfg.game)}: {e}") from None


# ---- the race against OpenSpiel and the bucket sweep ----------------------------------------
def openspiel_policy(game, os_policy) -> TabularPolicy:
    """Our TabularPolicy of a pyspiel C++ policy (an MCCFR solver's `average_policy()`) of the
    same universal_poker game, read by information-state string (uniform where it has none),
    so that both solvers' exploitability comes from the same exact tool (pyspiel's own best
    response on a 66-hand game builds the full history tree: over 13 GB)."""
    import pyspiel

    table = {}
    sys.stderr.flush()
    saved = os.dup(2)                  # OpenSpiel prints a line per state it has no policy for
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
            for key, pub, slot in info_states(game):
                row = table.setdefault(pub, np.zeros((game.spec.num_states, game.spec.num_actions)))
                try:
                    pairs = os_policy.get_state_policy(key)
                except pyspiel.SpielError:
                    pairs = ()
                for a, q in pairs:
                    row[slot, a] = q
    finally:
        os.dup2(saved, 2)
        os.close(saved)
    return TabularPolicy(game, table)


def bench(cfg: BlueprintConfig, seconds: float, checkpoints: int = 4, log=say) -> dict:
    """Our blueprint solver against OpenSpiel's C++ external sampling on the same game."""
    import pyspiel

    from launch.bench_mccfr import OpenSpielSolver, OurSolver, race

    game = cfg.game
    name = game.openspiel_name()
    if name is None:
        raise UserError(f"{game.spec.name} has no universal_poker twin to race")
    _refuse_unsupported(cfg)
    if not _exact_ok(game) or cfg.indexer != "table":
        raise UserError(f"{game.spec.name}: exact exploitability needs a small deck and abstraction.indexer: table")
    buckets = load_buckets(cfg)
    os_game = pyspiel.load_game(name)
    solver = _solver(cfg, buckets)
    ours = OurSolver("blueprint", solver, game, solver.real_policy)
    theirs = OpenSpielSolver(pyspiel, os_game, "external", cfg.settings.seed)

    def measure(r):
        if r is ours:
            return 1000 * r.exploitability()
        return 1000 * exploitability(game, openspiel_policy(game, r.solver.average_policy()))
    load = [os.getloadavg()[0]]
    res = race([ours, theirs], seconds, checkpoints, measure, "exploitability_mbb", log)
    load.append(os.getloadavg()[0])
    mine, ref = res["sog"], res["openspiel"]
    result = {"command": "blueprint --bench", "game": game.spec.name, "openspiel_game": name,
              "buckets": list(cfg.buckets.buckets), "recall": cfg.recall, "mccfr": dataclasses.asdict(cfg.settings),
              "seconds": seconds, "checkpoints": checkpoints, "load_average": load,
              "sog": mine, "openspiel": ref, "abstract_sets": ours.solver.tree.num_rows,
              "iterations_per_second": {"sog": mine["iterations"] / mine["seconds"],
                                        "openspiel": ref["iterations"] / ref["seconds"]},
              "iterations_ratio": mine["iterations"] / max(ref["iterations"], 1),
              "exploitability_ratio": mine["exploitability_mbb"] / max(ref["exploitability_mbb"], 1e-12)}
    log(f"{game.spec.name}, {seconds:g} s each: sog {mine['iterations']} iterations "
        f"({result['iterations_per_second']['sog']:.0f}/s), {mine['exploitability_mbb']:.1f} mbb/h; OpenSpiel C++ "
        f"{ref['iterations']} ({result['iterations_per_second']['openspiel']:.0f}/s), "
        f"{ref['exploitability_mbb']:.1f} mbb/h; iterations x{result['iterations_ratio']:.2f}, "
        f"exploitability x{result['exploitability_ratio']:.3f}")
    return result


def sweep(cfg: BlueprintConfig, lists: list[list[int]], log=say) -> dict:
    """One blueprint per bucket list for cfg.iterations, exact exploitability every eval_every."""
    _refuse_unsupported(cfg)
    if cfg.iterations is None or not cfg.eval_every:
        raise UserError("--sweep needs run.iterations and run.eval_every")
    if not _exact_ok(cfg.game) or cfg.indexer != "table":
        raise UserError(f"{cfg.game.spec.name}: exact exploitability needs a small deck and abstraction.indexer: "
                        "table")
    rows = []
    load = [os.getloadavg()[0]]
    for counts in lists:
        if len(counts) != cfg.game.rules.num_rounds:
            raise UserError(f"--sweep: {counts} must give one count per round ({cfg.game.rules.num_rounds})")
        try:
            bconf = dataclasses.replace(cfg.buckets, buckets=tuple(counts))
        except BucketError as e:
            raise UserError(str(e)) from None
        c = dataclasses.replace(cfg, buckets=bconf, counts=tuple(counts), file=None)
        buckets = load_buckets(c)
        solver = _solver(c, buckets)
        curve, seconds = [], 0.0
        while solver.iterations < cfg.iterations:
            t = time.perf_counter()
            solver.run(iterations=min(cfg.eval_every, cfg.iterations - solver.iterations))
            seconds += time.perf_counter() - t
            e = 1000 * exploitability(cfg.game, solver.real_policy())
            curve.append({"iterations": solver.iterations, "seconds": seconds, "exploitability_mbb": e})
        sizes = [rb.num_buckets for rb in buckets.rounds]
        log(f"buckets {counts} ({sizes} buckets, {solver.tree.num_rows} abstract sets): "
            + ", ".join(f"{p['iterations']}: {p['exploitability_mbb']:.1f}" for p in curve))
        rows.append({"buckets": counts, "num_buckets": sizes, "abstract_sets": solver.tree.num_rows, "curve": curve})
        load.append(os.getloadavg()[0])
    return {"command": "blueprint --sweep", "game": cfg.game.spec.name, "recall": cfg.recall,
            "mccfr": dataclasses.asdict(cfg.settings), "iterations": cfg.iterations, "load_average": load,
            "rows": rows}


def run(args) -> dict:
    overrides = {k: v for k, v in (("out", args.out), ("iterations", args.iterations),
                                   ("seconds", args.seconds)) if v is not None}
    cfg = parse_config(args.config, overrides)
    if args.check:
        return {"command": "blueprint --check", "valid": True, **_describe(cfg)}
    if cfg.players != 2 and (args.bench is not None or args.sweep is not None):
        raise UserError(f"--bench and --sweep measure exact exploitability: two players only, not {cfg.players}")
    if args.bench is not None:
        if not args.bench > 0:
            raise UserError(f"--bench must be positive, got {args.bench}")
        return bench(cfg, args.bench)
    if args.sweep is not None:
        try:
            lists = [[int(x) for x in part.split(",")] for part in args.sweep.split(";") if part.strip()]
        except ValueError:
            raise UserError(f"--sweep {args.sweep!r}: bucket lists of integers separated by ';'") from None
        return sweep(cfg, lists)
    return train(cfg)
