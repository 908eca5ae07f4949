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

    python scripts/txn_late_batch_probe.py NAME [ROUNDS] [--debug-log FILE] [--until-lost]
                                           [--client java [--lift-after S]]

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
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from clusters.cluster import Cluster
from clusters.local import LocalCluster
from clusters.log_dump import first_segment_records
from nemesis.client_delay import ClientDelayFault
from workloads.clients import producer_config
from workloads.settings import WorkloadSettings

OP_TIMEOUT = 10.0
NOT_TRIED = "not tried"
INCONCLUSIVE = "INCONCLUSIVE: the abort did not end, so B was not sent"
HOLD_FACTOR = 1.5
RELEASE_AFTER_S = 1.0


def java_string_hash(text: str) -> int:
    """String.hashCode(), as the signed 32-bit int Java gives."""
    h = 0
    for ch in text:
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def state_partition_for(key: str, partitions: int) -> int:
    """The coordinator's partition of a transactional id: Kafka's
    Utils.abs(hashCode) % partitions, where Utils.abs is Math.abs with MIN_VALUE
    taken to 0. Masking the sign bit instead names the wrong partition for half the
    ids (the probe then held its own coordinator, and its aborts never ended)."""
    h = java_string_hash(key)
    return (0 if h == -(1 << 31) else abs(h)) % partitions


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
    return state.partitions[state_partition_for(transactional_id, len(state.partitions))].leader


def coordinated_id(admin: AdminClient, bootstrap: str, stem: str) -> tuple[str, int]:
    """A transactional id whose coordinator is up, and that coordinator's broker id."""
    for n in range(100):
        candidate = f"{stem}-{n}"
        coordinator = coordinator_id(admin, bootstrap, candidate)
        if coordinator != -1:
            return candidate, coordinator
    raise RuntimeError("no transaction-state partition has a leader: is the cluster up?")


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


def ended_retrying(action, timeout: float, bound: float = 6 * OP_TIMEOUT) -> tuple[bool, str]:
    """`action` called again while it fails, for up to `bound` seconds: a librdkafka
    abort that timed out goes on in the background, and only another call finishes
    it; a begin_transaction before that fails with _CONFLICT."""
    tries = [ended(action, timeout)]
    deadline = time.monotonic() + bound
    while not tries[-1].startswith("ok") and time.monotonic() <= deadline:
        tries.append(ended(action, timeout))
    return tries[-1].startswith("ok"), ", then ".join(tries)


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


@dataclass
class RoundSetup:
    """A round's fresh topic, its partition's leader, and a transactional id whose
    coordinator is another broker (so the hold on the leader spares EndTxn)."""
    bootstrap: str
    topic: str
    leader: str
    txn_id: str


def set_up(cluster: Cluster) -> RoundSetup:
    """The round's topic is placed with its leader away from the id's coordinator. Where
    leaders stand depends on what earlier faults left behind (after a few broker kills one
    broker may lead every partition), so the probe does not rely on it."""
    bootstrap = cluster.db.bootstrap_servers()
    admin = AdminClient({"bootstrap.servers": bootstrap})
    topic = f"late-batch-{uuid.uuid4().hex[:8]}"
    txn_id, coordinator = coordinated_id(admin, bootstrap, f"probe-{topic}")
    brokers = sorted(admin.list_topics(timeout=10).brokers)
    leader_id = next(b for b in brokers if b != coordinator)
    replicas = [leader_id, *(b for b in brokers if b != leader_id)]
    admin.create_topics([NewTopic(topic, replica_assignment=[replicas],
                                  config={"min.insync.replicas": "2"})])[topic].result()
    wait_for_leader(admin, topic, leader_id)
    return RoundSetup(bootstrap, topic, cluster.inventory.node_names[leader_id - 1], txn_id)


def wait_for_leader(admin: AdminClient, topic: str, leader_id: int, bound_s: float = 30.0) -> None:
    """Until the new topic's partition is led by its first replica."""
    deadline = time.monotonic() + bound_s
    while True:
        partition = admin.list_topics(topic=topic, timeout=10).topics[topic].partitions.get(0)
        if partition is not None and partition.leader == leader_id:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"{topic}: partition 0 is led by {partition and partition.leader}, "
                               f"not its first replica {leader_id}, after {bound_s:.0f} s")
        time.sleep(0.2)


def hold_leader(cluster: Cluster, setup: RoundSetup) -> tuple[ClientDelayFault, dict]:
    fault = ClientDelayFault(lambda role: [setup.leader], OP_TIMEOUT)
    return fault, fault.start(cluster, {"target": "leader", "nodes": [setup.leader],
                                        "hold_factor": HOLD_FACTOR})


