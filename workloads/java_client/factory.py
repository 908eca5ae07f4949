"""The Java client's entry in the client registry (workloads/client_kinds.py):
kafka-clients of the cluster's version in JVMs (workloads/java_client/src/), one per
network namespace behind them."""
from __future__ import annotations

from workloads.bridge.kind import Bridge
from workloads.java_client import config
from workloads.java_client.pool import JvmPool

BRIDGE = Bridge(JvmPool, config, "workloads.java_client.queue_client:JavaQueueClient")
