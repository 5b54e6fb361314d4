"""Tournaments between agents: scheduling, parallel resumable play, and the report.

A tournament is described by a `TournamentConfig` (YAML, see `load_config`):

    game: leduc_poker
    agents:                       # name: agent spec (sog.agents.registry)
      cfr: cfr?iterations=1000
      sog_small: sog:runs/leduc?s=10&c=1
      random: random
    mode: round_robin             # or gauntlet: every other agent plays each of `opponents`
    opponents: [cfr]              # gauntlet only: the fixed opponents
    games_per_pair: 200
    seed: 0
    anchor: random                # Elo anchor (default: the first agent), rated anchor_rating (0)
    duplicate: true               # default: true for games with private information
    workers: 2                    # processes (1: play in this process)
    aivat: true                   # default: true for poker games
    aivat_value: equilibrium      # equilibrium (CFR+ world values) or a CVPN checkpoint / run directory
    aivat_iterations: 1000        # CFR+ iterations of the equilibrium value function

Schedule: every pair plays `games_per_pair` games. With duplicate deals the
games come in pairs that share one seed (`sog.eval.match.play_game` seeding:
the same deal and chance events) with the seats exchanged; otherwise seats
alternate. Game k of every pair uses the same seed (common random numbers
across pairs). A game's id is `A|B|k|seat of A`.

Storage (the output directory): `tournament.json` holds the config's
fingerprint (everything that changes what a game means: game, agents, mode,
opponents, seed, duplicate, AIVAT settings); `games.jsonl` holds one JSON line
per finished game, appended and flushed as soon as it ends, so a crash loses
only the games in flight. Re-running resumes: finished ids are skipped (more
`games_per_pair` extends a tournament; fewer reports on the first ones). A
directory whose fingerprint differs raises `TournamentError` before anything
is written.

Report (`make_report`): per pair, the units are deals (the mean of the two
seatings) with duplicate deals, games otherwise; the mean outcome of the first
agent with a normal 95% interval, in game units and, for poker, in mbb/hand
(1000 x chips), with and without AIVAT (`sog.eval.aivat`, value function fixed
before play), and the variance reduction factor; wins / draws / losses per
unit (sign of the outcome) feed the Elo fit (`sog.eval.elo`, draws as half
wins, anchored). `write_report` writes report.json, head_to_head.csv,
elo.csv, report.txt and tournament.png into the output directory.

The `cfr` agent kind (`cfr?iterations=1000&algorithm=cfr+`: the average
policy of CFR on the full public tree, played as a table) is registered by
`register_cfr_agent()`.
"""
from __future__ import annotations

import csv
import dataclasses
import json
import math
import os
import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from sog.eval.aivat import summary
from sog.seeding import derive_seed

__all__ = ["FORMAT", "TournamentConfig", "TournamentError", "fingerprint", "load_config", "make_report",
           "parse_config", "register_cfr_agent", "run_tournament", "schedule", "write_report"]

FORMAT = "sog-tournament/1"
CONFIG_FILE, GAMES_FILE = "tournament.json", "games.jsonl"
MODES = ("round_robin", "gauntlet")
_NAME = re.compile(r"[A-Za-z0-9_.+-]+")


class TournamentError(ValueError):
    """A bad tournament config, or an output directory that belongs to another tournament."""


@dataclasses.dataclass(frozen=True)
class TournamentConfig:
    game: str
    agents: dict
    mode: str = "round_robin"
    opponents: tuple = ()
    games_per_pair: int = 100
    seed: int = 0
    anchor: str | None = None
    anchor_rating: float = 0.0
    duplicate: bool = True
    workers: int = 1
    aivat: bool = False
    aivat_value: str = "equilibrium"
    aivat_iterations: int = 1000
    out: str | None = None

    @property
    def names(self) -> list[str]:
        return list(self.agents)


_FIELDS = {f.name for f in dataclasses.fields(TournamentConfig)}


def _is_poker(game) -> bool:
    return game.spec.name.endswith("_poker")


