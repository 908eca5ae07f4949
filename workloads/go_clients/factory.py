"""The Go clients' entries in the client registry (workloads/client_kinds.py): a run's
clients of one Go library, one process per network namespace behind them."""
from __future__ import annotations

from workloads.base import Client


class GoClients:
    """One library's clients in the Go program (workloads/go_clients/src/)."""

    def __init__(self, client: str, queue_client: type) -> None:
        from workloads.go_clients.pool import GoPool  # builds and starts the program: only when asked
        self.pool = GoPool(client)
        self._queue_client = queue_client

    def queue_client(self, workload, process: int, final: bool = False) -> Client:
        return self._queue_client(workload, process, self.pool, final)

    def versions(self) -> dict[str, str]:
        return self.pool.versions()

    def close(self) -> None:
        self.pool.close()


def open_franz_go(kafka_version: str | None) -> GoClients:
    """The run's franz-go clients; the cluster's version does not matter to them."""
    from workloads.go_clients.queue_client import FranzGoQueueClient
    return GoClients("franz-go", FranzGoQueueClient)


def open_sarama(kafka_version: str | None) -> GoClients:
    """The run's Sarama clients (each told the cluster's version by its configuration)."""
    from workloads.go_clients.queue_client import SaramaQueueClient
    return GoClients("sarama", SaramaQueueClient)
