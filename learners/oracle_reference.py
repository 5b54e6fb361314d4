"""The exact-value reference of an evaluated SoG(s, c): the same agent with the oracle as value function.

A trained CVPN can at best match the exact value function, so each evaluated
setting's curve is drawn against SoG(s, c) with the exact oracle: the same
search settings and seeds as the evaluation (`sog.eval.search_policy`), the
oracle as `sog exploitability --agent sog --value oracle` builds it
(`ORACLE_ITERATIONS` warm-started CFR+ iterations per call, no tolerance). Each
seed searches with a fresh oracle (the warm start does not carry from one seed's
searches to the next), so a seed's figure is a function of the seed alone: it is
saved as it finishes and reused by a computation that was stopped (`reference`),
and with one seed the figure equals that command's for the same settings (with
more, that command's single oracle carries its warm start across the seeds).

Those values are not exact, and SoG(s, c) does not play the same with exact
ones. `run.oracle_tolerance` (`sog eval --oracle-tolerance`) T > 0 makes each
call iterate on until its gap is at most T (game units; the oracle's
`tolerance`). Leduc, SoG(10,1), alternating updates, seeds 0 and 1: 425.0 mbb/h
at 50 iterations a call (mean gap 121 mbb a call over 8 seeds), 471.8 at T =
0.01 (gap 5.1 mbb), 530.2 at T = 0.002 (gap 1.1 mbb, 854 iterations a call),
535.2 at T = 0.0005 (gap 0.37 mbb, 2,010 iterations a call): the figure rises
as the values approach exact and settles near 530-535, so the default reference
is well below SoG(s, c) with exact values (8 seeds: 390.2 at 50 iterations, 556.7
at T = 0.002): the warm start's partly converged values, carried from call to
call, play better than exact ones. Over 2 seeds the figure is far from its
8-seed value (Kuhn, SoG(10,1), T = 0.002: 80.2 against 94.7), so a curve is
only compared with a reference over the same seeds, and eval.png names the
seeds of each line (`launch.evaluate.plot`).

It is cached in RUN_DIR/oracle_eval.json (`load` / `save`, written atomically),
keyed by `key` (game, every search setting, seeds, oracle iterations and
tolerance), so a resumed run or a later `sog eval` reuses it and a change of
any of them computes a new one. A value is a row: min_mbb, mean_mbb, max_mbb
(1000 x game units: mbb per hand in poker) and seconds. `save` also adds the
rows to one file shared by every run on the machine
(`$SOG_CACHE_DIR/oracle_references.json`, by default under `$XDG_CACHE_HOME`
or `~/.cache`, `sog/`; `SOG_CACHE_DIR=` empty: none), and `load` with the game
reads that game's rows from it: a reference is computed once per machine, not
once per run (Leduc's SoG(10,1) at T = 0.002 is 15 CPU minutes for 2 seeds, and
the next run of the config used to compute it again beside its self-play). Each row
names the version of the library's code that computed it (`code_digest`: the
sources under `sog/`, which the references are a function of), and the shared
file gives and takes only rows of the running version, so a change to a game
or the search cannot hand a run a reference of the old code.

A training run computes the references it lacks in `Background`: one spawned
process at the lowest OS priority (nice `NICENESS`), beside the run rather
than inside its evaluations, which ends with the run's process however that ends
(`end_with_parent`: a `kill -9` of the run leaves no process computing). The oracle costs far more than the evaluation
itself (SoG(10,1) on the 2-core configs: 80 CPU s a seed on Liar's Dice, 300 on
Scotland Yard, several times the evaluation with the network), and computed
inside the first evaluation it took that time from self-play and the learner
at the start of every run (the whole loop, with `--sync`). In the background,
at nice 19 against their 0, it gets about 1.5% of a core they keep busy and
whatever they leave idle (with `--sync`, the second core of two); the run
attaches a reference to the evaluations logged after it arrives, and one still
missing when the run ends is left to `sog eval`, which computes it the same way.
"""
from __future__ import annotations

import ctypes
import dataclasses
import functools
import hashlib
import json
import multiprocessing
import os
import signal
import sys
import threading
import time
from pathlib import Path

import sog
from sog.eval.search_policy import search_policy
from sog.files import atomic_write
from sog.games import load_game
from sog.games.api import Game
from sog.process import lower_priority
from sog.search.full_tree import exploitability
from sog.search.oracle import ExactValueFunction
from sog.search.resolve import ContinualResolver
from sog.search.settings import SearchSettings

