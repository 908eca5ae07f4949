"""The client-delay fault on the shared local cluster: it holds what a broker receives
from the control node's clients, leaves the brokers' own traffic and SSH alone, heals
after the striking process was SIGKILLed, and a run with it records a schedule that
replays; then the late batch it was built for, reproduced (docs/findings.md)."""
from __future__ import annotations

import logging
import re
import shlex
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient

from checkers.history.stream import raw_events
from clusters.kafka.admin import (TRANSACTION_VERSION, elect_preferred, finalized_feature, partition_states,
                                  reassign, wait_replicated)
from harness.probes.coordinator import coordinator_id, java_string_hash, transaction_state
from harness.probes.late_batch_setup import set_up, wait_for_leader
from harness.runner import TestOptions, run_test
from nemesis import client_delay
from nemesis.client_delay import ClientDelayFault
from nemesis.roles import RoleResolver
from nemesis.schedule import START, build_schedule, load_schedule
from tests.nemesis.striker import cluster_heal, strike_then_sigkill

pytestmark = pytest.mark.cluster
ROOT = Path(__file__).resolve().parents[2]
BROKER_PORT = 9092


def connect_s(host: str) -> float:
    started = time.monotonic()
    socket.create_connection((host, BROKER_PORT), timeout=20).close()
    return time.monotonic() - started


def broker_connect_ms(cluster, from_node: str, to_node: str) -> float:
    """How long from_node takes to open a TCP connection to to_node's broker port."""
    host = cluster.inventory.node(to_node).host
    probe = (f"import socket, time\nt = time.monotonic()\n"
             f"socket.create_connection(({host!r}, {BROKER_PORT}), timeout=20).close()\n"
             f"print((time.monotonic() - t) * 1000)")
    return float(cluster.ssh[from_node].exec(f"python3 -c {shlex.quote(probe)}", timeout=60).stdout)


def traces(cluster) -> dict[str, list[str]]:
    return {n: client_delay.traces_left(cluster, cluster.ssh[n]) for n in cluster.nodes}


def test_holds_what_the_broker_receives_from_clients_and_nothing_else(healed_cluster):
    cluster = healed_cluster
    host = cluster.inventory.node("n2").host
    fault = ClientDelayFault(RoleResolver(cluster).resolve, op_timeout_s=1.0)
    value = fault.start(cluster, {"target": "one", "nodes": ["n2"], "hold_factor": 1.5})
    assert value["hold_ms"] == 1500 and value["nodes"] == ["n2"] and "errors" not in value
    assert connect_s(host) >= 1.4  # the SYN waits in the holder
    assert connect_s(cluster.inventory.node("n1").host) < 0.5
    assert broker_connect_ms(cluster, "n1", "n2") < 200  # broker to broker: untouched
    assert cluster.ssh["n2"].exec("echo ok", timeout=10).stdout.strip() == "ok"  # SSH too
    assert traces(cluster)["n2"]
    assert "errors" not in fault.stop(cluster)
    assert connect_s(host) < 0.5
    assert traces(cluster) == {"n1": [], "n2": [], "n3": []}


STRIKE_AND_WAIT = """
import sys, time
from clusters.cluster import Cluster
from nemesis.client_delay import ClientDelayFault
cluster = Cluster.open(sys.argv[1], start=False)
value = ClientDelayFault(lambda role: [], 2.0).start(cluster, {"target": "one", "nodes": ["n3"],
                                                              "hold_factor": 1.2})
print(repr(value), flush=True)
time.sleep(600)
"""


def test_cluster_heal_undoes_it_after_the_striking_process_is_sigkilled(healed_cluster):
    cluster = healed_cluster
    struck = strike_then_sigkill(STRIKE_AND_WAIT, cluster.inventory.path)
    assert "'hold_ms': 2400" in struck and "errors" not in struck, struck
    left = traces(cluster)["n3"]  # the rule and the holder outlive the striker
    assert "client-delay holder still running" in left and any("NFQUEUE" in t for t in left), left
    healed = cluster_heal(cluster.inventory.path)
    assert healed.returncode == 0, healed.stdout + healed.stderr
    assert "n3: removed logtrial's client-delay iptables chain" in healed.stdout
    assert "n3: stopped the client-delay holder" in healed.stdout
    assert traces(cluster) == {"n1": [], "n2": [], "n3": []}
    assert connect_s(cluster.inventory.node("n3").host) < 0.5


