"""`sog train` end to end on tiny Kuhn: the synchronous loop (checkpoints, scalars, replay, resume
equal to an uninterrupted run, refusal of another game), both runs driving every role of the roles
table, a real Ray run in which a self-play worker and the inference server are killed mid-run, and
(slow) one with two inference servers, one of them killed; the servers' bookkeeping (producers
spread over them, their stats summed across restarts and servers, their GPU share split)."""
import dataclasses
import json
import re
import time

import jax
import numpy as np
import pytest
from fork_check import no_fork_after_jax

from launch.cli import main as cli_main
from launch.roles import PRODUCERS, ROLES
from launch.train import train
from learners.checkpoint import CheckpointError, latest_step, restore_params, restore_train_state
from learners.learner import Learner
from learners.metrics import read_eval_csv, read_scalars
from networks.mlp import build_mlp
from networks.registry import BUILDERS
from sog.config import apply_overrides, load_config
from sog.games import load_game

INT_COUNTERS = ("games", "searches", "moves", "selfplay_examples", "solves", "solver_examples",
                "queries_pushed", "recursive_pushed", "queries_dropped", "network_queries", "rounds",
                "published")


def tiny(*overrides):
    return apply_overrides(load_config("tiny_kuhn"), ["run.minutes=2", *overrides])


def quiet(*args, **kwargs):
    pass


def test_sync_end_to_end(tmp_path):
    run_dir = tmp_path / "run"
    out = train(tiny("run.max_steps=30", "run.eval_every=15"), run_dir, sync=True, log=quiet, tick_seconds=0.0)
    assert out["stop_reason"] == "max_steps" and out["steps"] == 30 and out["version"] == 15
    assert latest_step(run_dir) == 30 and out["checkpoints"] == [20, 30] and out["checkpoints_written"] == 3
    assert (run_dir / "replay.npz").is_file() and (run_dir / "queue.pkl").is_file()
    c = out["counters"]
    assert c["games"] > 0 and c["searches"] > 0 and c["solves"] > 0 and c["solver_examples"] > 0
    assert out["replay"]["inserted_total"] == c["selfplay_examples"] + c["solver_examples"]
    assert out["replay"]["sampled_total"] == 30 * 32
    scalars = read_scalars(run_dir / "tb")
    for name in ("loss/total", "loss/value", "loss/policy", "learner/lr", "learner/steps_per_s",
                 "throughput/searches_per_s", "throughput/queries_per_s", "replay/size",
                 "replay/sample_to_insert", "weights/version", "weights/lag", "queue/size", "memory/driver_mb"):
        assert name in scalars, name
    sizes = [v for _, v in scalars["replay/size"]]
    assert sizes == sorted(sizes) and sizes[-1] >= 64          # the replay grows
    assert [s for s, _ in scalars["loss/total"]][-1] == 30
    lines = (run_dir / "metrics.jsonl").read_text().splitlines()
    assert json.loads(lines[-1])["step"] == 30
    # exploitability of SoG(4,1) at steps 0 (the untrained network), 15 and 30: CSV and tensorboard
    rows = read_eval_csv(run_dir / "eval.csv")
    assert [int(r["step"]) for r in rows] == [0, 15, 30] and all(float(r["mean_mbb"]) > 0 for r in rows)
    assert [s for s, _ in scalars["eval/S4_C1/mean_mbb"]] == [0, 15, 30]


