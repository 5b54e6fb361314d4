"""`sog bench selfplay`: the training run's throughput and where its searches' time goes.

The real training run (`launch.train.make_run`: the Ray run on Ray, embedded and local
unless `RAY_ADDRESS` names a cluster, as `sog train`; with `--sync` the Ray-free run) starts
on a fresh run directory (a temporary one, or `--out DIR`) with the config as given, its
evaluations and checkpoints included. The figures are those of a window of `--seconds` S
that opens at the first progress tick (every `TICK_SECONDS`) at which the learner has stepped
and a self-play step has returned, so start-up (Ray, actors, JAX compilation, filling the
replay to `replay.min_size`) is outside it; the window closes at the first tick S seconds
later and the run stops there (no final checkpoint or evaluation). Every figure is a
difference of `TrainingRun.totals()` at the two ends, over the window's length:

- rates per second: searches, moves, games, solves, network queries (public belief
  states), examples (self-play and solver), learner steps;
- wait shares (`wait_share`: seconds waiting over seconds accounted, per producer role and
  the learner; the learner's is the time it waited for data over its wall time);
- inference: batches and their sizes (mean, p50, p95, max rows), the share of the time the
  network computed (`busy_share`), and on Ray the server's `idle_share` (no request pending);
  with several servers (`inference.servers`) the batches and sizes are summed over them, the
  shares are their means, and `servers` lists each one's batches, mean batch, busy and idle
  shares and whether it restarted; on the Ray-free run the batches are the in-process
  network's calls;
- `search_split`, per producer role: the time of its searches (self-play searches with
  their re-solving summaries, query solves), which run in lockstep in one thread: each
  search's own clock plus the merged network calls (`actors.search_time`), split into tree
  bookkeeping and growth, CFR passes, network calls and merging the batch (building the
  merged request, splitting the answers), in seconds and as shares of that time.

The result also carries the machine's load average at both ends (figures taken under load
are indicative only). With `--out DIR` the run stays in DIR, with `bench.json` (the
result) and `bench.png` (the split as one stacked bar per role).
"""
from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path

from launch.console import UserError, say
from sog.config import Config, ConfigError, apply_overrides, load_config

TICK_SECONDS = 1.0        # progress ticks: the window's ends fall on them
WARMUP_LIMIT = 900.0      # seconds the run may take to warm up before the benchmark gives up
SPLIT = (("tree", "search_tree", "tree bookkeeping and growth"), ("cfr", "search_cfr", "CFR passes"),
         ("network", "search_network", "network calls"),
         ("merge", "search_merge", "merging the batch"))
SEARCHES = {"selfplay": "searches", "solver": "solves"}   # producer role -> the counter of its searches
RATES = {"searches_per_s": "searches", "moves_per_s": "moves", "games_per_s": "games",
         "solves_per_s": "solves", "network_queries_per_s": "network_queries",
         "selfplay_examples_per_s": "selfplay_examples", "solver_examples_per_s": "solver_examples"}


class _Window:
    """The `on_tick` hook that opens the window once the run is warm and stops the run S
    seconds later; `first` / `last` are `TrainingRun.totals()` at its ends."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.first = self.last = None

    def __call__(self, run) -> None:
        now = run.totals()
        if self.first is None:
            stepped = now["step_seconds"].get("selfplay", {}).get("seconds", 0.0) > 0
            if now["steps"] > run.start_step and stepped and now["inference"]:
                self.first = now
        elif now["time"] - self.first["time"] >= self.seconds:
            self.last = now
            run.stop_reason = "bench"


def _share(part: float, whole: float) -> float:
    return part / whole if whole > 0 else 0.0


def figures(first: dict, last: dict) -> dict:
    """The benchmark's figures of the window between two `TrainingRun.totals()` (module doc)."""
    seconds = last["time"] - first["time"]
    count = {k: last["counters"][k] - first["counters"][k] for k in last["counters"]}
    out = {"seconds": seconds}
    out.update({name: count[k] / seconds for name, k in RATES.items()})
    out["learner_steps_per_s"] = (last["steps"] - first["steps"]) / seconds
    waits = {n: (last["wait"][n] - first["wait"].get(n, 0.0), last["spent"][n] - first["spent"].get(n, 0.0))
             for n in last["spent"]}
    out["wait_share"] = {n: _share(w, s) for n, (w, s) in sorted(waits.items())}
    out["learner_wait_share"] = out["wait_share"].get("learner", 0.0)
    out["inference"] = inference_shares(first["inference"], last["inference"], seconds)
    out["search_split"] = {}
    for role, counter in SEARCHES.items():
        now, before = last["step_seconds"].get(role), first["step_seconds"].get(role, {})
        if now is None:
            continue
        d = {k: v - before.get(k, 0.0) for k, v in now.items()}
        total = d["search_seconds"]
        split = {name: d[key] for name, key, _ in SPLIT}
        out["search_split"][role] = {
            "searches": count[counter], "search_seconds": total,
            "ms_per_search": 1000 * _share(total, count[counter]),
            "seconds": split, "shares": {k: _share(v, total) for k, v in split.items()},
            "unaccounted_share": _share(total - sum(split.values()), total),
            "step_seconds": d["seconds"], "wait_inference_seconds": d["wait_inference"]}
    return out


