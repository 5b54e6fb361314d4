"""A training run's faults: two runs on one directory, Ctrl-C and SIGTERM, readers beside a run,
a full disk, a corrupt newest checkpoint, and the processes left after a `kill -9` of the driver."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

from learners.checkpoint import CheckpointGone, CheckpointStore, DiskFull, load_value_function, read_metadata, steps
from learners.learner import Learner
from learners.train_state import init_train_state
from sog.config import config_from_dict, config_to_dict, load_config

ROOT = Path(__file__).resolve().parents[1]
HOLD_LOCK = ("import sys\nfrom launch.training_run import RunLock\nRunLock(sys.argv[1])\n"
             "print('locked', flush=True)\nsys.stdin.read()\n")


def tiny_config(**learner):
    cfg = config_to_dict(load_config("tiny_kuhn"))
    cfg["learner"].update(learner)
    return config_from_dict(cfg)


def files_state(folder: Path) -> dict:
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*")}


def sog_process(*args, **kwargs) -> subprocess.Popen:
    """`sog ARGS...` as a program, in a session (process group) of its own."""
    return subprocess.Popen([sys.executable, "-m", "launch.cli", *map(str, args)], cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, **kwargs)


def hold_lock(run: Path) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(run)], cwd=ROOT, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdout.readline().strip() == "locked"
    return proc


def run_here(capfd, *args):
    from launch.cli import main
    capfd.readouterr()
    rc = main([str(a) for a in args])
    out, err = capfd.readouterr()
    return rc, out, err


def saved_run(run: Path, cfg, steps_to_save=(10, 20)) -> None:
    """A run directory with checkpoints of `steps_to_save` of tiny Kuhn's network."""
    from sog.games import load_game
    game = load_game(cfg.game)
    state = init_train_state(game, cfg.network, cfg.learner, seed=0)
    with CheckpointStore(run, game, cfg.network, cfg.learner) as store:
        for i, step in enumerate(steps_to_save):
            store.save(state.replace(step=step), version=i + 1,
                       extra={"counters": {}, "config": config_to_dict(cfg)})


# ------------------------------------------------------------------ two runs on one directory

def test_a_second_run_on_a_directory_in_use_is_refused_and_a_stale_lock_taken_over(tmp_path, capfd):
    run = tmp_path / "run"
    holder = hold_lock(run)
    before = files_state(tmp_path)
    rc, out, err = run_here(capfd, "train", "--config", "tiny_kuhn", "--sync", "--run-dir", run,
                            "--set", "run.max_steps=10")
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    assert err.startswith(f"sog train: error: run directory {run} is in use by another run (pid {holder.pid} on ")
    assert files_state(tmp_path) == before
    holder.kill()                                     # kill -9: the lock file stays, with its pid
    holder.wait()
    from launch.training_run import RunLock
    lock = RunLock(run)
    assert lock.previous[0] == str(holder.pid)
    lock.release()
    assert RunLock(run).previous == []                # released: no stale holder to name


@pytest.mark.slow
def test_a_second_train_beside_a_running_one_leaves_it_unharmed(tmp_path):
    run = tmp_path / "run"
    first = sog_process("train", "--config", "tiny_kuhn", "--sync", "--run-dir", run, "--set", "run.max_steps=20")
    while not (run / "run.lock").is_file() or not (run / "run.lock").read_text():
        assert first.poll() is None
        time.sleep(0.1)
    second = sog_process("train", "--config", "tiny_kuhn", "--sync", "--run-dir", run, "--set", "run.max_steps=40")
    out, err = second.communicate(timeout=120)
    assert second.returncode == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "is in use by another run" in err and "Traceback" not in err
    out, err = first.communicate(timeout=300)
    assert first.returncode == 0, err
    summary = json.loads(out)
    assert summary["steps"] == 20 and summary["checkpoints"] == [10, 20] and "Traceback" not in err
    assert (run / "run.lock").read_text() == ""


# ------------------------------------------------------------------ a corrupt newest checkpoint

def test_a_corrupt_newest_checkpoint_is_set_aside_and_the_run_resumes_from_the_one_before(tmp_path, kuhn):
    cfg = tiny_config()
    run = tmp_path / "run"
    saved_run(run, cfg)
    for path in (run / "20" / "state").rglob("*"):
        if path.is_file():
            path.write_bytes(b"\x00garbage")
    learner = Learner(kuhn, cfg, run)
    try:
        assert learner.step_count == 10 and learner.version == 1 and len(learner.skipped) == 1
        assert learner.skipped[0].startswith(f"skipped a checkpoint: checkpoint {run}/20 is corrupt or incomplete")
        assert learner.skipped[0].endswith(f"set aside as {run}/20.corrupt, resuming from step 10")
        assert steps(run) == [10] and (run / "20.corrupt" / "state").is_dir()
        learner.state = learner.state.replace(step=20)
        assert learner.checkpoint()                   # step 20 can be written again
    finally:
        learner.close()
    assert steps(run) == [20, 10]


def test_when_every_checkpoint_is_corrupt_nothing_is_moved(tmp_path, kuhn):
    from learners.checkpoint import CorruptCheckpoint
    cfg = tiny_config()
    run = tmp_path / "run"
    saved_run(run, cfg)
    for path in run.glob("*/state/**/*"):
        if path.is_file():
            path.write_bytes(b"\x00garbage")
    with pytest.raises(CorruptCheckpoint, match=f"checkpoint {run}/20 is corrupt or incomplete"):
        Learner(kuhn, cfg, run)
    assert steps(run) == [20, 10]


