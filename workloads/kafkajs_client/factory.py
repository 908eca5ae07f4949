"""kafkajs's entry in the client registry (workloads/client_kinds.py): a run's kafkajs
clients, one Node process per network namespace behind them, and what kafkajs cannot
do, refused before a run starts."""
from __future__ import annotations

from workloads.base import Client
from workloads.settings import WorkloadSettings


class KafkajsClients:
    """kafkajs's clients in the Node program (workloads/kafkajs_client/src/)."""

    def __init__(self) -> None:
        from workloads.kafkajs_client.pool import KafkajsPool  # installs and starts Node: only when asked
        self.pool = KafkajsPool()

    def queue_client(self, workload, process: int, final: bool = False) -> Client:
        from workloads.kafkajs_client.queue_client import KafkajsQueueClient
        return KafkajsQueueClient(workload, process, self.pool, final)

    def versions(self) -> dict[str, str]:
        return self.pool.versions()

    def close(self) -> None:
        self.pool.close()


def open_kafkajs(kafka_version: str | None) -> KafkajsClients:
    """The run's kafkajs clients; the cluster's version does not matter to them."""
    return KafkajsClients()


def kafkajs_gaps(settings: WorkloadSettings) -> str | None:
    """The capability a run's settings need that kafkajs 2.2.4 lacks, named; None: none.
    Its consumer is a group member driven by its own loop (consumer.run, eachBatch):
    no poll, so no `subscribe` op whose polls return what the group gave. (Assigned
    partitions are polled through kafkajs's fetch requests: src/assigned_consumer.js.)"""
    if settings.sub_via == "subscribe":
        return ("--sub-via subscribe needs a consumer group member that polls; kafkajs's group "
                "consumer only runs its own fetch loop (consumer.run): use --sub-via assign")
    return None
