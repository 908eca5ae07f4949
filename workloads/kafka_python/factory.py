"""The run's kafka-python clients (the ClientKind's factory), in the worker
processes (workloads/pinned_package.py's PythonClients). This module imports
nothing of kafka-python: the registry imports it with the CLI."""
from __future__ import annotations

from workloads.kafka_python.install import PINNED
from workloads.pinned_package import PythonClients


def _queue_client() -> type:
    from workloads.kafka_python.queue_client import KafkaPythonQueueClient  # imports kafka-python
    return KafkaPythonQueueClient


class KafkaPythonClients(PythonClients):
    def __init__(self, kafka_version: str | None = None):
        super().__init__(PINNED, _queue_client)
