"""Facts about the running process that every layer reports (memory in the metrics)."""
from __future__ import annotations

import contextlib


def rss_mb(pid: int | str = "self") -> float:
    """Resident memory of a process in MiB (from /proc; 0 where unavailable)."""
    with contextlib.suppress(OSError), open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0