def test_a_runs_output_is_its_final_state_and_one_line_per_evaluation(tmp_path, monkeypatch):
    """Stderr gets one short line per evaluation (the diagnostics go to metrics.jsonl only),
    at most one evaluation's every EVAL_LINE_SECONDS and always the last, and one line naming the
    metric files and tensorboard; the summary is the final state, its size does not grow with the
    run: the newest evaluation, the checkpoints kept, the files' paths."""
    import launch.training_run

    logged = []
    out = train(tiny("run.max_steps=10", "run.eval_every=2"), tmp_path / "throttled", sync=True,
                log=lambda text, end="\n": logged.append(text))
    evals = [line for line in logged if line.startswith("eval at step ")]
    assert out["evals_this_run"] == 6 and evals[0].startswith("eval at step 0:"), evals
    assert len(evals) < 6 and evals[-1].startswith("eval at step 10:"), evals
    monkeypatch.setattr(launch.training_run, "EVAL_LINE_SECONDS", 0.0)
    logged = []
    run_dir = tmp_path / "run"
    out = train(tiny("run.max_steps=40", "run.eval_every=2", "run.diagnose_samples=16"), run_dir, sync=True,
                log=lambda text, end="\n": logged.append(text))
    evals = [line for line in logged if line.startswith("eval at step ")]
    assert len(evals) == out["evals_this_run"] == 21 and all(len(line) < 100 for line in evals)
    assert re.fullmatch(r"eval at step 40: SoG\(4,1\) [\d.]+ mbb/h \(1 seeds: [\d.]+-[\d.]+; exact oracle "
                        r"([\d.]+|pending)\)", evals[-1]), evals[-1]
    assert not [line for line in logged if "target_error" in line or "vs exact" in line]
    assert any(f"tensorboard --logdir {run_dir / 'tb'}" in line and ".[viz]" in line for line in logged)
    assert len(json.dumps(out)) < 3000, len(json.dumps(out))
    (last,) = out["last_eval"]
    assert last["step"] == 40 and last["search"] == "4,1" and last["mean_mbb"] > 0
    assert out["checkpoints"] == [30, 40] and "config" not in out
    assert out["files"] == {"config": str(run_dir / "config.yaml"), "metrics": str(run_dir / "metrics.jsonl"),
                            "tensorboard": str(run_dir / "tb"), "eval_csv": str(run_dir / "eval.csv"),
                            "eval_png": str(run_dir / "eval.png"), "replay": str(run_dir / "replay.npz"),
                            "queue": str(run_dir / "queue.pkl")}
    diag = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert len([d for d in diag if "diag/target_error" in d]) == 20        # every evaluation after step 0


def test_sync_split_and_resume_matches_an_uninterrupted_run(tmp_path):
    whole = train(tiny("run.max_steps=20"), tmp_path / "whole", sync=True, log=quiet)
    first = train(tiny("run.max_steps=10"), tmp_path / "split", sync=True, log=quiet)
    assert first["steps"] == 10
    logged = []
    second = train(tiny("run.max_steps=20"), tmp_path / "split", sync=True,
                   log=lambda text, end="\n": logged.append(text))
    assert second["resumed"] and second["start_step"] == 10 and second["steps"] == 20
    assert any("restored the replay buffer" in line and " 0 items" not in line for line in logged)
    assert {k: second["counters"][k] for k in INT_COUNTERS} == {k: whole["counters"][k] for k in INT_COUNTERS}
    assert second["replay"] == whole["replay"] and second["queue"] == whole["queue"]
    assert second["version"] == whole["version"]
    np.testing.assert_allclose(second["losses"]["loss"], whole["losses"]["loss"], rtol=1e-4)
    cfg = tiny()
    game = load_game(cfg.game)
    a, _ = restore_train_state(tmp_path / "whole", game, cfg.network, cfg.learner)
    b, _ = restore_train_state(tmp_path / "split", game, cfg.network, cfg.learner)
    for x, y in zip(np.asarray(a.params["params"]["value"]["kernel"]).ravel(),
                    np.asarray(b.params["params"]["value"]["kernel"]).ravel()):
        assert abs(x - y) <= 1e-4 * max(1.0, abs(x))


def gives_up(out, logged, run_dir, seeds) -> list[str]:
    """The run named the evaluations it gave up (its final step's among them) and the reference of
    SoG(4,1) x `seeds` in one line with the `sog eval` command that computes them; the line."""
    assert out["steps"] in out["evals_unfinished"] and out["references_unfinished"] == ["4,1"]
    (line,) = [text for text in logged if text.startswith("not finished by run.minutes + run.eval_grace: ")]
    assert "the exact-oracle reference of SoG(4,1)" in line and f"the evaluation at step {out['steps']}" in line
    assert re.search(rf"; to compute them: sog eval --run {run_dir} --step (\d+ )*{out['steps']} --search 4,1 "
                     rf"--seeds {seeds} --no-policy$", line)
    assert latest_step(run_dir) == out["steps"] and (run_dir / "replay.npz").is_file()
    return line