def librdkafka_steps(cluster: Cluster, setup: RoundSetup, round_no: int,
                     debug: bool = False) -> tuple[dict, str, dict, str]:
    """The round's steps with librdkafka: (the hold, B's delivery report, commit, what
    each step saw)."""
    settings = WorkloadSettings(txn=True, op_timeout=OP_TIMEOUT)
    config = producer_config(setup.bootstrap, settings, f"probe-{round_no}", setup.txn_id)
    producer = Producer({**config, "debug": "eos,msg,protocol"} if debug else config)
    producer.init_transactions(30)
    producer.begin_transaction()
    warm = send(producer, setup.topic, b"warm-up", 10)
    producer.commit_transaction(30)

    fault, held = hold_leader(cluster, setup)
    try:
        producer.begin_transaction()
        a = send(producer, setup.topic, b"A", OP_TIMEOUT)
        aborted, abort = ended_retrying(producer.abort_transaction, OP_TIMEOUT)
        if not aborted:
            return held, {}, NOT_TRIED, f"warm-up {warm}; A {a}, abort {abort}; B not sent"
        producer.begin_transaction()
        b = produce(producer, setup.topic, b"B")
        producer.poll(RELEASE_AFTER_S)  # B's AddPartitionsToTxn goes to the coordinator
    finally:
        fault.stop(cluster)  # what the leader was holding (A's request) arrives now
    wait_for(producer, b, 3 * OP_TIMEOUT)
    commit = ended(producer.commit_transaction, 3 * OP_TIMEOUT) if "offset" in b else NOT_TRIED
    producer.flush(5)
    return held, b, commit, f"warm-up {warm}; A {a}, abort {abort}; B {b}, commit {commit}"


def timed_txn(jvm, session: int, topic: str, value: str, wait: float, commit: bool,
              retry: float = 0.0) -> dict:
    """One transaction of one send through the JVM bridge (Session.timedTxn): the reply's
    step times are epoch seconds here; {"error": ...} if it could not begin."""
    reply = jvm.call(session, "timed_txn", wait + retry + 2 * OP_TIMEOUT + 30,
                     records=[[topic, 0, "k", value]], wait_ms=int(wait * 1000), commit=commit,
                     retry_ms=int(retry * 1000))
    if "error" in reply:
        return {"error": ": ".join(reply["error"])}
    ok = reply["ok"]
    return {"begun": ok["begun"] / 1000, "waited": ok["waited"] / 1000,
            "send": {k: v / 1000 if k == "at" else v for k, v in ok["sends"][0].items()},
            "ends": [(outcome, started / 1000, ended_ / 1000) for outcome, started, ended_ in ok["ends"]]}


def describe_txn(txn: dict, lifted: float) -> str:
    """A timed transaction's steps in seconds relative to the lift of the hold."""
    if "error" in txn:
        return f"could not begin ({txn['error']})"
    send_ = txn["send"]
    got = (f"offset {send_['offset']}" if "offset" in send_ else send_.get("error", "unresolved"))
    at = f" at lift{send_['at'] - lifted:+.1f} s" if "at" in send_ else ""
    ends = ", ".join(f"{outcome} lift{started - lifted:+.1f} s -> lift{end - lifted:+.1f} s "
                     f"(took {end - started:.1f} s)"
                     for outcome, started, end in txn["ends"])
    return f"begun lift{txn['begun'] - lifted:+.1f} s, send {got}{at}; end {ends}"