@pytest.mark.slow
def test_the_targeted_scenario_records_its_holds_and_replays(cluster, tmp_path):
    """The campaign's run (the late-batch preset, docs/findings.md), shortened."""
    options = TestOptions.from_flat(
        nodes_file=str(cluster.inventory.path), store=str(tmp_path / "store"),
        leave_db_running=True, txn=True, nemesis=("client-delay",), db_targets=("leader",),
        nemesis_interval=5, op_timeout=3, time_limit=14, recovery_time=3, seed=4,
        final_time_limit=60, check=True, report=False)
    result = run_test(options)
    assert result.status == "complete"
    history = result.run_dir / "history.jsonl"
    starts = [e for e in raw_events(history)
              if e["process"] == "nemesis" and e["f"] == client_delay.START_F]
    assert starts
    for event in starts:
        assert event["value"]["hold_ms"] == round(event["value"]["hold_factor"] * 3000)
    planned = [s.params for s in build_schedule(["client-delay"], cluster.nodes, 5, 4, ["leader"],
                                                14) if s.action == START]
    replayed = [s.params for s in load_schedule(history) if s.action == START]
    assert [p["hold_factor"] for p in replayed] == [p["hold_factor"] for p in planned[:len(replayed)]]
    assert {p["target"] for p in replayed} == {"leader"}


def run_probe(local_cluster, *args: str) -> subprocess.CompletedProcess:
    """`logtrial probe late-batch` on the shared cluster."""
    return subprocess.run([sys.executable, "-m", "harness.cli", "probe", "late-batch", local_cluster.name, *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})


def probe_verdicts(stdout: str) -> list[str]:
    return [line.split(": ", 1)[1] for line in stdout.splitlines()
            if line.startswith("round ") and ": " in line and "leader" not in line]


@pytest.mark.slow
def test_a_batch_held_past_the_abort_is_committed_by_the_next_transaction(healed_cluster,
                                                                        local_cluster):
    """The finding itself, on demand: librdkafka's aborted send lands in the next
    transaction and that transaction's own send is acknowledged at its offset. After
    the hold lifts, A's request and B's race inside the broker, so the probe gets up to
    four rounds; every round must show B given A's sequence under the same epoch, or
    be inconclusive (its abort never ended: EndTxn could not get through)."""
    probe = run_probe(local_cluster, "4", "--until-lost")
    assert probe.returncode == 1, probe.stdout + probe.stderr[-2000:]
    verdicts = probe_verdicts(probe.stdout)
    assert verdicts and verdicts[-1] == "B LOST A READ", probe.stdout + probe.stderr[-2000:]
    assert all(v.startswith(("A'S SEQUENCE GIVEN TO B", "INCONCLUSIVE")) for v in verdicts[:-1]), probe.stdout


DUMP_LINE = re.compile(r"^    offset (\d+): epoch (\d+) seq (-?\d+) (.*)$", re.M)
A_STEPS = re.compile(r"A begun lift[-+.\d]+ s, send offset (\d+) at lift([-+.\d]+) s; "
                     r"end ok lift([-+.\d]+) s -> lift([-+.\d]+) s")


def abort_waited_for_a(probe: subprocess.CompletedProcess) -> list[tuple[int, int, int, str]]:
    """A round that lost nothing because the abort waited for A's held batch: ok, the
    abort returned only once A was answered (after the hold lifted), A sits in its own
    transaction under the ABORT marker. The partition's log as (offset, epoch, seq, what)."""
    out = probe.stdout + probe.stderr[-2000:]
    assert probe.returncode == 0 and probe_verdicts(probe.stdout) == ["ok"], out
    a_offset, a_acked, abort_began, abort_ended = A_STEPS.search(probe.stdout).groups()
    assert float(abort_began) < 0 < float(a_acked) <= float(abort_ended), out  # it waited for A
    dump = [(int(o), int(epoch), int(seq), what) for o, epoch, seq, what in DUMP_LINE.findall(probe.stdout)]
    assert [what for *_, what in dump][:4] == ["warm-up", "COMMIT", "A", "ABORT"], out
    assert dump[2][0] == int(a_offset), out
    return dump


def one_epoch(dump: list[tuple[int, int, int, str]]) -> bool:
    """B got the sequence number after A's, under the warm-up's epoch."""
    (_, warm_epoch, warm_seq, _), _, (_, a_epoch, a_seq, _), _, (_, b_epoch, b_seq, _), _ = dump
    return [(a_epoch, a_seq), (b_epoch, b_seq)] == [(warm_epoch, warm_seq + 1), (warm_epoch, a_seq + 1)]


@pytest.mark.slow
def test_the_java_client_abort_waits_for_the_held_batch(healed_cluster, local_cluster):
    """The same round with Kafka's Java client loses nothing: abortTransaction does not
    send EndTxn while A's batch is in flight, so the abort returns only once A is
    answered (after the hold lifts), A sits in its own transaction under the ABORT
    marker, and B gets the next sequence number (docs/findings.md)."""
    the_abort_waited_and_b_followed(healed_cluster, local_cluster, "java", bumps_at_version_2=True)