# ------------------------------------------------------------------ readers beside a run

def test_a_step_removed_under_a_reader_is_named_so(tmp_path, kuhn):
    cfg = tiny_config()
    run = tmp_path / "run"
    saved_run(run, cfg)
    shutil.rmtree(run / "10")
    with pytest.raises(CheckpointGone, match=f"no checkpoint at {run}/10"):
        read_metadata(run / "10")


def test_readers_of_the_newest_checkpoint_follow_a_run_that_turns_them_over(tmp_path, kuhn):
    """A writer keeping one checkpoint saves a new one as fast as it can; a reader of the run's
    newest reads it every time (the one it picked may be removed under it: it reads the next)."""
    cfg = tiny_config(keep_checkpoints=1)
    run = tmp_path / "run"
    saved_run(run, cfg, steps_to_save=(1,))
    state = init_train_state(kuhn, cfg.network, cfg.learner, seed=0)
    stop = threading.Event()

    def write():
        with CheckpointStore(run, kuhn, cfg.network, cfg.learner) as store:
            step = 2
            while not stop.is_set():
                store.save(state.replace(step=step), version=step)
                step += 1

    writer = threading.Thread(target=write)
    writer.start()
    try:
        versions = [load_value_function(run, kuhn).version for _ in range(20)]
    finally:
        stop.set()
        writer.join()
    assert versions == sorted(versions) and versions[-1] > 1


# ------------------------------------------------------------------ a full disk

def tmpfs(path: Path, size: str) -> Path:
    path.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                                           capture_output=True).returncode != 0:
        pytest.skip("mounting a tmpfs needs root")
    return path


def fill(folder: Path) -> None:
    fd = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError:
        pass
    finally:
        os.close(fd)


def test_a_save_on_a_full_disk_names_the_path_and_the_space_and_keeps_the_checkpoints(tmp_path, kuhn):
    disk = tmpfs(tmp_path / "disk", "2m")
    try:
        cfg = tiny_config()
        run = disk / "run"
        saved_run(run, cfg)
        before = files_state(run)
        fill(disk)
        state = init_train_state(kuhn, cfg.network, cfg.learner, seed=0)
        with CheckpointStore(run, kuhn, cfg.network, cfg.learner) as store:
            with pytest.raises(DiskFull) as e:
                store.save(state.replace(step=30), version=3)
        assert str(e.value).startswith(f"no space left on the device of {run} for checkpoint {run}/30: "
                                       "it needs about ")
        assert "kB are free (the checkpoints already written are intact: 10, 20)" in str(e.value)
        assert files_state(run) == before and load_value_function(run, kuhn).version == 2
    finally:
        subprocess.run(["umount", str(disk)], check=False)


# ------------------------------------------------------------------ Ctrl-C and SIGTERM

@pytest.mark.slow
@pytest.mark.parametrize("sig,sync", [(signal.SIGINT, True), (signal.SIGTERM, True),
                                      (signal.SIGINT, False), (signal.SIGTERM, False)])
def test_a_stop_signal_saves_the_run_and_exits_130(tmp_path, sig, sync):
    """SIGINT or SIGTERM to the driver of a run with a checkpoint written: a final checkpoint, the
    replay and queue, the summary on stdout, exit status 130, no traceback, no partial step."""
    run = tmp_path / "run"
    proc = sog_process("train", "--config", "tiny_kuhn", "--run-dir", run, "--set", "run.max_steps=100000",
                       "--set", "run.minutes=10", "--set", "learner.checkpoint_every=5", *(["--sync"] * sync))
    while not (run / "5").is_dir():
        assert proc.poll() is None, proc.stderr.read()
        time.sleep(0.2)
    os.kill(proc.pid, sig)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130 and "Traceback" not in err, err[-3000:]
    summary = json.loads(out)
    assert summary["stop_reason"] == "interrupted" and summary["checkpoints"][-1] == summary["steps"]
    assert (run / "replay.npz").is_file() and (run / "queue.pkl").is_file()
    assert not list(run.glob("*.orbax-checkpoint-tmp*"))


# ------------------------------------------------------------------ kill -9 of the driver

@pytest.mark.slow
def test_no_process_of_a_run_outlives_a_kill_9_of_its_driver(tmp_path):
    """A Ray run with evaluations (so the exact-oracle reference process runs too): every
    descendant of the driver ends within a minute of its SIGKILL."""
    run = tmp_path / "run"
    proc = sog_process("train", "--config", "tiny_kuhn", "--run-dir", run, "--set", "run.minutes=10",
                       "--set", "run.eval_every=1000", "--set", "run.eval_search=10,1",
                       env={**os.environ, "SOG_CACHE_DIR": ""})
    while not (run / "metrics.jsonl").is_file():
        assert proc.poll() is None, proc.stderr.read()
        time.sleep(0.2)
    children = psutil.Process(proc.pid).children(recursive=True)
    assert children
    proc.kill()
    proc.wait()
    gone, alive = psutil.wait_procs(children, timeout=60)
    assert alive == [], [p.cmdline() for p in alive if p.is_running()]
