"""`sog eval --run RUN_DIR --pool POOL.yaml [--every N] [--games G] [--search S,C]`: Elo over
checkpoints, for games whose exploitability cannot be computed (chess, Go).

Every N-th checkpoint of the run (and the newest) plays a gauntlet against a fixed pool of
agents: the `opponents` of the tournament YAML POOL (all its agents when it is a round
robin), with its seed, openings, games per pair (or G), workers, anchor and anchor
rating (the anchor must be a pool agent; default the first). The checkpoint plays as
`sog:RUN_DIR/STEP?s=S&c=C&t=T` (default SoG(10, 1); T the run config's T_prior), named
`stepSTEP`. Each checkpoint's gauntlet
is a tournament of its own in RUN_DIR/elo/stepSTEP (`sog.eval.tournament`: games.jsonl,
the PGN / SGF of every game, its report), so re-running resumes and skips what is done, and
a later run adds only the new checkpoints. One maximum-likelihood Elo fit over all their
games (`sog.eval.elo`, draws as half wins) rates every checkpoint and pool agent, anchored:
RUN_DIR/elo.csv (one row per agent: step (empty for the pool), rating, standard error,
95% interval, games, score) and RUN_DIR/elo.png (rating against learner step with its
interval, the pool agents as dashed lines).
"""
from __future__ import annotations

import csv
import time
from pathlib import Path

from launch.console import UserError, say
from launch.tournament import setup_agents
from sog.eval.elo import EloError, fit_elo
from sog.eval.tournament import TournamentError, parse_config, read_raw, run_tournament
from sog.games import network_family_of

ELO_DIR, ELO_CSV, ELO_PNG = "elo", "elo.csv", "elo.png"
DEFAULT_SEARCH = "10,1"


def _pool(path: str) -> tuple[dict, list[str]]:
    """The pool YAML as a raw tournament mapping, and the pool's agent names."""
    file = Path(path)
    try:
        raw = read_raw(file)
    except TournamentError as e:
        raise UserError(f"pool: {e}") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("agents"), dict) or not raw["agents"]:
        raise UserError(f"{file}: a pool is a tournament YAML with 'game' and 'agents'")
    names = [str(n) for n in (raw.get("opponents") or raw["agents"])]
    return raw, names


def _results(records: list[dict]) -> list[tuple]:
    """(a, b, wins of a, draws, losses of a) per game of tournament records without errors."""
    out = []
    for r in records:
        if "error" not in r:
            v = r["value_a"]
            out.append((r["a"], r["b"], float(v > 1e-9), float(abs(v) <= 1e-9), float(v < -1e-9)))
    return out


def run(args, steps: list[int], game_name: str, prior_temperature: float = 1.0) -> dict:
    """The Elo curve of checkpoints `steps` (the selected ones, oldest first) of a run of `game_name`,
    searching with the run's T_prior `prior_temperature`."""
    from sog.eval.tournament import ResultStore

    t0 = time.perf_counter()
    run_dir = Path(args.run)
    raw, pool = _pool(args.pool)
    if args.games is not None and args.games < 1:
        raise UserError("--games must be at least 1")
    search = (args.search or [DEFAULT_SEARCH])
    if len(search) != 1:
        raise UserError("--pool rates one SoG(S, C) setting: give one --search")
    try:
        s, c = search[0].split(",")
        spec_params = f"s={int(s)}&c={float(c):g}&t={prior_temperature:g}"
    except ValueError:
        raise UserError(f"bad --search {search[0]!r}: expected S,C") from None
    missing = [n for n in pool if n not in raw["agents"]]
    if missing:
        raise UserError(f"{args.pool}: opponent {missing[0]!r} is not one of its agents")
    names = {f"step{step}": step for step in steps}
    if set(names) & set(pool):
        raise UserError(f"{args.pool}: rename the pool agent(s) {', '.join(sorted(set(names) & set(pool)))}: "
                        "the checkpoints play under those names")
    anchor = str(raw.get("anchor") or pool[0])
    if anchor not in pool:
        raise UserError(f"{args.pool}: the anchor {anchor!r} must be one of the pool's agents ({', '.join(pool)})")
    setup_agents()
    records = []
    for name, step in names.items():
        config = {**raw, "agents": {**{n: raw["agents"][n] for n in pool},
                                    name: f"sog:{(run_dir / str(step)).absolute()}?{spec_params}"},
                  "mode": "gauntlet", "opponents": pool, "anchor": anchor}
        if args.games is not None:
            config["games_per_pair"] = args.games
        config.pop("out", None)
        try:
            cfg = parse_config(config, str(args.pool))
            if cfg.game != game_name and network_family_of(cfg.game) != network_family_of(game_name):
                raise UserError(f"{args.pool} is a pool for {cfg.game}; the run's checkpoints are {game_name}")
            say(f"checkpoint {step}: {len(pool)} pool agent(s) x {cfg.games_per_pair} games")
            out = run_dir / ELO_DIR / name
            run_tournament(cfg, out, setup=setup_agents)
        except TournamentError as e:
            raise UserError(str(e)) from None
        store = ResultStore(out, cfg)
        records += list(store.load().values())
    try:
        fit = fit_elo(_results(records), anchor=anchor, anchor_rating=float(raw.get("anchor_rating") or 0.0))
    except EloError as e:
        raise UserError(f"Elo over checkpoints: {e}") from None
    rows = [{"agent": n, "step": names.get(n, ""),
             "rating": fit.ratings[n], "stderr": fit.stderr[n], "ci_low": fit.ci95[n][0],
             "ci_high": fit.ci95[n][1], "games": fit.games[n], "score": fit.score[n]} for n in fit.names]
    csv_path, png_path = run_dir / ELO_CSV, run_dir / ELO_PNG
    with open(csv_path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    plot(rows, png_path, f"{game_name}: {run_dir.name}, SoG({search[0]}) against the pool (anchor {anchor} = "
                         f"{fit.anchor_rating:g})")
    for r in rows:
        say(f"{r['agent']:>16}: {r['rating']:7.0f}  [{r['ci_low']:.0f}, {r['ci_high']:.0f}]  "
            f"{r['score']:g}/{r['games']:g}")
    return {"run": str(run_dir), "game": game_name, "pool": pool, "anchor": anchor, "search": search[0],
            "selected": steps, "elo": rows, "csv": str(csv_path), "png": str(png_path),
            "tournaments": str(run_dir / ELO_DIR), "seconds": time.perf_counter() - t0}


def plot(rows: list[dict], path: Path, title: str) -> None:
    """Rating against learner step with 95% intervals; the pool agents as dashed lines."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    curve = sorted((r for r in rows if r["step"] != ""), key=lambda r: int(r["step"]))
    fig, ax = plt.subplots(figsize=(7, 4.5))
    x = [int(r["step"]) for r in curve]
    y = [r["rating"] for r in curve]
    ax.errorbar(x, y, yerr=[[r["rating"] - r["ci_low"] for r in curve], [r["ci_high"] - r["rating"] for r in curve]],
                marker="o", capsize=4, label="checkpoint (95% interval)")
    for i, r in enumerate(r for r in rows if r["step"] == ""):
        ax.axhline(r["rating"], linestyle="--", lw=1, color=f"C{i + 1}")
        ax.text(x[0] if x else 0, r["rating"], f" {r['agent']}", va="bottom", color=f"C{i + 1}")
    ax.set_xlabel("learner step")
    ax.set_ylabel("Elo")
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