def inference_shares(first: dict, last: dict, seconds: float) -> dict:
    """Batch sizes and busy / idle shares between two `TrainingRun.inference_totals()`."""
    # here, not at the top: the actors package imports JAX
    from actors.batch_sizes import difference, summarize

    if not last:
        return {}
    sizes = summarize(difference(last["batch_sizes"], first.get("batch_sizes", {})))
    out = {"batches": sizes["batches"], "queries": last["queries"] - first.get("queries", 0),
           "mean_batch": sizes["mean"], "p50_batch": sizes["p50"], "p95_batch": sizes["p95"],
           "max_batch": sizes["max"]}
    if "seconds" in last:                # servers with their own clocks (the Ray run)
        # summed server-seconds: the shares are the servers' means
        out.update(_shares(first, last))
        befores = first.get("servers", [])
        out["servers"] = []
        for i, now in enumerate(last.get("servers", [])):
            before = befores[i] if i < len(befores) else {}
            if not now:
                out["servers"].append({})
                continue
            batches = now["batches"] - before.get("batches", 0)
            queries = now["queries"] - before.get("queries", 0)
            out["servers"].append({"batches": batches, "queries": queries,
                                   "mean_batch": _share(queries, batches), **_shares(before, now),
                                   "restarted": now.get("restarts", 0) != before.get("restarts", 0)})
        out["server_restarted"] = any(s.get("restarted") for s in out["servers"])
    else:
        out["busy_share"] = _share(last["busy_seconds"] - first.get("busy_seconds", 0.0), seconds)
        out["idle_share"] = None
    return out


def _shares(first: dict, last: dict) -> dict:
    """busy_share and idle_share of a server's clock (or the servers' summed clocks) between
    two reads."""
    clock = last["seconds"] - first.get("seconds", 0.0)
    return {"busy_share": _share(last["busy_seconds"] - first.get("busy_seconds", 0.0), clock),
            "idle_share": _share(last["idle_seconds"] - first.get("idle_seconds", 0.0), clock)}


def bench_selfplay(config: Config, seconds: float = 60.0, sync: bool = False, out_dir: str | None = None,
                   log: Callable = say, tick_seconds: float = TICK_SECONDS, num_cpus: int | None = None) -> dict:
    """Run the training run of `config` and measure a window of `seconds` (module doc).

    out_dir: the run directory, kept, with bench.json and bench.png (None: a temporary one).
    num_cpus: the CPUs of the local Ray instance a Ray run starts (default: the machine's).
    """
    # here, not at the top: JAX and Ray only when the benchmark runs
    from launch.train import make_run

    config = apply_overrides(config, [f"run.minutes={(WARMUP_LIMIT + seconds) / 60.0}", "run.max_steps=0"])
    window = _Window(seconds)
    load_before = list(os.getloadavg())
    with tempfile.TemporaryDirectory(prefix="sog-bench-") if out_dir is None else nullcontext() as tmp:
        run_dir = Path(tmp) / "run" if out_dir is None else Path(out_dir)
        run = make_run(config, run_dir, sync=sync, log=log, tick_seconds=tick_seconds,
                       hooks={"on_tick": window}, num_cpus=num_cpus)
        try:
            run.run()
            run.finish()
        finally:
            run.close()
    if window.last is None:
        raise UserError(f"the run stopped ({run.stop_reason}) before a {seconds:g} s window "
                        f"{'closed' if window.first else 'opened (it warms up when the learner has stepped)'}")
    result = {"benchmark": "selfplay", "mode": run.mode, "game": config.game,
              "warmup_seconds": window.first["time"] - run.started, **figures(window.first, window.last),
              "load_average": {"before": load_before, "after": list(os.getloadavg())}, "cpus": os.cpu_count()}
    log_report(result, log)
    if out_dir:
        result["run_dir"] = str(run_dir)
        (run_dir / "bench.json").write_text(json.dumps(result, indent=1))
        draw_split(result, run_dir / "bench.png")
    return result


