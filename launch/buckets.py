"""`sog buckets`: build (or find in the cache) a hold'em game's hand buckets.

`sog buckets --game GAME --buckets 0,200,200,200 --cache-dir DIR` prints one JSON
object: the file, whether it was built now, the seconds taken, and per round the
(hand, board) classes up to suit permutations and the buckets. A configuration already
built is read from its file (`sog.games.holdem.buckets.load_or_build`); a bad
configuration, or a cached file that is damaged or was built for another configuration,
is a one-line error with exit status 2.
"""
from __future__ import annotations

import time

from launch.console import UserError
from launch.games import named_holdem
from sog.games.holdem.buckets import (
    BucketConfig,
    BucketError,
    cache_path,
    load_or_build,
)


def add_parser(subparsers):
    p = subparsers.add_parser("buckets", help="hold'em hand buckets per round, cached on disk")
    p.add_argument("--game", default="hunl", help="a holdem game (default hunl)")
    p.add_argument("--buckets", required=True,
                   help="bucket counts per round, comma-separated (0: one per class, lossless), for the "
                        "first rounds when fewer; Pluribus's blueprint: 0,200,200,200")
    p.add_argument("--bins", type=int, default=20, help="equity histogram bins")
    p.add_argument("--rollouts", type=int, default=2000,
                   help="board completions enumerated per canonical board (more: this many sampled)")
    p.add_argument("--seed", type=int, default=0, help="k-means and sampled completions' seed (default 0)")
    p.add_argument("--cache-dir", required=True, help="folder of the bucket files")
    p.set_defaults(func=run)
    return p


def run(args) -> dict:
    game = named_holdem(args.game)
    try:
        counts = [int(x) for x in args.buckets.split(",")]
    except ValueError:
        raise UserError(f"--buckets {args.buckets!r} must be integers separated by commas") from None
    t0 = time.perf_counter()
    try:
        config = BucketConfig.for_game(game, counts, bins=args.bins, rollouts=args.rollouts, seed=args.seed)
        buckets, built = load_or_build(config, args.cache_dir)
    except BucketError as e:
        raise UserError(str(e)) from None
    return {"game": game.spec.name, "file": str(cache_path(config, args.cache_dir)), "built": built,
            "seconds": time.perf_counter() - t0,
            "rounds": [{"classes": len(rb.keys), "buckets": rb.num_buckets} for rb in buckets.rounds]}