def the_abort_waited_and_b_followed(cluster, local_cluster, client: str, bumps_at_version_2: bool) -> None:
    """One probe round with `client` lost nothing because its abort waited for A
    (abort_waited_for_a), and B followed in the log: committed, with the sequence number
    after A's under one epoch; or, for a client whose EndTxn bumps the epoch at
    transaction.version 2 (EndTxn v5), A and B each at sequence 0 of a new epoch."""
    probe = run_probe(local_cluster, "1", "--client", client)
    dump = abort_waited_for_a(probe)
    assert [what for *_, what in dump][4:] == ["B", "COMMIT"], probe.stdout
    (_, warm_epoch, _, _), _, (_, a_epoch, a_seq, _), _, (_, b_epoch, b_seq, _), _ = dump
    if bumps_at_version_2 and finalized_feature(cluster, "n1", TRANSACTION_VERSION) >= 2:
        # each EndTxn bumps the epoch: A and B each start an epoch's sequences
        assert [(a_epoch, a_seq), (b_epoch, b_seq)] == [(warm_epoch + 1, 0), (a_epoch + 1, 0)], probe.stdout
    else:
        assert one_epoch(dump), probe.stdout


@pytest.mark.slow
def test_the_sarama_abort_waits_for_the_held_batch(healed_cluster, local_cluster):
    """The same round with Sarama loses nothing either: its AbortTxn waits for what is in
    flight before EndTxn (A was resent on a new connection and answered), and with EndTxn
    v3 at any transaction version B gets the sequence number after A's under one epoch -
    or, when A's first request, held on the connection Sarama gave up on, reaches the
    leader after the abort, the broker's verification of it (KIP-890 part 1) refuses B
    as out of order and B commits nothing (docs/findings.md)."""
    probe = run_probe(local_cluster, "1", "--client", "sarama")
    dump = abort_waited_for_a(probe)
    if [what for *_, what in dump][4:] == ["B", "COMMIT"]:
        assert one_epoch(dump), probe.stdout
    else:
        assert len(dump) == 4 and "B begun" in probe.stdout, probe.stdout
        assert "send OUT_OF_ORDER_SEQUENCE_NUMBER" in probe.stdout, probe.stdout


def coordinator_told(bootstrap: str, transactional_id: str) -> int:
    """The transaction coordinator FindCoordinator names to librdkafka (its eos log)."""
    told: list[int] = []

    class Told(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            told.extend(int(n) for n in re.findall(r"Transaction coordinator is broker (\d+)",
                                                   record.getMessage()))

    log = logging.getLogger(f"coordinator-{transactional_id}")
    log.addHandler(Told())
    log.setLevel(logging.DEBUG)
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": transactional_id,
                         "debug": "eos"}, logger=log)
    producer.init_transactions(30)
    producer.poll(0.2)
    assert told, f"librdkafka's eos log never named {transactional_id}'s coordinator"
    return told[-1]


def test_the_probe_names_the_coordinator_the_cluster_names(cluster):
    """The probe holds a partition leader and needs the coordinator elsewhere: its
    reckoning of each id's coordinator must be the cluster's, for ids whose hashCode is
    negative too (a masked sign bit once named the wrong broker for those, and the
    probe's aborts then never ended)."""
    bootstrap = cluster.db.bootstrap_servers()
    admin = AdminClient({"bootstrap.servers": bootstrap})
    ids = [f"{n}-probe-coordinator" for n in range(10)]
    assert {java_string_hash(i) < 0 for i in ids} == {True, False}
    assert [coordinator_id(admin, bootstrap, i) for i in ids] == [coordinator_told(bootstrap, i) for i in ids]


def lead_every_transaction_state_partition(cluster, broker_id: int) -> dict[str, list[int]]:
    """Makes `broker_id` the preferred and actual leader of every __transaction_state
    partition (replicas reordered, none moved); returns the assignment it replaced. On a
    cluster no transactional producer has used yet the topic is first made (a random
    order of the suite met it missing)."""
    bootstrap = cluster.db.bootstrap_servers()
    transaction_state(AdminClient({"bootstrap.servers": bootstrap}), bootstrap)
    states = partition_states(cluster, ["__transaction_state"])
    assert states, "no __transaction_state partitions"
    before = {key: list(state.replicas) for key, state in states.items()}
    skewed = {key: [broker_id, *(r for r in replicas if r != broker_id)] for key, replicas in before.items()}
    reassign(cluster, "n1", skewed)
    assert wait_replicated(cluster, 60, skewed) == []
    assert elect_preferred(cluster, skewed) == {}
    return before


def test_the_probe_places_its_topic_away_from_the_coordinator_wherever_leaders_stand(healed_cluster):
    """After a few broker kills one broker may lead every partition of
    __transaction_state (a fresh-clone CI run met it). The probe must still find a leader
    to hold that is not the coordinator: it places its topic instead of hoping."""
    cluster = healed_cluster
    lead = cluster.db.node_id("n3")
    before = lead_every_transaction_state_partition(cluster, lead)
    try:
        admin = AdminClient({"bootstrap.servers": cluster.db.bootstrap_servers()})
        setup = set_up(cluster)
        assert coordinator_id(admin, setup.bootstrap, setup.txn_id) == lead
        assert setup.leader != "n3"
        # this admin's broker may learn of the new topic later than set_up's did
        wait_for_leader(admin, setup.topic, cluster.db.node_id(setup.leader))
    finally:
        reassign(cluster, "n1", before)
        assert wait_replicated(cluster, 60, before) == []
        elect_preferred(cluster, before)
