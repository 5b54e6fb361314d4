"""A tournament's report.

Report (`make_report`): per pair, the units are deals (the mean of the two
seatings) with duplicate deals, games otherwise; the mean outcome of the first
agent with a normal 95% interval, in game units and, for poker, in mbb/hand
(1000 x chips), with and without AIVAT (`sog.eval.aivat`, value function fixed
before play), and the variance reduction factor; per seat, the first agent's mean
outcome and win rate (Wilson 95% interval) over the games it played in that seat; wins /
draws / losses per unit (sign of the outcome) feed the Elo fit (`sog.eval.elo`, draws as half
wins, anchored). Games recorded with an `error` (an agent failed: see
`sog.eval.tournament.play`) count in none of these: they are listed under
`errors` and counted per pair. `write_report` writes report.json, head_to_head.csv,
elo.csv, report.txt and tournament.png into the output directory.
"""
from __future__ import annotations

import csv
import json
import math
import os
from pathlib import Path

import numpy as np

from sog.eval.aivat import (
    summary,
)
from sog.eval.elo import EloError, fit_elo
from sog.eval.tournament.config import TournamentConfig, pairs
from sog.games import load_game
from sog.games.poker import MBB_PER_CHIP, is_poker


# ---------------------------------------------------------------- the report
def _units(cfg: TournamentConfig, recs: list[dict], key: str) -> list[float]:
    """Per-unit values of the first agent: deal means (duplicate) or games."""
    if not cfg.duplicate:
        return [r[key] for r in recs]
    by_deal: dict[int, dict[int, float]] = {}
    for r in recs:
        by_deal.setdefault(r["deal"], {})[r["seat_a"]] = r[key]
    return [(d[0] + d[1]) / 2 for _, d in sorted(by_deal.items()) if len(d) == 2]


def make_report(cfg: TournamentConfig, records: list[dict]) -> dict:
    """The head-to-head, Elo and AIVAT report of a tournament's records (see module docstring)."""

    game = load_game(cfg.game)
    poker = is_poker(game)
    scale = MBB_PER_CHIP if poker else 1.0
    unit_name = "mbb/hand" if poker else "return"
    by_pair: dict[tuple[str, str], list[dict]] = {}
    failed: dict[tuple[str, str], list[dict]] = {}
    for r in records:
        (failed if "error" in r else by_pair).setdefault((r["a"], r["b"]), []).append(r)
    rows, elo_input = [], []
    for a, b in pairs(cfg):
        recs = by_pair.get((a, b), [])
        raw = _units(cfg, recs, "value_a")
        row = {"a": a, "b": b, "games": len(recs), "units": len(raw), "raw": summary([scale * v for v in raw]),
               "errors": len(failed.get((a, b), []))}
        w = sum(v > 1e-9 for v in raw)
        lo = sum(v < -1e-9 for v in raw)
        row.update(wins=w, draws=len(raw) - w - lo, losses=lo)
        for seat in (0, 1):
            vals = [r["value_a"] for r in recs if r["seat_a"] == seat]
            row[f"seat{seat}_mean"] = scale * float(np.mean(vals)) if vals else float("nan")
            wins = sum(v > 1e-9 for v in vals)
            row[f"seat{seat}"] = {**summary([scale * v for v in vals]), "wins": wins,
                                  "win_rate": wins / len(vals) if vals else float("nan"),
                                  "win_rate_ci95": wilson_interval(wins, len(vals))}
        if cfg.aivat and all("aivat_a" in r for r in recs):
            est = _units(cfg, recs, "aivat_a")
            row["aivat"] = summary([scale * v for v in est])
            var_r, var_a = row["raw"]["var"], row["aivat"]["var"]
            row["variance_reduction"] = var_r / var_a if len(est) > 1 and var_a > 0 else None
            row["known"] = {name: bool(all(r["known"][r["seat_a"] if name == a else 1 - r["seat_a"]]
                                           for r in recs)) for name in (a, b)} if recs else {}
        rows.append(row)
        if raw:
            elo_input.append((a, b, w, len(raw) - w - lo, lo))
    names = [n for n in cfg.names if any(n in (x[0], x[1]) for x in elo_input)]
    elo = None
    if elo_input:
        try:
            anchor = cfg.anchor if cfg.anchor in names else names[0]
            elo = fit_elo(elo_input, anchor=anchor, anchor_rating=cfg.anchor_rating, names=names).to_dict()
        except EloError as e:
            elo = {"error": str(e)}
    matrix = {x: {y: None for y in cfg.names} for x in cfg.names}
    for row in rows:
        if row["units"]:
            m, (l, h) = row["raw"]["mean"], row["raw"]["ci95"]
            matrix[row["a"]][row["b"]] = {"mean": m, "ci95": [l, h], "units": row["units"]}
            matrix[row["b"]][row["a"]] = {"mean": -m, "ci95": [-h, -l], "units": row["units"]}
            if "aivat" in row:
                am, (al, ah) = row["aivat"]["mean"], row["aivat"]["ci95"]
                matrix[row["a"]][row["b"]].update(aivat_mean=am, aivat_ci95=[al, ah])
                matrix[row["b"]][row["a"]].update(aivat_mean=-am, aivat_ci95=[-ah, -al])
    errors = [{"id": r["id"], "error": r["error"]} for recs in failed.values() for r in recs]
    reduction = None
    with_aivat = [r for r in rows if "aivat" in r and r["units"] > 1]
    if with_aivat:
        num = sum(r["raw"]["var"] * r["units"] for r in with_aivat)
        den = sum(r["aivat"]["var"] * r["units"] for r in with_aivat)
        reduction = num / den if den > 0 else None
    return _finite({"game": cfg.game, "mode": cfg.mode, "agents": dict(cfg.agents), "opponents": list(cfg.opponents),
            "games_per_pair": cfg.games_per_pair, "duplicate": cfg.duplicate, "seed": cfg.seed,
            "unit": unit_name, "scale": scale, "games": len(records) - len(errors),
            "errors": errors,
            "aivat": ({"value": cfg.aivat_value, "variance_reduction": reduction} if cfg.aivat else None),
            "pairs": rows, "matrix": matrix, "elo": elo})


