"""Probe: where does a transaction's batch land when it reaches the leader only after
the client gave up on it, aborted, and began its next transaction?

One round, on a running local cluster (`logtrial cluster up --name NAME`):
1. a fresh one-partition topic; a transactional producer whose coordinator is not the
   partition's leader; one warm-up transaction committed;
2. client-delay on the leader: what it receives from the clients is held HOLD seconds;
3. transaction A sends "A" and gets no delivery report within OP_TIMEOUT; aborted;
4. transaction B sends "B", commits;
5. the hold is lifted; a read_committed consumer reads the partition.
It prints what each step saw, the committed log and the partition's own log, and a
verdict per round:
- `B LOST` / `A READ`: B's value is not at the offset B's delivery report gave, or
  A's value was read (A's late batch landed inside B's transaction);
- `A'S SEQUENCE GIVEN TO B`: B went out under the warm-up's epoch with the sequence
  number A was given, but A's batch is not in the log. Once the hold lifts, A's
  request (on the connection the client gave up on) and B's (on a new one) race to
  the log inside the broker; when B's wins, A is answered as B's duplicate and
  nothing is lost. One round in seven did that (docs/findings.md);
- `ok`: neither.
It exits 1 if any round was not ok.

    python scripts/txn_late_batch_probe.py NAME [ROUNDS] [--debug-log FILE] [--until-lost]

--debug-log: write librdkafka's debug log (eos, msg, protocol) there, to see the
producer ids, epochs and sequence numbers each request carried.
--until-lost: stop after the first round that lost B or read A (ROUNDS is then a bound).
"""
from __future__ import annotations

import argparse
import logging
import sys
import time
import uuid

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from clusters.cluster import Cluster
from clusters.local import LocalCluster
from clusters.log_dump import first_segment_records
from nemesis.client_delay import ClientDelayFault
from workloads.clients import producer_config
from workloads.settings import WorkloadSettings

OP_TIMEOUT = 10.0
HOLD_FACTOR = 1.5
RELEASE_AFTER_S = 1.0


def java_string_hash(text: str) -> int:
    h = 0
    for ch in text:
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    return h


def transaction_state(admin: AdminClient, bootstrap: str):
    """__transaction_state's metadata; the first transactional producer creates it."""
    state = admin.list_topics(topic="__transaction_state", timeout=10).topics["__transaction_state"]
    if not state.partitions:
        Producer({"bootstrap.servers": bootstrap,
                  "transactional.id": f"probe-{uuid.uuid4().hex[:6]}"}).init_transactions(60)
        state = admin.list_topics(topic="__transaction_state", timeout=10).topics["__transaction_state"]
    return state


def coordinator_id(admin: AdminClient, bootstrap: str, transactional_id: str) -> int:
    """The broker leading the transaction-state partition of `transactional_id`."""
    state = transaction_state(admin, bootstrap)
    partition = (java_string_hash(transactional_id) & 0x7FFFFFFF) % len(state.partitions)
    return state.partitions[partition].leader


def transactional_id_away_from(admin: AdminClient, bootstrap: str, leader_id: int,
                               stem: str) -> str:
    for n in range(100):
        candidate = f"{stem}-{n}"
        if coordinator_id(admin, bootstrap, candidate) not in (leader_id, -1):
            return candidate
    raise RuntimeError(f"no transactional id with a coordinator other than broker {leader_id}")


def produce(producer: Producer, topic: str, value: bytes) -> dict:
    """Sends `value` to partition 0; the dict fills with its delivery report."""
    report: dict = {}
    producer.produce(topic, value=value, partition=0,
                     on_delivery=lambda err, msg: report.update(
                         error=err and err.name(), offset=msg.offset()))
    return report


def wait_for(producer: Producer, report: dict, wait: float) -> dict:
    deadline = time.monotonic() + wait
    while "offset" not in report and time.monotonic() < deadline:
        producer.poll(0.1)
    return report


def send(producer: Producer, topic: str, value: bytes, wait: float) -> dict:
    return wait_for(producer, produce(producer, topic, value), wait)


def ended(action, timeout: float) -> str:
    started = time.monotonic()
    try:
        action(timeout)
        outcome = "ok"
    except KafkaException as e:
        outcome = e.args[0].name()
    return f"{outcome} in {time.monotonic() - started:.1f} s"


def committed_log(bootstrap: str, topic: str) -> dict[int, bytes]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"probe-{uuid.uuid4().hex[:6]}",
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


