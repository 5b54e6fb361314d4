"""Facts about the running process that every layer reports (memory in the metrics), and its priority."""
from __future__ import annotations

import contextlib
import os


def rss_mb(pid: int | str = "self") -> float:
    """Resident memory of a process in MiB (from /proc; 0 where unavailable)."""
    with contextlib.suppress(OSError), open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def lower_priority(niceness: int) -> None:
    """Raise the nice value of every thread of this process to at least `niceness` (Linux
    applies nice values per thread; threads started later inherit their creator's)."""
    for tid in _threads():
        with contextlib.suppress(OSError):           # a thread that has just ended
            if os.getpriority(os.PRIO_PROCESS, tid) < niceness:
                os.setpriority(os.PRIO_PROCESS, tid, niceness)


def _threads() -> list[int]:
    """Thread ids of this process (this one alone where /proc is unavailable)."""
    try:
        return [int(t) for t in os.listdir("/proc/self/task")]
    except OSError:
        return [0]
