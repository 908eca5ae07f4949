"""A produce/consume round trip with acks=all: the smallest proof a cluster works.
Used by `make demo` and the foundation tests."""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass

from common.client_logging import QUIET_CLIENT_LOGGER


@dataclass
class RoundTrip:
    topic: str
    sent: int  # messages acknowledged by the cluster
    read: int  # of those, read back
    missing: list[str]  # acknowledged but not read back
    seconds: float

    @property
    def ok(self) -> bool:
        return self.sent > 0 and not self.missing

    def as_dict(self) -> dict:
        return {**asdict(self), "ok": self.ok}


def produce(bootstrap: str, topic: str, values: list[str], timeout: float = 60) -> list[str]:
    """Sends values with acks=all and idempotence; returns those the cluster acknowledged.
    Raises if any delivery failed."""
    from confluent_kafka import Producer
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all",
                         "logger": QUIET_CLIENT_LOGGER,
                         "enable.idempotence": True, "message.timeout.ms": int(timeout * 1000)})
    acked: list[str] = []
    errors: list[str] = []

    def on_delivery(err, msg) -> None:
        (errors.append(f"{msg.value().decode()}: {err}") if err
         else acked.append(msg.value().decode()))

    for value in values:
        producer.produce(topic, value=value.encode(), on_delivery=on_delivery)
        producer.poll(0)
    remaining = producer.flush(timeout)
    if errors or remaining:
        raise RuntimeError(f"topic {topic}: {len(errors)} deliveries failed, {remaining} "
                           f"unacknowledged: {errors[:3]}")
    return acked


def consume_all(bootstrap: str, topic: str, expected: int, timeout: float = 60) -> list[str]:
    """Reads partition 0 of topic from the beginning until `expected` messages or timeout."""
    from confluent_kafka import Consumer, TopicPartition, OFFSET_BEGINNING
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"logtrial-smoke-{topic}",
                         "logger": QUIET_CLIENT_LOGGER,
                         "enable.auto.commit": False, "isolation.level": "read_committed"})
    consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    values: list[str] = []
    deadline = time.monotonic() + timeout
    try:
        while len(values) < expected and time.monotonic() < deadline:
            msg = consumer.poll(1.0)
            if msg is not None and not msg.error():
                values.append(msg.value().decode())
    finally:
        consumer.close()
    return values


def roundtrip(bootstrap: str, topic: str, count: int = 100, timeout: float = 60) -> RoundTrip:
    started = time.monotonic()
    values = [f"{topic}-{i}" for i in range(count)]
    acked = produce(bootstrap, topic, values, timeout)
    read = set(consume_all(bootstrap, topic, len(acked), timeout))
    return RoundTrip(topic=topic, sent=len(acked), read=len(read & set(acked)),
                     missing=[v for v in acked if v not in read],
                     seconds=round(time.monotonic() - started, 3))
