"""Processes of this host named so that a reused pid is never taken for them: a pid and its start
time (the run lock's holder, the owner of a sandbox).

Example: ``start_time(os.getpid())`` -> ``1234567`` (clock ticks since boot); a pid that is gone
gives ``None``, and a pid reused by another process gives another start time.
"""

from __future__ import annotations

from pathlib import Path


def start_time(pid: int) -> int | None:
    """A process's start time in clock ticks since boot (field 22 of ``/proc/<pid>/stat``)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    fields = stat.rpartition(")")[2].split()
    return int(fields[19]) if len(fields) > 19 else None
