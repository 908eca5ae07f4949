"""The queue workload's client on franz-go: the shared bridge client
(workloads/bridge/queue_client.py) with franz-go's configurations and errors."""
from __future__ import annotations

from workloads.bridge.queue_client import BridgeQueueClient, Dialect
from workloads.franz_go_client import config
from workloads.franz_go_client.errors import classify_franz_go

FRANZ_GO = Dialect(config.producer_config, config.consumer_config, config.lookup_config, classify_franz_go)


class FranzGoQueueClient(BridgeQueueClient):
    dialect = FRANZ_GO
