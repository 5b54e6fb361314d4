"""What both training runs share: the learner, counters, metrics, stop rule, checkpoints, progress.

`TrainingRun` is the interface `launch.train.train` talks to; `SyncRun`
(`launch.sync_run`, one process) and `RayRun` (`launch.ray_run`) implement
its hooks: where the replay and queue counters come from, how new weights
reach whatever answers network queries, how an evaluation runs, how the
buffers are saved, and `run()`, the loop itself. Both fold the stats of
every producer step into the counters the same way (`add_stats`, driven by
the roles table `launch.roles`).

The counters in `COUNTERS` are carried across resumes (in the checkpoint's
extra). `totals()` gives the cumulative figures of this invocation (counters,
learner steps, producers' step seconds, wait accounting, inference stats), so a
time window is measured by two snapshots (`launch.bench_selfplay`). Every `tick_seconds` the run writes scalars to tensorboard and
metrics.jsonl (losses, rates, replay and the age of its batches, queue, weight
lag, wait shares, memory, the shares of self-play games resigned and cut at
selfplay.max_moves, of would-be resignations that were wrong, and the workers' latest
resignation threshold), redraws the progress line on stderr and calls
`hooks["on_tick"](run)`.

Evaluations (`learners.metrics.Evaluator.evaluate`, every `run.eval_every`
steps) bring the exploitability rows and diagnostics against exact values of
`run.diagnose_samples` replay examples (`learners.diagnostics`;
`diagnostics_sample` draws them); `record_eval` logs them, each row with its
exact-oracle reference once that is known. The references neither the run directory's
cache nor the machine's shared file (`learners.oracle_reference`; `begin` copies the game's
rows of the latter into the former) holds are computed beside the run, at the
lowest OS priority, from `begin` on (`oracle_reference.Background`; `tick`
collects and caches them, so a resumed run does not recompute them); `draw_eval`
draws RUN_DIR/eval.png with the reference lines (at the end of a run).

The deadline: `run.minutes` after the start the loop stops (`should_stop`);
evaluations may go on until `eval_deadline`, `run.eval_grace` seconds later.
Every evaluation is handed that deadline and gives itself up when it passes it
(`learners.metrics.EvaluationAbandoned`; a Ray run also stops waiting for it
then), as does the reference process; what is given up is only not logged
(eval.csv, the checkpoints, replay and queue are written as without it), and
`report_unfinished` names it in one line with the `sog eval` command that
computes it afterwards.

What goes where. Stderr (`log`, `launch.console.say`) is for a person: one line
naming the run directory and its metric files at the start, the progress line
(redrawn in place on a terminal; into a file or pipe one line per
`launch.console.PROGRESS_SECONDS`), one short line per evaluation (`eval_line`:
step, SoG(s, c)'s mean exploitability over its seeds with their range, and the
exact-oracle reference over the same seeds) at most every EVAL_LINE_SECONDS (a
run that evaluates more often logs the newest evaluation then, and every one
once it is stopping; eval.csv has them all), one line when a reference arrives,
warnings, and `report_unfinished`'s line. The details go to the run directory:
every tick's scalars to metrics.jsonl and tb/ (`tensorboard --logdir RUN_DIR/tb`,
with the `viz` extra: `pip install -e ".[viz]"`), each evaluation's rows to
eval.csv and tb/ and its diagnostics to both as diag/ scalars
(`learners.metrics`), eval.png at the end. The JSON summary `summary()` returns
(`sog train`'s stdout) is the final state, of a size that does not grow with
the run: the figures at the end, the newest evaluation, the checkpoints kept on
disk and the paths of those files.
"""
from __future__ import annotations

import abc
import collections
import contextlib
import fcntl
import math
import os
import shlex
import signal
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Self

import numpy as np

from actors.selfplay import END_STATS
from launch.console import say
from launch.evaluate import PNG_FILE, checkpoint_steps, plot
from launch.roles import ROLES, TIME_STATS, WAIT_STATS, Role
from learners import oracle_reference
from learners.learner import Learner
from learners.metrics import Metrics, read_eval_csv
from sog.config import Config, dump_config, parse_eval_search
from sog.errors import SogError
from sog.games import load_game
from sog.process import rss_mb
from sog.seeding import derive_seed

