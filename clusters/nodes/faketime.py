"""libfaketime: how brokers are started with a controllable wall clock, and what it
leaves behind.

The clock nemesis skews a node by writing an offset ("+30s", "-2m", "+1d") into the
node's offset file; processes started with `faketime_env(offset_file)` follow it.
"""
from __future__ import annotations

LIBRARY = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"


def faketime_env(offset_file: str) -> dict[str, str]:
    return {
        "LD_PRELOAD": LIBRARY,
        "FAKETIME_TIMESTAMP_FILE": offset_file,
        # re-read the offset file at most once a second: with FAKETIME_NO_CACHE every
        # clock read costs a file read (measured 21.6 us vs 0.48 us per call), which
        # starves 3 brokers on 2 cores; skew then takes effect within ~2 s
        "FAKETIME_CACHE_DURATION": "1",
        "FAKETIME_DONT_FAKE_MONOTONIC": "1",
        # libfaketime 0.9.10's "monotonic fix" breaks the JVM's timed waits on
        # CLOCK_MONOTONIC condition variables: Object.wait(1) returned after 1 us,
        # every parked thread spun and a 3-node quorum never formed
        "FAKETIME_FORCE_MONOTONIC_FIX": "0",
    }


def skewed_marker(offset_file: str) -> str:
    """A file that says the process has run with a skewed clock since it was last
    started: the clock fault writes it, a start removes it, and a heal restarts the
    broker while it is there (a JVM that saw its clock jump keeps timers and sessions
    computed on the wrong time; the fault's own reset does not undo that)."""
    return f"{offset_file}.skewed"


def leftover_files(pid: int) -> list[str]:
    """Shared memory libfaketime creates per process and removes only on a clean exit:
    a SIGKILLed broker leaves these behind."""
    return [f"/dev/shm/faketime_shm_{pid}", f"/dev/shm/sem.faketime_sem_{pid}"]
