"""The soak's child under tracemalloc (`benchmarks.soak --tracemalloc SECONDS`): runs
the CLI with the given arguments and, every SECONDS, writes a snapshot of the Python
heap's allocations to DIR/heap-<seconds>.snapshot, so that what grows between two
minutes can be read by where it was allocated (benchmarks/heap_growth.py).

    python -m benchmarks.traced_child SECONDS DIR CLI-ARGS...
"""
from __future__ import annotations

import sys
import threading
import time
import tracemalloc
from pathlib import Path

FRAMES = 12  # enough to see the harness's caller below a library's allocation


def snapshot_every(seconds: float, directory: Path) -> None:
    started = time.monotonic()
    while True:
        time.sleep(seconds)
        elapsed = round(time.monotonic() - started)
        tracemalloc.take_snapshot().dump(str(directory / f"heap-{elapsed:05d}.snapshot"))


def main() -> None:
    seconds, directory, cli_args = float(sys.argv[1]), Path(sys.argv[2]), sys.argv[3:]
    directory.mkdir(parents=True, exist_ok=True)
    tracemalloc.start(FRAMES)
    threading.Thread(target=snapshot_every, args=(seconds, directory), name="heap-snapshots", daemon=True).start()
    from harness.cli import main as cli_main  # after tracemalloc starts, so its imports are traced too
    sys.argv = ["logtrial", *cli_args]
    cli_main()


if __name__ == "__main__":
    main()
