"""A run's child processes of one client: one per network namespace a client is made
in. With --pin-clients a worker thread enters its node's client namespace before
making its clients (clusters/nodes/pinning.py); a child started from that thread lives in
that namespace, so its clients reach that node only, as librdkafka's do."""
from __future__ import annotations

import itertools
import os
import threading
from typing import Callable

from workloads.bridge.process import BridgeProcess


def current_netns() -> str:
    """The calling thread's network namespace (namespaces belong to threads)."""
    return os.readlink(f"/proc/self/task/{threading.get_native_id()}/ns/net")


class ProcessPool:
    def __init__(self, start: Callable[[str], BridgeProcess], name: str):
        self._start = start  # (the child's name) -> a started child
        self._name = name
        self._processes: dict[str, BridgeProcess] = {}
        self._lock = threading.Lock()
        self._sessions = itertools.count()
        self.process()  # the main namespace's, started now rather than in the first op's worker

    def process(self) -> BridgeProcess:
        """The calling thread's namespace's child, started on first use."""
        netns = current_netns()
        with self._lock:
            if netns not in self._processes:
                self._processes[netns] = self._start(f"{self._name}-{len(self._processes)}")
            return self._processes[netns]

    def new_session(self) -> int:
        return next(self._sessions)

    def first(self) -> BridgeProcess:
        return next(iter(self._processes.values()))

    def close(self) -> None:
        with self._lock:
            processes, self._processes = list(self._processes.values()), {}
        for process in processes:
            process.close()