FILE = "oracle_eval.json"
SEEDS_FILE = "oracle_seeds.json"          # each seed's figure, saved as it finishes (`reference`)
SHARED_FILE = "oracle_references.json"    # in the machine's cache folder (`shared_path`)
ORACLE_ITERATIONS = 50          # `sog exploitability --oracle-iterations`' default
NICENESS = 19                   # of the `Background` process: it runs on what the run leaves idle
PR_SET_PDEATHSIG = 1            # prctl's option: the signal this process gets when its parent ends
PARENT_POLL_SECONDS = 1.0       # where there is no prctl: how often the process looks for its parent


def key(game: Game, settings: SearchSettings, seeds: int, tolerance: float = 0.0) -> str:
    """The cache key of one reference (a JSON string). `value_cache` "auto" leaves the
    warm-started oracle uncached (its `cacheable` is False), so it is left out of the key: caches written before
    that setting existed still match; so is a `tolerance` of 0 (none)."""
    search = dataclasses.asdict(settings)
    if search.get("value_cache") == "auto":
        del search["value_cache"]
    oracle = {"oracle_tolerance": float(tolerance)} if tolerance else {}
    return json.dumps({"game": game.spec.name, "search": search, "seeds": int(seeds),
                       "oracle_iterations": ORACLE_ITERATIONS, **oracle}, sort_keys=True)


def seed_key(game: Game, settings: SearchSettings, seed: int, tolerance: float = 0.0) -> str:
    """The cache key of one seed's figure (`key` with the seed in place of the seed count)."""
    k = json.loads(key(game, settings, 1, tolerance))
    del k["seeds"]
    return json.dumps({**k, "seed": int(seed)}, sort_keys=True)


def oracle_exploitability(game: Game, settings: SearchSettings, seeds: int, tolerance: float = 0.0,
                          done: dict | None = None, on_seed=None, progress=None) -> dict:
    """{min_mbb, mean_mbb, max_mbb, seconds, code} of SoG(s, c) with the exact oracle over `seeds`
    seeds (each call iterating on until its gap is at most `tolerance` when > 0); code: the
    `code_digest` of the library that computed it. Each seed searches with a fresh oracle, so a
    seed's figure is a function of the seed alone: `done` ({seed: {mbb, seconds}}) holds seeds
    computed before (reused), `on_seed(seed, row)` is called as each new one finishes (to save it),
    `progress(seed, k)` after the k-th search of a seed (`sog.eval.search_policy`)."""
    rows = dict(done or {})
    for seed in range(seeds):
        if seed in rows:
            continue
        t0 = time.perf_counter()
        oracle = ExactValueFunction(game, iterations=ORACLE_ITERATIONS, max_iterations=10_000,
                                    tolerance=tolerance or None)
        cb = None if progress is None else functools.partial(progress, seed)
        policy = search_policy(game, ContinualResolver(game, oracle, settings), seed, cb)
        rows[seed] = {"mbb": 1000 * exploitability(game, policy), "seconds": time.perf_counter() - t0,
                      "code": code_digest()}
        if on_seed is not None:
            on_seed(seed, rows[seed])
    values = [rows[seed]["mbb"] for seed in range(seeds)]
    return {"min_mbb": min(values), "mean_mbb": sum(values) / seeds, "max_mbb": max(values),
            "seconds": sum(rows[seed]["seconds"] for seed in range(seeds)), "code": code_digest()}


def load(run_dir: str | Path, game: Game | None = None) -> dict:
    """{key: row} cached in the run directory ({} when there is no readable cache), and, given
    `game`, that game's rows of the machine's shared file (the run directory's win)."""
    own = _read(Path(run_dir) / FILE)
    if game is None:
        return own
    shared = {k: row for k, row in _shared().items() if json.loads(k).get("game") == game.spec.name}
    return {**shared, **own}


def save(run_dir: str | Path, references: dict) -> None:
    """Write {key: row} to the run directory's cache (atomically), and add the rows this version of
    the code computed to the machine's shared file (best effort: a folder that cannot be written is
    passed over)."""
    text = json.dumps(references, indent=1, sort_keys=True)
    atomic_write(Path(run_dir) / FILE, lambda f: f.write(text.encode()))
    path, shared = shared_path(), _shared()
    new = {k: row for k, row in references.items() if _current(row) and k not in shared}
    if path is None or not new:
        return
    text = json.dumps({**shared, **new}, indent=1, sort_keys=True)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, lambda f: f.write(text.encode()))
    except OSError:
        return


def shared_path() -> Path | None:
    """The machine's shared file of references: in `$SOG_CACHE_DIR`, else `$XDG_CACHE_HOME/sog`,
    else `~/.cache/sog`; None when `SOG_CACHE_DIR` is set empty (no sharing)."""
    folder = os.environ.get("SOG_CACHE_DIR")
    if folder is None:
        folder = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "sog"
    return Path(folder) / SHARED_FILE if folder else None


