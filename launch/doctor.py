"""`sog doctor`: what this machine offers a training run, and where each role would run.

One JSON object:

    jax      version, default backend, devices (id, platform, kind) JAX sees in this process
    cuda     the CUDA runtime / driver and cuDNN versions JAX's CUDA plugin reports
             (`networks.devices.cuda_versions`; {} without one)
    xla_env  the XLA memory variables of this process's environment
    ray      Ray's resources (CPU, GPU, memory, ...) of the local instance it starts (or of
             the cluster `RAY_ADDRESS` names); {"error": ...} when Ray cannot start
    roles    per role of the config (`launch.roles.ROLES` that run JAX, and the learner in the
             driver): count, device (the config's key), lands_on (cpu or gpu:K), and for Ray
             actors num_gpus and the env vars they get (`Role.actor_options`); a device key
             naming a GPU the machine lacks reads `error` there

    sog doctor [--config kuhn] [--set inference.device=gpu:0] [--no-ray]

Without --config the sections' defaults are used (every device key `auto`).
"""
from __future__ import annotations

import logging
import os

from launch.console import UserError
from sog.config import Config, ConfigError, device_kind, load_config


def _lands_on(text: str, gpus: int) -> str:
    kind, index = device_kind(text, gpus)
    return f"gpu:{index}" if kind == "gpu" else "cpu"


def ray_resources(use_ray: bool = True) -> dict:
    """The resources of the Ray instance this process joins (`RAY_ADDRESS`) or starts (a local
    one, shut down again); {} with use_ray False."""
    if not use_ray:
        return {}
    import ray

    from launch.local_ray import LocalRay, quiet_ray_logs

    owns = not ray.is_initialized()
    local = None
    try:
        if owns:
            quiet_ray_logs()
            address = os.environ.get("RAY_ADDRESS")
            if not address:
                # a local instance from a process of its own (no fork of a process that holds JAX)
                local = LocalRay(include_dashboard=False)
                address = local.address
            ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING)
        return {k: float(v) for k, v in sorted(ray.cluster_resources().items()) if not k.startswith("node:")}
    except Exception as e:  # noqa: BLE001 - the report says why instead of failing
        return {"error": f"{type(e).__name__}: {e}"}
    finally:
        if owns and ray.is_initialized():
            ray.shutdown()
        if local is not None:
            local.stop()


def doctor(config: Config | None = None, use_ray: bool = True) -> dict:
    """The report of the module doc for `config` (None: the default sections)."""
    import jax

    from launch.roles import ROLES
    from networks.devices import (
        DEPRECATED_MEM_FRACTION,
        MEM_FRACTION,
        PREALLOCATE,
        cuda_versions,
        gpus,
    )

    config = config or Config(game="")
    resources = ray_resources(use_ray)
    local_gpus = len(gpus())
    ray_gpus = int(resources.get("GPU", 0)) if "error" not in resources else local_gpus
    try:
        learner = {"count": 1, "device": config.learner.device, "process": "driver",
                   "lands_on": _lands_on(config.learner.device, local_gpus)}
    except ValueError as e:
        learner = {"count": 1, "device": config.learner.device, "process": "driver", "error": str(e)}
    roles = {"learner": learner}
    for role in ROLES:
        if not role.jax:
            continue
        entry = {"count": role.count(config), "device": config.inference.device if role.serves(config) else "cpu"}
        try:
            options = role.actor_options(config, ray_gpus)
        except ValueError as e:
            entry["error"] = str(e)
        else:
            env = options.get("runtime_env", {}).get("env_vars", {})
            entry["lands_on"] = (_lands_on(config.inference.device, ray_gpus) if options.get("num_gpus")
                                 else "cpu")
            entry["num_gpus"] = options.get("num_gpus", 0)
            entry["env_vars"] = {k: v for k, v in env.items() if v}
        roles[role.name] = entry
    return {
        "jax": {"version": jax.__version__, "backend": jax.default_backend(),
                "devices": [{"id": d.id, "platform": d.platform, "kind": getattr(d, "device_kind", "")}
                            for d in jax.devices()]},
        "cuda": cuda_versions(),
        "xla_env": {k: os.environ[k] for k in (PREALLOCATE, MEM_FRACTION, DEPRECATED_MEM_FRACTION, "JAX_PLATFORMS")
                    if os.environ.get(k)},
        "ray": resources,
        "roles": roles,
    }


def run_command(args) -> dict:
    """`sog doctor` from parsed arguments (`--config`, `--set`, `--no-ray`)."""
    config = None
    if args.config:
        try:
            config = load_config(args.config, args.set or [])
        except ConfigError as e:
            raise UserError(str(e)) from None
    elif args.set:
        raise UserError("--set changes a config: give --config too")
    return doctor(config, use_ray=not args.no_ray)


def add_parser(sub) -> None:
    d = sub.add_parser("doctor", help="JAX and CUDA devices, Ray resources, roles' devices")
    d.add_argument("--config", help="the config whose device keys to resolve (default: the defaults, auto)")
    d.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a config value (repeatable)")
    d.add_argument("--no-ray", action="store_true", help="do not start Ray (its resources are left out)")
    d.set_defaults(func=run_command)
