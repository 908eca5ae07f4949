"""The franz-go clients' configurations, from the same settings and with the same
timeouts as the Java client's (workloads/java_client/config.py): a producer, a
consumer, and a client that only looks up committed offsets. The keys are the Go
program's (src/config.go), not Kafka property names: kgo takes options, not properties."""
from __future__ import annotations

from typing import Any

from workloads.consumer_config import shared_consumer_config
from workloads.settings import WorkloadSettings


def _brokers(bootstrap: str) -> list[str]:
    return [b.strip() for b in bootstrap.split(",") if b.strip()]


def producer_config(bootstrap: str, settings: WorkloadSettings, client_id: str,
                    transactional_id: str | None) -> dict[str, Any]:
    timeout_ms = int(settings.op_timeout * 1000)
    return {
        "brokers": _brokers(bootstrap),
        "client_id": client_id,
        "acks": settings.acks,
        "idempotent": settings.idempotence or settings.txn,
        # longer than the harness's wait (as librdkafka's message.timeout.ms)
        "delivery_timeout_ms": timeout_ms * 2,
        "request_timeout_ms": max(1000, timeout_ms // 2),
        "transactional_id": transactional_id or "",
        "transaction_timeout_ms": timeout_ms * 4,
        "retries": settings.retries,
        "max_in_flight": settings.max_in_flight,
    }


def consumer_config(bootstrap: str, settings: WorkloadSettings, client_id: str, group_id: str,
                    auto_offset_reset: str | None = None) -> dict[str, Any]:
    shared = shared_consumer_config(bootstrap, settings, client_id, group_id, auto_offset_reset)
    return {
        "brokers": _brokers(bootstrap),
        "client_id": client_id,
        "group_id": group_id,
        "read_committed": shared["isolation.level"] == "read_committed",
        "auto_offset_reset": shared["auto.offset.reset"],
        "enable_auto_commit": shared["enable.auto.commit"],
        "session_timeout_ms": shared["session.timeout.ms"],
        "heartbeat_interval_ms": shared["heartbeat.interval.ms"],
        "fetch_max_wait_ms": 50,  # as the Java client's fetch.max.wait.ms
    }


def lookup_config(bootstrap: str, client_id: str, group_id: str) -> dict[str, Any]:
    """A plain client: it reads committed offsets with OffsetFetch, never stable-only,
    for the reason clients.lookup_config gives."""
    return {"brokers": _brokers(bootstrap), "client_id": client_id, "group_id": group_id}
