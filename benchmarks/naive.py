"""The naive single-process reference checkers (tests/checkers/queue_reference.py,
la_reference.py: plain Python + networkx), run in a fresh process with a time
and memory cap, as the yardstick each benchmark figure stands beside."""
from __future__ import annotations

import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = {"queue": "tests.checkers.queue_reference", "list-append": "tests.checkers.la_reference"}
NAIVE = ("import json, sys, importlib; ref = importlib.import_module(sys.argv[1]); "
         "events = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]; "
         "print(repr(dict(ref.check(events)))[:300])")
DEFAULT_MEMORY_CAP = 8 * 2**30


def timed(cmd: list[str], timeout: float, memory_cap: int | None = None,
          answers: tuple[int, ...] = (0, 1, 2)) -> tuple[float | None, str]:
    """Wall seconds of `cmd` (None past `timeout`, or when it exits with a
    code not in `answers`: `logtrial check` answers 0, 1 or 2) and its last output line.
    With `memory_cap` (bytes of address space), a process that needs more
    fails instead of pushing the shared machine into swap or the OOM killer."""
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory_cap, memory_cap))
    start = time.monotonic()
    try:
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                              preexec_fn=cap if memory_cap else None)
    except subprocess.TimeoutExpired:
        return None, "timeout"
    if done.returncode not in answers:
        # a crash is no figure: only a time that ends in an answer is reported
        return None, "out of memory" if "MemoryError" in done.stderr else f"failed: {done.stderr.strip()[-200:]}"
    return time.monotonic() - start, done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-200:]


def naive_check(workload: str, history: Path, timeout: float,
                memory_cap: int = DEFAULT_MEMORY_CAP) -> tuple[float | None, str]:
    """Seconds the naive reference takes on `history` (None: over the time or memory cap)."""
    return timed([sys.executable, "-c", NAIVE, REFERENCE[workload], str(history)], timeout, memory_cap,
                 answers=(0,))


def naive_cell(seconds: float | None, why: str, timeout: float, memory_cap: int = DEFAULT_MEMORY_CAP) -> str:
    """The naive reference's figure for a Markdown table."""
    if seconds is not None:
        return f"{seconds:.1f} s"
    if why.startswith("failed"):
        return "failed (see the JSON output)"
    return f"over {memory_cap / 2**30:.0f} GB" if why == "out of memory" else f"over {timeout:.0f} s"
