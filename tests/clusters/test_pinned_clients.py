"""Clients pinned to nodes (--pin-clients) on the shared local cluster: a pinned
client's packets arrive at its own node and at no other (counted by iptables on
every node), only a client pinned to a partition's leader can write to it, and
a pinned run records each op's node, round-robin."""
from __future__ import annotations

import re
import threading
import time
import uuid
from pathlib import Path

import pytest
from confluent_kafka import KafkaError, Producer
from confluent_kafka.admin import AdminClient

from clusters.nodes import pinning
from clusters.kafka.admin import create_topic
from clusters.nodes.local import LocalCluster
from harness.runner import TestOptions
from nemesis.partition import CHAIN, apply_script
from workloads.kafka_common import KeySpace
from tests.harness.test_runner_cluster import completed_ops, run

pytestmark = [pytest.mark.cluster]


def leaders(cluster, topics) -> dict[tuple[str, int], str]:
    """(topic, partition) -> name of the node leading it, as the brokers say now (a broker
    may learn of a new topic a moment after another: asked again until all know)."""
    admin = AdminClient({"bootstrap.servers": cluster.db.bootstrap_servers()})
    by_id = {cluster.db.node_id(n): n for n in cluster.inventory.node_names}
    deadline = time.monotonic() + 15
    while True:
        metadata = admin.list_topics(timeout=10).topics
        found = {(t, p): by_id.get(info.leader) for t in topics if t in metadata
                 for p, info in metadata[t].partitions.items()}
        if len({t for t, _ in found}) == len(topics) and None not in found.values():
            return found
        assert time.monotonic() < deadline, f"no leader known for some of {topics}: {found}"
        time.sleep(0.2)


def send_pinned(space: pinning.ClientNamespace, topic: str) -> str:
    """One acks=all send from a producer pinned to space's node: 'ok' or the error name."""
    outcome: dict[str, str] = {}

    def send() -> None:
        pinning.enter(space.netns)
        producer = Producer({"bootstrap.servers": f"{space.node_ip}:9092", "acks": "all",
                             "message.timeout.ms": 5000, "reconnect.backoff.max.ms": 500})
        producer.produce(topic, b"v", partition=0,
                         on_delivery=lambda err, _: outcome.update(r="ok" if err is None else err.name()))
        producer.flush(10)

    thread = threading.Thread(target=send)
    thread.start()
    thread.join()
    return outcome.get("r", "no delivery report")


def packets_by_source(cluster, node: str) -> dict[str, int]:
    """Packets each counting rule of our chain on `node` saw, by source address."""
    out = cluster.ssh[node].exec("iptables-save -c -t filter", timeout=30).stdout
    rule = re.compile(rf"^\[(\d+):\d+\] -A {CHAIN} -s ([\d.]+)/32$")
    return {m[2]: int(m[1]) for m in map(rule.match, out.splitlines()) if m}


def test_pinned_clients_reach_only_their_node_and_write_only_where_it_leads(healed_cluster):
    cluster = healed_cluster
    local = LocalCluster(cluster.inventory.name)
    spaces = pinning.create(local)
    try:
        topic = f"pin-{uuid.uuid4().hex[:8]}"
        create_topic(cluster, topic, partitions=1)
        leader = leaders(cluster, [topic])[(topic, 0)]
        # on every node, a rule per client address that only counts (no target)
        for node in cluster.inventory.node_names:
            cluster.ssh[node].exec(apply_script([f"-s {s.ip}" for s in spaces]), timeout=30)
        outcomes = {}
        threads = [threading.Thread(target=lambda s=s: outcomes.update({s.node: send_pinned(s, topic)}))
                   for s in spaces]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        # metadata from its own node names the leader; a client pinned elsewhere cannot reach it
        assert outcomes == {s.node: "ok" if s.node == leader else KafkaError(KafkaError._MSG_TIMED_OUT).name()
                            for s in spaces}
        seen = {node: packets_by_source(cluster, node) for node in cluster.inventory.node_names}
        for space in spaces:
            arrived = {node: seen[node][space.ip] for node in seen}
            assert arrived[space.node] > 0
            assert {n: c for n, c in arrived.items() if n != space.node} == \
                {n: 0 for n in arrived if n != space.node}
    finally:
        pinning.remove(local)
    assert local.client_namespaces() == []


def test_pinned_run_records_each_ops_node_and_writes_only_through_leaders(cluster, tmp_path):
    result, events, test_json = run(cluster, tmp_path, workload="queue", time_limit=8, op_timeout=2,
                                    pin_clients=True)
    assert result.status == "complete"
    nodes = cluster.inventory.node_names
    assert sorted(test_json["pinned_clients"]) == nodes
    assert LocalCluster(cluster.inventory.name).client_namespaces() == []
    final_start = test_json["final"]["first_index"]
    main = [(i, c) for i, c in completed_ops(events) if c["index"] < final_start]
    assert main and all(i["node"] == c["node"] == nodes[c["process"] % len(nodes)] for i, c in main)
    assert all("node" not in e for e in events[final_start:])
    # a send from the node leading its key's partition went through; from any other node
    # it never did: the client could not reach the leader its node named
    keys = KeySpace(prefix=f"{test_json['run_id']}-q")
    sends = [c for _, c in main if c["f"] == "send"]
    led_by = leaders(cluster, sorted({keys.topic(c["value"][0][1]) for c in sends}))
    through_leader = {c["type"] for c in sends
                      if c["node"] == led_by[(keys.topic(c["value"][0][1]), keys.partition(c["value"][0][1]))]}
    elsewhere = {c["type"] for c in sends
                 if c["node"] != led_by[(keys.topic(c["value"][0][1]), keys.partition(c["value"][0][1]))]}
    assert "ok" in through_leader and elsewhere == {"info"}


def test_pinning_needs_a_local_cluster(tmp_path):
    with pytest.raises(ValueError, match="--pin-clients needs a local cluster .* not --bootstrap-servers"):
        TestOptions.from_flat(bootstrap_servers="127.0.0.1:9092", pin_clients=True).validate()
    inventory = tmp_path / "cluster.yaml"
    inventory.write_text("name: prod-like\nnodes:\n  - {name: n1, host: 192.0.2.1, key_file: k, home: /srv}\n")
    with pytest.raises(ValueError,
                       match=f"{inventory} is not the inventory of one; real machines have no client namespaces"):
        TestOptions.from_flat(nodes_file=str(inventory), pin_clients=True).validate()


def test_down_removes_client_namespaces_a_dead_run_left(fresh_cluster):
    local = fresh_cluster(nodes=2, suffix="pin")
    spaces = pinning.create(local)
    assert sorted(local.client_namespaces()) == [f"lt-{local.name}.pin-n1", f"lt-{local.name}.pin-n2"]
    assert [s.ip.rsplit(".", 1)[1] for s in spaces] == ["21", "22"]
    removed = local.down()
    assert {f"netns lt-{local.name}.pin-n1", f"netns lt-{local.name}.pin-n2"} <= set(removed)
    assert local.client_namespaces() == []
    assert not any(Path("/sys/class/net", local.client_veth(s.node)).exists() for s in spaces)
