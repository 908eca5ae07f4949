"""The run's kafka-python clients (the ClientKind's factory): in the worker
processes, as librdkafka's are, so nothing to start or stop beside them. Opening
it installs and imports the pinned package, before any work starts. This module
imports nothing of kafka-python: the registry imports it with the CLI."""
from __future__ import annotations

from workloads.base import Client


class KafkaPythonClients:
    def __init__(self, kafka_version: str | None = None):
        from workloads.kafka_python.install import load  # pip-installs on first use
        load()

    def queue_client(self, workload, process: int, final: bool = False) -> Client:
        from workloads.kafka_python.queue_client import KafkaPythonQueueClient
        return KafkaPythonQueueClient(workload, process, final)

    def versions(self) -> dict[str, str]:
        from workloads.kafka_python.install import VERSION
        return {"kafka_python": VERSION}

    def close(self) -> None:
        pass