def test_sync_run_gives_up_an_evaluation_at_the_deadline_and_resumes(tmp_path):
    """An evaluation far longer than the budget (SoG(4,1) over a million seeds, and its exact-oracle
    reference) is given up at run.minutes + run.eval_grace: the run ends then (plus the time to save
    its state), names it in one line with the `sog eval` command that computes it, leaves eval.csv as
    it was and its checkpoint and replay as usual; the next run resumes from them."""
    run_dir = tmp_path / "run"
    train(tiny("run.max_steps=10", "run.eval_every=5"), run_dir, sync=True, log=quiet)
    before = read_eval_csv(run_dir / "eval.csv")
    assert [int(r["step"]) for r in before] == [0, 5, 10]
    logged = []
    seeds = 1_000_000
    out = train(tiny("run.minutes=0.05", "run.eval_grace=1", "run.eval_every=5", f"run.eval_seeds={seeds}"),
                run_dir, sync=True, log=lambda text, end="\n": logged.append(text))
    assert out["stop_reason"] == "minutes" and out["steps"] >= 10
    assert out["seconds"] < 3 + 1 + 60          # budget, grace, and room for saving on a loaded machine
    gives_up(out, logged, run_dir, seeds)
    assert out["evals_unfinished"] == [out["steps"]] and out["evals_this_run"] == 0 and out["last_eval"] == []
    assert read_eval_csv(run_dir / "eval.csv") == before
    again = train(tiny(f"run.max_steps={out['steps'] + 5}", "run.eval_every=5"), run_dir, sync=True, log=quiet)
    assert again["resumed"] and again["start_step"] == out["steps"] and again["evals_unfinished"] == []
    rows = read_eval_csv(run_dir / "eval.csv")
    assert rows[:3] == before and len(rows[3:]) == again["evals_this_run"]
    (last,) = again["last_eval"]
    assert int(rows[-1]["step"]) == last["step"] == again["steps"] and float(rows[-1]["mean_mbb"]) == last["mean_mbb"]
    assert all(float(r["mean_mbb"]) > 0 for r in rows)


@pytest.mark.slow
def test_ray_run_gives_up_an_evaluation_at_the_deadline(tmp_path):
    """The same on Ray (2 CPUs): the evaluator actor is given up at the deadline, the run ends
    then and names it; a --sync run resumes the run directory."""
    run_dir = tmp_path / "run"
    logged = []
    seeds = 1_000_000
    with no_fork_after_jax():
        out = train(tiny("run.minutes=0.25", "run.eval_grace=3", "run.eval_every=5", f"run.eval_seeds={seeds}"),
                    run_dir, log=lambda text, end="\n": logged.append(text), num_cpus=2)
    assert out["mode"] == "ray" and out["stop_reason"] == "minutes" and out["last_eval"] == []
    assert out["seconds"] < 15 + 3 + 60
    gives_up(out, logged, run_dir, seeds)
    assert not (run_dir / "eval.csv").exists()
    again = train(tiny(f"run.max_steps={out['steps'] + 5}", "run.eval_every=5"), run_dir, sync=True, log=quiet)
    assert again["resumed"] and again["steps"] == out["steps"] + 5 and again["evals_this_run"]


def test_lower_priority_raises_every_threads_nice_value():
    """The evaluator actor's and the reference process's priority (`sog.process.lower_priority`):
    threads started before the call are lowered too (Linux keeps nice values per thread)."""
    import os
    import subprocess
    import sys

    code = ("import os, threading; from sog.process import lower_priority; e = threading.Event(); "
            "t = threading.Thread(target=e.wait); t.start(); lower_priority(7); "
            "print(os.getpriority(os.PRIO_PROCESS, 0), os.getpriority(os.PRIO_PROCESS, t.native_id)); e.set()")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert out.stdout.split() == [str(max(7, os.nice(0)))] * 2


