"""Where a producer's searches spent their time, as step stats (seconds, summed over a step's searches).

A step's searches run as coroutines in lockstep in one thread (`actors.lockstep`), so their
time is that thread's: `search_seconds` is each search's own clock (`SearchResult.timings`:
`total` less `value`, the time it was suspended at its value requests while the merged call and
the batch's other searches ran; a self-play search with its re-solving summary and any initial
solve) plus the driver's merged calls and merging. It splits into `search_tree` (growing,
compiling and reading trees), `search_cfr` (CFR passes), `search_network` (inside the merged
network calls, each call once) and `search_merge` (the driver building the merged requests and
splitting the answers). `search_seconds` over the searches is the thread's time per search.
"""
from __future__ import annotations

from collections.abc import Iterable

from sog.search.gtcfr import PHASES, add_timings

SEARCH_TIME_STATS = ("search_seconds", "search_tree", "search_cfr", "search_network", "search_merge")


def search_time_stats(timings: Iterable[dict], driver: dict) -> dict:
    """The step stats of `SEARCH_TIME_STATS` from the searches' `SearchResult.timings` and the
    `actors.lockstep.run_lockstep` driver's seconds ({"network", "merge"})."""
    phases = dict.fromkeys(PHASES, 0.0)
    own = 0.0
    for t in timings:
        add_timings(phases, t)
        own += t["total"] - t["value"]
    return {"search_seconds": own + driver["network"] + driver["merge"], "search_tree": phases["tree"],
            "search_cfr": phases["cfr"], "search_network": driver["network"], "search_merge": driver["merge"]}
