"""aiokafka's keyword arguments, from the same settings and with the same
timeouts as librdkafka's and kafka-python's: a producer, a consumer, and a
consumer that only looks up committed offsets. And what aiokafka cannot do of
what the settings ask (`gaps`), refused before a run starts.

aiokafka has fewer producer knobs than the others: no retry count (an
idempotent producer retries a batch until it is delivered, a plain one until
request_timeout_ms), no delivery timeout and no max in flight (it sends one
Produce request per broker at a time, producer/sender.py's _in_flight)."""
from __future__ import annotations

from typing import Any

from workloads.consumer_config import python_names, shared_consumer_config
from workloads.settings import WorkloadSettings

FETCH_MAX_WAIT_MS = 50
MAX_POLL_RECORDS = 500
RETRY_BACKOFF_MS = 100
# shared_consumer_config's names that aiokafka's consumer does not take
NOT_TAKEN = ("reconnect_backoff_max_ms",)


def gaps(settings: WorkloadSettings) -> str | None:
    """The first setting aiokafka cannot honour, named with the capability it lacks; None: none."""
    if settings.retries is not None:
        return (f"--retries {settings.retries} needs a producer retry count, which aiokafka does not have "
                "(it retries until delivered, or until request_timeout_ms without idempotence)")
    if settings.max_in_flight not in (None, 1):
        return (f"--max-in-flight {settings.max_in_flight} needs more than one Produce request in flight per "
                "broker, which aiokafka never sends (it waits for each answer)")
    return None


def _request_timeout_ms(settings: WorkloadSettings) -> int:
    return max(1000, int(settings.op_timeout * 1000) // 2)


def producer_config(bootstrap: str, settings: WorkloadSettings, client_id: str,
                    transactional_id: str | None) -> dict[str, Any]:
    config: dict[str, Any] = {
        "bootstrap_servers": bootstrap,
        "client_id": client_id,
        "acks": settings.acks if settings.acks == "all" else int(settings.acks),
        "enable_idempotence": settings.idempotence or settings.txn,
        "linger_ms": 0,
        # also how long a batch with no leader waits before it fails, and send()'s
        # wait for room in a full batch
        "request_timeout_ms": _request_timeout_ms(settings),
        "retry_backoff_ms": RETRY_BACKOFF_MS,
    }
    if transactional_id is not None:
        config["transactional_id"] = transactional_id
        config["transaction_timeout_ms"] = int(settings.op_timeout * 1000) * 4
    return config


def consumer_config(bootstrap: str, settings: WorkloadSettings, client_id: str, group_id: str,
                    auto_offset_reset: str | None = None) -> dict[str, Any]:
    shared = python_names(shared_consumer_config(bootstrap, settings, client_id, group_id, auto_offset_reset))
    for name in NOT_TAKEN:
        shared.pop(name)
    return {**shared, "fetch_max_wait_ms": FETCH_MAX_WAIT_MS, "max_poll_records": MAX_POLL_RECORDS,
            "request_timeout_ms": _request_timeout_ms(settings), "retry_backoff_ms": RETRY_BACKOFF_MS}


def lookup_config(bootstrap: str, settings: WorkloadSettings, client_id: str, group_id: str) -> dict[str, Any]:
    """Reads uncommitted, for the reason workloads.clients.lookup_config gives."""
    return {"bootstrap_servers": bootstrap, "client_id": client_id, "group_id": group_id,
            "isolation_level": "read_uncommitted", "enable_auto_commit": False,
            "request_timeout_ms": _request_timeout_ms(settings)}
