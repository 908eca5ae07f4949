"""The run's aiokafka clients (the ClientKind's factory), in the worker
processes (workloads/pinned_package.py's PythonClients), each logical process
with its own event loop thread. This module imports nothing of aiokafka: the
registry imports it with the CLI."""
from __future__ import annotations

from workloads.aiokafka_client.install import PINNED
from workloads.pinned_package import PythonClients


def open_aiokafka(kafka_version: str | None = None) -> PythonClients:
    """Installs and imports the pinned aiokafka first (pip, on first use)."""
    def queue_client() -> type:
        from workloads.aiokafka_client.queue_client import AiokafkaQueueClient  # imports aiokafka
        return AiokafkaQueueClient
    return PythonClients(PINNED, queue_client)
