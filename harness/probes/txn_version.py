"""Which client really uses transaction.version 2: commits a few transactions with
each client under test (librdkafka through confluent-kafka, Kafka's Java client
through logtrial's Java server, franz-go and Sarama through the Go program, kafkajs
through its Node program, kafka-python and aiokafka in this process) on a fresh
topic each, then reads the partition's log on a broker with DumpLogSegments and prints every batch's producer id and epoch. With
transaction.version 2 (KIP-890) the producer's epoch goes up by one at every
transaction's end, so each transaction's batches and its commit marker carry a new
epoch; with version 1 the epoch stays the same across the producer's transactions.

    logtrial probe txn-version CLUSTER_NAME [1|2] [TRANSACTIONS]

CLUSTER_NAME: a running local cluster (`logtrial cluster up --name ...`) of Kafka 4.x.
The wire is shown too: for the probe, every broker's request logger is set to
DEBUG (a dynamic broker-logger setting, back to WARN after), and the versions of
the transactional requests each client sent are counted in the brokers' logs.
"""
from __future__ import annotations

import collections
import re
import shlex
import uuid
from types import ModuleType
from typing import Callable

from confluent_kafka import Producer

from clusters.cluster import Cluster
from clusters.kafka.admin import TRANSACTION_VERSION, create_topic, run_tool, set_transaction_version
from clusters.kafka.log_dump import Batch, first_segment_batches
from harness.probes.java_session import open_session
from harness.probes.late_batch_python import timed_producer, timed_txn
from workloads import clients
from workloads.bridge.pool import ProcessPool
from workloads.client_kinds import CLIENT_KINDS, ClientKind
from workloads.settings import WorkloadSettings

SETTINGS = WorkloadSettings(txn=True)
JAVA_OP_TIMEOUT_S = 30.0


def librdkafka_transactions(bootstrap: str, topic: str, count: int) -> None:
    producer = Producer(clients.producer_config(bootstrap, SETTINGS, "probe-librdkafka",
                                                f"probe-{uuid.uuid4().hex[:8]}"))
    producer.init_transactions(30)
    for i in range(count):
        producer.begin_transaction()
        producer.produce(topic, value=str(i).encode(), partition=0)
        producer.commit_transaction(30)
    producer.flush(5)


def timed_transactions(timed: str, name: str, bootstrap: str, topic: str, count: int) -> None:
    """`count` one-send transactions by a Python client in this process, through the
    TimedProducer in module `timed` (its registry entry's) and the late-batch probe's
    timed transaction, with the queue workload's producer settings."""
    producer = timed_producer(timed, bootstrap, SETTINGS, 0, f"probe-{uuid.uuid4().hex[:8]}", f"probe-{name}")
    try:
        for i in range(count):
            txn = timed_txn(producer, topic, str(i), JAVA_OP_TIMEOUT_S, commit=True)
            outcome = txn["ends"][0][0] if "ends" in txn else txn["error"]
            if outcome != "ok" or "offset" not in txn["send"]:
                raise RuntimeError(f"{name} transaction {i}: {outcome}, send {txn.get('send')}")
    finally:
        producer.close()


def bridge_transactions(pool: ProcessPool, config: ModuleType, name: str, bootstrap: str, topic: str,
                        count: int) -> None:
    """`count` one-send transactions by a client in a child process, closed after."""
    try:
        txn_id = f"probe-{uuid.uuid4().hex[:8]}"
        child, session = open_session(pool, bootstrap, SETTINGS, f"probe-{name}", txn_id, f"g-{txn_id}",
                                      JAVA_OP_TIMEOUT_S, config)
        for i in range(count):
            reply = child.call(session, "txn", 60, mops=[["send", topic, 0, "k", str(i)]], abort=False)
            if "error" in reply:
                raise RuntimeError(f"{name} transaction {i}: {reply['error']}")
        child.call(session, "close", 30)
    finally:
        pool.close()


