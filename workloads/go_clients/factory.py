"""franz-go's entry in the client registry (workloads/client_kinds.py): a run's
franz-go clients, one process per network namespace behind them."""
from __future__ import annotations

from workloads.base import Client


class FranzGoClients:
    """franz-go's kgo clients in the Go program (workloads/franz_go_client/src/)."""

    def __init__(self) -> None:
        from workloads.franz_go_client.pool import FranzGoPool  # builds and starts the program: only when asked
        self.pool = FranzGoPool()

    def queue_client(self, workload, process: int, final: bool = False) -> Client:
        from workloads.franz_go_client.queue_client import FranzGoQueueClient
        return FranzGoQueueClient(workload, process, self.pool, final)

    def versions(self) -> dict[str, str]:
        return self.pool.versions()

    def close(self) -> None:
        self.pool.close()


def open_franz_go(kafka_version: str | None) -> FranzGoClients:
    """The run's franz-go clients; the cluster's version does not matter to them."""
    return FranzGoClients()
