"""The segfault of docs/findings.md row 7 by its everyday trigger: a topic deleted while
librdkafka consumers fetch it.

    logtrial probe deleted-topic-fetch NAME [ROUNDS]

Each round creates a topic, the child's consumers fetch its partitions (by topic id:
Fetch v13+), and the probe deletes it. tansu 0.6.0 looks the fetched id up in
PostgreSQL, finds no row, and answers as it does when the lookup fails
(service/fetch.rs, `unknown_topic_response`): UNKNOWN_TOPIC_OR_PARTITION, an all-zero
topic id and a CurrentLeader hint. librdkafka's main thread then looks a NULL topic name
up in its metadata cache. Apache Kafka answers the same fetch UNKNOWN_TOPIC_ID or
UNKNOWN_TOPIC_OR_PARTITION with no hint, and the consumers live: the probe runs on
either system, so one command shows both.
"""
from __future__ import annotations

import uuid

from confluent_kafka import libversion
from confluent_kafka.admin import AdminClient

from clusters.cluster import Cluster
from clusters.kafka.admin import create_topic
from clusters.systems import system_of
from common.client_logging import QUIET_CLIENT_LOGGER
from harness.probes.fetch_crash import consumers_through, rounds_until_segfault

PARTITIONS = 4
DELETE_TIMEOUT_S = 30.0


def run(cluster: Cluster, rounds: int, debug_log: str | None) -> int:
    system, version = system_of(cluster.db)
    print(f"librdkafka {libversion()[0]}, {system} {version}; {PARTITIONS} partitions a round")
    return rounds_until_segfault(rounds, lambda: one_round(cluster, debug_log))


def one_round(cluster: Cluster, debug_log: str | None) -> str:
    bootstrap = cluster.db.bootstrap_servers()
    topic = f"lt-deleted-{uuid.uuid4().hex[:8]}"
    create_topic(cluster, topic, partitions=PARTITIONS, replication_factor=1, min_insync_replicas=1)

    def delete_topic() -> None:
        admin = AdminClient({"bootstrap.servers": bootstrap, "logger": QUIET_CLIENT_LOGGER})
        admin.delete_topics([topic], operation_timeout=DELETE_TIMEOUT_S)[topic].result(timeout=DELETE_TIMEOUT_S)
        print(f"  deleted {topic}")
    return consumers_through(bootstrap, topic, PARTITIONS, delete_topic, debug_log, after="their topic was deleted")
