"""The shared 3-node Kafka cluster: writes survive a killed broker, iptables isolates a
node, and heal() undoes every fault."""
from __future__ import annotations

import os
import shlex
import time
import uuid

import pytest

from clusters.nodes.faketime import leftover_files
from clusters.kafka.admin import create_topic
from clusters.kafka.paths import CLIENT_PORT
from clusters.smoke import consume_all, produce, roundtrip
from nemesis import partition
from nemesis.clock import mark_skewed
from nemesis.heal import ClusterNotHealed, heal, verify_healed

pytestmark = pytest.mark.cluster


def new_topic(cluster, **kwargs) -> str:
    """A new one-partition topic, once its leader is known (a fresh-clone run saw
    UNKNOWN_TOPIC_OR_PART from the first request right after creation)."""
    from confluent_kafka.admin import AdminClient
    name = f"t-{uuid.uuid4().hex[:8]}"
    create_topic(cluster, name, partitions=1, **kwargs)
    partition_leader(AdminClient({"bootstrap.servers": cluster.db.bootstrap_servers()}), name)
    return name


def partition_leader(admin, topic: str, deadline_s: float = 30) -> int:
    """The broker id leading partition 0 of a new topic, waiting for its
    metadata to reach the broker answering (a fresh topic can show no
    partitions, or no leader, for a moment)."""
    end = time.monotonic() + deadline_s
    while True:
        partitions = admin.list_topics(topic=topic, timeout=10).topics[topic].partitions
        if 0 in partitions and partitions[0].leader >= 0:
            return partitions[0].leader
        if time.monotonic() > end:
            raise AssertionError(f"topic {topic}: no leader for partition 0 after {deadline_s} s")
        time.sleep(0.5)


def topic_config(cluster, topic: str) -> dict[str, str]:
    from confluent_kafka.admin import AdminClient, ConfigResource
    admin = AdminClient({"bootstrap.servers": cluster.db.bootstrap_servers()})
    resource = ConfigResource("topic", topic)
    entries = admin.describe_configs([resource])[resource].result(timeout=30)
    return {k: v.value for k, v in entries.items()}


def test_three_brokers_serve_metadata(cluster):
    assert cluster.nodes == ["n1", "n2", "n3"]
    for node in cluster.nodes:
        assert cluster.db.state(node) == "running"
        assert cluster.db.serves_metadata(node)
    verify_healed(cluster)


def test_brokers_run_under_libfaketime_with_a_zero_offset(cluster):
    for node in cluster.nodes:
        session = cluster.ssh[node]
        environ = session.exec(f"tr '\\0' '\\n' < /proc/$(cat {cluster.db.pid_file(node)})"
                               "/environ").stdout.splitlines()
        assert f"FAKETIME_TIMESTAMP_FILE={cluster.db.clock_offset_file(node)}" in environ
        assert any(e.startswith("LD_PRELOAD=") and "libfaketime" in e for e in environ)
        assert session.exec(f"cat {cluster.db.clock_offset_file(node)}").stdout.strip() == "+0"


def test_rf3_topic_round_trip_with_acks_all(cluster):
    topic = new_topic(cluster)
    config = topic_config(cluster, topic)
    assert config["min.insync.replicas"] == "2"
    assert config["unclean.leader.election.enable"] == "false"
    result = roundtrip(cluster.db.bootstrap_servers(), topic, count=200)
    assert result.sent == 200 and result.read == 200 and result.missing == []


def test_writes_survive_one_killed_broker(cluster):
    topic = new_topic(cluster)
    bootstrap = cluster.db.bootstrap_servers()
    before = produce(bootstrap, topic, [f"before-{i}" for i in range(50)])
    killed_pid = int(cluster.ssh["n2"].read_file(cluster.db.pid_file("n2")))
    assert all(os.path.exists(f) for f in leftover_files(killed_pid))  # libfaketime's shm
    cluster.db.kill("n2")
    try:
        assert not cluster.db.is_running("n2")
        assert not any(os.path.exists(f) for f in leftover_files(killed_pid))
        with pytest.raises(ClusterNotHealed, match="node n2: .*broker is stopped"):
            verify_healed(cluster)
        during = produce(bootstrap, topic, [f"during-{i}" for i in range(50)], timeout=90)
        assert len(during) == 50
    finally:
        actions = heal(cluster)
    assert "n2: restarted broker" in actions
    verify_healed(cluster)
    assert set(consume_all(bootstrap, topic, 100)) == set(before) | set(during)


def test_paused_broker_is_reported_and_resumed_by_heal(healed_cluster):
    cluster = healed_cluster
    cluster.db.pause("n3")
    with pytest.raises(ClusterNotHealed, match="node n3: .*broker is paused"):
        verify_healed(cluster)
    assert "n3: resumed paused broker" in heal(cluster)
    verify_healed(cluster)


def tcp_reachable(session, host: str, port: int) -> bool:
    probe = f"timeout 3 bash -c {shlex.quote(f'</dev/tcp/{host}/{port}')}"
    return session.exec(probe, check=False, timeout=20).exit_code == 0


