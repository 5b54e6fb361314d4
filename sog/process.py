"""Facts about the running process that every layer reports (memory in the metrics)."""
from __future__ import annotations


def rss_mb(pid: int | str = "self") -> float:
    """Resident memory of a process in MiB (from /proc; 0 where unavailable)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0
