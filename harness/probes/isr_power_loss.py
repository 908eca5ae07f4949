"""The loss of acknowledged records when both members of a two-replica ISR lose power at
once (docs/findings.md, "power, round 3"), on demand.

    logtrial probe isr-power-loss NAME [ROUNDS] [--fsync-each]

NAME is a local Kafka cluster of three nodes whose data sits on powerfs:
`logtrial cluster up --name NAME --set logtrial.powerfs=true`. Each round:
1. a fresh topic, one partition on replicas [n1, n2, n3] (n1 leads), min ISR 2, and
   Kafka's default flush (no fsync on produce), or with --fsync-each the topic's
   flush.messages=1 (an fsync per record: the control, which must lose nothing);
2. n3's broker is stopped cleanly, and the probe waits until the ISR is {n1, n2};
3. an idempotent acks=all producer sends MESSAGES records; the ISR acknowledges them;
4. n1 and n2 lose power at the same instant (nemesis/power.py's steps: each powerfs
   layer forgets what was never fsynced, then every process of the node is SIGKILLed);
5. n1 and n2 are powered on, then n3 started;
6. a consumer reads the partition from offset 0 to its high watermark.

With --send-after N the same producer (its producer id, epoch and sequence numbers
kept across the loss) then sends N more records, and the round prints what became of
each (acknowledged, or the error the broker or the client gave) and librdkafka's own
idempotence log lines after the loss: whether the producer noticed that the brokers
lost its records, KIP-360's question.

A round whose read misses acknowledged records prints `LOST` with the count, the
partition's leader and ISR after the loss, and the controllers' own words for the
election (state-change and server logs: Kafka 4.1 elects the last known leader from
`lastKnownElr` as an UNCLEAN change though unclean election is off). `ok` if every
acknowledged record was read. Exit 1 at the first LOST round.

The run where this was seen had the third replica alive and catching up, which the
election then truncated; here it is down during the loss, which keeps the round
deterministic: acks=all put the records only in two page caches, and both are gone.
"""
from __future__ import annotations

import logging
import time
import uuid
from collections import Counter
from typing import Callable

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import NewTopic

from clusters.cluster import Cluster
from clusters.db import Process, require
from clusters.kafka.admin import PartitionState, admin_client, partition_key, partition_states, split_key
from clusters.kafka.log_dump import first_segment_records
from clusters.nodes import powerfs
from common.client_logging import QUIET_CLIENT_LOGGER
from harness.probes.powerfs_cluster import require_powerfs
from nemesis.kind import FaultContext
from nemesis.power import KIND as POWER

MESSAGES = 200
NODES = 3
WAIT_S = 120.0
READ_WAIT_S = 30.0
ELECTION_WORDS = ("UNCLEAN partition change", "Recovering unflushed segment", "Corruption found",
                  "Truncating partition")


def run(cluster: Cluster, rounds: int, fsync_each: bool = False, send_after: int = 0) -> int:
    require_powerfs(cluster, "isr-power-loss", NODES)
    for number in range(1, rounds + 1):
        lost = one_round(cluster, fsync_each, send_after)
        print(f"round {number}: " + (f"LOST {lost} acknowledged records" if lost else "ok: every acknowledged record read"))
        if lost:
            return 1
    return 0


