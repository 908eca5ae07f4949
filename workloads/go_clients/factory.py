"""The Go clients' entries in the client registry (workloads/client_kinds.py): each
library's clients in the Go program (workloads/go_clients/src/), one process per
network namespace behind them. The cluster's version does not matter to the program:
franz-go asks the brokers' ApiVersions, Sarama is told a version by its configuration."""
from __future__ import annotations

from workloads.bridge.kind import Bridge
from workloads.go_clients import config
from workloads.go_clients.pool import GoPool

FRANZ_GO = Bridge(lambda kafka_version: GoPool("franz-go"), config,
                  "workloads.go_clients.queue_client:FranzGoQueueClient")
SARAMA = Bridge(lambda kafka_version: GoPool("sarama"), config,
                "workloads.go_clients.queue_client:SaramaQueueClient")
