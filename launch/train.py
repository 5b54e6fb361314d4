"""`sog train`: sound self-play training, on Ray (default) or in one process (`--sync`).

The roles of a run (inference server, replay buffer, query queue, self-play
workers, query solvers, evaluator) are one table, `launch.roles`; both runs
drive it. `launch.ray_run.RayRun` makes each role Ray actors around its plain
class, with the learner in the driver; `launch.sync_run.SyncRun` keeps every
role in one process and runs production rounds that call the producers' very
step methods. What both share (learner, counters, metrics, checkpoints,
progress) is `launch.training_run.TrainingRun`, the interface `train` talks to.

A run stops at `run.minutes` of this invocation or at `run.max_steps` learner
steps (in total, across resumes), then saves replay, queue and a checkpoint,
evaluates the last weights and draws eval.png. Evaluations (the one running,
the final one, the exact-oracle references) may take `run.eval_grace` seconds
past `run.minutes` (a run stopped earlier by `run.max_steps` waits for them until
then); what is unfinished then is given up and named in one line
with the `sog eval` command that computes it (`launch.training_run`), so a run
ends within `run.eval_grace` plus the time to save its state.
Ctrl-C and SIGTERM stop it the same way (`launch.training_run.StopOnSignals`), at the
next learner step or production round, except that the evaluations and references still
running are given up at once (named in that one line): a stop asked by a person or by a
scheduler (Slurm, Kubernetes and `ray job stop` send SIGTERM, then SIGKILL after a grace of
their own) saves the checkpoint, replay and queue first. The summary's stop_reason is then
"interrupted", and `sog train` exits with status 130 after printing it.

What the run prints (stderr: a progress line, one line per evaluation) and what it writes to
the run directory (metrics.jsonl, tb/, eval.csv, eval.png, checkpoints) is described in
`launch.training_run`; `train` returns the final state (`TrainingRun.summary`), which
`sog train` prints as its JSON line.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from launch.console import say
from launch.sync_run import SyncRun
from launch.training_run import StopOnSignals, TrainingRun, check_run_dir
from sog.config import Config


def make_run(config: Config, run_dir: str | Path, sync: bool = False, log: Callable = say,
             tick_seconds: float = 5.0, hooks: dict | None = None, num_cpus: int | None = None) -> TrainingRun:
    """The run `train` drives: a `SyncRun`, or a `RayRun` (which starts its actors, and Ray itself
    when none is running), begun (`TrainingRun.begin`); the arguments are `train`'s.

    A run directory that cannot be written is refused first (`check_run_dir`), and nothing is
    written to the run directory before the run has restored what it resumes from.
    """
    check_run_dir(run_dir)
    if sync:
        run = SyncRun(config, run_dir, log=log, tick_seconds=tick_seconds, hooks=hooks)
    else:
        # imported here, not at the top: only a Ray run imports Ray, --sync stays Ray-free
        from launch.ray_run import RayRun
        run = RayRun(config, run_dir, log=log, tick_seconds=tick_seconds, hooks=hooks, num_cpus=num_cpus)
    try:
        run.begin()
    except BaseException:
        run.close()
        raise
    return run


def train(config: Config, run_dir: str | Path, sync: bool = False, log: Callable = say,
          tick_seconds: float = 5.0, hooks: dict | None = None, num_cpus: int | None = None) -> dict:
    """Train (or resume) in `run_dir` until `run.minutes` or `run.max_steps`; returns a summary dict.

    hooks: {"on_tick": fn(run)} called after every progress tick (tests use it to kill actors).
    num_cpus: the CPUs of the local Ray instance a Ray run starts (default: the machine's).
    """
    run = make_run(config, run_dir, sync, log, tick_seconds, hooks, num_cpus)
    with StopOnSignals(run):
        failed = True
        try:
            try:
                run.run()
            except KeyboardInterrupt:
                run.stop_reason = "interrupted"
            run.finish_evals()
            run.tick(force=True)
            run.finish()
            run.checkpoint()
            if config.run.eval_every and run.last_eval_step != run.learner.step_count:
                run.request_eval()
                run.finish_evals()
            if config.run.eval_every:
                run.finish_references()
                run.draw_eval()
                run.report_unfinished()
            failed = False
            return run.summary()
        finally:
            if failed:
                run.finish()
                try:                                    # leave a resumable state: the newest data on disk
                    run.save_buffers()
                except Exception:  # noqa: BLE001, S110 - best effort while failing
                    pass
            run.close()
