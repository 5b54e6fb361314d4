"""`sog eval --run RUN_DIR [--every N | --step STEP ...] [--search S,C ...] [--seeds N] [--no-policy] [--pool FILE [--games G]]`.

Evaluates the checkpoints of a training run directory (one numbered directory
per saved learner step, `learners.checkpoint`), oldest first, every N-th one
and always the newest (or those of the given steps: what a training run names
when its deadline cut an evaluation short, `launch.training_run`):

* SoG(S, C) for each --search setting: exact exploitability of the agent's
  composed policy (searches at every public state in breadth-first order,
  `sog.eval.search_policy`) with the checkpoint's CVPN as value function,
  min / mean / max over --seeds seeds. Search knobs other than S and C
  (PUCT constant, prior temperature, top-k, gadget alpha) come from the run's
  config.yaml when there is one.
* the raw network policy ("policy"): the CVPN's policy-head prior at every
  decision public state, queried with the ranges the policy itself induces
  (`sog.eval.aivat.network_policy`), and its exact exploitability.

The game is read from the checkpoint metadata. Results are appended, one row
per (step, setting) as soon as it is measured, to RUN_DIR/eval.csv (the
columns the training run's own evaluator writes: step, version, search,
seeds, min_mbb, mean_mbb, max_mbb, seconds, wall; the raw policy has search
"policy"), logged to RUN_DIR/tb (tags eval/SoG(S,C)_{mean,min,max}_mbb as
training does, and eval/policy_mbb), and drawn in RUN_DIR/eval.png. Each
SoG(S, C) setting also gets its figure with the exact oracle (same settings
and seeds; `learners.oracle_reference`, computed once and cached in
RUN_DIR/oracle_eval.json): a dashed reference line in eval.png and the tag
eval/SoG(S,C)_oracle_mbb.
Re-running skips the (step, search, seeds) rows eval.csv already holds.

With --pool TOURNAMENT.yaml it rates the checkpoints by Elo instead (chess, Go:
`launch.elo_curve`).

`add_parser(subparsers)` adds the command with `run` as its func; `run(args)`
returns a JSON-able dict; user errors raise `launch.console.UserError`.
"""
from __future__ import annotations

import csv
import dataclasses
import math
import time
from pathlib import Path

from launch import elo_curve
from launch.console import UserError, say
from sog.config import ConfigError, load_config
from sog.eval.aivat import network_policy
from sog.eval.search_policy import decision_state_count, search_exploitability
from sog.games import UnknownGameError, load_game
from sog.search.full_tree import exploitability
from sog.search.resolve import ContinualResolver
from sog.search.settings import SearchSettings, parse_search

EVAL_FILE, PNG_FILE = "eval.csv", "eval.png"
BUCKETS = (8, 64, 512)   # padded batch sizes of the network: few jit compilations per run
POLICY = "policy"


def add_parser(subparsers):
    e = subparsers.add_parser("eval", help="evaluate a run's checkpoints: eval.csv, eval.png")
    e.add_argument("--run", required=True, help="run directory (numbered checkpoint directories inside)")
    e.add_argument("--every", type=int, default=1, help="evaluate every N-th checkpoint (and the newest)")
    e.add_argument("--step", type=int, nargs="+", action="extend", default=None,
                   help="evaluate the checkpoints of these learner steps only")
    e.add_argument("--search", nargs="+", action="extend", default=None,
                   help="S,C settings of SoG(S, C), or S,C,EPS with off-support smoothing EPS (default: the "
                        "run config's run.eval_search, else 10,1); "
                        "`--search 10,1 100,1` and `--search 10,1 --search 100,1` both give the two")
    e.add_argument("--seeds", type=int, default=None,
                   help="seeds per SoG setting (default: the run config's run.eval_seeds, else 2)")
    e.add_argument("--no-policy", action="store_true", help="skip the raw network policy")
    e.add_argument("--oracle-tolerance", type=float, default=None,
                   help="the reference lines' exact oracle iterates each call on until its gap is at most this "
                        "(game units; default: the run config's run.oracle_tolerance, else 0: 50 warm-started "
                        "iterations a call, `learners.oracle_reference`)")
    e.add_argument("--pool", metavar="TOURNAMENT.yaml",
                   help="instead: Elo over checkpoints, each checkpoint as SoG(S, C) (one --search, default "
                        "10,1) in a gauntlet against this tournament's opponents (its agents for a round "
                        "robin), anchored as it says; RUN_DIR/elo.csv, elo.png, elo/ (launch.elo_curve)")
    e.add_argument("--games", type=int, help="--pool: games per pool agent and checkpoint (default: the "
                                             "pool's games_per_pair)")
    e.set_defaults(func=run)
    return e