def wilson_interval(k: int, n: int) -> list[float]:
    """The 95% Wilson score interval of a success rate k / n (sound near 0 and 1, where the
    normal interval collapses); [nan, nan] for n = 0."""
    if n == 0:
        return [float("nan")] * 2
    z, p = 1.959963984540054, k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return [centre - half, centre + half]


def _finite(x):
    """x with every NaN / infinite float replaced by None (strict JSON)."""
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_finite(v) for v in x]
    if isinstance(x, (float, np.floating)):
        return float(x) if math.isfinite(x) else None
    if isinstance(x, np.integer):
        return int(x)
    return x


def _pm(s: dict | None, digits: int = 1) -> str:
    if not s or not s.get("n"):
        return "-"
    half = (s["ci95"][1] - s["ci95"][0]) / 2
    return f"{s['mean']:+.{digits}f} ± {half:.{digits}f}"


def format_report(report: dict) -> str:
    """The human tables of a report."""
    names = list(report["agents"])
    unit = report["unit"]
    digits = 0 if unit == "mbb/hand" else 3
    lines = [(f"{report['game']}: {report['mode'].replace('_', ' ')}, {report['games']} games"
             f"{' (duplicate deals)' if report['duplicate'] else ''}"),
             f"head to head: mean {unit} of the row agent against the column agent (95% interval)"]
    width = max(12, max(len(n) for n in names) + 2)
    cell = 20
    lines.append(" " * width + "".join(f"{n:>{cell}}" for n in names))
    for x in names:
        entries = []
        for y in names:
            m = report["matrix"][x][y]
            entries.append("." if x == y else "-" if m is None else
                           f"{m['mean']:+.{digits}f} ± {(m['ci95'][1] - m['ci95'][0]) / 2:.{digits}f}")
        lines.append(f"{x:<{width}}" + "".join(f"{e:>{cell}}" for e in entries))
    errors = report.get("errors") or []
    if errors:
        lines.append(f"{len(errors)} game(s) ended with an error and are not counted (played again "
                     f"on a re-run); the first: {errors[0]['id']}: {errors[0]['error']}")
    lines.append("")
    lines.append(f"by seat: the row agent's mean {unit} (95% interval) and win rate (95% Wilson interval) "
                 f"as player 0 and as player 1")
    for r in report["pairs"]:
        cells = []
        for seat in (0, 1):
            x = r.get(f"seat{seat}")
            if not x or not x["n"]:
                cells.append(f"{'-':>40}")
                continue
            lo, hi = x["win_rate_ci95"]
            cells.append(f"{_pm(x, digits):>18}  {100 * x['win_rate']:5.1f}% [{100 * lo:.0f}, {100 * hi:.0f}]")
        lines.append(f"{r['a'] + ' vs ' + r['b']:<{2 * width}}" + "  ".join(f"{c:>40}" for c in cells))
    elo = report.get("elo")
    if elo and "error" not in elo:
        lines.append("")
        lines.append(f"Elo (maximum likelihood, draws as half wins; anchor {elo['anchor']} = "
                     f"{elo['anchor_rating']:g}{'; 1 virtual draw per pair' if elo['prior_draws'] else ''})")
        lines.append(f"{'agent':<{width}}{'rating':>9}{'95% interval':>20}{'score':>12}")
        for a in sorted(elo["agents"], key=lambda r: -r["rating"]):
            lo, hi = a["ci95"]
            interval = f"[{lo:.0f}, {hi:.0f}]"
            score = "{:g}/{:g}".format(a["score"], a["games"])
            lines.append(f"{a['name']:<{width}}{a['rating']:>9.0f}{interval:>20}{score:>12}")
    elif elo:
        lines.append(f"Elo: {elo['error']}")
    if report.get("aivat"):
        lines.append("")
        red = report["aivat"]["variance_reduction"]
        lines.append(f"AIVAT (value function: {report['aivat']['value']}); overall variance reduction "
                     f"{'-' if red is None else f'{red:.2f}x'}")
        lines.append(f"{'pair':<{2 * width}}{'plain ' + unit:>22}{'AIVAT ' + unit:>22}{'reduction':>11}")
        for r in report["pairs"]:
            if "aivat" not in r:
                continue
            vr = r.get("variance_reduction")
            vr_text = "-" if vr is None else f"{vr:.2f}x"
            lines.append(f"{r['a'] + ' vs ' + r['b']:<{2 * width}}{_pm(r['raw'], digits):>22}"
                         f"{_pm(r['aivat'], digits):>22}{vr_text:>11}")
    return "\n".join(lines)


