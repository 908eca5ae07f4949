"""The child process of the segfault probes (harness/probes/fetch_crash.py): librdkafka consumers that fetch
every partition of a topic, polling until killed. It runs apart from the probe so
that a segfault in librdkafka ends this process, not the probe. It prints `fetching`
once every consumer has polled; librdkafka's debug lines (fetch, metadata) go to its
stderr, which the probe keeps.

    python -m harness.probes.fetch_loop BOOTSTRAP TOPIC PARTITIONS
"""
from __future__ import annotations

import sys

from confluent_kafka import Consumer, TopicPartition

CONSUMERS = 4  # more fetch sessions in flight when the storage dies: the race is met sooner


def fetching_consumer(bootstrap: str, topic: str, partitions: int) -> Consumer:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"{topic}-probe",
                         "enable.auto.commit": False, "fetch.wait.max.ms": 50,
                         "reconnect.backoff.max.ms": 500, "debug": "fetch,metadata"})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    return consumer


def main(bootstrap: str, topic: str, partitions: str) -> None:
    consumers = [fetching_consumer(bootstrap, topic, int(partitions)) for _ in range(CONSUMERS)]
    for consumer in consumers:
        consumer.poll(1.0)
    print("fetching", flush=True)
    while True:
        for consumer in consumers:
            consumer.poll(0.05)


if __name__ == "__main__":
    main(*sys.argv[1:4])
