"""`no_fork_after_jax`: a test's block starts no process by forking the test process once JAX
has started its threads (JAX warns "os.fork() was called ... deadlock" at each such fork)."""
import contextlib
import warnings

import jax


@contextlib.contextmanager
def no_fork_after_jax():
    """Start JAX's backend (which installs its at-fork warning), run the block with every warning
    recorded, and fail on JAX's fork warning. (The warning is raised inside an at-fork hook, where
    an error filter would only print it: recording it is what makes it fail the test.)"""
    jax.devices()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    forks = [f"{w.filename}:{w.lineno}: {w.message}" for w in caught if "os.fork() was called" in str(w.message)]
    assert not forks, forks
