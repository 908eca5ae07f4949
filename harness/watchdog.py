"""The run's watchdog, the control process's side: the heartbeat, the stack dump
on SIGUSR1, and starting and stopping the watchdog process
(harness/watchdog_process.py, whose docstring says what it does and why).
"""
from __future__ import annotations

import faulthandler
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO

HEARTBEAT = "heartbeat"
STACKS = "hang-stacks.txt"
WATCHDOG_LOG = "watchdog.log"
BEAT_S = 1.0


class Heartbeat:
    """The control process's side: the heartbeat thread and the stack dump on
    SIGUSR1."""

    def __init__(self, run_dir: Path):
        self.path = run_dir / HEARTBEAT
        self._stop = threading.Event()
        self._stacks: IO | None = None
        self._thread = threading.Thread(target=self._beat, name="heartbeat", daemon=True)

    @property
    def started(self) -> bool:
        return self._stacks is not None

    def start(self) -> "Heartbeat":
        self.path.touch()
        self._stacks = open(self.path.with_name(STACKS), "w")
        faulthandler.register(signal.SIGUSR1, file=self._stacks, all_threads=True)
        self._thread.start()
        return self

    def _beat(self) -> None:
        while not self._stop.wait(BEAT_S):
            os.utime(self.path)

    def stop(self) -> None:
        self._stop.set()
        faulthandler.unregister(signal.SIGUSR1)
        if self._stacks is not None:
            self._stacks.close()
        clear_heartbeat(self.path.parent)


def clear_heartbeat(run_dir: Path) -> None:
    """The heartbeat, and a stacks file nothing was dumped into."""
    (run_dir / HEARTBEAT).unlink(missing_ok=True)
    stacks = run_dir / STACKS
    if stacks.exists() and stacks.stat().st_size == 0:
        stacks.unlink()


class Watchdog:
    """Started by the control process for its run; stopped by it at the end."""

    def __init__(self, run_dir: Path, hang_timeout: float):
        self.run_dir = run_dir
        self.hang_timeout = hang_timeout
        self.heartbeat = Heartbeat(run_dir)
        self._process: subprocess.Popen | None = None

    def start(self, lock_fd: int | None = None) -> "Watchdog":
        """`lock_fd`: the run's cluster lock, which the watchdog holds too."""
        if self.hang_timeout <= 0:
            return self
        if self._process is None and not self.heartbeat.started:
            self.heartbeat.start()
        # its own session: a Ctrl-C to the terminal's process group must not reach it
        self._process = subprocess.Popen(
            [sys.executable, "-m", "harness.watchdog_process", str(self.run_dir), str(os.getpid()),
             str(self.hang_timeout)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, start_new_session=True,
            pass_fds=() if lock_fd is None else (lock_fd,))
        return self

    def hand_lock(self, lock_fd: int) -> None:
        """Once the run holds its cluster's lock: a watchdog that holds it too takes
        over from the one started before the cluster was open."""
        if self._process is not None:
            self._end_process()
            self.start(lock_fd)

    def stop(self) -> None:
        if self._process is None:
            return
        self._end_process()
        self.heartbeat.stop()

    def _end_process(self) -> None:
        self._process.terminate()
        try:
            self._process.wait(10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._process = None