# counters carried across resumes (in the checkpoint's extra)
COUNTERS = ("games", "searches", "moves", "selfplay_examples", "solves", "random_solves", "solver_examples",
            "queries_pushed", "recursive_pushed", "queries_dropped", "network_queries",
            "actor_failures", "rounds", "evals", "published", *END_STATS)
EVAL_LINE_SECONDS = 30.0  # evaluation lines on stderr: at most one evaluation's per this many seconds
DIAGNOSE_SEED_TAG = 3     # the seed word of the diagnostics' replay samples (producers use 1, 2)


class TrainError(SogError, RuntimeError):
    """The run cannot go on (a producer keeps raising, an actor cannot start), or cannot start
    (its run directory cannot be written, a snapshot to resume from is corrupt)."""


def check_run_dir(run_dir: str | Path) -> None:
    """`TrainError` for a run directory the run could not write, before anything starts: a
    file, a path under a file, a folder (or the nearest existing folder it would be made in)
    without write permission or on a read-only file system."""
    path = Path(run_dir).absolute()
    if path.exists() and not path.is_dir():
        raise TrainError(f"run directory {path} is a file, not a folder")
    existing = next(p for p in (path, *path.parents) if p.exists())
    if not existing.is_dir():
        raise TrainError(f"cannot create run directory {path}: {existing} is a file")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise TrainError(f"run directory {path} is not writable" if existing == path else
                         f"cannot create run directory {path}: {existing} is not writable")


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)   # Ctrl-C; what `kill`, Slurm, Kubernetes, `ray job stop` send


class StopOnSignals:
    """While in it (a context manager), SIGINT and SIGTERM ask `run` to stop rather than raise
    wherever the main thread happens to be (inside an orbax save, or between a learner step that
    donated the old state's buffers and the assignment of the new one, where an exception leaves
    no state to save): the first sets `run.stop_reason` to "interrupted" and logs one line; the
    loop ends at its next check and the run saves its checkpoint, replay and queue, and returns
    its summary, as at `run.minutes`. A second one raises KeyboardInterrupt at once, or, inside a
    `run.critical()` section (a learner step, a checkpoint), at its end. On leaving, the handlers
    in place before are put back."""

    def __init__(self, run: TrainingRun):
        self.run, self._previous = run, {}

    def __enter__(self) -> Self:
        self._previous = {sig: signal.signal(sig, self._handle) for sig in STOP_SIGNALS}
        return self

    def __exit__(self, *exc) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)

    def _handle(self, signum, frame) -> None:
        run, name = self.run, signal.Signals(signum).name
        if run.stop_reason != "interrupted":
            run.stop_reason = "interrupted"
            run.log_line(f"{name}: stopping; saving the checkpoint, replay and queue ({name} again to stop "
                         "at once, without them)")
        elif run.in_critical:
            run.interrupt_pending = True
        else:
            raise KeyboardInterrupt


LOCK_FILE = "run.lock"   # in the run directory: held (flock) by the driver of the run using it


class RunLock:
    """The exclusive lock of a run directory, held by the driver from before it reads or writes
    anything there until `release`: RUN_DIR/run.lock, locked with `fcntl.flock` (the kernel
    releases it when the process ends, however it ends, so a lock left by a killed driver is
    stale at once and taken over) and holding the holder's "pid host start-time" for the
    message of a run refused. Raises `TrainError` when another process holds it."""

    def __init__(self, run_dir: str | Path):
        path = Path(run_dir).absolute() / LOCK_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode(errors="replace").split()
            os.close(fd)
            who = f"pid {holder[0]} on {holder[1]}, started {holder[2]}" if len(holder) >= 3 else "another process"
            raise TrainError(f"run directory {path.parent} is in use by another run ({who}): wait for it "
                             "to end, or use another --run-dir") from None
        self.previous = os.pread(fd, 200, 0).decode(errors="replace").split()   # a stale holder's words
        os.ftruncate(fd, 0)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime())
        os.pwrite(fd, f"{os.getpid()} {socket.gethostname()} {stamp}\n".encode(), 0)
        self.path, self._fd = path, fd

    def release(self) -> None:
        """Unlock, emptying the file (again: nothing)."""
        if self._fd is not None:
            os.ftruncate(self._fd, 0)              # released, not left by a crash
            os.close(self._fd)
            self._fd = None