def write_report(out_dir: str | os.PathLike, report: dict) -> dict:
    """report.json, head_to_head.csv, elo.csv, report.txt and tournament.png; returns their paths."""
    out = Path(out_dir)
    paths = {k: str(out / f) for k, f in (("json", "report.json"), ("head_to_head_csv", "head_to_head.csv"),
                                         ("elo_csv", "elo.csv"), ("text", "report.txt"),
                                         ("png", "tournament.png"))}
    report["files"] = paths
    Path(paths["json"]).write_text(json.dumps(report, indent=1, default=float) + "\n")
    with open(paths["head_to_head_csv"], "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["a", "b", "games", "units", "unit", "mean", "ci_low", "ci_high", "wins", "draws", "losses",
                    "aivat_mean", "aivat_ci_low", "aivat_ci_high", "variance_reduction", "errors"])
        for r in report["pairs"]:
            av = r.get("aivat") or {}
            w.writerow([r["a"], r["b"], r["games"], r["units"], report["unit"], r["raw"]["mean"],
                        *r["raw"]["ci95"], r["wins"], r["draws"], r["losses"], av.get("mean", ""),
                        *(av.get("ci95") or ["", ""]), r.get("variance_reduction", ""), r["errors"]])
    with open(paths["elo_csv"], "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["agent", "rating", "stderr", "ci_low", "ci_high", "games", "score", "anchor"])
        elo = report.get("elo") or {}
        for a in elo.get("agents", []):
            w.writerow([a["name"], a["rating"], a["stderr"], *a["ci95"], a["games"], a["score"],
                        a["name"] == elo["anchor"]])
    text = format_report(report)
    Path(paths["text"]).write_text(text + "\n")
    _chart(report, paths["png"])
    return paths


def _chart(report: dict, path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(report["agents"])
    k = len(names)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(6 + 1.2 * k, 1.5 + 0.6 * k + 2))
    elo = report.get("elo") or {}
    if elo.get("agents"):
        rows = sorted(elo["agents"], key=lambda r: r["rating"])
        y = np.arange(len(rows))
        r = np.array([a["rating"] for a in rows])
        lo = np.array([a["ci95"][0] for a in rows])
        hi = np.array([a["ci95"][1] for a in rows])
        ax1.errorbar(r, y, xerr=[r - lo, hi - r], fmt="o", capsize=4)
        ax1.set_yticks(y, [a["name"] for a in rows])
        ax1.axvline(elo["anchor_rating"], color="grey", lw=0.8, ls="--")
        ax1.set_xlabel(f"Elo (anchor {elo['anchor']}), 95% interval")
    else:
        ax1.text(0.5, 0.5, elo.get("error", "no Elo"), ha="center", va="center", wrap=True)
    ax1.set_title("Elo ratings")
    m = np.full((k, k), np.nan)
    cells = [e for row in report["matrix"].values() for e in row.values() if e is not None]
    use_aivat = bool(cells) and all(e.get("aivat_mean") is not None for e in cells)
    for i, x in enumerate(names):
        for j, y_ in enumerate(names):
            e = report["matrix"][x][y_]
            if e is not None:
                m[i, j] = e["aivat_mean"] if use_aivat else e["mean"]
    lim = np.nanmax(np.abs(m)) if np.isfinite(m).any() else 1.0
    ax2.imshow(m, cmap="RdBu", vmin=-lim, vmax=lim)
    ax2.set_xticks(range(k), names, rotation=45, ha="right")
    ax2.set_yticks(range(k), names)
    for i in range(k):
        for j in range(k):
            if np.isfinite(m[i, j]):
                ax2.text(j, i, f"{m[i, j]:+.0f}" if report["unit"] == "mbb/hand" else f"{m[i, j]:+.2f}",
                         ha="center", va="center", fontsize=8,
                         color="white" if abs(m[i, j]) > 0.6 * lim else "black")
    ax2.set_title(f"row vs column, mean {report['unit']}{' (AIVAT)' if use_aivat else ''}")
    fig.suptitle(f"{report['game']} {report['mode'].replace('_', ' ')}")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
