"""The queue workload's client on Kafka's Java client: the shared bridge client
(workloads/bridge/queue_client.py) with the Java client's configurations and errors."""
from __future__ import annotations

from workloads.bridge.queue_client import BridgeQueueClient, Dialect
from workloads.java_client import config
from workloads.java_client.errors import classify_java

JAVA = Dialect(config.producer_config, config.consumer_config, config.lookup_config, classify_java)


class JavaQueueClient(BridgeQueueClient):
    dialect = JAVA
