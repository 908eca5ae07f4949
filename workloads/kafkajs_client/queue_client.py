"""The queue workload's client on kafkajs: the shared bridge client
(workloads/bridge/queue_client.py) with kafkajs's configurations and errors."""
from __future__ import annotations

from workloads.bridge.queue_client import BridgeQueueClient, Dialect
from workloads.kafkajs_client import config
from workloads.kafkajs_client.errors import classify_kafkajs

KAFKAJS = Dialect(config.producer_config, config.consumer_config, config.lookup_config, classify_kafkajs)


class KafkajsQueueClient(BridgeQueueClient):
    dialect = KAFKAJS
