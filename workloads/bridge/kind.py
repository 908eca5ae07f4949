"""A client under test that runs in child processes speaking the bridge's protocol
(the Java server, the Go program, the Node program): what its registry entry
(workloads/client_kinds.py) holds of it, and a run's clients made from that. The
findings' probes drive it through the same entry (harness/probes/)."""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import Callable

from workloads.base import Client
from workloads.bridge.pool import ProcessPool


@dataclass(frozen=True)
class Bridge:
    pool: Callable[[str | None], ProcessPool]  # (the cluster's Kafka version) -> its started children
    config: ModuleType  # producer_config, consumer_config, lookup_config: its `open` request's settings
    queue_client: str   # "module:Class" of its queue client, imported when a run asks (it loads confluent_kafka)

    def open(self, kafka_version: str | None) -> BridgeClients:
        return BridgeClients(self, kafka_version)


class BridgeClients:
    """A run's clients of one bridge client: its pool, and a queue client per process."""

    def __init__(self, bridge: Bridge, kafka_version: str | None):
        module, name = bridge.queue_client.split(":")
        self._queue_client = getattr(importlib.import_module(module), name)
        self.pool = bridge.pool(kafka_version)

    def queue_client(self, workload, process: int, final: bool = False) -> Client:
        return self._queue_client(workload, process, self.pool, final)

    def versions(self) -> dict[str, str]:
        return self.pool.versions()

    def close(self) -> None:
        self.pool.close()
