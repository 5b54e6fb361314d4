"""Playing a tournament: parallel, resumable play into an output directory.

Storage (the output directory): `tournament.json` holds the config's
fingerprint (everything that changes what a game means: game, agents, mode,
opponents, seed, duplicate, AIVAT settings); `games.jsonl` holds one JSON line
per finished game, appended and flushed as soon as it ends, so a crash loses
only the games in flight. Hold'em games also go into `hands.log`, one ACPC dealer
log line a hand (`STATE:<hand#>:<betting>:<cards>:<net>|<net>:<name>|<name>`, net
chips, the agents' names by position; `sog.games.holdem.acpc`), hands numbered
in the schedule's order: each record keeps its line, and the file is rewritten
from games.jsonl (atomically) whenever a run ends, so it always matches it. Likewise
chess games go into `games.pgn` and Go games into `games.sgf` (`sog.eval.game_records`),
from the moves every perfect-information game's record keeps (`moves`, the first
`opening_moves` of them the opening's: `sog.eval.openings`). Re-running resumes: finished ids are skipped (more
`games_per_pair` extends a tournament; fewer reports on the first ones). A
directory whose fingerprint differs raises `TournamentError` before anything
is written.

A game that an agent cannot finish (`AgentFailure`: an external engine crashed,
hung or answered an illegal move; `IllegalActionError`: an agent returned an
illegal action) is recorded with its `error` and no result, and the tournament
goes on; the report counts such games apart, and a re-run plays them again.
Both agents are closed after every game (`Agent.close`), so each game starts its
engines afresh.
"""
from __future__ import annotations

import dataclasses
import json
import multiprocessing as mp
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from sog.agents.api import AgentFailure
from sog.agents.registry import make_agent
from sog.eval.aivat import (
    WorldValues,
    aivat_estimate,
    play_recorded,
)
from sog.eval.game_records import RECORD_FORMATS, write_records
from sog.eval.holdem.aivat import CheckdownValues, checkdown_estimate
from sog.eval.holdem.network_aivat import NetworkPathValues
from sog.eval.openings import opening_actions, parse_line
from sog.eval.tournament.config import (
    CHECKDOWN,
    FORMAT,
    TournamentConfig,
    TournamentError,
    fingerprint,
    opening_seed,
    schedule,
)
from sog.eval.tournament.report import make_report, write_report
from sog.games import load_game
from sog.games.holdem import Holdem
from sog.games.holdem.acpc import game_log_line
from sog.games.world import IllegalActionError
from sog.seeding import derive_seed

CONFIG_FILE, GAMES_FILE, HANDS_FILE = "tournament.json", "games.jsonl", "hands.log"
AIVAT_DRAWS = 0xA1FA     # the seed word of the network AIVAT's flop draws


# ---------------------------------------------------------------- storage
class ResultStore:
    """tournament.json + games.jsonl in an output directory (see the module docstring)."""

    def __init__(self, out_dir: str | os.PathLike, cfg: TournamentConfig):
        self.dir = Path(out_dir)
        self.config_path, self.games_path = self.dir / CONFIG_FILE, self.dir / GAMES_FILE
        self.hands_path = self.dir / HANDS_FILE
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


    def write_game_records(self, game, records: Sequence[dict]) -> None:
        """games.pgn (chess), games.sgf (Go), the file of the game's `capabilities.record`: every
        finished game of `records`, in order."""
        record = RECORD_FORMATS.get(game.capabilities.record)
        finished = [rec for rec in records if "moves" in rec and "error" not in rec]
        if record is not None and finished:
            write_records(game, finished, self.dir / record[0], event=self.dir.name)

    def write_hand_log(self, records: Sequence[dict]) -> None:
        """hands.log: the ACPC lines of `records` (those that have one), renumbered 0, 1, ..."""
        lines = [rec["acpc"] for rec in records if "acpc" in rec]
        if not lines:
            return
        tmp = self.hands_path.with_suffix(".log.tmp")
        tmp.write_text("".join(f"STATE:{i}:{line.split(':', 2)[2]}\n" for i, line in enumerate(lines)))
        os.replace(tmp, self.hands_path)


# ---------------------------------------------------------------- playing (in workers)
_WORKER: dict = {}


