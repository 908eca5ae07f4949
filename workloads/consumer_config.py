"""The consumer settings both clients name alike (librdkafka took Java's names):
each client's configuration adds its own on top (workloads/clients.py,
workloads/java_client/config.py)."""
from __future__ import annotations

from typing import Any

from workloads.settings import WorkloadSettings


def shared_consumer_config(bootstrap: str, settings: WorkloadSettings, client_id: str, group_id: str,
                           auto_offset_reset: str | None = None) -> dict[str, Any]:
    return {
        "bootstrap.servers": bootstrap,
        "client.id": client_id,
        "group.id": group_id,
        "isolation.level": settings.isolation_level,
        "auto.offset.reset": auto_offset_reset or settings.auto_offset_reset,
        # offsets inside a transaction go through the producer, never auto commit
        "enable.auto.commit": settings.enable_auto_commit and not settings.txn,
        "session.timeout.ms": 6000,
        "heartbeat.interval.ms": 1000,
        "reconnect.backoff.max.ms": 1000,
    }


def python_names(config: dict[str, Any]) -> dict[str, Any]:
    """Java's dotted names as the Python clients spell them (kafka-python, aiokafka)."""
    return {name.replace(".", "_"): value for name, value in config.items()}
