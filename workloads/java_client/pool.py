"""The run's JVMs: one per network namespace a client is made in (workloads/bridge/pool.py)."""
from __future__ import annotations

from clusters.kafka.versions import resolve
from workloads.bridge.pool import ProcessPool
from workloads.java_client.build import MAIN_CLASS, classpath
from workloads.java_client.jvm import Jvm


class JvmPool(ProcessPool):
    def __init__(self, kafka_version: str | None):
        self.release = resolve(kafka_version)
        path = classpath(self.release)  # compiles on first use
        super().__init__(lambda name: Jvm(path, MAIN_CLASS, name=name), "java-client")

    def jvm(self) -> Jvm:
        return self.process()

    def versions(self) -> dict[str, str]:
        return {"kafka_clients": self.first().client_version}