def java_steps(cluster: Cluster, setup: RoundSetup, round_no: int, pool,
               lift_after: float) -> tuple[dict, str, dict, str]:
    """The round's steps with Kafka's Java client: abortTransaction blocks, so A (then B)
    runs in a thread while this one lifts the hold `lift_after` s after A began."""
    from workloads.java_client import config as java_config  # the JVM only when asked for
    settings = WorkloadSettings(txn=True, op_timeout=OP_TIMEOUT)
    jvm, session = pool.jvm(), pool.new_session()
    jvm.call(session, "open", 30,
             producer=java_config.producer_config(setup.bootstrap, settings, f"probe-{round_no}", setup.txn_id),
             consumer=java_config.consumer_config(setup.bootstrap, settings, f"probe-{round_no}-c", setup.txn_id),
             lookup=java_config.lookup_config(setup.bootstrap, f"probe-{round_no}-o", setup.txn_id),
             auto_offset_reset="earliest", op_timeout_ms=int(OP_TIMEOUT * 1000))
    try:
        warm = timed_txn(jvm, session, setup.topic, "warm-up", 10, commit=True)
        fault, held = hold_leader(cluster, setup)
        a_began = time.time()

        def a_then_b() -> tuple[dict, dict]:
            # the abort may block up to max.block.ms (the op timeout) per try; retried as
            # KafkaProducer allows, for as long as the hold could last
            a = timed_txn(jvm, session, setup.topic, "A", OP_TIMEOUT, commit=False,
                          retry=HOLD_FACTOR * OP_TIMEOUT + lift_after)
            return a, timed_txn(jvm, session, setup.topic, "B", 3 * OP_TIMEOUT, commit=True)

        with ThreadPoolExecutor(1) as worker:
            steps = worker.submit(a_then_b)
            try:
                time.sleep(max(0.0, a_began + lift_after - time.time()))
            finally:
                lifted = time.time()  # the times below are relative to this
                fault.stop(cluster)  # what the leader was holding (A's request) arrives now
                lift_took = time.time() - lifted
            a, b_txn = steps.result()
    finally:
        jvm.call(session, "close", 30)
    b = {"offset": b_txn["send"]["offset"]} if "offset" in b_txn.get("send", {}) else {
        "error": b_txn.get("error") or b_txn.get("send", {}).get("error", "unresolved")}
    commit = NOT_TRIED
    if "offset" in b:
        outcome, started, end = b_txn["ends"][-1]
        commit = f"{outcome} in {end - started:.1f} s"
    warm_seen = warm.get("send", {}).get("offset", warm)
    return held, b, commit, (f"warm-up offset {warm_seen}; hold lifted {lifted - a_began:.1f} s after A "
                             f"began (the lift took {lift_took:.1f} s); "
                             f"A {describe_txn(a, lifted)}; B {describe_txn(b_txn, lifted)}, commit {commit}")


def one_round(cluster: Cluster, round_no: int, debug: bool = False, client: str = "librdkafka",
              pool=None, lift_after: float = OP_TIMEOUT + RELEASE_AFTER_S) -> str:
    setup = set_up(cluster)
    if client == "java":
        held, b, commit, seen = java_steps(cluster, setup, round_no, pool, lift_after)
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


def round_verdict(commit: str, b: dict, log: dict[int, bytes], dump: list) -> str:
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
    return ("A'S SEQUENCE GIVEN TO B (same epoch); A's batch is not in the log"
            if reused else "ok")


def main(name: str, rounds: int, debug_log: str | None = None, until_lost: bool = False,
         client: str = "librdkafka", lift_after: float = OP_TIMEOUT + RELEASE_AFTER_S) -> int:
    if debug_log:
        logging.basicConfig(filename=debug_log, level=logging.DEBUG,
                            format="%(asctime)s %(message)s")
    verdicts = []
    with Cluster.open(LocalCluster(name).inventory_path) as cluster:
        pool = None
        if client == "java":
            from workloads.java_client.pool import JvmPool  # compiles and starts a JVM
            pool = JvmPool(cluster.db.release.version)
            print(f"kafka-clients {pool.versions()['kafka_clients']}, "
                  f"Kafka {cluster.db.release.version}", flush=True)
        try:
            for i in range(rounds):
                verdicts.append(one_round(cluster, i, debug=bool(debug_log), client=client,
                                          pool=pool, lift_after=lift_after))
                if until_lost and verdicts[-1] not in ("ok", INCONCLUSIVE) \
                        and not verdicts[-1].startswith("A'S SEQUENCE"):
                    break
        finally:
            if pool is not None:
                pool.close()
    return 0 if all(v == "ok" for v in verdicts) else 1


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("name", help="the local cluster (logtrial cluster up --name NAME)")
    parser.add_argument("rounds", nargs="?", type=int, default=1)
    parser.add_argument("--client", choices=("librdkafka", "java"), default="librdkafka",
                        help="the producer: librdkafka (confluent-kafka) or Kafka's Java client "
                             "of the cluster's version (workloads/java_client/)")
    parser.add_argument("--lift-after", type=float, default=OP_TIMEOUT + RELEASE_AFTER_S,
                        help="java: lift the hold this many seconds after A began (default "
                             "%(default)s: as librdkafka's round lifts it); past 2 x the op "
                             "timeout, the abort's max.block.ms passes first")
    parser.add_argument("--debug-log", help="write librdkafka's debug log to this file")
    parser.add_argument("--until-lost", action="store_true",
                        help="stop at the first round that lost B or read A")
    args = parser.parse_args(argv)
    if args.client == "java" and args.debug_log:
        parser.error("--debug-log is librdkafka's")
    return args


CRASHED = 2  # not a verdict: exit 1 means a round lost B or read A


if __name__ == "__main__":
    args = parse_args(sys.argv[1:])
    try:
        sys.exit(main(args.name, args.rounds, args.debug_log, args.until_lost, args.client,
                      args.lift_after))
    except Exception:  # noqa: BLE001 - printed, and told apart from a finding by its exit code
        logging.exception("the probe failed")
        sys.exit(CRASHED)
