"""A real multi-node Ray cluster on this machine: `sog train` submitted with `ray job submit` as
README's cluster section says, one node holding a producer stopped mid-run, the run going on
(its actors rescheduled on the other node) to the end, and resuming when submitted again.

The head (no CPUs: the job's driver, the learner, and the services pinned to it) and two
CPU nodes (2 CPUs each, told apart by a custom resource) are `ray start --block` processes
of this test, each with its own temp folder, so stopping one (SIGTERM, as `ray stop` does)
touches nothing else on the machine and `ray.init()` elsewhere does not find this cluster.
Nodes that shared one would share its `runtime_resources/working_dir_files`, where each
node's agent unpacks the job's working directory afresh (overwriting): the driver's current
directory would vanish under it (os.getcwd() -> FileNotFoundError), which machines of a real
cluster, each with its own disk, never see.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent            # ray and sog, installed next to this Python
STEPS = 8000                # ~70 learner steps a second here: the run outlives a node stopped after step 100


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(check, seconds: float, what: str):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(1.0)
    raise AssertionError(f"timed out after {seconds:g} s waiting for {what}")


class LocalCluster:
    """A head and CPU nodes started with `ray start --block` (see module doc)."""

    def __init__(self, folder: Path):
        self.temps: list[str] = []
        self.folder, self.gcs, self.dashboard = folder, _port(), _port()
        self.address = f"http://127.0.0.1:{self.dashboard}"
        self.env = {**os.environ, "RAY_AUTH_MODE": "disabled", "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
                    "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
        self.env.pop("RAY_ADDRESS", None)
        self.nodes: dict[str, subprocess.Popen] = {}
        self.logs: list = []
        common = ["--block", "--disable-usage-stats", "--object-store-memory=200000000"]
        try:
            self._start("head", ["--head", f"--port={self.gcs}", f"--dashboard-port={self.dashboard}",
                                 "--include-dashboard=true", "--dashboard-host=127.0.0.1", "--num-cpus=0",
                                 f"--ray-client-server-port={_port()}", *common])
            _wait(self._job_api_up, 120, "the head's job API")
            for name in ("node_b", "node_c"):           # one after the other: two at once can time out
                self._start(name, [f"--address=127.0.0.1:{self.gcs}", "--num-cpus=2",
                                   f"--resources={json.dumps({name: 1})}", *common])
                _wait(lambda name=name: name in self.alive_nodes().values(), 120, f"{name} to join")
        except BaseException:
            self.close()
            raise

    def _start(self, name: str, args: list[str]) -> None:
        self.temps.append(tempfile.mkdtemp(prefix="sogray-", dir="/tmp"))    # short: Ray's socket paths
        args = [*args, f"--temp-dir={self.temps[-1]}"]
        log = open(self.folder / f"{name}.log", "wb")  # noqa: SIM115 - closed by close()
        self.logs.append(log)
        self.nodes[name] = subprocess.Popen([str(BIN / "ray"), "start", *args], stdout=log,
                                            stderr=subprocess.STDOUT, env=self.env)

    def _job_api_up(self) -> bool:
        from ray.job_submission import JobSubmissionClient
        try:
            JobSubmissionClient(self.address).list_jobs()
        except Exception:  # noqa: BLE001 - not up yet
            return False
        return True

    def alive_nodes(self) -> dict:
        """node id -> the name of our node (its custom resource; 'head' for the head)."""
        from ray.util.state import list_nodes
        nodes = list_nodes(address=self.address, filters=[("state", "=", "ALIVE")], raise_on_missing_output=False)
        return {n.node_id: next((r for r in n.resources_total if r.startswith("node_")), "head") for n in nodes}

    def producers(self) -> list:
        """The alive ProducerActors (Ray's state API)."""
        from ray.util.state import list_actors
        return list_actors(address=self.address, filters=[("class_name", "=", "ProducerActor"),
                                                          ("state", "=", "ALIVE")], raise_on_missing_output=False)

    def producer_nodes(self) -> set[str]:
        """The names of the nodes the alive ProducerActors run on."""
        names = self.alive_nodes()
        return {names.get(a.node_id, "?") for a in self.producers()}

    def submit(self, job_id: str, run_dir: Path, steps: int) -> None:
        """As README's cluster section: RAY_ADDRESS=http://... ray job submit --working-dir . -- sog train ..."""
        subprocess.run([str(BIN / "ray"), "job", "submit", "--no-wait", "--submission-id", job_id,
                        "--working-dir", ".", "--", "sog", "train", "--config", "tiny_kuhn", "--run-dir",
                        str(run_dir), "--set", f"run.max_steps={steps}", "--set", "run.minutes=10",
                        "--set", "selfplay.workers=1", "--set", "solver.solvers=1"],
                       cwd=REPO, env={**self.env, "RAY_ADDRESS": self.address}, check=True, capture_output=True)

    def finished(self, job_id: str) -> tuple[str, str]:
        """(final status, logs) of the job, once it has ended."""
        from ray.job_submission import JobStatus, JobSubmissionClient
        client = JobSubmissionClient(self.address)
        status = _wait(lambda: (s := client.get_job_status(job_id)).is_terminal() and s, 400, f"job {job_id}")
        assert status == JobStatus.SUCCEEDED, client.get_job_logs(job_id)[-3000:]
        return status, client.get_job_logs(job_id)

    def stop(self, name: str) -> None:
        node = self.nodes.pop(name)
        node.send_signal(signal.SIGTERM)                 # `ray stop` on that node: its raylet and workers end
        try:
            node.wait(timeout=60)
        except subprocess.TimeoutExpired:
            node.kill()
            node.wait()

    def close(self) -> None:
        for name in sorted(self.nodes, key=lambda n: n == "head"):     # the head last
            self.stop(name)
        for log in self.logs:
            log.close()
        for temp in self.temps:
            shutil.rmtree(temp, ignore_errors=True)


def _summary(logs: str) -> dict:
    return json.loads(logs.strip().splitlines()[-1])


def test_training_survives_a_node_stopped_and_resumes(tmp_path):
    cluster = LocalCluster(tmp_path)
    run_dir = tmp_path / "run"
    try:
        cluster.submit("sog-first", run_dir, STEPS)

        def stepped() -> bool:
            metrics = run_dir / "metrics.jsonl"
            lines = metrics.read_text().splitlines() if metrics.exists() else []
            return bool(lines) and json.loads(lines[-1])["step"] >= 100

        _wait(stepped, 300, "100 learner steps")
        victim = min(cluster.producer_nodes())
        survivor = ({"node_b", "node_c"} - {victim}).pop()
        cluster.stop(victim)
        # both producers (one self-play worker, one solver: 2 CPUs) come back on the other node
        _wait(lambda: cluster.producer_nodes() == {survivor} and victim not in cluster.alive_nodes().values()
              and len(cluster.producers()) == 2, 180, f"the producers to move to {survivor}")
        _, logs = cluster.finished("sog-first")
        out = _summary(logs)
        print(f"stopped {victim}; producers then on {survivor}; the driver's lines about it:",
              *(line for line in logs.replace("\r", "\n").splitlines() if ("died" in line or "restart" in line) and not line.startswith("{")),
              f"counters: {out['counters']}, actor restarts seen {out['actor_restarts_seen']}, "
              f"server restarts seen {out['server_restarts_seen']}", sep="\n")
        assert out["stop_reason"] == "max_steps" and out["steps"] == STEPS
        assert out["counters"]["actor_failures"] >= 1 and out["actor_restarts_seen"] >= 1, out
        assert "died (" in logs                          # the driver saw the producers die and went on

        cluster.submit("sog-again", run_dir, STEPS + 100)
        _, logs = cluster.finished("sog-again")
        again = _summary(logs)
        assert again["resumed"] and again["start_step"] == STEPS and again["steps"] == STEPS + 100
    finally:
        cluster.close()
