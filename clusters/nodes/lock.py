"""Who may act on a cluster, among this machine's logtrial processes: one run at
a time, and one heal at a time.

A run holds its cluster's run lock from setup until it has let go of the
cluster; its watchdog (harness/watchdog.py) inherits the same open lock, so
when the control process dies the lock stays held until the watchdog has
healed what the dead run left. A new run waits for it rather than having its
own faults undone by that heal. Heals (`cluster heal`, `cluster down`, a
resumed matrix's, the watchdog's) take the heal lock, so two never undo the
same fault at once. Both are flock(2) locks on files named after the
inventory's real path: the kernel drops them with the last process holding
them, so a dead holder never leaves one behind.
"""
from __future__ import annotations

import fcntl
import hashlib
import os
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

LOCK_DIR = Path(tempfile.gettempdir()) / "logtrial-locks"
POLL_S = 0.5


class ClusterBusy(RuntimeError):
    pass


def lock_path(inventory_path: str | Path, kind: str) -> Path:
    digest = hashlib.sha1(os.path.realpath(inventory_path).encode()).hexdigest()[:16]
    LOCK_DIR.mkdir(parents=True, exist_ok=True)
    return LOCK_DIR / f"{kind}-{digest}.lock"


class RunLock:
    """The run lock of one cluster; `fd` is what the watchdog inherits."""

    def __init__(self, inventory_path: str | Path):
        self.path = lock_path(inventory_path, "run")
        self.fd: int | None = None

    def acquire(self, holder: str, wait_s: float, say: Callable[[str], None]) -> "RunLock":
        """Takes the lock, waiting up to `wait_s` for the run (or the watchdog) that
        holds it, and says once whom it waits for; then writes `holder` into it.
        Raises ClusterBusy when the wait is over."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline, said = time.monotonic() + wait_s, False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                other = _holder(fd)
                if time.monotonic() >= deadline:
                    os.close(fd)
                    raise ClusterBusy(f"the cluster is still in use by {other} after {wait_s:.0f} s "
                                      f"(lock {self.path})") from None
                if not said:
                    say(f"waiting for {other} to let go of the cluster")
                    said = True
                time.sleep(POLL_S)
        os.ftruncate(fd, 0)
        os.pwrite(fd, holder.encode(), 0)
        self.fd = fd
        return self

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)  # the watchdog's inherited copy keeps it until it exits
            self.fd = None


def _holder(fd: int) -> str:
    text = os.pread(fd, 4096, 0).decode(errors="replace").strip()
    return text or "another logtrial process"


@contextmanager
def heal_lock(inventory_path: str | Path) -> Iterator[None]:
    """Held while healing the cluster (blocking: a heal is bounded in time)."""
    with open(lock_path(inventory_path, "heal"), "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield
