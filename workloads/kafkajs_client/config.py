"""The kafkajs clients' configurations, from the same settings and with the same
timeouts as the other bridge clients' (workloads/go_clients/config.py): a producer and
a consumer of assigned partitions; the consumer's cluster also looks up the group's
committed offsets. The keys are the Node program's (src/clients.js), not Kafka
property names: kafkajs takes its own options."""
from __future__ import annotations

from typing import Any

from workloads.consumer_config import shared_consumer_config
from workloads.settings import WorkloadSettings


def _brokers(bootstrap: str) -> list[str]:
    return [b.strip() for b in bootstrap.split(",") if b.strip()]


def _common(bootstrap: str, settings: WorkloadSettings, client_id: str) -> dict[str, Any]:
    timeout_ms = int(settings.op_timeout * 1000)
    return {
        "brokers": _brokers(bootstrap),
        "client_id": client_id,
        "request_timeout_ms": max(1000, timeout_ms // 2),
        "connection_timeout_ms": 1000,  # kafkajs's default
        # the cluster's retrier (metadata, coordinators, InitProducerId, offsets):
        # kafkajs's defaults but the longest wait, which is bounded by the op timeout
        "retry": {"initialRetryTime": 100, "maxRetryTime": max(1000, timeout_ms // 2)},
    }


def producer_config(bootstrap: str, settings: WorkloadSettings, client_id: str,
                    transactional_id: str | None) -> dict[str, Any]:
    idempotent = settings.idempotence or settings.txn
    return {
        **_common(bootstrap, settings, client_id),
        "acks": settings.acks,
        "idempotent": idempotent,
        "transactional_id": transactional_id or "",
        "transaction_timeout_ms": int(settings.op_timeout * 1000) * 4,
        # None: kafkajs's default (endless for an idempotent producer, 5 otherwise)
        "retries": settings.retries,
        # kafkajs's documentation asks an idempotent producer for one request in flight
        "max_in_flight": settings.max_in_flight or (1 if idempotent else None),
    }


def consumer_config(bootstrap: str, settings: WorkloadSettings, client_id: str, group_id: str,
                    auto_offset_reset: str | None = None) -> dict[str, Any]:
    shared = shared_consumer_config(bootstrap, settings, client_id, group_id, auto_offset_reset)
    return {
        **_common(bootstrap, settings, client_id),
        "group_id": group_id,
        "read_committed": shared["isolation.level"] == "read_committed",
        "auto_offset_reset": shared["auto.offset.reset"],
        "fetch_max_wait_ms": 50,  # as the Java client's fetch.max.wait.ms
    }


def lookup_config(bootstrap: str, client_id: str, group_id: str) -> dict[str, Any]:
    """Not used by the program (its consumer's cluster looks committed offsets up,
    read uncommitted, never stable-only, for the reason clients.lookup_config gives);
    sent as every bridge client's `open` carries one."""
    return {"brokers": _brokers(bootstrap), "client_id": client_id, "group_id": group_id}
