"""Where a process's JAX runs: device keys resolved, XLA memory settings, compile counts.

A device key (`learner.device`, `inference.device`: auto | cpu | gpu:K, `sog.config.parse_device`)
is resolved in the process that runs JAX (`resolve`): `auto` is the first GPU JAX sees there,
else the CPU. In a Ray actor given a GPU share, Ray narrows `CUDA_VISIBLE_DEVICES` to the GPU
it assigned, so `auto` is that one; for `gpu:K` the actor's environment keeps every GPU
visible (`launch.roles`), so K names the same GPU as in the driver.

XLA's GPU memory is set per process by environment variables read when JAX starts its
backend (`xla_env`): no preallocation, and at most a fraction of the GPU's memory.

`compiles()` counts this process's XLA compilations (JAX's monitoring event
`BACKEND_COMPILE_EVENT`, one per program compiled for a backend); a training run reports
them per process, so a weight publication that recompiled would show.
"""
from __future__ import annotations

import contextlib
import os
import threading

import jax
import jax.monitoring

from sog.config import ConfigError, device_kind

BACKEND_COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"
MEM_FRACTION = "XLA_CLIENT_MEM_FRACTION"
DEPRECATED_MEM_FRACTION = "XLA_PYTHON_CLIENT_MEM_FRACTION"   # jax refuses both names at once
PREALLOCATE = "XLA_PYTHON_CLIENT_PREALLOCATE"

_lock = threading.Lock()
_compiles = 0
_listening = False


def _on_duration(event: str, duration: float, **kwargs) -> None:
    global _compiles
    if event == BACKEND_COMPILE_EVENT:
        with _lock:
            _compiles += 1


def count_compiles() -> None:
    """Start counting this process's XLA compilations (idempotent)."""
    global _listening
    with _lock:
        if not _listening:
            jax.monitoring.register_event_duration_secs_listener(_on_duration)
            _listening = True


def compiles() -> int:
    """XLA compilations in this process since `count_compiles` was first called."""
    count_compiles()
    return _compiles


count_compiles()


def xla_env(memory_fraction: float) -> dict[str, str]:
    """The environment variables that give a process's JAX at most `memory_fraction` (0, 1] of a
    GPU's memory, allocated as needed (no preallocation); the deprecated fraction name is
    blanked, since jax refuses both names set."""
    return {PREALLOCATE: "false", MEM_FRACTION: f"{memory_fraction:.4f}", DEPRECATED_MEM_FRACTION: ""}


def set_process_env(memory_fraction: float) -> None:
    """`xla_env` into this process's environment, where the user set none of it; call before JAX
    starts its backend (the first computation or device query)."""
    if os.environ.get(MEM_FRACTION) or os.environ.get(DEPRECATED_MEM_FRACTION):
        os.environ.setdefault(PREALLOCATE, "false")
        return
    for key, value in xla_env(memory_fraction).items():
        if value:
            os.environ.setdefault(key, value)


def gpus() -> list:
    """The GPUs this process's JAX sees ([] with no GPU backend)."""
    try:
        return jax.devices("gpu")
    except RuntimeError:
        return []


def resolve(text: str, key: str = "device") -> jax.Device:
    """The JAX device a device key's value names in this process (module doc); `ConfigError`
    naming `key` for gpu:K where this process sees no GPU K."""
    visible = gpus()
    try:
        kind, index = device_kind(text, len(visible))
    except ValueError as e:
        raise ConfigError(f"{key}: {e}") from None
    return visible[index] if kind == "gpu" else jax.devices("cpu")[0]


def cuda_versions() -> dict:
    """The CUDA runtime, driver and cuDNN versions JAX's CUDA plugin reports (ints as CUDA
    writes them, e.g. 12080 for 12.8), or {} without one."""
    try:
        from jax._src.lib import cuda_versions as cv
    except ImportError:
        return {}
    if cv is None:
        return {}
    out = {}
    for name, fn in (("cuda_runtime", "cuda_runtime_get_version"), ("cuda_driver", "cuda_driver_get_version"),
                     ("cudnn", "cudnn_get_version")):
        with contextlib.suppress(Exception):     # a plugin without that call, or no driver
            out[name] = int(getattr(cv, fn)())
    return out
