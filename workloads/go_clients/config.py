"""The Go clients' configurations (franz-go's and Sarama's alike), from the same settings
and with the same timeouts as the Java client's (workloads/java_client/config.py): a
producer, a consumer, and a client that only looks up committed offsets. The keys are
the Go program's (src/config.go), not Kafka property names: each library takes options
or a struct, not properties (src/franz_config.go, src/sarama_config.go)."""
from __future__ import annotations

from typing import Any

from workloads.consumer_config import shared_consumer_config
from workloads.settings import WorkloadSettings


# what franz-go's idempotent producer keeps in flight per broker on Kafka 1.0 and later
# (kgo's MaxProduceRequestsInflightPerBroker documentation)
FRANZ_GO_IDEMPOTENT_IN_FLIGHT = 5


def _brokers(bootstrap: str) -> list[str]:
    return [b.strip() for b in bootstrap.split(",") if b.strip()]


def producer_config(bootstrap: str, settings: WorkloadSettings, client_id: str,
                    transactional_id: str | None) -> dict[str, Any]:
    timeout_ms = int(settings.op_timeout * 1000)
    return {
        "brokers": _brokers(bootstrap),
        "client_id": client_id,
        "kafka_version": settings.kafka_clients_version or "",  # Sarama's Config.Version
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
        "kafka_version": settings.kafka_clients_version or "",
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


def franz_go_gaps(settings: WorkloadSettings) -> str | None:
    """What franz-go's side of the program cannot do of what the settings ask."""
    if (settings.idempotence or settings.txn) and settings.max_in_flight not in (None, FRANZ_GO_IDEMPOTENT_IN_FLIGHT):
        return (f"--max-in-flight {settings.max_in_flight}: franz-go's idempotent producer keeps "
                f"{FRANZ_GO_IDEMPOTENT_IN_FLIGHT} requests in flight per broker and refuses any other number "
                "(kgo.MaxProduceRequestsInflightPerBroker \"has no effect\" with idempotency, and its config "
                "validation rejects it); add --no-idempotence, or use --max-in-flight 5")
    return None


def sarama_gaps(settings: WorkloadSettings) -> str | None:
    """What Sarama's side of the program cannot do of what the settings ask."""
    if (settings.idempotence or settings.txn) and (settings.max_in_flight or 1) > 1:
        return (f"--max-in-flight {settings.max_in_flight} needs more than one request in flight per broker "
                "from an idempotent producer, which Sarama refuses (its config.Validate: \"Idempotent producer "
                "requires Net.MaxOpenRequests to be 1\"); add --no-idempotence, or drop --max-in-flight")
    if settings.sub_via == "subscribe":
        return ("--sub-via subscribe needs a consumer group member, which logtrial's Sarama side does not "
                "drive yet (Sarama's ConsumerGroup hands partitions to claims, not to polls); use --sub-via assign")
    return None
