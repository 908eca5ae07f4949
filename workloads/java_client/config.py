"""The Java clients' configurations, from the same settings and with the same
timeouts as librdkafka's (workloads/clients.py): a producer, a consumer, and a
consumer that only looks up committed offsets. Values are strings, as Java's
Properties take them."""
from __future__ import annotations

from workloads.consumer_config import shared_consumer_config
from workloads.settings import WorkloadSettings


def producer_config(bootstrap: str, settings: WorkloadSettings, client_id: str,
                    transactional_id: str | None) -> dict[str, str]:
    timeout_ms = int(settings.op_timeout * 1000)
    config = {
        "bootstrap.servers": bootstrap,
        "client.id": client_id,
        "acks": settings.acks,
        "enable.idempotence": str(settings.idempotence or settings.txn).lower(),
        "linger.ms": "0",
        # longer than the harness's wait (as librdkafka's message.timeout.ms)
        "delivery.timeout.ms": str(timeout_ms * 2),
        "request.timeout.ms": str(max(1000, timeout_ms // 2)),
        # initTransactions, commit and abort block at most this long
        "max.block.ms": str(timeout_ms),
        "reconnect.backoff.max.ms": "1000",
    }
    if settings.retries is not None:
        config["retries"] = str(settings.retries)
    if settings.max_in_flight is not None:
        config["max.in.flight.requests.per.connection"] = str(settings.max_in_flight)
    if transactional_id is not None:
        config["transactional.id"] = transactional_id
        config["transaction.timeout.ms"] = str(timeout_ms * 4)
    return config


def consumer_config(bootstrap: str, settings: WorkloadSettings, client_id: str, group_id: str,
                    auto_offset_reset: str | None = None) -> dict[str, str]:
    shared = shared_consumer_config(bootstrap, settings, client_id, group_id, auto_offset_reset)
    return {**{k: _java(v) for k, v in shared.items()}, "fetch.max.wait.ms": "50", "max.poll.records": "500"}


def _java(value) -> str:
    """A property's value as Java reads it (booleans lower case)."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def lookup_config(bootstrap: str, client_id: str, group_id: str) -> dict[str, str]:
    """Reads uncommitted, for the reason clients.lookup_config gives."""
    return {"bootstrap.servers": bootstrap, "client.id": client_id, "group.id": group_id,
            "isolation.level": "read_uncommitted", "enable.auto.commit": "false"}