def log_report(r: dict, log: Callable) -> None:
    """The figures for people (stderr)."""
    log(f"{r['game']} ({r['mode']}), {r['seconds']:.1f} s after {r['warmup_seconds']:.1f} s of warm-up: "
        f"{r['searches_per_s']:.2f} searches/s, {r['moves_per_s']:.2f} moves/s, examples/s "
        f"{r['selfplay_examples_per_s']:.2f} self-play + {r['solver_examples_per_s']:.2f} solver, "
        f"{r['learner_steps_per_s']:.2f} learner steps/s (waiting {100 * r['learner_wait_share']:.0f}%)")
    inf = r["inference"]
    if inf:
        idle = "" if inf["idle_share"] is None else f", idle {100 * inf['idle_share']:.0f}%"
        servers = inf.get("servers", [])
        each = ""
        if len(servers) > 1:
            each = "; each server: " + ", ".join(
                f"{s['batches']} of {s['mean_batch']:.1f}, busy {100 * s['busy_share']:.0f}%" if s else "not read"
                for s in servers)
        log(f"inference{f' ({len(servers)} servers, shares their mean)' if len(servers) > 1 else ''}: "
            f"{inf['batches']} batches of {inf['mean_batch']:.1f} rows (p50 {inf['p50_batch']}, "
            f"p95 {inf['p95_batch']}), busy {100 * inf['busy_share']:.0f}%{idle}{each}")
    for role, s in r["search_split"].items():
        parts = ", ".join(f"{label} {100 * s['shares'][name]:.0f}%" for name, _, label in SPLIT)
        log(f"{role}: {s['searches']} searches, {s['ms_per_search']:.1f} ms each: {parts}")


def draw_split(result: dict, path: Path) -> None:
    """A horizontal stacked bar per producer role: the shares of its searches' time."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    split = result["search_split"]
    roles = list(split)
    labels = [f"{r}\n{split[r]['ms_per_search']:.1f} ms/search" for r in roles]
    fig, ax = plt.subplots(figsize=(9, 1.0 + 0.6 * len(roles)))
    left = [0.0] * len(roles)
    for name, _, label in SPLIT:
        widths = [100 * split[r]["shares"][name] for r in roles]
        ax.barh(labels, widths, left=left, label=label)
        left = [a + b for a, b in zip(left, widths)]
    ax.set_xlabel("% of the searches' time")
    ax.set_xlim(0, 100)
    ax.set_title(f"{result['game']} ({result['mode']}): {result['searches_per_s']:.1f} searches/s, "
                 f"{result['learner_steps_per_s']:.1f} learner steps/s", fontsize="medium")
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize="small")
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)


def add_arguments(parser) -> None:
    """`sog bench selfplay`'s options on the `sog bench` parser."""
    parser.add_argument("--config", help="selfplay, network, search (its network for --value fresh): a config "
                        "file or a shipped config name (e.g. leduc); modicum: a two-player blueprint config")
    parser.add_argument("--set", action="append", metavar="KEY=VALUE",
                        help="selfplay, network: override a config value (repeatable), as `sog train --set`")
    parser.add_argument("--seconds", type=float, default=None,
                        help="selfplay: the measured window (default 60); network: the time per batch size (default 1)")
    parser.add_argument("--sync", action="store_true", help="selfplay: the Ray-free run")
    parser.add_argument("--out", help="selfplay: the run directory to keep, with bench.json and bench.png "
                                      "(must not hold a run)")


def run_command(args) -> dict:
    """`sog bench selfplay` from parsed arguments."""
    if not args.config:
        raise UserError("bench selfplay needs --config")
    seconds = 60.0 if args.seconds is None else args.seconds
    if seconds <= 0:
        raise UserError("--seconds must be positive")
    if args.out and Path(args.out).exists() and any(Path(args.out).iterdir()):
        raise UserError(f"--out {args.out} is not empty: give a new folder (a run there would be resumed)")
    try:
        config = load_config(args.config, args.set or [])
    except ConfigError as e:
        raise UserError(str(e)) from None
    return bench_selfplay(config, seconds, args.sync, args.out)