def checkpoint_steps(run_dir: Path) -> list[int]:
    """Steps of the complete checkpoints in a run directory, oldest first."""
    steps = []
    for p in run_dir.iterdir():
        if p.is_dir() and p.name.isdigit() and any((p / n).exists() for n in ("meta", "_CHECKPOINT_METADATA")):
            steps.append(int(p.name))
    return sorted(steps)


def run_checkpoint_steps(run_dir: Path) -> list[int]:
    """`checkpoint_steps` of a run directory that must exist and hold one (UserError if not)."""
    if not run_dir.is_dir():
        raise UserError(f"no run directory at {run_dir}")
    steps = checkpoint_steps(run_dir)
    if not steps:
        raise UserError(f"no checkpoints in {run_dir} (expected numbered step directories)")
    return steps


def run_config(run_dir: Path):
    """The run's Config from RUN_DIR/config.yaml, or None when there is none. A config.yaml that
    does not load is a UserError (exit 2): evaluating with default search settings instead would
    give figures of another search than the run's (e.g. default simultaneous updates where
    the run's config had alternating ones)."""
    path = run_dir / "config.yaml"
    if not path.is_file():
        return None
    try:
        return load_config(path)
    except ConfigError as e:
        raise UserError(f"{e} (the run's config.yaml: its search settings are the evaluation's; "
                        "fix it, or move it away to use the defaults)") from None


def run_search_settings(path: Path) -> tuple[SearchSettings, str]:
    """The search settings of the run at `path` (a run directory or one of its numbered checkpoint
    directories): its config.yaml's `search:` section, else the defaults; and where they came from
    (for `settings_line`)."""
    run_dir = path.parent if path.name.isdigit() and not (path / "config.yaml").is_file() else path
    config = run_config(run_dir)
    return (config.search if config is not None else SearchSettings()), _settings_source(run_dir, config)


def _settings_source(run_dir: Path, config) -> str:
    return f"the run's {run_dir / 'config.yaml'}" if config is not None else f"defaults: no config.yaml in {run_dir}"


def settings_line(settings: SearchSettings, source: str) -> str:
    """One line naming every setting of a search and where they came from, the update rule first."""
    rule = "alternating" if settings.alternating else "simultaneous"
    rest = ", ".join(f"{f.name}={getattr(settings, f.name)}" for f in dataclasses.fields(settings)
                     if f.name not in ("simulations", "per_phase", "alternating"))
    return f"SoG({settings.label}) search settings ({source}): {rule} updates, {rest}"


def read_rows(path: Path) -> list[dict]:
    """eval.csv rows (UserError if it has other columns than the evaluation CSV's)."""
    from learners.metrics import EVAL_FIELDS
    if not path.exists():
        return []
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        if reader.fieldnames is None:
            return []
        if list(reader.fieldnames) != EVAL_FIELDS:
            raise UserError(f"{path} has columns {reader.fieldnames}, not the evaluation columns {EVAL_FIELDS}; "
                            "not touching it")
        return list(reader)


def _append(path: Path, row: dict) -> None:
    from learners.metrics import EVAL_FIELDS
    new = not path.exists() or path.stat().st_size == 0
    with open(path, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=EVAL_FIELDS, extrasaction="ignore")
        if new:
            w.writeheader()
        w.writerow(row)


def _key(step, search, seeds) -> tuple:
    return int(step), str(search), 1 if str(search) == POLICY else int(seeds)


