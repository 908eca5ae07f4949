"""kafka-python's keyword arguments, from the same settings and with the same
timeouts as librdkafka's (workloads/clients.py) and Java's
(workloads/java_client/config.py): a producer, a consumer, and a consumer that
only looks up committed offsets. kafka-python spells Java's names with
underscores; it bootstraps in its constructors, which bootstrap_timeout_ms bounds."""
from __future__ import annotations

from typing import Any

from workloads.consumer_config import python_names, shared_consumer_config
from workloads.settings import WorkloadSettings

FETCH_MAX_WAIT_MS = 50
MAX_POLL_RECORDS = 500


def _acks(acks: str) -> str | int:
    return acks if acks == "all" else int(acks)


def producer_config(bootstrap: str, settings: WorkloadSettings, client_id: str,
                    transactional_id: str | None) -> dict[str, Any]:
    timeout_ms = int(settings.op_timeout * 1000)
    config: dict[str, Any] = {
        "bootstrap_servers": bootstrap.split(","),
        "client_id": client_id,
        "acks": _acks(settings.acks),
        "enable_idempotence": settings.idempotence or settings.txn,
        "linger_ms": 0,
        # longer than the harness's wait (as librdkafka's message.timeout.ms)
        "delivery_timeout_ms": timeout_ms * 2,
        "request_timeout_ms": max(1000, timeout_ms // 2),
        # send()'s metadata wait and init_transactions block at most this long
        "max_block_ms": timeout_ms,
        "bootstrap_timeout_ms": timeout_ms,
        "reconnect_backoff_max_ms": 1000,
    }
    if settings.retries is not None:
        config["retries"] = settings.retries
    if settings.max_in_flight is not None:
        config["max_in_flight_requests_per_connection"] = settings.max_in_flight
    if transactional_id is not None:
        config["transactional_id"] = transactional_id
        config["transaction_timeout_ms"] = timeout_ms * 4
    return config


def consumer_config(bootstrap: str, settings: WorkloadSettings, client_id: str, group_id: str,
                    auto_offset_reset: str | None = None) -> dict[str, Any]:
    shared = python_names(shared_consumer_config(bootstrap, settings, client_id, group_id, auto_offset_reset))
    return {**shared, "bootstrap_servers": bootstrap.split(","), "fetch_max_wait_ms": FETCH_MAX_WAIT_MS,
            "max_poll_records": MAX_POLL_RECORDS, "bootstrap_timeout_ms": int(settings.op_timeout * 1000)}


def lookup_config(bootstrap: str, settings: WorkloadSettings, client_id: str, group_id: str) -> dict[str, Any]:
    """Reads uncommitted, for the reason workloads.clients.lookup_config gives."""
    return {"bootstrap_servers": bootstrap.split(","), "client_id": client_id, "group_id": group_id,
            "isolation_level": "read_uncommitted", "enable_auto_commit": False,
            "bootstrap_timeout_ms": int(settings.op_timeout * 1000)}