def one_round(cluster: Cluster, round_no: int, debug: bool = False) -> str:
    bootstrap = cluster.db.bootstrap_servers()
    admin = AdminClient({"bootstrap.servers": bootstrap})
    topic = f"late-batch-{uuid.uuid4().hex[:8]}"
    admin.create_topics([NewTopic(topic, 1, 3, config={"min.insync.replicas": "2"})])[topic].result()
    time.sleep(1)
    leader_id = admin.list_topics(topic=topic, timeout=10).topics[topic].partitions[0].leader
    leader = cluster.inventory.node_names[leader_id - 1]
    txn_id = transactional_id_away_from(admin, bootstrap, leader_id, f"probe-{topic}")
    settings = WorkloadSettings(txn=True, op_timeout=OP_TIMEOUT)
    config = producer_config(bootstrap, settings, f"probe-{round_no}", txn_id)
    producer = Producer({**config, "debug": "eos,msg,protocol"} if debug else config)
    producer.init_transactions(30)
    producer.begin_transaction()
    warm = send(producer, topic, b"warm-up", 10)
    producer.commit_transaction(30)

    fault = ClientDelayFault(lambda role: [leader], OP_TIMEOUT)
    held = fault.start(cluster, {"target": "leader", "nodes": [leader], "hold_factor": HOLD_FACTOR})
    try:
        producer.begin_transaction()
        a = send(producer, topic, b"A", OP_TIMEOUT)
        abort = ended(producer.abort_transaction, OP_TIMEOUT)
        producer.begin_transaction()
        b = produce(producer, topic, b"B")
        producer.poll(RELEASE_AFTER_S)  # B's AddPartitionsToTxn goes to the coordinator
    finally:
        fault.stop(cluster)  # what the leader was holding (A's request) arrives now
    wait_for(producer, b, 3 * OP_TIMEOUT)
    commit = ended(producer.commit_transaction, 3 * OP_TIMEOUT) if "offset" in b else "not tried"
    log = committed_log(bootstrap, topic)
    dump = first_segment_records(cluster, leader, topic)
    print(f"round {round_no}: leader {leader} held {held.get('hold_ms')} ms "
          f"(errors {held.get('errors')}); warm-up {warm}; A {a}, abort {abort}; "
          f"B {b}, commit {commit}; committed log {sorted(log.items())}", flush=True)
    for record in dump:
        print(f"    offset {record.offset}: epoch {record.batch.producer_epoch} "
              f"seq {record.sequence} {record.marker or record.value}", flush=True)
    verdict = round_verdict(commit, b, log, dump)
    print(f"round {round_no}: {verdict}", flush=True)
    producer.flush(5)
    return verdict


def round_verdict(commit: str, b: dict, log: dict[int, bytes], dump: list) -> str:
    """What a round showed: the loss, the sequence reuse behind it, or neither."""
    lost = commit.startswith("ok") and log.get(b["offset"]) != b"B"
    aborted_read = b"A" in log.values()
    if lost or aborted_read:
        return " ".join(word for word, seen in (("B LOST", lost), ("A READ", aborted_read)) if seen)
    warm = next(r for r in dump if r.value == "warm-up")
    b_record = next((r for r in dump if r.value == "B"), None)
    reused = (b_record is not None and b_record.batch.producer_epoch == warm.batch.producer_epoch
              and b_record.sequence == warm.sequence + 1)
    return ("A'S SEQUENCE GIVEN TO B (same epoch); A's batch is not in the log"
            if reused else "ok")


def main(name: str, rounds: int, debug_log: str | None = None, until_lost: bool = False) -> int:
    if debug_log:
        logging.basicConfig(filename=debug_log, level=logging.DEBUG,
                            format="%(asctime)s %(message)s")
    verdicts = []
    with Cluster.open(LocalCluster(name).inventory_path) as cluster:
        for i in range(rounds):
            verdicts.append(one_round(cluster, i, debug=bool(debug_log)))
            if until_lost and verdicts[-1] != "ok" and not verdicts[-1].startswith("A'S SEQUENCE"):
                break
    return 0 if all(v == "ok" for v in verdicts) else 1


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("name", help="the local cluster (logtrial cluster up --name NAME)")
    parser.add_argument("rounds", nargs="?", type=int, default=1)
    parser.add_argument("--debug-log", help="write librdkafka's debug log to this file")
    parser.add_argument("--until-lost", action="store_true",
                        help="stop at the first round that lost B or read A")
    return parser.parse_args(argv)


CRASHED = 2  # not a verdict: exit 1 means a round lost B or read A


if __name__ == "__main__":
    args = parse_args(sys.argv[1:])
    try:
        sys.exit(main(args.name, args.rounds, args.debug_log, args.until_lost))
    except Exception:  # noqa: BLE001 - printed, and told apart from a finding by its exit code
        logging.exception("the probe failed")
        sys.exit(CRASHED)