def transactions(kind: ClientKind) -> Callable[[str, str, int], None]:
    """(bootstrap, topic, count) -> commits `count` one-send transactions to partition 0
    of the topic with `kind`'s client, as its registry entry says it is driven. Its
    client id is probe-NAME without dashes (what request_versions counts)."""
    name = kind.name.replace("-", "")
    if kind.bridge is not None:
        return lambda *args: bridge_transactions(kind.bridge.pool(None), kind.bridge.config, name, *args)
    if kind.timed is not None:
        return lambda *args: timed_transactions(kind.timed, name, *args)
    return librdkafka_transactions


def probe(cluster: Cluster, count: int = 4) -> dict[str, list[Batch]]:
    """client -> the batches its `count` transactions left in a fresh topic's log."""
    node = cluster.inventory.nodes[0].name
    found = {}
    for name, kind in CLIENT_KINDS.items():
        run_transactions = transactions(kind)
        topic = f"tv-probe-{name}-{uuid.uuid4().hex[:6]}"
        create_topic(cluster, topic, partitions=1, replication_factor=len(cluster.inventory.nodes),
                     min_insync_replicas=1)
        run_transactions(cluster.db.bootstrap_servers(), topic, count)
        found[name] = first_segment_batches(cluster, node, topic)
    return found


def epochs_bumped_per_transaction(batches: list[Batch]) -> bool:
    """Every commit marker carries a higher epoch than the one before (version 2's mark)."""
    markers = [b.producer_epoch for b in batches if b.control]
    return len(markers) > 1 and all(b > a for a, b in zip(markers, markers[1:]))


TXN_REQUESTS = ("INIT_PRODUCER_ID", "ADD_PARTITIONS_TO_TXN", "PRODUCE", "END_TXN")
# a request log line: {"requestHeader":{"requestApiKey":..,"requestApiVersion":V,"correlationId":..,"clientId":C,"requestApiKeyName":K}
REQUEST = re.compile(r'"requestApiVersion":(\d+),"correlationId":\d+,"clientId":"(probe-[a-z]+)","requestApiKeyName":"([A-Z_]+)"')


def set_request_logging(cluster: Cluster, level: str) -> None:
    """kafka.request.logger on every broker, changed at run time (no restart)."""
    via = cluster.inventory.nodes[0].name
    for i, _node in enumerate(cluster.inventory.nodes, 1):
        run_tool(cluster, via, f"kafka.admin.ConfigCommand --bootstrap-server {shlex.quote(cluster.db.bootstrap_servers())} "
                 f"--entity-type broker-loggers --entity-name {i} --alter --add-config kafka.request.logger={level}",
                 f"setting broker {i}'s request logger to {level}")


def request_versions(cluster: Cluster) -> collections.Counter:
    """(client id, request, version) -> how many the brokers logged, of the probe's clients."""
    counts: collections.Counter = collections.Counter()
    for node in cluster.inventory.nodes:
        log = f"{cluster.db.paths.logs_dir(node.name)}/server.log"
        text = cluster.ssh[node.name].exec(f"grep -h probe- {shlex.quote(log)} || true", timeout=60).stdout
        counts.update((m[2], m[3], int(m[1])) for m in REQUEST.finditer(text) if m[3] in TXN_REQUESTS)
    return counts


def run(cluster: Cluster, level: int = 2, count: int = 4) -> int:
    """Finalizes transaction.version `level`, probes every client with the brokers'
    request logs on, and prints the request versions and each client's batches; 0.
    The request counts are of the brokers' whole logs: a second probe on the same
    cluster counts the first one's requests too."""
    node = cluster.inventory.nodes[0].name
    print(f"{TRANSACTION_VERSION} finalized: {set_transaction_version(cluster, node, level)}")
    set_request_logging(cluster, "DEBUG")
    try:
        found = probe(cluster, count)
    finally:
        set_request_logging(cluster, "WARN")
    for (client, request, version), n in sorted(request_versions(cluster).items()):
        print(f"{client}: {request} v{version} x{n}")
    for client, batches in found.items():
        print(f"{client}: epoch bumped per transaction: {epochs_bumped_per_transaction(batches)}")
        for b in batches:
            kind = "marker" if b.control else "data"
            print(f"  offset {b.base_offset:3d} {kind:6s} producerId {b.producer_id} epoch {b.producer_epoch}")
    return 0
