"""Reproduces the librdkafka consumer rewind that logtrial's queue workload now
works around (docs/findings.md, "consumer rewinds to offset 0").

A read_committed consumer in group G assigns partition P while an open
transaction holds G's offset for P (so the broker answers OffsetFetch with
UNSTABLE_OFFSET_COMMIT and librdkafka keeps retrying), then assigns again. The
first lookup's late answer is applied to the new assignment; librdkafka puts P
back as pending with offset INVALID and starts it at auto.offset.reset. With
earliest, the consumer re-reads P from offset 0 although G committed offset 5.
Nothing is logged above debug level.

    logtrial probe stale-offset-fetch HOST:9092

prints the committed offset and the first offset polled; they should be equal (exit 0;
exit 1 if they are not). Plain confluent-kafka calls only, so that the reproduction
carries over to librdkafka's issue tracker as it stands.
"""
from __future__ import annotations

import concurrent.futures
import time
import uuid

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition, libversion
from confluent_kafka.admin import AdminClient, NewTopic

RECORDS = 6
COMMITTED_BEFORE, COMMITTED_IN_TXN = 4, 5
STILL_UNSTABLE_S = 3.0  # longer than librdkafka's retry backoff, so a late answer lands


ADMIN_TIMEOUT_S = 30.0  # librdkafka retries an unreachable broker for ever: the probe must not
BACKSTOP_S = 10.0       # beyond the request timeout, should librdkafka never answer


class NoBroker(RuntimeError):
    pass


def make_topics(bootstrap: str, names: list[str], timeout_s: float = ADMIN_TIMEOUT_S) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})  # kept alive until the topics exist
    futures = admin.create_topics([NewTopic(name, 1, 1) for name in names], request_timeout=timeout_s)
    for future in futures.values():
        try:
            future.result(timeout=timeout_s + BACKSTOP_S)  # librdkafka's request timeout comes first
        except (concurrent.futures.TimeoutError, KafkaException) as e:
            if isinstance(e, KafkaException) and e.args[0].code() != KafkaError._TIMED_OUT:
                raise
            raise NoBroker(f"no broker at {bootstrap} created the probe's topics within "
                           f"{timeout_s:g} s (is one listening there?)") from None


def first_offset_polled(consumer: Consumer, topic: str, timeout_s: float = 10.0) -> int | None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        message = consumer.poll(0.5)
        if message is not None and not message.error() and message.topic() == topic:
            return message.offset()
    return None


def run(bootstrap: str, timeout_s: float = ADMIN_TIMEOUT_S) -> int:
    """The sequence once; 0 if the consumer started at the committed offset, else 1.
    NoBroker if nothing at `bootstrap` creates its topics within timeout_s."""
    run_id = uuid.uuid4().hex[:8]
    topic, other, group = f"stale-{run_id}", f"stale-{run_id}-other", f"stale-{run_id}-group"
    make_topics(bootstrap, [topic, other], timeout_s)
    producer = Producer({"bootstrap.servers": bootstrap})
    for value in range(RECORDS):
        producer.produce(topic, value=str(value).encode())
    producer.flush(10)

    committer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    committer.commit(offsets=[TopicPartition(topic, 0, COMMITTED_BEFORE)], asynchronous=False)
    holder = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"{run_id}-holder"})
    holder.init_transactions(10)
    holder.begin_transaction()
    holder.send_offsets_to_transaction([TopicPartition(topic, 0, COMMITTED_IN_TXN)],
                                       committer.consumer_group_metadata(), 10)

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "isolation.level": "read_committed",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, 0)])
    time.sleep(1.0)
    consumer.assign([TopicPartition(topic, 0), TopicPartition(other, 0)])
    time.sleep(STILL_UNSTABLE_S)
    holder.commit_transaction(10)
    first = first_offset_polled(consumer, topic)
    consumer.close()
    committer.close()
    print(f"librdkafka {libversion()[0]}: committed offset {COMMITTED_IN_TXN}; first offset polled: {first}")
    return 0 if first == COMMITTED_IN_TXN else 1