def test_a_run_with_a_moving_average_serves_and_checkpoints_it(tmp_path):
    run_dir = tmp_path / "run"
    train(tiny("run.max_steps=10", "learner.ema_decay=0.9"), run_dir, sync=True, log=quiet)
    learner = Learner(load_game("kuhn_poker"), tiny("learner.ema_decay=0.9"), run_dir)
    served, _, _ = restore_params(run_dir, learner.game)
    assert learner.step_count == 10 and learner.state.ema is not None
    for a, b, trained in zip(jax.tree.leaves(learner.params()), jax.tree.leaves(served),
                             jax.tree.leaves(learner.state.params)):
        np.testing.assert_array_equal(a, b)
        assert not np.array_equal(a, trained)
    learner.close()


def test_eval_refuses_a_run_whose_config_does_not_load(tmp_path, capsys):
    """Not a silent fall-back to default search settings (which are not the run's)."""
    run_dir = tmp_path / "run"
    train(tiny("run.max_steps=10"), run_dir, sync=True, log=quiet)
    (run_dir / "config.yaml").write_text("game: kuhn_poker\nlearner: {checkpoint_every: 2, keep_period: 3}\n")
    capsys.readouterr()
    csv_path = run_dir / "eval.csv"
    before = csv_path.read_text() if csv_path.exists() else None
    assert cli_main(["eval", "--run", str(run_dir), "--seeds", "1", "--no-policy"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "learner.keep_period" in err[0] and "config.yaml" in err[0]
    assert (csv_path.read_text() if csv_path.exists() else None) == before


def test_resume_refuses_another_game_or_network(tmp_path, capsys, monkeypatch):
    run_dir = tmp_path / "run"
    train(tiny("run.max_steps=10"), run_dir, sync=True, log=quiet)
    leduc = apply_overrides(tiny(), ["game=leduc_poker"])
    with pytest.raises(CheckpointError, match="kuhn_poker"):
        Learner(load_game("leduc_poker"), leduc, run_dir)
    wider = tiny("network.hidden=32")
    with pytest.raises(CheckpointError, match="network"):
        Learner(load_game(wider.game), wider, run_dir)
    monkeypatch.setitem(BUILDERS, "mlp_b", build_mlp)      # a second architecture
    other = dataclasses.replace(tiny(), network=dataclasses.replace(tiny().network, kind="mlp_b"))
    with pytest.raises(CheckpointError, match="holds a network of kind mlp, not the configured mlp_b"):
        Learner(load_game(other.game), other, run_dir)
    rc = cli_main(["train", "--config", "tiny_kuhn", "--sync", "--run-dir", str(run_dir),
                   "--set", "network.hidden=32"])
    assert rc == 2 and "network" in capsys.readouterr().err
    rc = cli_main(["train", "--config", "tiny_kuhn", "--sync", "--set", "bogus.key=1"])
    assert rc == 2


def drives_every_role(out, members: dict, config, roles) -> None:
    """`members` has `count` of each of `roles`, and every producer role's steps reached its wait
    share and the counter of the examples it made."""
    assert members == {role.name: role.count(config) for role in roles}
    for role in PRODUCERS:
        assert role.name in out["wait_share"] and out["counters"][role.stats["examples"]] > 0, role.name


def test_sync_run_drives_every_role_of_the_table(tmp_path):
    """The Ray-free run builds each service role of `launch.roles` in-process (`count` instances of
    its plain class) and steps each producer role through the table; a count of 0 (no solvers)
    leaves the role out, as in a Ray run."""
    seen = {}

    def on_tick(run):
        seen.update(run.services)

    config = tiny("run.max_steps=12", "run.eval_every=12")
    out = train(config, tmp_path / "run", sync=True, log=quiet, tick_seconds=0.0, hooks={"on_tick": on_tick})
    services = [role for role in ROLES if role.step is None]
    drives_every_role(out, {name: len(objs) for name, objs in seen.items()}, config, services)
    for role in services:
        assert all(isinstance(obj, role.plain) for obj in seen[role.name]), role.name
    assert [int(r["step"]) for r in read_eval_csv(tmp_path / "run" / "eval.csv")] == [0, 12]
    assert out["evals_this_run"] == 2 and [e["step"] for e in out["last_eval"]] == [12]
    networks = []
    alone = train(tiny("run.max_steps=12", "solver.solvers=0", "selfplay.p_td1=0.5", "inference.servers=2"),
                  tmp_path / "alone", sync=True, log=quiet,
                  hooks={"on_tick": lambda run: networks.append(len(run.services["inference"]))})
    assert alone["counters"]["solves"] == 0 and "solver" not in alone["wait_share"] and alone["queue"] == {}
    assert networks and set(networks) == {1}          # inference.servers is the Ray run's: one network here


def test_ray_run_survives_killed_worker_and_server(tmp_path):
    """Real Ray (2 CPUs, local): kill the self-play worker, then the inference server; the run
    reaches max_steps, both come back, weights reach the server and the workers. Every role of
    the table runs as its `count` actors."""
    import ray

    events = {}

    def new_pid(call, old):
        """Poll until the actor answers from a new process (ray.kill is asynchronous)."""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                pid = call()
            except ray.exceptions.RayError:
                pid = old
            if pid != old:
                return pid
            time.sleep(0.1)
        raise AssertionError("the killed actor did not come back within 60 s")

    def on_tick(run):
        step = run.learner.step_count
        events.setdefault("members", {name: len(handles) for name, handles in run.actors.items()})
        if "worker" not in events and step >= 20:
            worker = run.actors["selfplay"][0]
            old = ray.get(worker.ping.remote())
            ray.kill(worker, no_restart=False)
            new = new_pid(lambda: ray.get(worker.ping.remote(), timeout=60), old)
            events["worker"] = (step, run.counters["games"], old, new)
        elif "worker" in events and "server" not in events and step >= events["worker"][0] + 20:
            old = ray.get(run.server.stats.remote())["pid"]
            events["before_server_kill"] = (run.counters["actor_failures"], run.inference_totals()["batches"])
            ray.kill(run.server, no_restart=False)
            new = new_pid(lambda: ray.get(run.server.stats.remote(), timeout=60)["pid"], old)
            events["server"] = (step, old, new)
            # the producers' retried calls reach the new process; wait until it has answered one,
            # or the run may reach max_steps on replayed data before it does
            deadline = time.monotonic() + 60
            while ray.get(run.server.stats.remote(), timeout=60)["batches"] == 0 and time.monotonic() < deadline:
                time.sleep(0.1)

    run_dir = tmp_path / "run"
    config = tiny("run.max_steps=160", "learner.checkpoint_every=40")
    with no_fork_after_jax():                  # the local Ray instance starts in a process of its own
        out = train(config, run_dir, sync=False, log=quiet, tick_seconds=0.25, hooks={"on_tick": on_tick},
                    num_cpus=2)
    assert not ray.is_initialized()            # the run owned its Ray instance and shut it down
    drives_every_role(out, events["members"], config, ROLES)
    assert out["mode"] == "ray" and out["stop_reason"] == "max_steps" and out["steps"] == 160
    assert events["worker"][2] != events["worker"][3] and events["server"][1] != events["server"][2]
    assert out["counters"]["games"] > events["worker"][1]   # the restarted worker played on
    assert out["server_restarts_seen"] >= 1                 # the driver noticed and re-published
    failures, batches = events["before_server_kill"]
    assert failures <= 1          # the killed worker: one failure (none if its step had returned), not one per call
    assert out["inference"]["batches"] > batches            # summed over both server processes
    assert latest_step(run_dir) == 160 and out["checkpoints"] == [120, 160] and out["checkpoints_written"] >= 4
    assert out["version"] == 80 and out["inference"]["version"] >= 1
    assert max(out["versions_in_use"].values()) >= 1        # workers/solvers used published weights
    assert out["replay"]["size"] >= 64 and out["counters"]["solves"] > 0
    scalars = read_scalars(run_dir / "tb")
    assert "inference/mean_batch" in scalars and "wait/selfplay" in scalars
    sizes = [v for _, v in scalars["replay/size"]]
    assert sizes[-1] > sizes[0] or sizes[0] >= 64


def test_local_ray_is_kept_by_a_process_of_its_own_until_stopped():
    """`LocalRay` starts the instance from a fresh interpreter (no fork of this process once JAX
    runs), this process connects by address, and `stop` ends that process and the instance."""
    import ray

    from launch.local_ray import LocalRay
    with no_fork_after_jax():
        local = LocalRay(num_cpus=1, include_dashboard=False)
        process = local._process
        ray.init(address=local.address)
        assert ray.cluster_resources()["CPU"] == 1
        ray.shutdown()
        local.stop()
    assert process.returncode is not None and local._process is None
    local.stop()                                  # again: nothing


def test_server_totals_add_up_across_a_restart():
    from launch.ray_run import add_server_totals

    old = {"version": 7, "batches": 10, "requests": 12, "queries": 30, "batch_sizes": {2: 5, 4: 5},
           "busy_seconds": 1.0, "idle_seconds": 3.0, "weight_updates": 7, "seconds": 4.0, "pid": 1}
    new = {"version": 8, "batches": 2, "requests": 2, "queries": 10, "batch_sizes": {4: 1, 6: 1},
           "busy_seconds": 0.5, "idle_seconds": 0.5, "weight_updates": 1, "seconds": 1.0, "pid": 2}
    both = add_server_totals(add_server_totals({}, old), new)
    assert both["batches"] == 12 and both["queries"] == 40 and both["mean_batch"] == 40 / 12
    assert both["batch_sizes"] == {2: 5, 4: 6, 6: 1} and both["seconds"] == 5.0
    assert both["version"] == 8 and both["pid"] == 2


def test_own_networks_sum_the_producers_calls():
    """Without servers the inference totals are the sum of the steps' own network calls, and the
    progress line's mean batch is that of the calls since the previous read (kept when none came)."""
    from launch.ray_run import OwnNetworks

    own = OwnNetworks()
    own.add({"calls": 2, "queries": 10, "seconds": 0.5, "batch_sizes": {4: 1, 6: 1}})
    own.add({"calls": 1, "queries": 6, "seconds": 0.25, "batch_sizes": {"6": 1}})
    own.add({})                                          # a step of an empty queue: nothing
    assert own.totals() == {"batches": 3, "queries": 16, "busy_seconds": 0.75, "batch_sizes": {4: 1, 6: 2}}
    assert own.since_read()["mean_batch"] == pytest.approx(16 / 3)
    assert own.since_read()["mean_batch"] == pytest.approx(16 / 3)     # no calls since: the last mean
    own.add({"calls": 1, "queries": 2, "seconds": 0.1, "batch_sizes": {2: 1}})
    assert own.since_read()["mean_batch"] == 2


def test_producers_are_spread_over_the_servers():
    """Producer i, counted over the producer roles in table order, asks server i % servers."""
    from launch.ray_run import server_of

    roles = {role.name: role for role in PRODUCERS}
    config = tiny("selfplay.workers=3", "solver.solvers=2", "inference.servers=2")
    assert [server_of(config, roles["selfplay"], i) for i in range(3)] == [0, 1, 0]
    assert [server_of(config, roles["solver"], i) for i in range(2)] == [1, 0]
    one = tiny("selfplay.workers=3", "solver.solvers=2")
    assert {server_of(one, role, i) for role in PRODUCERS for i in range(role.count(one))} == {0}
    assert {role.name: role.count(config) for role in ROLES}["inference"] == 2


def test_server_totals_sum_over_servers_and_restarts():
    """Each server's stats summed across its processes (ServerTrack), then over the servers: counts,
    seconds (server-seconds, so busy / seconds is the mean busy share) and histograms add up, the
    version is the oldest served, restarts are counted per server."""
    from launch.ray_run import ServerTrack, sum_servers

    def stats(pid, batches, queries, busy, seconds, version, sizes):
        return {"version": version, "batches": batches, "requests": batches, "queries": queries,
                "batch_sizes": sizes, "busy_seconds": busy, "idle_seconds": seconds - busy,
                "weight_updates": version, "seconds": seconds, "pid": pid, "pending": 0, "rss_mb": 100.0}

    a, b = ServerTrack(), ServerTrack()
    assert sum_servers([a.totals(), b.totals()]) == {}
    delta, restarted = a.read(stats(1, 4, 8, 1.0, 2.0, 3, {2: 4}))
    assert not restarted and delta == {"batches": 4, "queries": 8, "busy_seconds": 1.0, "seconds": 2.0}
    delta, restarted = a.read(stats(1, 10, 20, 2.0, 4.0, 5, {2: 10}))
    assert not restarted and delta == {"batches": 6, "queries": 12, "busy_seconds": 1.0, "seconds": 2.0}
    delta, restarted = a.read(stats(2, 1, 4, 0.5, 1.0, 6, {4: 1}))           # a new process
    assert restarted and delta == {"batches": 1, "queries": 4, "busy_seconds": 0.5, "seconds": 1.0}
    b.read(stats(3, 5, 30, 3.0, 5.0, 4, {6: 5}))
    ta, tb = a.totals(), b.totals()
    assert ta["batches"] == 11 and ta["queries"] == 24 and ta["seconds"] == 5.0 and ta["restarts"] == 1
    assert ta["batch_sizes"] == {2: 10, 4: 1} and tb["restarts"] == 0
    both = sum_servers([ta, tb])
    assert both["batches"] == 16 and both["queries"] == 54 and both["mean_batch"] == 54 / 16
    assert both["batch_sizes"] == {2: 10, 4: 1, 6: 5} and both["restarts"] == 1
    assert both["busy_seconds"] / both["seconds"] == pytest.approx((2.5 + 3.0) / 10.0)
    assert both["version"] == 4 and both["servers"] == [ta, tb] and both["rss_mb"] == 200.0
    assert sum_servers([ta, {}])["batches"] == 11          # a server not read yet counts nothing


def test_inference_servers_split_the_gpu_share():
    """With a GPU the servers ask for inference.gpus and inference.memory_fraction together."""
    role = next(role for role in ROLES if role.name == "inference")
    for n in (1, 2, 3, 4):
        config = load_config("hunl", [f"inference.servers={n}"])
        options = role.actor_options(config, 1)
        fraction = float(options["runtime_env"]["env_vars"]["XLA_CLIENT_MEM_FRACTION"])
        assert 0.5 - 1e-4 * n <= n * options["num_gpus"] <= 0.5
        assert 0.35 - 1e-4 * n <= n * fraction <= 0.35
    assert role.actor_options(load_config("hunl"), 0)["runtime_env"] == {"env_vars": {"JAX_PLATFORMS": "cpu"}}


@pytest.mark.slow
def test_ray_run_with_two_servers_survives_killing_one(tmp_path):
    """Real Ray (2 CPUs, local), inference.servers=2: the self-play worker asks server 0, the solver
    server 1; server 1 is killed mid-run. The run reaches max_steps, both servers answered and
    serve published weights (the restarted one the newest again), the totals are the servers' sums."""
    import ray

    events = {}

    def on_tick(run):
        step = run.learner.step_count
        events.setdefault("members", {name: len(handles) for name, handles in run.actors.items()})
        if "server" not in events and step >= 20:
            server = run.servers[1]
            old = ray.get(server.stats.remote())["pid"]
            events["version_at_kill"] = run.learner.version
            ray.kill(server, no_restart=False)
            deadline = time.monotonic() + 60
            new = old
            while new == old and time.monotonic() < deadline:
                try:
                    new = ray.get(server.stats.remote(), timeout=60)["pid"]
                except ray.exceptions.RayError:
                    time.sleep(0.1)
            events["server"] = (old, new)

    config = tiny("run.max_steps=100", "inference.servers=2", "learner.checkpoint_every=50", "run.minutes=8")
    out = train(config, tmp_path / "run", sync=False, log=quiet, tick_seconds=0.25, hooks={"on_tick": on_tick},
                num_cpus=2)
    assert out["mode"] == "ray" and out["stop_reason"] == "max_steps" and out["steps"] == 100
    assert events["members"]["inference"] == 2 and events["server"][0] != events["server"][1]
    inf = out["inference"]
    first, second = inf["servers"]
    assert first["batches"] > 0 and second["batches"] > 0            # both answered producers
    assert first["restarts"] == 0 and second["restarts"] >= 1 and out["server_restarts_seen"] == second["restarts"]
    for key in ("batches", "queries", "requests", "weight_updates"):
        assert inf[key] == first[key] + second[key], key
    assert inf["seconds"] == pytest.approx(first["seconds"] + second["seconds"])
    assert inf["mean_batch"] == pytest.approx(inf["queries"] / inf["batches"]) and inf["max_batch"] >= 1
    assert inf["version"] == min(first["version"], second["version"])
    assert first["version"] > events["version_at_kill"] and second["version"] > events["version_at_kill"]
    assert out["counters"]["solves"] > 0 and out["counters"]["games"] > 0
    assert max(out["versions_in_use"].values()) >= 1


def test_check_run_dir_names_the_folder_it_cannot_write(tmp_path, monkeypatch):
    """The read-only cases as root too (root may write anywhere): os.access says no for one folder."""
    import os

    from launch.training_run import TrainError, check_run_dir

    locked = tmp_path / "locked"
    locked.mkdir()
    monkeypatch.setattr(os, "access", lambda path, mode: os.fspath(path) != os.fspath(locked))
    with pytest.raises(TrainError, match=f"^run directory {locked} is not writable$"):
        check_run_dir(locked)
    with pytest.raises(TrainError, match=f"^cannot create run directory {locked}/a/b: {locked} is not writable$"):
        check_run_dir(locked / "a" / "b")
    check_run_dir(tmp_path / "fresh" / "run")                 # a writable parent: fine, nothing made
    assert not (tmp_path / "fresh").exists()


def test_ray_run_with_own_networks_survives_a_killed_worker(tmp_path):
    """Real Ray (2 CPUs, local), inference.servers=0: no server; each producer runs the network
    in its own process. The self-play worker is killed mid-run: Ray restarts it (with the run's
    initial weights), the driver sends it the newest, and its steps come to use weights at least
    as new as those at the kill; the inference totals are the producers' own calls."""
    import ray

    events = {}

    def on_tick(run):
        events.setdefault("members", {name: len(handles) for name, handles in run.actors.items()})
        key = ("selfplay", 0)
        if "worker" not in events and run.learner.version >= 2:
            worker = run.actors["selfplay"][0]
            old = ray.get(worker.ping.remote())
            events["version_at_kill"] = run.learner.version
            events["worker"] = (run.counters["games"], old)
            ray.kill(worker, no_restart=False)
        elif "worker" in events and run.pids.get(key) not in (None, events["worker"][1]):
            # the new process's first step may still use the initial weights; the driver then
            # sends the newest, and a later step uses weights at least as new as those at the kill
            if run._versions[key] >= events["version_at_kill"]:
                events["restarted"] = (run.pids[key], run._versions[key], run.counters["games"])
                run.stop_reason = "test"

    config = tiny("run.max_steps=0", "inference.servers=0", "learner.checkpoint_every=40", "run.minutes=4")
    out = train(config, tmp_path / "run", sync=False, log=quiet, tick_seconds=0.25, hooks={"on_tick": on_tick},
                num_cpus=2)
    assert out["mode"] == "ray" and out["stop_reason"] == "test"      # (not the 4 minutes)
    assert events["members"]["inference"] == 0
    pid, version, games = events["restarted"]
    assert pid != events["worker"][1] and games > events["worker"][0]    # a new process played on
    assert version >= events["version_at_kill"]
    inf = out["inference"]
    assert inf["batches"] > 0 and 1 <= inf["mean_batch"] <= inf["max_batch"]
    assert inf["queries"] >= inf["batches"] and out["counters"]["network_queries"] <= inf["queries"]
    assert out["counters"]["solves"] > 0