def _fmt_time(seconds: float) -> str:
    m, s = divmod(int(seconds), 60)
    return f"{m // 60}:{m % 60:02d}:{s:02d}" if m >= 60 else f"{m:02d}:{s:02d}"


def final_row(step: int, version: int, row: dict) -> dict:
    """An evaluated row (`learners.metrics.Evaluator.exploitability`, with its `oracle` row or
    None) as the summary keeps it: step, version, search ('S,C'), seeds, min_mbb, mean_mbb,
    max_mbb, seconds, and oracle_mbb, the exact-oracle reference over the same seeds (None
    while it is being computed); mbb/h."""
    ref = row.get("oracle")
    return {"step": step, "version": version, "search": row["search"], "seeds": row["seeds"],
            "min_mbb": row["min_mbb"], "mean_mbb": row["mean_mbb"], "max_mbb": row["max_mbb"],
            "seconds": row["seconds"], "oracle_mbb": ref["mean_mbb"] if ref else None}


def eval_line(row: dict) -> str:
    """The one line an evaluation's row (`final_row`) gets on stderr."""
    ref = f"exact oracle {row['oracle_mbb']:.1f}" if row["oracle_mbb"] is not None else "exact oracle pending"
    return (f"eval at step {row['step']}: SoG({row['search']}) {row['mean_mbb']:.1f} mbb/h "
            f"({row['seeds']} seeds: {row['min_mbb']:.1f}-{row['max_mbb']:.1f}; {ref})")