def test_iptables_in_a_node_namespace_isolates_it_until_heal(cluster):
    n1 = cluster.inventory.node("n1")
    peer = cluster.ssh["n2"]
    assert tcp_reachable(peer, n1.host, CLIENT_PORT)
    # a rule of the user's own, which heal must leave alone
    users_rule = "INPUT -p tcp --dport 9999 -j DROP"
    cluster.ssh["n1"].exec(f"iptables -A {users_rule}")
    # logtrial's chain: n1 drops n2 and n3 (SSH from the control node still works)
    others = [cluster.inventory.node(n).host for n in ("n2", "n3")]
    cluster.ssh["n1"].exec(partition.apply_script([f"-s {host} -j DROP" for host in others]))
    try:
        assert not tcp_reachable(peer, n1.host, CLIENT_PORT)
        # the rules live in n1's namespace only: n2 and n3 still talk
        assert tcp_reachable(peer, cluster.inventory.node("n3").host, CLIENT_PORT)
        with pytest.raises(ClusterNotHealed, match="node n1: logtrial's iptables rules remain"):
            verify_healed(cluster)
        actions = heal(cluster)
        assert "n1: removed logtrial's iptables chain (2 rules)" in actions
        assert tcp_reachable(peer, n1.host, CLIENT_PORT)
        verify_healed(cluster)
        assert "--dport 9999 -j DROP" in cluster.ssh["n1"].exec("iptables -S INPUT").stdout
    finally:
        cluster.ssh["n1"].exec(f"iptables -D {users_rule}", check=False)
        heal(cluster)


def test_clock_offset_file_skews_the_broker_clock_and_heal_resets_it(cluster):
    """The brokers' wall clock follows the offset file: LogAppendTime comes from it."""
    from confluent_kafka import Consumer, TopicPartition, OFFSET_BEGINNING
    from confluent_kafka.admin import AdminClient
    topic = new_topic(cluster, config={"message.timestamp.type": "LogAppendTime"})
    admin = AdminClient({"bootstrap.servers": cluster.db.bootstrap_servers()})
    leader = partition_leader(admin, topic)
    node = cluster.nodes[leader - 1]
    # as the clock fault does: a JVM that saw its clock jump keeps timers computed on the
    # wrong time, so the heal must restart it (the next test, killing another broker,
    # once found this one's replication stalled: writes timed out with two brokers up)
    mark_skewed(cluster, node)
    cluster.ssh[node].write_file(cluster.db.clock_offset_file(node), "+1d\n")
    try:
        time.sleep(3)  # libfaketime re-reads the file within FAKETIME_CACHE_DURATION (1 s)
        produce(cluster.db.bootstrap_servers(), topic, ["skewed"])
        consumer = Consumer({"bootstrap.servers": cluster.db.bootstrap_servers(),
                             "group.id": f"g-{topic}"})
        consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        msg = None
        for _ in range(30):
            msg = consumer.poll(1.0)
            if msg is not None and not msg.error():
                break
        consumer.close()
        skew_hours = (msg.timestamp()[1] / 1000 - time.time()) / 3600
        assert 23 < skew_hours < 25
    finally:
        actions = heal(cluster)
    assert f"{node}: reset clock offset" in actions
    assert f"{node}: stopped broker that ran with a skewed clock, to restart it" in actions
    verify_healed(cluster)


def test_collect_logs_from_every_node(cluster, tmp_path):
    assert cluster.collect_logs(tmp_path) == {}
    for i, node in enumerate(cluster.nodes, start=1):
        assert f"node.id={i}" in (tmp_path / node / "server.properties").read_text()
        assert f"[BrokerServer id={i}] Transition from STARTING to STARTED" in \
            (tmp_path / node / "server.log").read_text()


def test_remote_install_uploads_only_jars_whose_checksum_differs(cluster, tmp_path,
                                                                  monkeypatch):
    """A node that does not share our filesystem gets the jars over SFTP, once. (A cache
    of four real jars stands in for all 93, to keep the test fast.)"""
    import dataclasses
    import shutil

    from clusters.nodes.inventory import Inventory
    from clusters.kafka.database import KafkaDB
    from clusters.kafka.config import kafka_cache_dir
    from clusters.nodes.ssh import SSHPool

    small = sorted((kafka_cache_dir() / "libs").glob("*.jar"), key=lambda p: p.stat().st_size)
    stand_in = tmp_path / kafka_cache_dir().name / "libs"
    stand_in.mkdir(parents=True)
    for jar in small[:4]:
        shutil.copy(jar, stand_in)
    monkeypatch.setenv("LOGTRIAL_CACHE", str(tmp_path))
    n1 = cluster.inventory.node("n1")
    remote = dataclasses.replace(n1, local=False, home=f"{n1.home}/remote-install")
    pool = SSHPool(Inventory("remote", (remote,)))
    db = KafkaDB(Inventory("remote", (remote,)), pool)
    jars = sorted(p.name for p in (kafka_cache_dir() / "libs").glob("*.jar"))
    try:
        assert sorted(db.jars.sync("n1")) == jars
        assert db.jars.sync("n1") == []  # nothing changed, nothing sent
        libs = db.paths.libs_dir("n1")
        pool["n1"].exec(f"echo corrupt >> {libs}/{jars[0]} && touch {libs}/stray.jar")
        assert db.jars.sync("n1") == [jars[0]]
        listing = pool["n1"].exec(f"ls {libs}").stdout.split()
        assert "stray.jar" not in listing and len(listing) == len(jars) + 1  # + SHA256SUMS
    finally:
        pool["n1"].exec(f"rm -rf {remote.home}")
        pool.close()


def test_heal_finishes_the_set_up_a_stopped_run_left_undone(fresh_cluster):
    """A run killed during set-up, before Kafka's storage was formatted: heal
    formats it instead of failing on a broker that exits at once, says so, and
    the node verifies healed (seen in the interrupted-runs test on a loaded box)."""
    from clusters.cluster import Cluster
    local = fresh_cluster(nodes=1, suffix="unformatted")
    with Cluster.open(local.inventory_path, start=False) as opened:
        actions = heal(opened)
        assert "n1: formatted its log dir" in actions and "n1: restarted broker" in actions
        verify_healed(opened)
        assert opened.db.ensure_formatted("n1") is False
        assert heal(opened) == []       # idempotent
