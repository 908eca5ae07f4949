"""A process on this machine as /proc shows it: one parser of /proc/PID/stat for
everything that tells processes apart by pid and start time."""
from __future__ import annotations

from pathlib import Path


def stat_fields(pid: int) -> list[str] | None:
    """/proc/PID/stat's fields from the state on (field 3: the name before it may hold
    spaces and parentheses), or None when there is no such process."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2:].split()


def start_time(pid: int) -> str | None:
    """Its start time in clock ticks (field 22): with the pid, it names one process
    even if the pid is reused. None for a process that is gone or a zombie."""
    fields = stat_fields(pid)
    return None if not fields or fields[0] == "Z" else fields[19]


def is_zombie(pid: int) -> bool:
    """Gone, or dead and not yet reaped."""
    fields = stat_fields(pid)
    return not fields or fields[0] == "Z"


def is_stopped(pid: int) -> bool:
    """Stopped by a signal (Ctrl-Z, SIGSTOP) or a tracer."""
    fields = stat_fields(pid)
    return bool(fields) and fields[0] in ("T", "t")