class TrainingRun(abc.ABC):
    """What both modes share (see module doc); `run()` is the loop, the other hooks its parts."""

    mode = "?"
    lock: RunLock | None = None          # the run directory's; a subclass may take it earlier

    def __init__(self, config: Config, run_dir: str | Path, log: Callable = say,
                 tick_seconds: float = 5.0, hooks: dict | None = None):
        self.config, self.log = config, log
        self.run_dir = Path(run_dir).absolute()
        if self.lock is None:
            self.lock = RunLock(self.run_dir)
        try:
            self.game = load_game(config.game)
            self.learner = Learner(self.game, config, self.run_dir)
        except BaseException:
            self.lock.release()
            raise
        if self.lock.previous:
            log(f"taking over the lock of {self.run_dir}: pid {self.lock.previous[0]} ended without releasing it")
        self.start_step = self.learner.step_count
        self.counters = {k: int(self.learner.counters.get(k, 0)) for k in COUNTERS}
        self.resign_threshold: float | None = None    # the self-play workers' latest (calibrated) one
        self.metrics: Metrics | None = None            # `begin` opens it
        self.tick_seconds, self.hooks = tick_seconds, dict(hooks or {})
        self.started = time.monotonic()
        self.deadline = self.started + 60.0 * config.run.minutes
        self.eval_deadline = self.deadline + config.run.eval_grace
        self.unfinished: list[int] = []                # steps of evaluations given up at the deadline
        self.reference_jobs: oracle_reference.Background | None = None   # `begin` starts them
        self.stop_reason = None
        self.in_critical = False                       # inside `critical()`
        self.interrupt_pending = False                 # a second stop signal came inside it
        self.last_losses: dict = {}
        self.last_eval: list[dict] = []                # the newest evaluation's rows (`record_eval`)
        self.last_eval_step = -1
        self.checkpoints: list[int] = []
        self.references = oracle_reference.load(self.run_dir, self.game)   # {key: row}: cached and new
        # per-tick accumulators
        self._loss_sums: dict = collections.defaultdict(float)
        self._loss_n = 0
        self._age_sum, self._age_n, self._age_max = 0.0, 0, None   # replay age of the tick's batches
        self._spent = collections.defaultdict(float)    # role -> seconds accounted (busy + waiting)
        self._wait = collections.defaultdict(float)     # role -> of which waiting
        self._totals_spent = collections.defaultdict(float)
        self._totals_wait = collections.defaultdict(float)
        self._step_seconds: dict = collections.defaultdict(lambda: dict.fromkeys(TIME_STATS, 0.0))
        self._tick_at = self.started
        self._tick_snapshot = self._snapshot()
        self._first_snapshot = dict(self._tick_snapshot, time=self.started)
        self._last_line = ""
        self._held_eval: list[str] = []                 # the newest evaluation's lines, not yet logged
        self._eval_logged_at = -math.inf                # when evaluation lines were last logged
        for line in self.learner.skipped:
            log(line)
        if self.learner.resumed:
            log(f"resuming {self.run_dir} at learner step {self.start_step}, weight version "
                f"{self.learner.version}")
            for change in self.learner.config_changes:
                log(f"  config change since the checkpoint: {change}")
        else:
            log(f"new run in {self.run_dir}")

    def begin(self) -> None:
        """Write config.yaml and open the metric sinks (tensorboard, metrics.jsonl): once the
        subclass has restored and checked everything it resumes from, so that a refused
        resume (a corrupt replay or queue snapshot) leaves the run directory as it was."""
        dump_config(self.config, self.run_dir / "config.yaml")
        self.metrics = Metrics(self.run_dir)
        self.log(f"metrics: {self.metrics.jsonl_path}; tensorboard --logdir {self.metrics.tb_path} "
                 f"(the viz extra: pip install -e \".[viz]\")")
        cfg = self.config
        if self.references.keys() - oracle_reference.load(self.run_dir).keys():
            oracle_reference.save(self.run_dir, self.references)      # the shared file's rows it starts with
        if cfg.run.eval_every:
            self.reference_jobs = oracle_reference.Background(
                self.game, parse_eval_search(cfg.run.eval_search, cfg.search), cfg.run.eval_seeds, self.references,
                cfg.run.oracle_tolerance)

    # ------------------------------------------------------------ hooks for subclasses

    @abc.abstractmethod
    def replay_counters(self) -> dict:
        """The replay buffer's counters."""

    @abc.abstractmethod
    def queue_counters(self) -> dict:
        """The query queue's counters."""

    def server_stats(self) -> dict:
        return {}

    def inference_totals(self) -> dict:
        """Cumulative stats of what answers network queries (`BatchingInference.stats` keys:
        batches, queries, busy_seconds, batch_sizes, and with a server idle_seconds, seconds)."""
        return {}

    @abc.abstractmethod
    def save_buffers(self) -> None:
        """Persist the replay buffer and the query queue to the run directory."""

    @abc.abstractmethod
    def run(self) -> None:
        """The loop: learner steps and production until `should_stop()`."""

    def snapshot_path(self, role: Role) -> Path:
        """The file in the run directory `role` is saved to and restored from."""
        return self.run_dir / role.snapshot

    # ------------------------------------------------------------ shared logic

    @contextlib.contextmanager
    def critical(self) -> Iterator[None]:
        """A section a second stop signal does not cut (`StopOnSignals`): it raises KeyboardInterrupt
        at the section's end instead."""
        outer, self.in_critical = self.in_critical, True
        try:
            yield
        finally:
            self.in_critical = outer
        if not outer and self.interrupt_pending:
            self.interrupt_pending = False
            raise KeyboardInterrupt

    def should_stop(self) -> bool:
        if self.stop_reason:
            return True
        max_steps = self.config.run.max_steps
        if max_steps and self.learner.step_count >= max_steps:
            self.stop_reason = "max_steps"
        elif time.monotonic() >= self.deadline:
            self.stop_reason = "minutes"
        return self.stop_reason is not None

    def add_stats(self, role: Role, stats: dict) -> None:
        """Fold one step's stats of a producer of `role` into the counters and the wait accounting."""
        for key, counter in role.stats.items():
            self.counters[counter] += int(stats.get(key, 0))
        if "resign_threshold" in stats:
            self.resign_threshold = float(stats["resign_threshold"])
        seconds = float(stats.get("seconds", 0.0))
        sums = self._step_seconds[role.name]
        for key in TIME_STATS:
            sums[key] += float(stats.get(key, 0.0))
        self._spent[role.name] += seconds
        self._wait[role.name] += sum(float(stats.get(k, 0.0)) for k in WAIT_STATS)
        for share, key in role.extra_waits.items():
            self._wait[share] += float(stats.get(key, 0.0))
            self._spent[share] += seconds

    def train_step(self, batch: dict) -> dict:
        """One learner step on a replay batch (`actors.examples` arrays); counts the batch's age
        (the learner's weight version minus the examples' versions) for the tick's scalars."""
        age = self.learner.version - np.asarray(batch["version"])
        self._age_sum += float(age.sum())
        self._age_n += age.size
        top = int(age.max())
        self._age_max = top if self._age_max is None else max(self._age_max, top)
        with self.critical():          # the step donates the state's buffers to the new state
            return self.learner.step(batch)

    def diagnostics_sample(self) -> int:
        """The seed of the diagnostics' uniform replay sample at the current step."""
        return derive_seed(self.config.run.seed, DIAGNOSE_SEED_TAG, self.learner.step_count)

    def after_step(self, losses: dict) -> None:
        """Bookkeeping after one learner step: metrics, publish, checkpoint, evaluation."""
        self.last_losses = losses
        for k, v in losses.items():
            self._loss_sums[k] += v
        self._loss_n += 1
        published = self.learner.publish()
        if published is not None:
            self.counters["published"] += 1
            self.publish(*published)
        if self.learner.checkpoint_due():
            self.checkpoint()
        every = self.config.run.eval_every
        if every and self.learner.step_count % every == 0:
            self.request_eval()

    @abc.abstractmethod
    def publish(self, version: int, params) -> None:
        """Send a new weight version to whatever answers network queries."""

    @abc.abstractmethod
    def request_eval(self) -> None:
        """Start an exploitability evaluation of the latest weights."""

    @abc.abstractmethod
    def finish_evals(self) -> None:
        """Wait for the evaluations still running, until `eval_deadline`; give up (`abandon_eval`)
        those that have not finished by then."""

    def eval_time_left(self) -> float:
        """Seconds until `eval_deadline` (negative past it; 0 once interrupted: the evaluations
        still running are given up)."""
        if self.stop_reason == "interrupted":
            return 0.0
        return self.eval_deadline - time.monotonic()

    def eval_wall_deadline(self) -> float:
        """`eval_deadline` as a `time.time()`, the form an evaluation (in any process) is handed."""
        return time.time() + self.eval_time_left()

    def abandon_eval(self, step: int) -> None:
        """Note that the evaluation of step `step` was given up at the deadline."""
        if step not in self.unfinished:
            self.unfinished.append(step)

    def record_eval(self, step: int, version: int, rows: list[dict], diagnostics: dict | None = None) -> None:
        """Log an evaluation (rows of `Evaluator.exploitability`, diagnostics or None; see module doc)."""
        self.counters["evals"] += 1
        self.last_eval_step = step
        rows = [{**row, "oracle": self.references.get(row["oracle_key"])} for row in rows]
        self.metrics.eval_rows(step, version, rows)
        if diagnostics is not None:
            self.metrics.diagnostics(step, diagnostics)
        self.last_eval = [final_row(step, version, row) for row in rows]
        self._held_eval = [eval_line(row) for row in self.last_eval]
        now = time.monotonic()
        if self.stop_reason is not None or now - self._eval_logged_at >= EVAL_LINE_SECONDS:
            self._eval_logged_at = now
            self.log_held_eval()

    def log_held_eval(self) -> None:
        """Log the newest evaluation's lines if `record_eval` held them back."""
        held, self._held_eval = self._held_eval, []
        for line in held:
            self.log_line(line)

    def poll_references(self) -> None:
        """Cache and log the exact-oracle references finished since the last call."""
        jobs = self.reference_jobs
        if jobs is None:
            return
        errors = dict(jobs.errors)
        new = jobs.poll()
        for k in jobs.errors.keys() - errors.keys():
            self.log_line(f"warning: SoG({jobs.settings[k].label}) with the exact oracle failed: {jobs.errors[k]}")
        if new:
            self.references.update(new)
            oracle_reference.save(self.run_dir, self.references)
            for k, row in new.items():
                self.metrics.reference(self.learner.step_count, jobs.settings[k].label, row["mean_mbb"])
                self.log_line(f"reference: SoG({jobs.settings[k].label}) with the exact oracle "
                              f"{row['mean_mbb']:.1f} mbb/h over the evaluations' {self.config.run.eval_seeds} "
                              f"seeds ({row['seconds']:.0f} s in the background)")

    def finish_references(self) -> None:
        """Wait for the references still running until `eval_deadline` (not once interrupted), then
        end their process."""
        jobs = self.reference_jobs
        if jobs is None:
            return
        while jobs.running() and self.eval_time_left() > 0:
            time.sleep(min(0.2, max(self.eval_time_left(), 0.0)))
            self.poll_references()
        self.poll_references()
        jobs.stop()

    def report_unfinished(self) -> None:
        """One line naming the evaluations and references given up, with the `sog eval` command
        that computes them (the run's checkpoints of those steps, or its newest)."""
        jobs = self.reference_jobs
        missing = [jobs.settings[k] for k in jobs.missing] if jobs else []
        if not self.unfinished and not missing:
            return
        cfg = self.config
        kept = set(checkpoint_steps(self.run_dir))
        steps = [s for s in self.unfinished if s in kept] or [self.learner.step_count]   # `train` saved it
        what = [f"the evaluation at step {s}" + ("" if s in kept else " (no checkpoint of it is kept)")
                for s in self.unfinished]
        what += [f"the exact-oracle reference of SoG({s.label})" for s in missing]
        searches = " ".join(s.label for s in parse_eval_search(cfg.run.eval_search, cfg.search))
        when = "when interrupted" if self.stop_reason == "interrupted" else "by run.minutes + run.eval_grace"
        self.log_line(f"not finished {when}: {', '.join(what)}; to compute {'it' if len(what) == 1 else 'them'}: "
                      f"sog eval --run {shlex.quote(str(self.run_dir))} --step {' '.join(map(str, steps))} "
                      f"--search {searches} --seeds {cfg.run.eval_seeds} --no-policy")

    def draw_eval(self) -> None:
        """Draw RUN_DIR/eval.png from eval.csv, with the cached reference lines of `run.eval_search`
        (nothing while eval.csv has no rows)."""
        cfg = self.config
        references = {}
        for settings in parse_eval_search(cfg.run.eval_search, cfg.search):
            row = self.references.get(oracle_reference.key(self.game, settings, cfg.run.eval_seeds,
                                                           cfg.run.oracle_tolerance))
            if row is not None:
                references[settings.label, cfg.run.eval_seeds] = row["mean_mbb"]
        try:
            rows = read_eval_csv(self.metrics.eval_path)
            if rows:
                plot(rows, self.run_dir / PNG_FILE, f"{cfg.game}: {self.run_dir.name}", references)
        except Exception as e:  # noqa: BLE001 - a chart must not end training
            self.log_line(f"warning: could not draw {PNG_FILE}: {type(e).__name__}: {e}")

    def checkpoint(self) -> None:
        try:
            self.save_buffers()
        except Exception as e:  # noqa: BLE001 - the checkpoint is still worth writing
            self.log_line(f"warning: could not save the replay/queue snapshot: {e}")
        counters = dict(self.counters, replay=self.replay_counters(), queue=self.queue_counters())
        with self.critical():
            if self.learner.checkpoint(counters):
                self.checkpoints.append(self.learner.step_count)

    def log_line(self, text: str) -> None:
        """A message that does not garble the progress line."""
        if self._last_line:
            self.log("\r" + " " * len(self._last_line) + "\r", end="")
        self.log(text)
        if self._last_line:
            self.log(self._last_line, end="")

    def _snapshot(self) -> dict:
        return {**{k: self.counters[k] for k in COUNTERS}, "steps": self.learner.step_count}

    def tick(self, force: bool = False) -> None:
        """Every `tick_seconds`: scalars to tensorboard / metrics.jsonl, the progress line, hooks."""
        now = time.monotonic()
        if not force and now - self._tick_at < self.tick_seconds:
            return
        dt = max(now - self._tick_at, 1e-9)
        snap = self._snapshot()
        prev = self._tick_snapshot
        rate = {k: (snap[k] - prev[k]) / dt for k in snap}
        replay, queue, server = self.replay_counters(), self.queue_counters(), self.server_stats()
        version = self.learner.version
        used = self.versions_in_use()
        scalars = {
            "learner/steps_per_s": rate["steps"], "learner/lr": self.last_losses.get("learning_rate", math.nan),
            "throughput/searches_per_s": rate["searches"], "throughput/games_per_s": rate["games"],
            "throughput/queries_per_s": rate["network_queries"], "throughput/solves_per_s": rate["solves"],
            "throughput/examples_per_s": rate["selfplay_examples"] + rate["solver_examples"],
            "replay/size": replay.get("size", 0), "replay/inserted": replay.get("inserted_total", 0),
            "replay/sampled": replay.get("sampled_total", 0),
            "replay/sample_to_insert": (replay.get("sampled_total", 0) / replay["inserted_total"]
                                        if replay.get("inserted_total") else 0.0),
            "queue/size": queue.get("size", 0), "queue/dropped": queue.get("dropped_total", 0),
            "queue/rejected": queue.get("rejected_total", 0),
            "weights/version": version, "weights/lag": (version - min(used)) if used else 0,
            "failures/actors": self.counters["actor_failures"],
            "selfplay/resigned_share": snap["resigned"] / snap["games"] if snap["games"] else 0.0,
            "selfplay/truncated_share": snap["truncated"] / snap["games"] if snap["games"] else 0.0,
            "selfplay/p0_win_share": snap["p0_wins"] / snap["games"] if snap["games"] else 0.0,
            "selfplay/p1_win_share": snap["p1_wins"] / snap["games"] if snap["games"] else 0.0,
            "selfplay/false_resign_share": (snap["false_resigns"] / snap["would_resign"]
                                            if snap["would_resign"] else 0.0),
            "memory/driver_mb": rss_mb(),
        }
        if self.resign_threshold is not None:
            scalars["selfplay/resign_threshold"] = self.resign_threshold
        if self._age_n:
            scalars["replay/age_mean"] = self._age_sum / self._age_n
            scalars["replay/age_max"] = self._age_max
        if self._loss_n:
            for k, name in (("loss", "loss/total"), ("value_loss", "loss/value"),
                            ("policy_loss", "loss/policy"), ("grad_norm", "loss/grad_norm")):
                scalars[name] = self._loss_sums[k] / self._loss_n
        for role, busy in self._spent.items():
            if busy > 0:
                scalars[f"wait/{role}"] = self._wait[role] / busy
        for k in ("mean_batch", "version", "busy_share", "batch_window"):
            if k in server:
                scalars[f"inference/{k}"] = server[k]
        for k, v in self.memory().items():
            scalars[f"memory/{k}_mb"] = v
        self.metrics.scalars(self.learner.step_count, scalars)
        for role in self._spent:
            self._totals_spent[role] += self._spent[role]
            self._totals_wait[role] += self._wait[role]
        self._spent.clear()
        self._wait.clear()
        self._loss_sums.clear()
        self._loss_n = 0
        self._age_sum, self._age_n, self._age_max = 0.0, 0, None
        self._tick_at, self._tick_snapshot = now, snap
        self.last_scalars = scalars
        self._progress(scalars, now)
        self.poll_references()
        hook = self.hooks.get("on_tick")
        if hook is not None:
            hook(self)

    def _progress(self, s: dict, now: float) -> None:
        cfg = self.config
        total = f"/{cfg.run.max_steps}" if cfg.run.max_steps else ""
        loss = s.get("loss/total")
        line = (f"[{self.mode}] step {self.learner.step_count}{total} v{self.learner.version}"
                f" | loss {loss:.4f}" if loss is not None else
                f"[{self.mode}] step {self.learner.step_count}{total} v{self.learner.version} | loss -")
        line += (f" | {s['learner/steps_per_s']:.1f} steps/s | {s['throughput/searches_per_s']:.1f} searches/s"
                 f" | {s['throughput/queries_per_s']:.0f} queries/s")
        if "inference/mean_batch" in s:
            line += f" batch {s['inference/mean_batch']:.1f}"
        line += (f" | replay {int(s['replay/size'])} x{s['replay/sample_to_insert']:.1f}"
                 f" | queue {int(s['queue/size'])} | lag {int(s['weights/lag'])}"
                 f" | {_fmt_time(now - self.started)}/{_fmt_time(60 * cfg.run.minutes)}")
        pad = max(0, len(self._last_line) - len(line))
        self.log("\r" + line + " " * pad, end="")
        self._last_line = line

    def versions_in_use(self) -> list[int]:
        return []

    def totals(self) -> dict:
        """This invocation's cumulative figures now; a window is the difference of two.

        time: `time.monotonic()` seconds; steps: learner steps; counters: `COUNTERS`;
        step_seconds: role -> its producers' summed step seconds of `launch.roles.TIME_STATS`;
        spent / wait: wait-share name (roles, `learner`, extra waits) -> seconds accounted / of
        which waiting; inference: `inference_totals()`.
        """
        names = set(self._totals_spent) | set(self._spent)
        return {"time": time.monotonic(), "steps": self.learner.step_count, "counters": dict(self.counters),
                "step_seconds": {role: dict(sums) for role, sums in self._step_seconds.items()},
                "spent": {n: self._totals_spent.get(n, 0.0) + self._spent.get(n, 0.0) for n in names},
                "wait": {n: self._totals_wait.get(n, 0.0) + self._wait.get(n, 0.0) for n in names},
                "inference": self.inference_totals()}

    def memory(self) -> dict:
        return {}

    def summary(self) -> dict:
        """The run's final state, of a size that does not grow with the run (the history is in
        the files of `files`): the run (run_dir, mode, game, resumed, stop_reason, start_step,
        steps, steps_this_run, version, seconds), this invocation's rates per second and wait
        shares, counters, replay, queue, the last step's losses, `last_eval` (the newest
        evaluation's rows, `final_row`; [] before any), evals_this_run, the evaluations and
        references given up, `checkpoints` (the steps kept on disk, oldest first),
        checkpoints_written (this invocation) and `files` (name -> path)."""
        now = time.monotonic()
        elapsed = max(now - self.started, 1e-9)
        first = self._first_snapshot
        snap = self._snapshot()
        steps = snap["steps"] - first["steps"]
        for role in self._spent:
            self._totals_spent[role] += self._spent[role]
            self._totals_wait[role] += self._wait[role]
        self._spent.clear()
        self._wait.clear()
        wait_share = {role: self._totals_wait[role] / busy for role, busy in self._totals_spent.items() if busy > 0}
        return {
            "run_dir": str(self.run_dir), "mode": self.mode, "game": self.config.game,
            "resumed": self.learner.resumed, "stop_reason": self.stop_reason,
            "start_step": self.start_step, "steps": self.learner.step_count, "steps_this_run": steps,
            "version": self.learner.version, "seconds": elapsed,
            "learner_steps_per_s": steps / elapsed,
            "searches_per_s": (snap["searches"] - first["searches"]) / elapsed,
            "games_per_s": (snap["games"] - first["games"]) / elapsed,
            "queries_per_s": (snap["network_queries"] - first["network_queries"]) / elapsed,
            "solves_per_s": (snap["solves"] - first["solves"]) / elapsed,
            "wait_share": wait_share,
            "counters": dict(self.counters), "replay": self.replay_counters(), "queue": self.queue_counters(),
            "losses": self.last_losses, "last_eval": self.last_eval,
            "evals_this_run": snap["evals"] - first["evals"],
            "evals_unfinished": list(self.unfinished),
            "references_unfinished": ([self.reference_jobs.settings[k].label for k in self.reference_jobs.missing]
                                      if self.reference_jobs else []),
            "checkpoints": checkpoint_steps(self.run_dir), "checkpoints_written": len(self.checkpoints),
            "files": self.files(),
        }

    def files(self) -> dict:
        """name -> path of the run directory's files that exist: config, metrics (metrics.jsonl),
        tensorboard (the event files' folder), eval_csv, eval_png, replay and queue snapshots."""
        paths = {"config": self.run_dir / "config.yaml", "metrics": self.metrics.jsonl_path,
                 "tensorboard": self.metrics.tb_path, "eval_csv": self.metrics.eval_path,
                 "eval_png": self.run_dir / PNG_FILE,
                 **{role.name: self.snapshot_path(role) for role in ROLES if role.snapshot}}
        return {name: str(path) for name, path in paths.items() if path.exists()}

    def finish(self) -> None:
        self.log_held_eval()
        if self._last_line:
            self.log("")
            self._last_line = ""
        self.metrics.flush()

    def close(self) -> None:
        """Release what the run holds (metrics files, the learner, the reference process; actors in
        a Ray run)."""
        if self.reference_jobs is not None:
            self.reference_jobs.stop()
        if self.metrics is not None:
            self.metrics.close()
        self.learner.close()
        self.lock.release()