def one_round(cluster: Cluster, fsync_each: bool, send_after: int = 0) -> int:
    """The number of acknowledged records the read after the loss did not return."""
    leader, follower, outside = cluster.nodes[:NODES]
    topic = f"lt-isr-power-{uuid.uuid4().hex[:8]}"
    key = partition_key(topic, 0)
    ids = [cluster.db.node_id(n) for n in (leader, follower, outside)]
    create_placed(cluster, topic, ids, {"flush.messages": "1"} if fsync_each else {})
    processes = require(cluster.db, Process, "probe isr-power-loss")
    processes.stop(outside)
    print(f"  {topic}: replicas {ids}, fsync {'each record' if fsync_each else 'by default (none)'}; "
          f"stopped {outside}")
    wait_for(cluster, key, lambda s: set(s.isr) == set(ids[:2]), f"ISR {ids[:2]}")
    producer = SameProducer(cluster.db.bootstrap_servers(), topic)
    acked = producer.send(0, MESSAGES)
    print(f"  {len(acked)} of {MESSAGES} sends acknowledged by the ISR {ids[:2]}")
    dropped = power_cycle(cluster, [leader, follower])
    print(f"  power lost on {leader} and {follower}, back on; forgotten: "
          + "; ".join(f"{node} {d['bytes']:,} bytes in {d['files']} files" for node, d in sorted(dropped.items())))
    processes.start(outside)
    state = wait_for(cluster, key, lambda s: s.leader >= 0, "a leader")
    acked_after = send_again(producer, send_after) if send_after else set()
    producer.close()
    if send_after:
        print_log_start(cluster, state.leader, topic)
    read = read_partition(cluster.db.bootstrap_servers(), topic)
    print(f"  after: leader {state.leader}, ISR {list(state.isr)}; read {len(read)} records")
    if send_after:
        print(f"  of the {len(acked_after)} acknowledged after the loss, {len(acked_after - read)} not read")
    lost = len(acked - read)
    if lost:
        for line in election_lines(cluster, topic):
            print(f"    {line}")
    return lost


def create_placed(cluster: Cluster, topic: str, replicas: list[int], config: dict[str, str]) -> None:
    admin = admin_client(cluster)
    admin.create_topics([NewTopic(topic, num_partitions=1, replica_assignment=[replicas],
                                  config={"min.insync.replicas": "2", **config})])[topic].result()
    wait_for(cluster, partition_key(topic, 0), lambda s: s.leader == replicas[0], f"leader {replicas[0]}")


def wait_for(cluster: Cluster, key: str, done: Callable[[PartitionState], bool], what: str) -> PartitionState:
    deadline = time.monotonic() + WAIT_S
    while True:
        state = partition_states(cluster, [split_key(key)[0]]).get(key)
        if state is not None and done(state):
            return state
        if time.monotonic() > deadline:
            raise RuntimeError(f"{key}: not {what} after {WAIT_S:g} s (now {state})")
        time.sleep(0.5)


# librdkafka's idempotence log lines that say what it did about its producer id and epoch
EOS_WORDS = ("epoch", "PID", "UNKNOWN_PRODUCER_ID", "OUT_OF_ORDER", "fatal", "drain")
EOS_LINES_SHOWN = 12
# what a client says while the brokers are down: not about the producer's state
OUTAGE_ERRORS = ("_TRANSPORT", "_ALL_BROKERS_DOWN", "_RESOLVE")


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