@functools.cache
def code_digest() -> str:
    """sha256 of the library's sources (every .py file under `sog/`, with its path)."""
    root = Path(sog.__file__).parent
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def _shared() -> dict:
    """{key: row} of the shared file's rows of this version of the code ({} if it is unreadable)."""
    path = shared_path()
    return {k: row for k, row in (_read(path) if path is not None else {}).items() if _current(row)}


def _current(row) -> bool:
    """Whether a reference row was computed by this version of the code (rows cached before rows
    carried their `code` were not, as far as anyone can tell)."""
    return isinstance(row, dict) and row.get("code") == code_digest()


def _read(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def reference(game: Game, settings: SearchSettings, seeds: int, references: dict, tolerance: float = 0.0,
              run_dir: str | Path | None = None, progress=None) -> dict:
    """The reference row of (settings, seeds, tolerance): from `references` ({key: row}, updated
    in place) or computed now; with `run_dir`, each seed's figure is saved to RUN_DIR/`SEEDS_FILE`
    as it finishes and the seeds found there (of this version of the code) are reused, so a
    stopped computation keeps what it finished. `progress(seed, k)`: see `oracle_exploitability`."""
    k = key(game, settings, seeds, tolerance)
    if k in references:
        return references[k]
    path = None if run_dir is None else Path(run_dir) / SEEDS_FILE
    saved = {} if path is None else _read(path)
    done = {seed: row for seed in range(seeds)
            if _current(row := saved.get(seed_key(game, settings, seed, tolerance)))}

    def on_seed(seed, row):
        saved[seed_key(game, settings, seed, tolerance)] = row
        text = json.dumps(saved, indent=1, sort_keys=True)
        atomic_write(path, lambda f: f.write(text.encode()))
    references[k] = oracle_exploitability(game, settings, seeds, tolerance, done,
                                          None if path is None else on_seed, progress)
    return references[k]


def end_with_parent(parent: int) -> None:
    """End this process when `parent` (its parent's pid) ends, however it ends (a `kill -9` of the
    run included): on Linux the kernel kills it (PR_SET_PDEATHSIG); elsewhere a thread looks
    every `PARENT_POLL_SECONDS`."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:                  # it ended before the line above
            os._exit(1)
        return

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


def _start_worker(niceness: int, parent: int) -> None:
    """The start of the reference process: Ctrl-C is the run's (it ends the process with `stop`),
    the lowest priority, and an end with the run's process."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    lower_priority(niceness)
    end_with_parent(parent)


def _compute(game_name: str, settings: SearchSettings, seeds: int, tolerance: float) -> dict:
    return oracle_exploitability(load_game(game_name), settings, seeds, tolerance)


class Background:
    """The references of SoG(s, c) for `searches` (`SearchSettings`), `seeds` and the oracle's
    `tolerance` that `references` ({key: row}) lacks, computed one after the other in a spawned
    process at nice `NICENESS` (see module doc); none is started when nothing is missing.

    settings: {key: settings} of the references it computes; missing: the keys of those not
    (yet) computed; errors: {key: text} of those that failed.
    """

    def __init__(self, game: Game, searches: list[SearchSettings], seeds: int, references: dict,
                 tolerance: float = 0.0):
        self.settings = {k: s for s in searches if (k := key(game, s, seeds, tolerance)) not in references}
        self.missing = set(self.settings)
        self.errors: dict[str, str] = {}
        self.jobs: dict = {}
        self.pool = None
        if self.settings:
            # spawn: a fork would copy the locks of the caller's JAX and Ray threads
            self.pool = multiprocessing.get_context("spawn").Pool(1, _start_worker, (NICENESS, os.getpid()))
            self.jobs = {k: self.pool.apply_async(_compute, (game.spec.name, s, seeds, tolerance))
                         for k, s in self.settings.items()}

    def poll(self) -> dict:
        """{key: row} of the references finished since the last call (a failed one goes to `errors`)."""
        out = {}
        for k, job in list(self.jobs.items()):
            if job.ready():
                del self.jobs[k]
                try:
                    out[k] = job.get()
                except Exception as e:  # noqa: BLE001 - reported by the caller; the run goes on
                    self.errors[k] = f"{type(e).__name__}: {e}"
                else:
                    self.missing.discard(k)
        return out

    def running(self) -> bool:
        return bool(self.jobs)

    def stop(self) -> None:
        """End the process (what did not finish stays in `missing`)."""
        if self.pool is not None:
            self.pool.terminate()
            self.pool.join()
            self.pool = None
        self.jobs.clear()
