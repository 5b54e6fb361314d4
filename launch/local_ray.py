"""The local Ray instance of a training run, started from a fresh process.

`ray.init()` without an address starts Ray's own processes (GCS, raylet, log
monitor) from the calling process with `subprocess.Popen(preexec_fn=...)`: a
fork that runs Python in the child before it executes the program. Once JAX has
initialised its backend in that process (a test session, `sog bench`, anything
that touched the network first), its threads may hold locks the child then
waits on forever, and JAX warns "os.fork() was called ... deadlock" at every
such start. `LocalRay` starts the instance from a process of its own instead
(`python -m launch.local_ray`, started without a preexec_fn, so no Python runs
between fork and exec; a fresh interpreter that never imports JAX), which keeps
it until `stop`, and the run connects to it by address.

That process ignores Ctrl-C, so an interrupted run can still save its replay
and queue through the actors before `stop`; it ends the instance when the run
process goes away without calling `stop` (its stdin closes).

Ray's harmless start-up lines are left out: the INFO lines of starting and
connecting, and the notice that token authentication is on (the instance
uses a token of its own, in ~/.ray, unless `RAY_AUTH_MODE` says otherwise).
One line it prints at error level from C++ cannot be filtered from here and
is explained where it appears (`launch.ray_run`).
"""
from __future__ import annotations

import contextlib
import json
import logging
import select
import signal
import subprocess
import sys

START_SECONDS = 300.0      # how long the instance may take to start before the run gives up
STOP_SECONDS = 60.0        # how long `stop` waits for it to end before it kills the process
QUIET_LOGGERS = ("ray._private.authentication.authentication_token_setup",)   # their notices: left out


def quiet_ray_logs() -> None:
    """Leave out the notices of `QUIET_LOGGERS` (their errors still show)."""
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.ERROR)


def token_auth_by_default() -> None:
    """Token authentication for this process and the processes it starts, as `ray.init()` gives a
    new local instance by default (unless `RAY_AUTH_MODE` says otherwise): the instance is made
    with it and this process connects with it. (Ray versions without token authentication:
    nothing to do.)"""
    try:
        from ray._private.authentication.authentication_token_setup import enable_token_auth_by_default
    except ImportError:
        return
    quiet_ray_logs()
    enable_token_auth_by_default()


class LocalRay:
    """A local Ray instance kept by a process of its own (see module doc); `address` is its GCS
    address, for `ray.init(address=...)`. `init_kwargs` (JSON values: num_cpus,
    include_dashboard, ...) go to that process's `ray.init`. Raises RuntimeError when it does not
    start."""

    def __init__(self, **init_kwargs):
        token_auth_by_default()
        # no preexec_fn: the child runs no Python of this process before it executes the interpreter
        self._process = subprocess.Popen([sys.executable, "-m", "launch.local_ray", json.dumps(init_kwargs)],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        ready, _, _ = select.select([self._process.stdout], [], [], START_SECONDS)
        line = self._process.stdout.readline().strip() if ready else "error timed out"
        kind, _, text = line.partition(" ")
        if kind != "address":
            self.stop()
            raise RuntimeError(f"the local Ray instance did not start: {text or 'its process ended'}")
        self.address = text

    def stop(self) -> None:
        """End the instance and its process (again: nothing)."""
        if self._process is None:
            return
        with contextlib.suppress(OSError):          # the process is gone already
            self._process.stdin.close()
        try:
            self._process.wait(STOP_SECONDS)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._process.stdout.close()
        self._process = None


def _keep(init_kwargs: dict) -> None:
    """The instance's process: start Ray, write "address ADDRESS" (or "error TEXT") as one line
    on stdout, then keep it until stdin closes (`stop`, or the run process is gone)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)     # Ctrl-C is the run's to handle
    import ray

    out, sys.stdout = sys.stdout, sys.stderr          # stdout carries the one line alone
    quiet_ray_logs()
    try:
        ray.init(**init_kwargs, logging_level=logging.WARNING, log_to_driver=False)
    except Exception as e:  # noqa: BLE001 - reported by the run
        print("error", f"{type(e).__name__}: {e}".replace("\n", " "), file=out, flush=True)
        return
    print("address", ray.get_runtime_context().gcs_address, file=out, flush=True)
    sys.stdin.read()
    ray.shutdown()


if __name__ == "__main__":
    _keep(json.loads(sys.argv[1]))
