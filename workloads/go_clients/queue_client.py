"""The queue workload's clients on the Go program: the shared bridge client
(workloads/bridge/queue_client.py) with the Go clients' configurations and each
library's errors."""
from __future__ import annotations

from workloads.bridge.queue_client import BridgeQueueClient, Dialect
from workloads.go_clients import config
from workloads.go_clients.franz_go_errors import classify_franz_go
from workloads.go_clients.sarama_errors import classify_sarama

FRANZ_GO = Dialect(config.producer_config, config.consumer_config, config.lookup_config, classify_franz_go)
SARAMA = Dialect(config.producer_config, config.consumer_config, config.lookup_config, classify_sarama)


class FranzGoQueueClient(BridgeQueueClient):
    dialect = FRANZ_GO


class SaramaQueueClient(BridgeQueueClient):
    dialect = SARAMA