def plot(rows: list[dict], path: Path, title: str, references: dict | None = None) -> None:
    """Exploitability (mbb/h, log scale) against learner step: mean with min-max band per setting,
    and, for a setting in `references` ({(search 'S,C', seeds): mbb}), the same agent's figure with
    the exact oracle as a dashed line of its colour."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    references = references or {}
    series: dict[tuple, list] = {}
    for r in rows:
        series.setdefault((r["search"], int(r["seeds"])), []).append(
            (int(r["step"]), float(r["min_mbb"]), float(r["mean_mbb"]), float(r["max_mbb"])))
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for (search, seeds), pts in sorted(series.items()):
        label = "raw network policy" if search == POLICY else f"SoG({search}), {seeds} seeds"
        pts = sorted({p[0]: p for p in pts}.values())
        x = [p[0] for p in pts]
        line, = ax.plot(x, [p[2] for p in pts], marker="o", label=label)
        ax.fill_between(x, [p[1] for p in pts], [p[3] for p in pts], alpha=0.2, color=line.get_color())
        if (search, seeds) in references:
            ax.axhline(references[search, seeds], linestyle="--", color=line.get_color(),
                       label=f"SoG({search}) with the exact oracle, {seeds} seeds: {references[search, seeds]:.1f}")
    if any(float(r["min_mbb"]) > 0 for r in rows) and all(v > 0 for v in references.values()):
        ax.set_yscale("log")
    ax.set_xlabel("learner step")
    ax.set_ylabel("exploitability (mbb/hand)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _references(run_dir: Path, game, params: dict, seeds: int, tolerance: float) -> dict:
    """{search 'S,C': mbb} of SoG(S, C) with the exact oracle (its `tolerance`) for the settings
    `params` and `seeds`, computed once and cached in the run directory and the machine's shared
    file (`learners.oracle_reference`)."""
    from learners import oracle_reference

    cache = oracle_reference.load(run_dir, game)
    out = {}
    for name, p in params.items():
        progress = None
        if oracle_reference.key(game, p, seeds, tolerance) not in cache:
            say(f"SoG({name}) with the exact oracle, {seeds} seeds (the reference line; once per machine; "
                f"each seed kept in {run_dir / oracle_reference.SEEDS_FILE} as it finishes)")
            progress = _eta_progress(f"SoG({name}) with the exact oracle", seeds, decision_state_count(game))
        out[name] = oracle_reference.reference(game, p, seeds, cache, tolerance, run_dir, progress)["mean_mbb"]
        if progress is not None:
            say()
    oracle_reference.save(run_dir, cache)
    return out


def _eta_progress(what: str, seeds: int, per_seed: int):
    """A `progress(seed, k)` that prints 'WHAT: seed s/n, search k/per_seed, ETA ...' on one
    stderr line, the estimate from this process's searches so far (seeds reused from an
    earlier run are skipped and not counted)."""
    start, first = time.perf_counter(), {}

    def progress(seed: int, k: int) -> None:
        first.setdefault("seed", seed)
        done = (seed - first["seed"]) * per_seed + k
        left = (seeds - seed) * per_seed - k
        rate = (time.perf_counter() - start) / max(done, 1)
        say(f"\r{what}: seed {seed + 1}/{seeds}, search {k}/{per_seed}, ETA {_duration(rate * left)}   ", end="")
    return progress


def _duration(seconds: float) -> str:
    """'42 s', '12 min' or '1 h 05 min'."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{int(seconds // 3600)} h {int(seconds % 3600 // 60):02d} min"


def _cached_references(run_dir: Path, game, base: SearchSettings, rows: list[dict], tolerance: float) -> dict:
    """{(search 'S,C', seeds): mbb} of the cached exact-oracle references (oracle `tolerance`) of the
    settings in `rows`."""
    from learners import oracle_reference

    cache = oracle_reference.load(run_dir, game)
    out = {}
    for r in rows:
        if r["search"] == POLICY:
            continue
        k = oracle_reference.key(game, parse_search(r["search"], base), int(r["seeds"]), tolerance)
        if k in cache:
            out[r["search"], int(r["seeds"])] = cache[k]["mean_mbb"]
    return out