def _init_worker(cfg_dict: dict, values_table: dict | Callable | None, setup: Callable[[], None] | None) -> None:

    _WORKER.clear()
    try:   # an initializer that raises makes a Pool respawn workers forever: fail in _play instead
        if setup is not None:
            setup()
        cfg = TournamentConfig(**cfg_dict)
        game = load_game(cfg.game)
        if cfg.aivat and cfg.aivat_value == CHECKDOWN:
            values = CheckdownValues(game)
        elif callable(values_table):                 # a CVPN's builder: values along each hand
            values = NetworkPathValues(game, values_table(game))
        else:
            values = None if values_table is None else WorldValues(values_table, cfg.aivat_value)
        _WORKER.update(cfg=cfg, game=game, agents={}, lines=[parse_line(game, o) for o in cfg.openings],
                       values=values)
    except Exception as e:  # noqa: BLE001 - re-raised by _play with its message
        _WORKER["error"] = e


def _agent(name: str):
    agents = _WORKER["agents"]
    if name not in agents:
        agents[name] = make_agent(_WORKER["cfg"].agents[name], _WORKER["game"])
    return agents[name]


def _play(task: dict) -> dict:

    if "error" in _WORKER:
        raise _WORKER["error"]
    game, values = _WORKER["game"], _WORKER["values"]
    t0 = time.perf_counter()
    a, b = _agent(task["a"]), _agent(task["b"])
    seat = task["seat_a"]
    pair = (a, b) if seat == 0 else (b, a)
    use = values is not None
    opening = []
    if "opening" in task:
        cfg, lines, j = _WORKER["cfg"], _WORKER["lines"], task["opening"]
        opening = opening_actions(game, lines[j % len(lines)] if lines else [], cfg.random_opening_moves,
                                  opening_seed(cfg.seed, j))
    try:
        with a, b:                               # every game its own engine processes
            rec = play_recorded(game, pair, task["seed"], record=(use, use), opening=opening)
    except (AgentFailure, IllegalActionError) as e:
        return {**task, "error": f"{type(e).__name__}: {e}", "seconds": round(time.perf_counter() - t0, 4)}
    sign = 1.0 if seat == 0 else -1.0
    out = {**task, "returns": rec["returns"], "value_a": sign * rec["returns"][0], "slots": rec["deal"],
           "actions": len(rec["history"])}
    if game.spec.perfect_information:
        out.update(moves=rec["history"], opening_moves=rec["opening"])
    if isinstance(game, Holdem):
        names = (task["a"], task["b"]) if seat == 0 else (task["b"], task["a"])
        out["acpc"] = game_log_line(game, rec["pubs"][-1], rec["deal"], task["deal"], names)
    if use:
        if isinstance(values, CheckdownValues):
            out["aivat_a"] = sign * checkdown_estimate(game, rec, values).value
        elif isinstance(values, NetworkPathValues):    # its flop draws: a stream of their own
            rng = np.random.default_rng(derive_seed(task["seed"], AIVAT_DRAWS))
            out["aivat_a"] = sign * values.estimate(rec, rng=rng).value
        else:
            out["aivat_a"] = sign * aivat_estimate(game, rec, values)
        out["known"] = [all(rec["strategies"][j] is not None for j in range(len(rec["history"]))
                            if rec["actors"][j] == p) for p in (0, 1)]
    out["seconds"] = round(time.perf_counter() - t0, 4)
    return out


def run_tournament(cfg: TournamentConfig, out_dir: str | os.PathLike, values: dict | None = None,
                   setup: Callable[[], None] | None = None,
                   progress: Callable[[int, int, int], None] | None = None) -> dict:
    """Play the missing games of `cfg` into `out_dir`, then report (see module docstring).

    values: the AIVAT value table {pub: float [N, N]}, or a picklable builder of a CVPN
    (`values(game) -> ValueFunction`) that every worker values its hands with along their
    paths (`sog.eval.holdem.network_aivat`: hold'em too big for tables), or None (no AIVAT,
    or `aivat_value: checkdown`, whose values every worker builds itself); setup: a picklable
    function every worker calls first (agent kinds registration); progress(done, total,
    played now) after every game. Returns the report (also written into out_dir).
    """
    store = ResultStore(out_dir, cfg)
    store.open()
    done = store.load()
    tasks = schedule(cfg)
    todo = [t for t in tasks if t["id"] not in done or "error" in done[t["id"]]]
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
    store.write_hand_log(records)
    store.write_game_records(load_game(cfg.game), records)
    report = make_report(cfg, records)
    report["played_now"] = played
    report["skipped_lines"] = store.skipped_lines
    report["output"] = str(Path(out_dir))
    write_report(out_dir, report)
    return report