class SameProducer:
    """One idempotent acks=all producer for the whole round, so its producer id, epoch and
    sequence numbers outlive the loss: what the brokers acknowledged, what the refused
    sends were refused with, the client's own errors, and its `eos` debug lines."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.topic = topic
        self.acked: set[str] = set()
        self.refused: Counter[str] = Counter()
        self.client_errors: list[str] = []
        self.log = _Lines()
        logger = logging.getLogger(f"logtrial.probe.isr-power-loss.{topic}")
        logger.propagate = False
        logger.setLevel(logging.DEBUG)
        logger.addHandler(self.log)
        self.producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True,
                                  "debug": "eos", "logger": logger, "error_cb": self._on_error})

    def _on_error(self, error) -> None:
        self.client_errors.append(f"{error.name()}{' (fatal)' if error.fatal() else ''}: {error.str()}")

    def _on_delivery(self, err, message) -> None:
        if err is None:
            self.acked.add(message.value().decode())
        else:
            self.refused[err.name()] += 1

    def send(self, first: int, count: int) -> set[str]:
        """Records first..first+count-1, flushed; the values of them the brokers acknowledged."""
        before = set(self.acked)
        for i in range(first, first + count):
            self.producer.produce(self.topic, value=f"{self.topic}-{i}".encode(), partition=0,
                                  on_delivery=self._on_delivery)
        self.producer.flush(WAIT_S)
        return self.acked - before

    def close(self) -> None:
        """Without waiting on what is still unresolved (the read after it needs no more)."""
        self.producer.purge()
        self.producer.flush(0)


def send_again(producer: SameProducer, count: int) -> set[str]:
    """`count` more records from the producer that outlived the loss; prints what became of them."""
    seen_lines, seen_errors = len(producer.log.lines), len(producer.client_errors)
    producer.refused.clear()
    acked = producer.send(MESSAGES, count)
    unresolved = count - len(acked) - sum(producer.refused.values())
    print(f"  then the same producer sent {count} more: {len(acked)} acknowledged"
          + "".join(f", {n} refused with {name}" for name, n in sorted(producer.refused.items()))
          + (f", {unresolved} unresolved" if unresolved else ""))
    errors = [e for e in producer.client_errors[seen_errors:] if not e.startswith(OUTAGE_ERRORS)]
    print(f"    client errors other than the outage's: {len(errors)}")
    for error in errors:
        print(f"    client error: {error}")
    eos = [line for line in producer.log.lines[seen_lines:] if any(w in line for w in EOS_WORDS)]
    for line in eos[:EOS_LINES_SHOWN]:
        print(f"    librdkafka: {line.strip()[:300]}")
    return acked


def print_log_start(cluster: Cluster, leader_id: int, topic: str) -> None:
    """The first record the leader's log holds after the loss: the producer id, epoch and
    sequence number the broker took from a producer whose earlier records it lost."""
    node = next(n for n in cluster.nodes if cluster.db.node_id(n) == leader_id)
    records = first_segment_records(cluster, node, topic)
    if not records:
        print(f"  the leader's log ({node}) holds no record")
        return
    first = records[0]
    print(f"  the leader's log ({node}) now starts at offset {first.offset}: producer {first.batch.producer_id} "
          f"epoch {first.batch.producer_epoch} sequence {first.sequence}, value {first.value}")


def power_cycle(cluster: Cluster, nodes: list[str]) -> dict:
    """The power fault itself strikes `nodes` at once and then powers them on; what each
    node's layer dropped."""
    fault = POWER.make(FaultContext())
    struck = fault.start(cluster, {"target": "nodes", "nodes": nodes, "majority": 2 * len(nodes) > len(cluster.nodes),
                                   "mode": powerfs.CLEAN})
    errors = {**struck.get("errors", {}), **fault.stop(cluster).get("errors", {})}
    if errors:
        raise RuntimeError(f"the power cycle failed: {errors}")
    return struck["dropped"]


def read_partition(bootstrap: str, topic: str) -> set[str]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"{topic}-read",
                         "enable.auto.commit": False, "logger": QUIET_CLIENT_LOGGER})
    try:
        _, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=READ_WAIT_S)
        consumer.assign([TopicPartition(topic, 0, 0)])
        values: set[str] = set()
        position, deadline = 0, time.monotonic() + READ_WAIT_S
        while position < high and time.monotonic() < deadline:
            message = consumer.poll(1.0)
            if message is not None and message.error() is None:
                values.add(message.value().decode())
                position = message.offset() + 1
        return values
    finally:
        consumer.close()


def election_lines(cluster: Cluster, topic: str) -> list[str]:
    """What the nodes' own logs say about the partition after the loss."""
    paths = cluster.db.paths
    pattern = "|".join(ELECTION_WORDS)
    lines = []
    for node in cluster.nodes:
        logs = f"{paths.logs_dir(node)}/state-change.log {paths.logs_dir(node)}/server.log"
        out = cluster.ssh[node].exec(f"grep -hE '{pattern}' {logs} | grep -F '{topic}'", check=False).stdout
        lines += [f"{node}: {line.strip()[:300]}" for line in out.splitlines()]
    return lines
