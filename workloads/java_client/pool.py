"""The run's JVMs: one per network namespace a client is made in. With
--pin-clients a worker thread enters its node's client namespace before making
its clients (clusters/pinning.py); a JVM started from that thread lives in that
namespace, so its clients reach that node only, as librdkafka's do."""
from __future__ import annotations

import itertools
import os
import threading

from clusters.kafka_versions import resolve
from workloads.java_client.build import MAIN_CLASS, classpath
from workloads.java_client.jvm import Jvm


def current_netns() -> str:
    """The calling thread's network namespace (namespaces belong to threads)."""
    return os.readlink(f"/proc/self/task/{threading.get_native_id()}/ns/net")


class JvmPool:
    def __init__(self, kafka_version: str | None):
        self.release = resolve(kafka_version)
        self._classpath = classpath(self.release)  # compiles on first use
        self._jvms: dict[str, Jvm] = {}
        self._lock = threading.Lock()
        self._sessions = itertools.count()
        self.jvm()  # the main namespace's, started now rather than in the first op's worker

    def jvm(self) -> Jvm:
        netns = current_netns()
        with self._lock:
            if netns not in self._jvms:
                self._jvms[netns] = Jvm(self._classpath, MAIN_CLASS, name=f"java-client-{len(self._jvms)}")
            return self._jvms[netns]

    def new_session(self) -> int:
        return next(self._sessions)

    def versions(self) -> dict[str, str]:
        first = next(iter(self._jvms.values()))
        return {"kafka_clients": first.client_version}

    def close(self) -> None:
        with self._lock:
            jvms, self._jvms = list(self._jvms.values()), {}
        for jvm in jvms:
            jvm.close()
