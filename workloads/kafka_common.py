"""Kafka plumbing shared by the workloads: keys <-> topic-partitions, topic
creation, client configuration and value encoding."""
from __future__ import annotations

import logging
import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from confluent_kafka import KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from common.client_logging import librdkafka_logging

log = logging.getLogger(__name__)

PARTITIONS_PER_TOPIC = 2


@dataclass(frozen=True)
class KeySpace:
    """Key k lives in topic `<prefix>-<k // 2>`, partition `k % 2`."""
    prefix: str

    def topic(self, key: int) -> str:
        return f"{self.prefix}-{key // PARTITIONS_PER_TOPIC}"

    def partition(self, key: int) -> int:
        return key % PARTITIONS_PER_TOPIC

    def topic_partition(self, key: int, offset: int | None = None) -> TopicPartition:
        if offset is None:
            return TopicPartition(self.topic(key), self.partition(key))
        return TopicPartition(self.topic(key), self.partition(key), offset)

    def key_of(self, topic: str, partition: int) -> int:
        return int(topic.rsplit("-", 1)[1]) * PARTITIONS_PER_TOPIC + partition

    def keys_of_topic(self, topic: str) -> list[int]:
        base = int(topic.rsplit("-", 1)[1]) * PARTITIONS_PER_TOPIC
        return [base + p for p in range(PARTITIONS_PER_TOPIC)]


class TopicManager:
    """Creates each key's topic once, before first use (RF and min.insync.replicas
    per topic); later calls for the same topic are a set lookup."""

    def __init__(self, bootstrap: str, keys: KeySpace, replication_factor: int,
                 min_insync_replicas: int, timeout: float = 15.0):
        self.keys = keys
        self.replication_factor = replication_factor
        self.min_insync_replicas = min_insync_replicas
        self.timeout = timeout
        self._admin = AdminClient(admin_config(bootstrap))
        self._ready: set[str] = set()
        self._lock = threading.Lock()
        self._topic_locks: dict[str, threading.Lock] = {}
        self._prefetcher = ThreadPoolExecutor(max_workers=1, thread_name_prefix="topic-prefetch")

    def ensure(self, key: int) -> None:
        """Raises KafkaException when the topic cannot be created (nothing was written)."""
        topic = self.keys.topic(key)
        if topic in self._ready:
            return
        with self._lock:
            topic_lock = self._topic_locks.setdefault(topic, threading.Lock())
        with topic_lock:
            if topic in self._ready:
                return
            self._create(topic)
            self._wait_for_leaders(topic)
            self._ready.add(topic)

    def prefetch(self, key: int) -> None:
        """Creates a key's topic in the background (a new key is about to be used)."""
        def create() -> None:
            try:
                self.ensure(key)
            except Exception as e:  # the client's own ensure() will retry and report it
                log.info("prefetching topic for key %s failed: %s", key, e)
        self._prefetcher.submit(create)

    def _create(self, topic: str) -> None:
        new = NewTopic(topic, num_partitions=PARTITIONS_PER_TOPIC,
                       replication_factor=self.replication_factor,
                       config={"min.insync.replicas": str(self.min_insync_replicas)})
        future = self._admin.create_topics([new], operation_timeout=self.timeout,
                                           request_timeout=self.timeout)[topic]
        try:
            future.result(timeout=self.timeout + 5)
        except KafkaException as e:
            if e.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
                raise

    def _wait_for_leaders(self, topic: str) -> None:
        deadline = time.monotonic() + self.timeout
        while True:
            metadata = self._admin.list_topics(topic=topic, timeout=5).topics.get(topic)
            if metadata is not None and metadata.error is None and len(metadata.partitions) == PARTITIONS_PER_TOPIC \
                    and all(p.leader >= 0 for p in metadata.partitions.values()):
                return
            if time.monotonic() > deadline:
                raise KafkaException(KafkaError(KafkaError.LEADER_NOT_AVAILABLE,
                                                f"topic {topic}: no leader after {self.timeout}s"))
            time.sleep(0.2)

    def close(self) -> None:
        """Stops prefetching and lets go of the admin client (it would otherwise keep
        reconnecting to the brokers after teardown)."""
        self._prefetcher.shutdown(wait=False, cancel_futures=True)
        self._admin = None


def encode(n: int) -> bytes:
    return str(n).encode()


def decode(raw: bytes) -> int:
    return int(raw)


def kafka_error_of(e: KafkaException) -> KafkaError:
    return e.args[0]


def admin_config(bootstrap: str) -> dict:
    return {"bootstrap.servers": bootstrap, "socket.timeout.ms": 5000,
            **librdkafka_logging()}


def broker_count(bootstrap: str) -> int:
    admin = AdminClient(admin_config(bootstrap))
    return len(admin.list_topics(timeout=15).brokers)


class KafkaWorkloadBase:
    """What both Kafka workloads share: keys, topics, key rotation, unique
    values and one seeded random stream per process."""

    name = "kafka"
    topic_tag = "k"

    def __init__(self, bootstrap: str, settings, run_id: str, seed: int, clients):
        """`clients`: the run's ClientFactory (workloads/client_kinds.py), which the
        registry opens for the client the settings name."""
        from workloads.base import KeyRotation, ValueSource  # (base imports nothing Kafka)
        self.bootstrap = bootstrap
        self.settings = settings
        self.run_id = run_id
        self.seed = seed
        self.keys = KeySpace(prefix=f"{run_id}-{self.topic_tag}")
        self.topics = TopicManager(bootstrap, self.keys, settings.replication_factor, settings.min_insync_replicas)
        self.rotation = KeyRotation(settings.key_count, settings.max_writes_per_key, on_new_key=self.topics.prefetch)
        self.values = ValueSource()
        self.clients = clients

    def process_rng(self, process: int) -> random.Random:
        """The random choices of `process` (whether a transaction aborts), seeded by the
        run's seed and the process. Its client keeps it: a dict of them here grew by a
        process's 2.9 KB for every client replaced, an hour's soak long (issue 42)."""
        return random.Random(self.seed * 1_000_003 + process)

    def first_keys(self) -> list[int]:
        """The keys the first ops use: what the clients warm up for (harness/client_open.py)."""
        return self.rotation.active

    def topic_names(self) -> list[str]:
        """Topics of the active keys (the nemesis targets their partition leaders)."""
        return sorted({self.keys.topic(k) for k in self.rotation.active})

    def setup(self) -> None:
        for key in self.rotation.active:
            self.topics.ensure(key)

    def close(self) -> None:
        self.topics.close()
        self.clients.close()
