"""kafkajs's entry in the client registry (workloads/client_kinds.py): its clients in
the Node program (workloads/kafkajs_client/src/), one process per network namespace
behind them, and what kafkajs cannot do, refused before a run starts."""
from __future__ import annotations

from workloads.bridge.kind import Bridge
from workloads.kafkajs_client import config
from workloads.kafkajs_client.pool import KafkajsPool
from workloads.settings import WorkloadSettings

# the cluster's version does not matter to kafkajs's program
BRIDGE = Bridge(lambda kafka_version: KafkajsPool(), config, "workloads.kafkajs_client.queue_client:KafkajsQueueClient")


def kafkajs_gaps(settings: WorkloadSettings) -> str | None:
    """The capability a run's settings need that kafkajs 2.2.4 lacks, named; None: none.
    Its consumer is a group member driven by its own loop (consumer.run, eachBatch):
    no poll, so no `subscribe` op whose polls return what the group gave. (Assigned
    partitions are polled through kafkajs's fetch requests: src/assigned_consumer.js.)"""
    if settings.sub_via == "subscribe":
        return ("--sub-via subscribe needs a consumer group member that polls; kafkajs's group "
                "consumer only runs its own fetch loop (consumer.run): use --sub-via assign")
    return None
