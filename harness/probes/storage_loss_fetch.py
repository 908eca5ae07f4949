"""The segfault of docs/findings.md row 7 as it was found: tansu's PostgreSQL dies under
fetching librdkafka consumers. A race; `probe deleted-topic-fetch` is the deterministic
trigger, `probe fetch-answer` the one with no cluster.

When tansu's PostgreSQL dies, a broker's pooled connection may fail the topic-id lookup
of a Fetch (v13+ names topics by id). tansu then answers the topic with
UNKNOWN_TOPIC_OR_PARTITION, an all-zero topic id and a CurrentLeader hint of leader 0,
epoch 0, beside an empty NodeEndpoints (tansu-storage 0.6.0, service/fetch.rs,
`unknown_topic_response`). librdkafka takes the hint for a leader change and queues a
metadata update for a topic with neither name nor id (rdkafka_fetcher.c,
`rd_kafka_handle_Fetch_metadata_update`); its main thread looks the missing name up in
its metadata cache (rdkafka_metadata.c, `rd_kafka_metadata_update_op` ->
`rd_kafka_metadata_cache_find`) and strcmp reads address 0.

Why a race: tansu swallows a failed lookup *query* (pg.rs, `metadata`), but not a
failure to get a connection from its pool, nor a failed record fetch: those close the
client's connection instead, and the consumers live. The pool (deadpool, Fast
recycling) hands out a connection until its task has seen the socket close, so only a
lookup that takes a dead connection in that instant answers unknown-topic. On a quiet
machine most rounds meet it; on a loaded one (a fetch's record queries take longer than
the instant) few do.

    logtrial probe storage-loss-fetch NAME [ROUNDS]

Each round: the child's consumers fetch a topic's partitions, the storage node's
PostgreSQL is SIGKILLed, and the probe waits for the child. PostgreSQL is started again
and the brokers waited for between rounds.
"""
from __future__ import annotations

import time
import uuid

from confluent_kafka import libversion

from clusters.cluster import Cluster
from clusters.kafka.admin import create_topic
from harness.probes.fetch_crash import consumers_through, rounds_until_segfault

PARTITIONS = 4
SERVING_WAIT_S = 120.0


class NotTansu(ValueError):
    pass


def run(cluster: Cluster, rounds: int, debug_log: str | None) -> int:
    storage = getattr(cluster.db, "storage_node", None)
    if storage is None:
        raise NotTansu("probe storage-loss-fetch needs a tansu cluster (its PostgreSQL node)")
    topic = f"lt-storage-loss-{uuid.uuid4().hex[:8]}"
    create_topic(cluster, topic, partitions=PARTITIONS, replication_factor=1, min_insync_replicas=1)
    print(f"librdkafka {libversion()[0]}, tansu {cluster.db.version}; topic {topic}, {PARTITIONS} partitions")
    return rounds_until_segfault(rounds, lambda: one_round(cluster, storage, topic, debug_log))


def one_round(cluster: Cluster, storage: str, topic: str, debug_log: str | None) -> str:
    def kill_storage() -> None:
        cluster.db.kill(storage)
        print(f"  killed PostgreSQL on {storage}")
    try:
        return consumers_through(cluster.db.bootstrap_servers(), topic, PARTITIONS, kill_storage, debug_log,
                                 after="the storage died")
    finally:
        restart_storage(cluster, storage)


def restart_storage(cluster: Cluster, storage: str) -> None:
    cluster.db.start(storage)
    cluster.db.wait_ready(storage, SERVING_WAIT_S)
    deadline = time.monotonic() + SERVING_WAIT_S
    brokers = [n for n in cluster.nodes if n != storage]
    while not all(cluster.db.serves_metadata(n) for n in brokers):
        if time.monotonic() > deadline:
            raise RuntimeError(f"brokers {brokers} not serving {SERVING_WAIT_S:g} s after PostgreSQL restarted")
        time.sleep(1.0)
