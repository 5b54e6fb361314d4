"""`sog bench network`: the CVPN's positions per second by batch size on this machine's JAX device.

The inference server pads each merged batch up to a bucket (`networks.bucket_sizes` of
`inference.max_batch`) and runs one jitted `model.apply` per bucket; this benchmark times
that call (`NetworkValueFunction.apply_padded`, host arrays in and out, so the transfers
are included) for each batch size given, on a freshly initialised network of the config
(`network:`) for its game. Inputs are random ranges and features of the right width with
every hand possible: the network's cost does not depend on their values. Per batch size:

    ms_per_call      wall milliseconds of one call (the median of the timed calls)
    rows_per_s       batch size / ms_per_call, positions (public belief states) per second

Each size is compiled and run once before it is timed for `--seconds` S (at least 3 calls).
It sizes the server: where rows_per_s stops growing with the batch, a fuller batch buys
nothing, and `ms_per_call` at the served batch is the latency each search waits for.

    sog bench network --config leduc [--batches 1,8,64,512] [--seconds 1]
"""
from __future__ import annotations

import time

import numpy as np

from launch.console import UserError
from sog.config import Config, ConfigError, load_config

DEFAULT_BATCHES = (1, 8, 64, 512, 4096)


def bench_network(config: Config, batches=DEFAULT_BATCHES, seconds: float = 1.0) -> dict:
    """Timings of `apply_padded` per batch size (module doc), with the device and the network."""
    import jax

    from networks import NetworkValueFunction
    from networks.cvpn import init_params
    from sog.games import load_game

    game = load_game(config.game)
    spec = game.spec
    n, width = spec.num_states, 2 * spec.num_states + spec.feature_size
    value_fn = NetworkValueFunction(game, config.network, init_params(game, config.network, config.run.seed),
                                    buckets=batches)
    rng = np.random.default_rng(config.run.seed)
    device = jax.devices()[0]
    rows = []
    for b in batches:
        inputs = rng.random((b, width), dtype=np.float32)
        possible = np.ones((b, 2, n), bool)
        value_fn.apply_padded(inputs, possible)        # compile and warm up
        times = []
        start = time.perf_counter()
        while len(times) < 3 or time.perf_counter() - start < seconds:
            t = time.perf_counter()
            value_fn.apply_padded(inputs, possible)
            times.append(time.perf_counter() - t)
        ms = 1e3 * float(np.median(times))
        rows.append({"batch": b, "calls": len(times), "ms_per_call": ms, "rows_per_s": b / ms * 1e3})
    return {"benchmark": "network", "game": game.spec.name, "network": config.network.kind,
            "device": f"{device.platform}:{getattr(device, 'device_kind', '')}",
            "input_width": width, "rows": rows}


def report(result: dict, log) -> None:
    """One line per batch size."""
    log(f"{result['game']} {result['network']} network on {result['device']} (input width {result['input_width']}):")
    for r in result["rows"]:
        log(f"  batch {r['batch']:>6}: {r['ms_per_call']:8.3f} ms per call, {r['rows_per_s']:12.0f} rows/s")


def parse_batch_sizes(text: str) -> tuple[int, ...]:
    try:
        sizes = tuple(int(x) for x in text.split(","))
    except ValueError:
        raise UserError(f"--batches {text!r}: give batch sizes as comma-separated integers, e.g. 1,8,64") from None
    if not sizes or min(sizes) < 1:
        raise UserError(f"--batches {text!r}: batch sizes must be at least 1")
    return tuple(sorted(set(sizes)))


def run_command(args, log) -> dict:
    """`sog bench network` from parsed arguments (`--config`, `--set`, `--batches`, `--seconds`)."""
    if not args.config:
        raise UserError("bench network needs --config")
    seconds = 1.0 if args.seconds is None else args.seconds
    if seconds <= 0:
        raise UserError("--seconds must be positive")
    batches = parse_batch_sizes(args.batches) if args.batches else DEFAULT_BATCHES
    try:
        config = load_config(args.config, args.set or [])
    except ConfigError as e:
        raise UserError(str(e)) from None
    result = bench_network(config, batches, seconds)
    report(result, log)
    return result
