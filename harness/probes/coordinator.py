"""Which broker coordinates a transactional id, reckoned as Kafka reckons it. The
late-batch probe holds a partition's leader and needs the transaction coordinator
elsewhere, so that the hold spares EndTxn."""
from __future__ import annotations

import uuid

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, TopicMetadata

TRANSACTION_STATE = "__transaction_state"


def java_string_hash(text: str) -> int:
    """String.hashCode(), as the signed 32-bit int Java gives."""
    h = 0
    for ch in text:
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def state_partition_for(key: str, partitions: int) -> int:
    """The coordinator's partition of a transactional id: Kafka's
    Utils.abs(hashCode) % partitions, where Utils.abs is Math.abs with MIN_VALUE
    taken to 0. Masking the sign bit instead names the wrong partition for half the
    ids (the probe then held its own coordinator, and its aborts never ended)."""
    h = java_string_hash(key)
    return (0 if h == -(1 << 31) else abs(h)) % partitions


def transaction_state(admin: AdminClient, bootstrap: str) -> TopicMetadata:
    """__transaction_state's metadata; the first transactional producer creates it."""
    state = admin.list_topics(topic=TRANSACTION_STATE, timeout=10).topics[TRANSACTION_STATE]
    if not state.partitions:
        Producer({"bootstrap.servers": bootstrap,
                  "transactional.id": f"probe-{uuid.uuid4().hex[:6]}"}).init_transactions(60)
        state = admin.list_topics(topic=TRANSACTION_STATE, timeout=10).topics[TRANSACTION_STATE]
    return state


def coordinator_id(admin: AdminClient, bootstrap: str, transactional_id: str) -> int:
    """The broker leading the transaction-state partition of `transactional_id`."""
    state = transaction_state(admin, bootstrap)
    return state.partitions[state_partition_for(transactional_id, len(state.partitions))].leader


def coordinated_id(admin: AdminClient, bootstrap: str, stem: str) -> tuple[str, int]:
    """A transactional id whose coordinator is up, and that coordinator's broker id."""
    for n in range(100):
        candidate = f"{stem}-{n}"
        coordinator = coordinator_id(admin, bootstrap, candidate)
        if coordinator != -1:
            return candidate, coordinator
    raise RuntimeError("no transaction-state partition has a leader: is the cluster up?")