def parse_config(raw, source: str = "config") -> TournamentConfig:
    """A validated TournamentConfig from a dict (TournamentError naming the problem)."""
    from sog.agents.api import AgentError
    from sog.agents.registry import parse_spec
    from sog.games import UnknownGameError, load_game

    if not isinstance(raw, dict):
        raise TournamentError(f"{source}: a tournament config is a mapping, got {type(raw).__name__}")
    unknown = sorted(set(raw) - _FIELDS)
    if unknown:
        raise TournamentError(f"{source}: unknown key {unknown[0]!r}; known keys: {', '.join(sorted(_FIELDS))}")
    if "game" not in raw or "agents" not in raw:
        raise TournamentError(f"{source}: needs 'game' and 'agents'")
    try:
        game = load_game(str(raw["game"]))
    except UnknownGameError as e:
        raise TournamentError(f"{source}: {e}") from None
    agents = raw["agents"]
    if not isinstance(agents, dict) or len(agents) < 2:
        raise TournamentError(f"{source}: 'agents' must map at least two names to agent specs")
    clean = {}
    for name, spec in agents.items():
        name = str(name)
        if not _NAME.fullmatch(name) or "|" in name:
            raise TournamentError(f"{source}: bad agent name {name!r} (letters, digits, _ . + - only)")
        if not isinstance(spec, str):
            raise TournamentError(f"{source}: agent {name!r}: the spec must be a string, got {spec!r}")
        try:
            parse_spec(spec)
        except AgentError as e:
            raise TournamentError(f"{source}: agent {name!r}: {e}") from None
        clean[name] = spec.strip()

    def get(key, typ, default, check=None, what=""):
        value = raw.get(key, default)
        if value is None:
            return default
        if typ is bool:
            if not isinstance(value, bool):
                raise TournamentError(f"{source}: {key} must be true or false, got {value!r}")
            return value
        try:
            if typ is int and (isinstance(value, bool) or float(value) != int(value)):
                raise ValueError
            value = typ(value)
        except (TypeError, ValueError):
            raise TournamentError(f"{source}: {key} must be {typ.__name__}, got {value!r}") from None
        if check is not None and not check(value):
            raise TournamentError(f"{source}: {key} {what}, got {value!r}")
        return value

    mode = str(raw.get("mode") or "round_robin")
    if mode not in MODES:
        raise TournamentError(f"{source}: mode must be one of {', '.join(MODES)}, got {mode!r}")
    opponents = raw.get("opponents") or []
    if isinstance(opponents, str):
        opponents = [opponents]
    opponents = tuple(str(o) for o in opponents)
    missing = [o for o in opponents if o not in clean]
    if missing:
        raise TournamentError(f"{source}: opponent {missing[0]!r} is not one of the agents")
    if mode == "gauntlet" and not opponents:
        raise TournamentError(f"{source}: a gauntlet needs 'opponents' (names of the fixed opponents)")
    if mode == "gauntlet" and len(opponents) == len(clean):
        raise TournamentError(f"{source}: a gauntlet needs at least one agent that is not a fixed opponent")
    if mode == "round_robin" and opponents:
        raise TournamentError(f"{source}: 'opponents' is for mode: gauntlet")
    anchor = raw.get("anchor")
    if anchor is not None and str(anchor) not in clean:
        raise TournamentError(f"{source}: anchor {anchor!r} is not one of the agents")
    aivat = get("aivat", bool, _is_poker(game))
    value = str(raw.get("aivat_value") or "equilibrium")
    return TournamentConfig(
        game=game.spec.name if "(" not in str(raw["game"]) else str(raw["game"]).strip(), agents=clean, mode=mode,
        opponents=opponents,
        games_per_pair=get("games_per_pair", int, 100, lambda v: v >= 1, "must be at least 1"),
        seed=get("seed", int, 0, lambda v: v >= 0, "must be at least 0"),
        anchor=None if anchor is None else str(anchor),
        anchor_rating=get("anchor_rating", float, 0.0, math.isfinite, "must be finite"),
        duplicate=get("duplicate", bool, not game.spec.perfect_information),
        workers=get("workers", int, 1, lambda v: v >= 1, "must be at least 1"),
        aivat=aivat, aivat_value=value,
        aivat_iterations=get("aivat_iterations", int, 1000, lambda v: v >= 1, "must be at least 1"),
        out=None if raw.get("out") is None else str(raw["out"]))


