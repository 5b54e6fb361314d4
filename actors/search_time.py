"""Where a producer's searches spent their time, as step stats (seconds, summed over a step's searches).

`search_seconds` is the searches' own clock (`SearchResult.timings["total"]`: each GT-CFR
search, a self-play search with its re-solving summary and any initial solve); it splits into
`search_tree` (growing, compiling and reading trees), `search_cfr` (CFR passes outside the
value function), `search_network` (inside the merged network calls that answered the
searches' queries) and `search_merge_wait` (waiting for the other games' queries to join a
merged call: `actors.merging`). The searches run in threads at once, so these sums exceed a
step's wall time; their shares of `search_seconds` are the split of one search's time.
"""
from __future__ import annotations

from collections.abc import Iterable

from sog.search.gtcfr import PHASES, add_timings

SEARCH_TIME_STATS = ("search_seconds", "search_tree", "search_cfr", "search_network", "search_merge_wait")


def search_time_stats(timings: Iterable[dict], merged: dict) -> dict:
    """The step stats of `SEARCH_TIME_STATS` from the searches' `SearchResult.timings` and the
    `actors.merging.run_merged` split of their value calls ({"network", "merge_wait"} seconds)."""
    phases = dict.fromkeys(PHASES, 0.0)
    total = 0.0
    for t in timings:
        add_timings(phases, t)
        total += t["total"]
    return {"search_seconds": total, "search_tree": phases["tree"], "search_cfr": phases["cfr"],
            "search_network": merged["network"], "search_merge_wait": merged["merge_wait"]}
