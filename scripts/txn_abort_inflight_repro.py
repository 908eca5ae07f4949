"""Tries to reproduce the lost committed write of docs/findings.md ("a committed
transaction's send acknowledged at the offset of an aborted one"), on a local
logtrial cluster, with no logtrial workload code.

A transactional producer (the queue workload's producer settings) sends one
record to partition P while one of P's nodes is paused (the leader: nothing
is appended until it resumes; a follower in the ISR: the leader appends but
cannot acknowledge with acks=all), gives up after OP_TIMEOUT seconds with no
delivery report, aborts, and resumes the node. The same
producer then commits a transaction with one send to P. A read_committed
consumer reads P from the beginning: the committed record must be at the
offset its delivery report gave.

    python scripts/txn_abort_inflight_repro.py CLUSTER_NAME [ROUNDS] [leader|follower]

CLUSTER_NAME: a running 3-node local cluster (`logtrial cluster up --name ...`).
Prints one line per round and exits 1 when any committed record was not read.
"""
from __future__ import annotations

import sys
import time
import uuid

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from clusters.cluster import Cluster
from clusters.local import LocalCluster
from workloads.clients import producer_config
from workloads.settings import WorkloadSettings

OP_TIMEOUT = 10.0
PAUSED_FOR = 14.0  # longer than OP_TIMEOUT: the send is still in flight when the harness gives up


def node_to_pause(admin: AdminClient, topic: str, names: list[str], role: str) -> str:
    partition = admin.list_topics(topic=topic, timeout=10).topics[topic].partitions[0]
    if role == "leader":
        return names[partition.leader - 1]
    return names[next(r for r in partition.isrs if r != partition.leader) - 1]


def delivered(producer: Producer, topic: str, value: bytes, wait: float) -> tuple[int | None, str | None]:
    """The delivery report's (offset, error) within `wait` seconds, or (None, None)."""
    report: dict = {}
    producer.produce(topic, value=value, partition=0,
                     on_delivery=lambda err, msg: report.update(err=err, offset=msg.offset()))
    deadline = time.monotonic() + wait
    while "offset" not in report and time.monotonic() < deadline:
        producer.poll(0.1)
    if "offset" not in report:
        return None, None
    return report["offset"], None if report["err"] is None else report["err"].name()


def committed_values(bootstrap: str, topic: str) -> dict[int, bytes]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{uuid.uuid4().hex[:6]}",
                         "isolation.level": "read_committed", "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, 0, 0)])
    found: dict[int, bytes] = {}
    idle_since = time.monotonic()
    while time.monotonic() - idle_since < 5:
        message = consumer.poll(0.5)
        if message is not None and not message.error():
            found[message.offset()] = message.value()
            idle_since = time.monotonic()
    consumer.close()
    return found


def one_round(cluster: Cluster, bootstrap: str, names: list[str], round_no: int, role: str) -> bool:
    topic = f"abort-inflight-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 3, config={"min.insync.replicas": "2"})])[topic].result()
    time.sleep(1)
    settings = WorkloadSettings(txn=True, op_timeout=OP_TIMEOUT)
    producer = Producer(producer_config(bootstrap, settings, f"repro-{round_no}", f"repro-{topic}"))
    producer.init_transactions(30)
    producer.begin_transaction()
    print(f"round {round_no}: first send, before the pause: {delivered(producer, topic, b'warm-up', 10)}")
    producer.commit_transaction(30)

    paused = node_to_pause(admin, topic, names, role)
    producer.begin_transaction()
    cluster.db.pause(paused)
    paused_at = time.monotonic()
    try:
        offset, error = delivered(producer, topic, b"aborted", OP_TIMEOUT)
        print(f"round {round_no}: {role} {paused} paused; send in the doomed txn: offset {offset}, error {error}")
        abort_error = None
        try:
            producer.abort_transaction(OP_TIMEOUT)
        except KafkaException as e:
            abort_error = e.args[0].name()
    finally:
        time.sleep(max(0.0, PAUSED_FOR - (time.monotonic() - paused_at)))
        cluster.db.resume(paused)
    if abort_error is not None:
        print(f"round {round_no}: abort failed ({abort_error}); not the case under test")
        return True
    producer.begin_transaction()
    offset, error = delivered(producer, topic, b"committed", 30)
    producer.commit_transaction(30)
    values = committed_values(bootstrap, topic)
    ok = values.get(offset) == b"committed"
    print(f"round {round_no}: committed send acknowledged at offset {offset} (error {error}); "
          f"read_committed reads {sorted(values.items())}: {'ok' if ok else 'LOST'}")
    return ok


def main(name: str, rounds: int, role: str) -> int:
    local = LocalCluster(name)
    with Cluster.open(local.inventory_path) as cluster:
        bootstrap = cluster.db.bootstrap_servers()
        names = cluster.inventory.node_names
        results = [one_round(cluster, bootstrap, names, i, role) for i in range(rounds)]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 1,
                  sys.argv[3] if len(sys.argv) > 3 else "follower"))
