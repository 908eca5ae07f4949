"""Reproduces the segfault of librdkafka's main thread on tansu (docs/findings.md,
"A crash of the client process").

When tansu's PostgreSQL dies, a broker's pooled connection fails the topic-id lookup
of a Fetch (v13+ names topics by id). tansu then answers the topic with
UNKNOWN_TOPIC_OR_PARTITION, an all-zero topic id and a CurrentLeader hint of leader 0,
epoch 0, beside an empty NodeEndpoints (tansu-storage 0.6.0, service/fetch.rs,
`unknown_topic_response`). librdkafka takes the hint for a leader change and queues a
metadata update for a topic with neither name nor id (rdkafka_fetcher.c,
`rd_kafka_handle_Fetch_metadata_update`); its main thread looks the missing name up in
its metadata cache (rdkafka_metadata.c, `rd_kafka_metadata_update_op` ->
`rd_kafka_metadata_cache_find`) and strcmp reads address 0.

    logtrial probe storage-loss-fetch NAME [ROUNDS]
    logtrial probe fetch-answer [tansu|echoed-id|no-hint]

Each round: a child process's librdkafka consumers fetch a topic's partitions, the
storage node's PostgreSQL is SIGKILLed, and the probe waits for the child. A child
killed by SIGSEGV is the finding (exit 1); one alive after the wait is a round
without it. PostgreSQL is started again and the brokers waited for between rounds.

`fetch-answer` needs no cluster: a fake broker on loopback answers every Fetch as tansu
does (`tansu`), or with the topic's own id (`echoed-id`), or without the leader hint
(`no-hint`). Only the first kills the client: both ingredients are needed.
"""
from __future__ import annotations

import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Callable

from confluent_kafka import libversion

from clusters.cluster import Cluster
from clusters.kafka.admin import create_topic

PARTITIONS = 4
CRASH_WAIT_S = 20.0    # the crash came within a second of the kill when it came
FAKE_CRASH_WAIT_S = 5.0  # against the fake broker it comes with the first answer
FETCHING_WAIT_S = 60.0
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
    for number in range(1, rounds + 1):
        outcome = one_round(cluster, storage, topic, debug_log)
        print(f"round {number}: {outcome}")
        if outcome.startswith("SEGFAULT"):
            return 1
    return 0


def one_round(cluster: Cluster, storage: str, topic: str, debug_log: str | None) -> str:
    def kill_storage() -> None:
        cluster.db.kill(storage)
        print(f"  killed PostgreSQL on {storage}")
    try:
        return consumers_through(cluster.db.bootstrap_servers(), topic, PARTITIONS, kill_storage, debug_log,
                                 after="the storage died")
    finally:
        restart_storage(cluster, storage)


def run_fake(answer: str, debug_log: str | None) -> int:
    """The same consumers against a fake broker on loopback that answers every Fetch as
    `answer` says (harness/probes/fake_fetch_broker.py): no tansu, no PostgreSQL, no
    network namespace. 1 if they died of SIGSEGV."""
    from harness.probes.fake_fetch_broker import FakeFetchBroker
    broker = FakeFetchBroker("lt-fake", answer)
    try:
        print(f"librdkafka {libversion()[0]}; a fake broker at {broker.bootstrap} answers every Fetch as {answer!r}")
        outcome = consumers_through(broker.bootstrap, "lt-fake", 1, lambda: None, debug_log,
                                    after="the fake broker's answers to its fetches", crash_wait_s=FAKE_CRASH_WAIT_S)
    finally:
        broker.close()
    print(outcome)
    return 1 if outcome.startswith("SEGFAULT") else 0


def consumers_through(bootstrap: str, topic: str, partitions: int, fault: Callable[[], None],
                      debug_log: str | None, after: str, crash_wait_s: float = CRASH_WAIT_S) -> str:
    """Starts the child's consumers, strikes `fault` once they fetch, and says how the child fared."""
    stderr = open(debug_log, "a") if debug_log else subprocess.DEVNULL
    child = subprocess.Popen([sys.executable, "-m", "harness.probes.fetch_loop", bootstrap, topic, str(partitions)],
                             stdout=subprocess.PIPE, stderr=stderr, text=True, cwd=Path(__file__).resolve().parents[2])
    try:
        if wait_fetching(child):
            fault()
            try:
                child.wait(timeout=crash_wait_s)
            except subprocess.TimeoutExpired:
                return f"ok: the consumers lived {crash_wait_s:g} s"
        code = child.poll()
        if code == -signal.SIGSEGV:
            return f"SEGFAULT: the consumers' process died of SIGSEGV after {after}"
        if code is None:
            return "INCONCLUSIVE: the consumers never fetched"
        return f"INCONCLUSIVE: the consumers' process exited {code}"
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        if stderr is not subprocess.DEVNULL:
            stderr.close()


def wait_fetching(child: subprocess.Popen) -> bool:
    deadline = time.monotonic() + FETCHING_WAIT_S
    while time.monotonic() < deadline and child.poll() is None:
        if child.stdout.readline().strip() == "fetching":
            time.sleep(2.0)  # fetch sessions established on every broker
            return True
    return False


def restart_storage(cluster: Cluster, storage: str) -> None:
    cluster.db.start(storage)
    cluster.db.wait_ready(storage, SERVING_WAIT_S)
    deadline = time.monotonic() + SERVING_WAIT_S
    brokers = [n for n in cluster.nodes if n != storage]
    while not all(cluster.db.serves_metadata(n) for n in brokers):
        if time.monotonic() > deadline:
            raise RuntimeError(f"brokers {brokers} not serving {SERVING_WAIT_S:g} s after PostgreSQL restarted")
        time.sleep(1.0)
