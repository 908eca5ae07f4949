"""Probe: where does a transaction's batch land when it reaches the leader only after
the client gave up on it, aborted, and began its next transaction?

One round, on a running local cluster (`logtrial cluster up --name NAME`):
1. a fresh one-partition topic, placed so that its leader is not the coordinator of
   the round's transactional producer; one warm-up transaction committed;
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
- `ok`: neither;
- `INCONCLUSIVE`: librdkafka's abort did not end within a minute of retries, so B
  was not sent: EndTxn could not get through (the coordinator had moved onto the
  held leader, say).
It exits 1 if any round was not ok.

--client java runs the same round with Kafka's Java client of the cluster's version,
through the JVM bridge (workloads/java_client/, its `timed_txn` request). Its
abortTransaction() blocks, so A and then B run in a thread while the hold is lifted
--lift-after seconds after A began (11 s: when librdkafka's round lifts it). It prints
each step's time relative to the lift: when A's send was answered, when the abort began
and returned (each try, if max.block.ms made it throw TimeoutException), when B began
and was answered. The Java client's abort waits for A: A lands inside its own
transaction, before its ABORT marker, and B gets the next sequence (docs/findings.md).
--client sarama and --client franz-go run the same steps with Sarama and franz-go,
through the Go program (workloads/go_clients/, its `timed_txn` request), --client
kafkajs through the Node program (workloads/kafkajs_client/, the same request), and
--client kafka-python and --client aiokafka in this process, through the client's
own module (workloads/<client>/timed.py; late_batch_python.py).

    logtrial probe late-batch NAME [ROUNDS] [--debug-log FILE] [--until-lost]
                                   [--client java|sarama|franz-go|kafkajs|kafka-python|aiokafka
                                    [--lift-after S]]

--debug-log: write librdkafka's debug log (eos, msg, protocol) there, to see the
producer ids, epochs and sequence numbers each request carried.
--until-lost: stop after the first round that lost B or read A (ROUNDS is then a bound).
"""
from __future__ import annotations

import time
import uuid
from contextlib import nullcontext

from confluent_kafka import Consumer, TopicPartition

from clusters.cluster import Cluster
from clusters.kafka.log_dump import Record, first_segment_records
from harness.probes.late_batch_java import java_steps
from harness.probes.late_batch_librdkafka import librdkafka_steps
from harness.probes.late_batch_python import python_steps
from harness.probes.late_batch_setup import set_up
from harness.probes.late_batch_timing import LIBRDKAFKA_LIFT_S
from harness.probes.librdkafka_log import stderr_appended_to
from workloads.bridge.pool import ProcessPool
from workloads.client_kinds import client_kind
from workloads.settings import DEFAULT_CLIENT

INCONCLUSIVE = "INCONCLUSIVE: the abort did not end, so B was not sent"
SEQUENCE_REUSED = "A'S SEQUENCE GIVEN TO B (same epoch); A's batch is not in the log"


def committed_log(bootstrap: str, topic: str) -> dict[int, bytes]:
    """Partition 0 as a read_committed consumer sees it: offset -> value."""
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


def one_round(cluster: Cluster, round_no: int, debug: bool = False, client: str = DEFAULT_CLIENT,
              pool: ProcessPool | None = None, lift_after: float = LIBRDKAFKA_LIFT_S) -> str:
    """Runs one round and prints it (the lines tests parse: `round N: ...`, then the
    partition's log as `    offset N: epoch E seq S VALUE`, then `round N: VERDICT`)."""
    setup = set_up(cluster)
    kind = client_kind(client)
    if kind.timed:
        held, b, commit, seen = python_steps(cluster, setup, round_no, kind.timed, lift_after)
    elif kind.bridge:
        held, b, commit, seen = java_steps(cluster, setup, round_no, pool, lift_after, kind.bridge.config)
    else:
        held, b, commit, seen = librdkafka_steps(cluster, setup, round_no, debug)
    log = committed_log(setup.bootstrap, setup.topic)
    dump = first_segment_records(cluster, setup.leader, setup.topic)
    print(f"round {round_no}: leader {setup.leader} held {held.get('hold_ms')} ms "
          f"(errors {held.get('errors')}); {seen}; committed log {sorted(log.items())}", flush=True)
    for record in dump:
        print(f"    offset {record.offset}: epoch {record.batch.producer_epoch} "
              f"seq {record.sequence} {record.marker or record.value}", flush=True)
    verdict = round_verdict(commit, b, log, dump)
    print(f"round {round_no}: {verdict}", flush=True)
    return verdict


def round_verdict(commit: str, b: dict, log: dict[int, bytes], dump: list[Record]) -> str:
    """What a round showed: the loss, the sequence reuse behind it, neither, or nothing
    (B was never sent: the abort did not end)."""
    if not b:
        return INCONCLUSIVE
    lost = commit.startswith("ok") and log.get(b["offset"]) != b"B"
    aborted_read = b"A" in log.values()
    if lost or aborted_read:
        return " ".join(word for word, seen in (("B LOST", lost), ("A READ", aborted_read)) if seen)
    warm = next(r for r in dump if r.value == "warm-up")
    b_record = next((r for r in dump if r.value == "B"), None)
    reused = (b_record is not None and b_record.batch.producer_epoch == warm.batch.producer_epoch
              and b_record.sequence == warm.sequence + 1)
    return SEQUENCE_REUSED if reused else "ok"


def lost_or_read(verdict: str) -> bool:
    """The round lost B or read A (what --until-lost stops at)."""
    return verdict not in ("ok", INCONCLUSIVE, SEQUENCE_REUSED)


def run(cluster: Cluster, rounds: int, debug_log: str | None = None, until_lost: bool = False,
        client: str = DEFAULT_CLIENT, lift_after: float = LIBRDKAFKA_LIFT_S) -> int:
    """Up to `rounds` rounds; 0 if every round was ok, else 1. With `debug_log`,
    librdkafka's debug log is appended to that file."""
    with stderr_appended_to(debug_log) if debug_log else nullcontext():
        return _rounds(cluster, rounds, bool(debug_log), until_lost, client, lift_after)


def _rounds(cluster: Cluster, rounds: int, debug: bool, until_lost: bool, client: str,
            lift_after: float) -> int:
    verdicts = []
    bridge = client_kind(client).bridge
    pool = None
    if bridge is not None:
        pool = bridge.pool(cluster.db.release.version)  # builds and starts its child process
        versions = ", ".join(f"{name} {version}" for name, version in pool.versions().items())
        print(f"{client}: {versions}; Kafka {cluster.db.release.version}", flush=True)
    try:
        for i in range(rounds):
            verdicts.append(one_round(cluster, i, debug=debug, client=client,
                                      pool=pool, lift_after=lift_after))
            if until_lost and lost_or_read(verdicts[-1]):
                break
    finally:
        if pool is not None:
            pool.close()
    return 0 if all(v == "ok" for v in verdicts) else 1