def run(args) -> dict:
    from learners.checkpoint import CheckpointError, CheckpointGone, load_value_function, read_metadata

    run_dir = Path(args.run)
    if args.every < 1:
        raise UserError("--every must be at least 1")
    steps = run_checkpoint_steps(run_dir)
    selected = sorted(set(steps[::args.every]) | {steps[-1]})
    if args.step is not None:
        absent = sorted(set(args.step) - set(steps))
        if absent:
            raise UserError(f"no checkpoint of step {', '.join(map(str, absent))} in {run_dir} "
                            f"(steps: {', '.join(map(str, steps))})")
        selected = sorted(set(args.step))
    config = run_config(run_dir)
    searches = args.search
    if searches is None:
        searches = config.run.eval_search.split(";") if config is not None else ["10,1"]
    seeds = args.seeds if args.seeds is not None else (config.run.eval_seeds if config is not None else 2)
    if seeds < 1:
        raise UserError("--seeds must be at least 1")
    base = config.search if config is not None else SearchSettings()
    params = {}
    for text in searches:
        try:
            p = parse_search(text.strip(), base)
        except ValueError as e:
            raise UserError(str(e)) from None
        params[p.label] = p
    source = _settings_source(run_dir, config)
    for p in params.values():
        say(settings_line(p, source))
    temperature = config.search.prior_temperature if config is not None else 1.0
    metas = {}
    for step in selected:
        try:
            metas[step] = read_metadata(run_dir / str(step))
        except CheckpointGone as e:          # the run writing it keeps only its newest checkpoints
            say(f"skipped step {step}: {e}")
        except CheckpointError as e:
            raise UserError(str(e)) from None
    if not metas:
        raise UserError(f"every checkpoint of {run_dir} asked for was removed while being read")
    selected = sorted(metas)
    games = {m["game"] for m in metas.values()}
    if len(games) > 1:
        raise UserError(f"{run_dir} holds checkpoints of several games ({', '.join(sorted(games))})")
    try:
        game = load_game(games.pop())
    except UnknownGameError as e:
        raise UserError(f"checkpoint game: {e}") from None
    if args.pool is not None:
        return elo_curve.run(args, selected, game.spec.name, temperature)
    csv_path = run_dir / EVAL_FILE
    rows = read_rows(csv_path)
    tolerance = args.oracle_tolerance if args.oracle_tolerance is not None else (
        config.run.oracle_tolerance if config is not None else 0.0)
    if not 0 <= tolerance < math.inf:
        raise UserError(f"--oracle-tolerance must be >= 0, got {tolerance}")
    references = _references(run_dir, game, params, seeds, tolerance)
    done = {_key(r["step"], r["search"], r["seeds"]) for r in rows if r.get("step", "").isdigit()}

    from tensorboardX import SummaryWriter
    writer = None
    vf = network = None
    evaluated, skipped = [], 0
    per_seed = decision_state_count(game)
    t_start = time.perf_counter()
    try:
        for step in selected:
            todo = [(name, p) for name, p in params.items() if _key(step, name, seeds) not in done]
            want_policy = not args.no_policy and _key(step, POLICY, 1) not in done
            skipped += len(params) - len(todo) + (0 if args.no_policy or want_policy else 1)
            if not todo and not want_policy:
                continue
            try:
                loaded = load_value_function(run_dir / str(step), game, buckets=BUCKETS)
            except CheckpointGone as e:
                say(f"skipped step {step}: {e}")
                continue
            except CheckpointError as e:
                raise UserError(str(e)) from None
            if vf is None or metas[step].get("network") != network:
                vf, network = loaded, metas[step].get("network")
            else:        # same network shapes: swap the weights in, keep the compiled programs
                vf.set_params(loaded.params, loaded.version)
            version = int(metas[step].get("version", 0))
            results = []
            for name, p in todo:
                def progress(seed, k, name=name, step=step):
                    say(f"\rstep {step}: SoG({name}) seed {seed + 1}/{seeds}: search {k}/{per_seed}", end="")
                out = search_exploitability(game, ContinualResolver(game, vf, p), seeds, progress)
                say()
                results.append({"search": name, "seeds": seeds, "min_mbb": 1000 * out["min"],
                                "mean_mbb": 1000 * out["mean"], "max_mbb": 1000 * out["max"],
                                "seconds": round(out["seconds"], 3)})
            if want_policy:
                t0 = time.perf_counter()
                expl = 1000 * exploitability(game, network_policy(game, vf, temperature))
                results.append({"search": POLICY, "seeds": 1, "min_mbb": expl, "mean_mbb": expl, "max_mbb": expl,
                                "seconds": round(time.perf_counter() - t0, 3)})
            if writer is None:
                writer = SummaryWriter(logdir=str(run_dir / "tb"))
            for res in results:
                row = {**res, "step": step, "version": version, "wall": round(time.time(), 3)}
                _append(csv_path, row)
                rows.append({k: str(v) for k, v in row.items()})
                done.add(_key(step, res["search"], res["seeds"]))
                evaluated.append(row)
                if res["search"] == POLICY:
                    writer.add_scalar("eval/policy_mbb", res["mean_mbb"], global_step=step)
                    what = "raw network policy"
                else:
                    tag = f"eval/SoG({res['search']})"
                    for k in ("mean", "min", "max"):
                        writer.add_scalar(f"{tag}_{k}_mbb", res[f"{k}_mbb"], global_step=step)
                    writer.add_scalar(f"{tag}_oracle_mbb", references[res["search"]], global_step=step)
                    what = f"SoG({res['search']})"
                say(f"step {step} (v{version}): {what} exploitability mean {res['mean_mbb']:.2f} mbb/h "
                    f"(min {res['min_mbb']:.2f}, max {res['max_mbb']:.2f}) in {res['seconds']:.1f} s")
            writer.flush()
    finally:
        if writer is not None:
            writer.close()
    png = run_dir / PNG_FILE
    good = [r for r in rows if r.get("step", "").isdigit()]
    if good:
        plot(good, png, f"{game.spec.name}: {run_dir.name}", _cached_references(run_dir, game, base, good, tolerance))
    say(f"{len(evaluated)} new evaluation(s), {skipped} already in {csv_path}; chart in {png}")
    return {"run": str(run_dir), "game": game.spec.name, "checkpoints": steps, "selected": selected,
            "searches": list(params), "seeds": seeds,
            "search_settings": {name: dataclasses.asdict(p) for name, p in params.items()},
            "search_settings_from": source,
            "oracle_mbb": references, "evaluated": evaluated, "skipped": skipped,
            "csv": str(csv_path), "png": str(png) if good else None, "tensorboard": str(run_dir / "tb"),
            "seconds": time.perf_counter() - t_start}