def load_config(path: str | os.PathLike, overrides: dict | None = None) -> TournamentConfig:
    """The TournamentConfig of a YAML file, with `overrides` ({key: value}) applied."""
    import yaml

    path = Path(path)
    if not path.is_file():
        raise TournamentError(f"no tournament config at {path}")
    try:
        raw = yaml.safe_load(path.read_text())
    except yaml.YAMLError as e:
        raise TournamentError(f"{path}: not valid YAML ({str(e).splitlines()[0]})") from None
    if isinstance(raw, dict):
        raw = {**raw, **{k: v for k, v in (overrides or {}).items() if v is not None}}
    return parse_config(raw, str(path))


def fingerprint(cfg: TournamentConfig) -> dict:
    """What identifies a tournament's games (not games_per_pair, workers, anchor or out)."""
    return {"format": FORMAT, "game": cfg.game, "agents": dict(cfg.agents), "mode": cfg.mode,
            "opponents": list(cfg.opponents), "seed": cfg.seed, "duplicate": cfg.duplicate,
            "aivat": cfg.aivat, "aivat_value": cfg.aivat_value if cfg.aivat else None,
            "aivat_iterations": cfg.aivat_iterations if cfg.aivat and cfg.aivat_value == "equilibrium" else None}


def pairs(cfg: TournamentConfig) -> list[tuple[str, str]]:
    names = cfg.names
    if cfg.mode == "gauntlet":
        return [(a, b) for a in names if a not in cfg.opponents for b in cfg.opponents]
    return [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]


