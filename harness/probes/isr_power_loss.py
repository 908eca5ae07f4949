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

import time
import uuid
from typing import Callable

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import NewTopic

from clusters.cluster import Cluster
from clusters.db import Process, require
from clusters.kafka.admin import PartitionState, admin_client, partition_key, partition_states, split_key
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


def run(cluster: Cluster, rounds: int, fsync_each: bool = False) -> int:
    require_powerfs(cluster, "isr-power-loss", NODES)
    for number in range(1, rounds + 1):
        lost = one_round(cluster, fsync_each)
        print(f"round {number}: " + (f"LOST {lost} acknowledged records" if lost else "ok: every acknowledged record read"))
        if lost:
            return 1
    return 0


def one_round(cluster: Cluster, fsync_each: bool) -> int:
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
    acked = produce(cluster.db.bootstrap_servers(), topic)
    print(f"  {len(acked)} of {MESSAGES} sends acknowledged by the ISR {ids[:2]}")
    dropped = power_cycle(cluster, [leader, follower])
    print(f"  power lost on {leader} and {follower}, back on; forgotten: "
          + "; ".join(f"{node} {d['bytes']:,} bytes in {d['files']} files" for node, d in sorted(dropped.items())))
    processes.start(outside)
    state = wait_for(cluster, key, lambda s: s.leader >= 0, "a leader")
    read = read_partition(cluster.db.bootstrap_servers(), topic)
    print(f"  after: leader {state.leader}, ISR {list(state.isr)}; read {len(read)} records")
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


def produce(bootstrap: str, topic: str) -> set[str]:
    """The values the brokers acknowledged."""
    acked: set[str] = set()
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True,
                         "logger": QUIET_CLIENT_LOGGER})

    def on_delivery(err, message) -> None:
        if err is None:
            acked.add(message.value().decode())
    for i in range(MESSAGES):
        producer.produce(topic, value=f"{topic}-{i}".encode(), partition=0, on_delivery=on_delivery)
    producer.flush(WAIT_S)
    return acked


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