def schedule(cfg: TournamentConfig) -> list[dict]:
    """Every game of the tournament: dict(id, a, b, deal, seat_a, seed), pair by pair."""
    tasks = []
    for a, b in pairs(cfg):
        for g in range(cfg.games_per_pair):
            k, seat = (g // 2, g % 2)
            seed = derive_seed(cfg.seed, k if cfg.duplicate else g)
            deal = k if cfg.duplicate else g
            tasks.append({"id": f"{a}|{b}|{deal}|{seat}", "a": a, "b": b, "deal": deal, "seat_a": seat,
                          "seed": seed})
    return tasks


# ---------------------------------------------------------------- storage
class ResultStore:
    """tournament.json + games.jsonl in an output directory (see the module docstring)."""

    def __init__(self, out_dir: str | os.PathLike, cfg: TournamentConfig):
        self.dir = Path(out_dir)
        self.config_path, self.games_path = self.dir / CONFIG_FILE, self.dir / GAMES_FILE
        self.fp = fingerprint(cfg)
        self.skipped_lines = 0

    def check(self) -> None:
        """TournamentError if the directory holds results of another tournament (writes nothing)."""
        if self.config_path.exists():
            try:
                old = json.loads(self.config_path.read_text())
            except (OSError, ValueError) as e:
                raise TournamentError(f"{self.config_path} is unreadable ({e}); not touching {self.dir}") from None
            if not isinstance(old, dict) or old.get("format") != FORMAT:
                raise TournamentError(f"{self.config_path} is not a {FORMAT} file; not touching {self.dir}")
            diff = [k for k in sorted(set(old) | set(self.fp)) if old.get(k) != self.fp.get(k)]
            if diff:
                raise TournamentError(
                    f"{self.dir} holds results of another tournament (its config differs in "
                    f"{', '.join(diff)}); use another output directory or remove it")
        elif self.games_path.exists():
            raise TournamentError(f"{self.games_path} exists without {CONFIG_FILE}: results of an unknown "
                                  f"tournament; use another output directory")
        elif self.dir.exists() and not self.dir.is_dir():
            raise TournamentError(f"output path {self.dir} is not a directory")

    def open(self) -> None:
        self.check()
        self.dir.mkdir(parents=True, exist_ok=True)
        if not self.config_path.exists():
            tmp = self.config_path.with_suffix(".json.tmp")
            tmp.write_text(json.dumps(self.fp, indent=1) + "\n")
            os.replace(tmp, self.config_path)

    def load(self) -> dict[str, dict]:
        """{game id: record} of the finished games (unparsable lines, e.g. one cut by a crash, skipped)."""
        out = {}
        self.skipped_lines = 0
        if not self.games_path.exists():
            return out
        with open(self.games_path) as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                try:
                    rec = json.loads(line)
                    out[rec["id"]] = rec
                except (ValueError, KeyError, TypeError):
                    self.skipped_lines += 1
        return out

    def append(self, records: Sequence[dict]) -> None:
        if not records:
            return
        needs_newline = False
        if self.games_path.exists() and self.games_path.stat().st_size > 0:
            with open(self.games_path, "rb") as f:
                f.seek(-1, os.SEEK_END)
                needs_newline = f.read(1) != b"\n"
        with open(self.games_path, "a") as f:
            if needs_newline:
                f.write("\n")
            f.writelines(json.dumps(rec) + "\n" for rec in records)
            f.flush()


# ---------------------------------------------------------------- playing (in workers)
_WORKER: dict = {}


def _init_worker(cfg_dict: dict, values_table: dict | None, setup: Callable[[], None] | None) -> None:
    from sog.eval.aivat import WorldValues
    from sog.games import load_game

    _WORKER.clear()
    try:   # an initializer that raises makes a Pool respawn workers forever: fail in _play instead
        if setup is not None:
            setup()
        cfg = TournamentConfig(**cfg_dict)
        _WORKER.update(cfg=cfg, game=load_game(cfg.game), agents={},
                       values=None if values_table is None else WorldValues(values_table, cfg.aivat_value))
    except Exception as e:  # noqa: BLE001 - re-raised by _play with its message
        _WORKER["error"] = e


def _agent(name: str):
    from sog.agents.registry import make_agent
    agents = _WORKER["agents"]
    if name not in agents:
        agents[name] = make_agent(_WORKER["cfg"].agents[name], _WORKER["game"])
    return agents[name]


def _play(task: dict) -> dict:
    from sog.eval.aivat import aivat_estimate, play_recorded

    if "error" in _WORKER:
        raise _WORKER["error"]
    game, values = _WORKER["game"], _WORKER["values"]
    t0 = time.perf_counter()
    a, b = _agent(task["a"]), _agent(task["b"])
    seat = task["seat_a"]
    pair = (a, b) if seat == 0 else (b, a)
    use = values is not None
    rec = play_recorded(game, pair, task["seed"], record=(use, use))
    sign = 1.0 if seat == 0 else -1.0
    out = {**task, "returns": rec["returns"], "value_a": sign * rec["returns"][0], "slots": rec["deal"],
           "actions": len(rec["history"])}
    if use:
        out["aivat_a"] = sign * aivat_estimate(game, rec, values)
        out["known"] = [all(rec["strategies"][j] is not None for j in range(len(rec["history"]))
                            if rec["actors"][j] == p) for p in (0, 1)]
    out["seconds"] = round(time.perf_counter() - t0, 4)
    return out


def run_tournament(cfg: TournamentConfig, out_dir: str | os.PathLike, values: dict | None = None,
                   setup: Callable[[], None] | None = None,
                   progress: Callable[[int, int, int], None] | None = None) -> dict:
    """Play the missing games of `cfg` into `out_dir`, then report (see module docstring).

    values: the AIVAT value table {pub: float [N, N]} (None: no AIVAT); setup: a picklable
    function every worker calls first (agent kinds registration); progress(done, total,
    played now) after every game. Returns the report (also written into out_dir).
    """
    store = ResultStore(out_dir, cfg)
    store.open()
    done = store.load()
    tasks = schedule(cfg)
    todo = [t for t in tasks if t["id"] not in done]
    total = len(tasks)
    count = total - len(todo)
    played = 0
    if progress is not None:
        progress(count, total, played)
    cfg_dict = dataclasses.asdict(cfg)
    cfg_dict["opponents"] = tuple(cfg.opponents)
    if todo:
        if cfg.workers <= 1 or len(todo) == 1:
            _init_worker(cfg_dict, values, setup)
            results = map(_play, todo)
            pool = None
        else:
            import multiprocessing as mp
            pool = mp.get_context("spawn").Pool(min(cfg.workers, len(todo)), initializer=_init_worker,
                                                initargs=(cfg_dict, values, setup))
            results = pool.imap_unordered(_play, todo, chunksize=1)
        try:
            for rec in results:
                store.append([rec])
                done[rec["id"]] = rec
                count += 1
                played += 1
                if progress is not None:
                    progress(count, total, played)
        finally:
            if pool is not None:
                pool.terminate()
                pool.join()
    records = [done[t["id"]] for t in tasks if t["id"] in done]
    report = make_report(cfg, records)
    report["played_now"] = played
    report["skipped_lines"] = store.skipped_lines
    report["output"] = str(Path(out_dir))
    write_report(out_dir, report)
    return report


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
    from sog.eval.elo import EloError, fit_elo
    from sog.games import load_game

    game = load_game(cfg.game)
    poker = _is_poker(game)
    scale = 1000.0 if poker else 1.0
    unit_name = "mbb/hand" if poker else "return"
    by_pair: dict[tuple[str, str], list[dict]] = {}
    for r in records:
        by_pair.setdefault((r["a"], r["b"]), []).append(r)
    rows, elo_input = [], []
    for a, b in pairs(cfg):
        recs = by_pair.get((a, b), [])
        raw = _units(cfg, recs, "value_a")
        row = {"a": a, "b": b, "games": len(recs), "units": len(raw), "raw": summary([scale * v for v in raw])}
        w = sum(v > 1e-9 for v in raw)
        lo = sum(v < -1e-9 for v in raw)
        row.update(wins=w, draws=len(raw) - w - lo, losses=lo)
        for seat in (0, 1):
            vals = [r["value_a"] for r in recs if r["seat_a"] == seat]
            row[f"seat{seat}_mean"] = scale * float(np.mean(vals)) if vals else float("nan")
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
    reduction = None
    with_aivat = [r for r in rows if "aivat" in r and r["units"] > 1]
    if with_aivat:
        num = sum(r["raw"]["var"] * r["units"] for r in with_aivat)
        den = sum(r["aivat"]["var"] * r["units"] for r in with_aivat)
        reduction = num / den if den > 0 else None
    return _finite({"game": cfg.game, "mode": cfg.mode, "agents": dict(cfg.agents), "opponents": list(cfg.opponents),
            "games_per_pair": cfg.games_per_pair, "duplicate": cfg.duplicate, "seed": cfg.seed,
            "unit": unit_name, "scale": scale, "games": len(records),
            "aivat": ({"value": cfg.aivat_value, "variance_reduction": reduction} if cfg.aivat else None),
            "pairs": rows, "matrix": matrix, "elo": elo})


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
                    "aivat_mean", "aivat_ci_low", "aivat_ci_high", "variance_reduction"])
        for r in report["pairs"]:
            av = r.get("aivat") or {}
            w.writerow([r["a"], r["b"], r["games"], r["units"], report["unit"], r["raw"]["mean"],
                        *r["raw"]["ci95"], r["wins"], r["draws"], r["losses"], av.get("mean", ""),
                        *(av.get("ci95") or ["", ""]), r.get("variance_reduction", "")])
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


# ---------------------------------------------------------------- the `cfr` agent kind
def _cfr_agent(game, arg, params):
    from sog.agents.api import AgentError
    from sog.agents.policy_agents import TabularAgent
    from sog.agents.registry import take_params
    from sog.eval.aivat import equilibrium_policy

    if arg is not None:
        raise AgentError(f"agent 'cfr' takes no ':' argument, got {arg!r}")
    p = take_params("cfr", params, {"iterations": int, "algorithm": ("cfr+", "cfr", "dcfr")},
                    minimum={"iterations": 1})
    return TabularAgent(game, equilibrium_policy(game, p.get("iterations", 1000), p.get("algorithm", "cfr+")))


def register_cfr_agent() -> None:
    """Make `cfr?iterations=N&algorithm=cfr+|cfr|dcfr` available to make_agent (idempotent)."""
    from sog.agents.registry import AGENTS, register
    if AGENTS.get("cfr") is not _cfr_agent and "cfr" not in AGENTS:
        register("cfr", _cfr_agent)
