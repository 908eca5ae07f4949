"""The membership fault: its plans and history names (no cluster), then real strikes on
the shared cluster, seen through the Admin API (describe_cluster, describe_topics), and
the heal that restores membership, also from a fresh process that knows nothing."""
from __future__ import annotations

import json
import random
import time
from typing import Callable

import pytest
from confluent_kafka import TopicCollection
from confluent_kafka.admin import AdminClient

from clusters.kafka import admin as kafka_admin
from clusters.cluster import Cluster
from clusters.kafka.database import KafkaDB
from clusters.kafka.config import release_settings
from clusters.kafka.paths import directory_id
from clusters.kafka.versions import KafkaVersionError
from nemesis import membership_undo
from nemesis.heal import ClusterNotHealed, heal, verify_healed
from nemesis.membership import IDLE_STOP_F, START_F, STOP_F, MembershipFault, new_replicas
from nemesis.registry import F_NAMES, parse_kinds
from nemesis.roles import RoleResolver
from nemesis.schedule import START, STOP, Step, build_schedule, load_schedule

NODES = ["n1", "n2", "n3"]


# -- no cluster ------------------------------------------------------------------------------
def test_plans_are_seeded_and_name_what_they_strike():
    steps = build_schedule(["membership"], NODES, 10.0, 7, ["one"], 900)
    assert steps == build_schedule(["membership"], NODES, 10.0, 7, ["one"], 900)
    starts = [s.params for s in steps if s.action == START]
    assert {p["mode"] for p in starts} == {"remove-node", "reassign", "quorum"}
    for params in starts:
        if params["mode"] == "remove-node":
            assert set(params) == {"mode", "nodes"} and len(params["nodes"]) == 1
            assert params["nodes"][0] in NODES
        if params["mode"] == "reassign":
            assert set(params) == {"mode", "change", "pick"} and params["change"] in ("reorder", "move")
        if params["mode"] == "quorum":  # which voter is resolved at the strike, from the pick
            assert set(params) == {"mode", "pick"}
    assert "membership" not in parse_kinds("all")  # it wipes a voter's log: by name only


def test_history_names_map_back_to_the_fault():
    assert {F_NAMES[f] for f in START_F.values()} == {("membership", "start")}
    assert {F_NAMES[f] for f in [*STOP_F.values(), IDLE_STOP_F]} == {("membership", "stop")}
    fault = MembershipFault()
    assert fault.stop_f == IDLE_STOP_F
    fault.active = {"mode": "remove-node", "nodes": ["n1"]}
    assert (fault.start_f({"mode": "reassign"}), fault.stop_f) == ("reassign", "add-node")


def test_new_replicas_reorder_move_and_never_shrink_below_two():
    rng = random.Random(3)
    for _ in range(50):
        reordered = new_replicas([1, 2, 3], [1, 2, 3], "reorder", rng)
        assert sorted(reordered) == [1, 2, 3] and reordered[0] != 1
        moved = new_replicas([1, 2, 3], [1, 2, 3, 4, 5], "move", rng)
        assert len(moved) == 3 and len(set(moved) - {1, 2, 3}) == 1
        assert len(new_replicas([1, 2, 3], [1, 2, 3], "move", rng)) == 2  # every broker holds it
        assert sorted(new_replicas([1, 2], [1, 2], "move", rng)) == [1, 2]  # reordered instead
    with pytest.raises(ValueError, match="unknown reassign change 'swap'"):
        new_replicas([1, 2], [1, 2], "swap", rng)
    with pytest.raises(ValueError, match="membership modes .*'grow'.*valid are remove-node"):
        MembershipFault(modes=["grow"])


def test_replay_keeps_the_struck_partition_and_drops_results(tmp_path):
    value = {"mode": "reassign", "change": "move", "pick": 9, "topic": "t", "partition": 1,
             "replicas": [1, 3], "original": [1, 2, 3], "lagging": [], "at": 4.5}
    lines = [{"index": 0, "time": 1, "type": "info", "process": "nemesis", "f": "reassign", "value": value},
             {"index": 1, "time": 2, "type": "info", "process": "nemesis", "f": "restore-assignment",
              "value": {"mode": "reassign", "at": 9.0}}]
    path = tmp_path / "history.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert load_schedule(path) == [
        Step(4.5, "membership", START, {"mode": "reassign", "change": "move", "pick": 9, "topic": "t",
                                        "partition": 1, "replicas": [1, 3]}),
        Step(9.0, "membership", STOP)]


# -- on the shared cluster ---------------------------------------------------------------------
def admin(cluster) -> AdminClient:
    return AdminClient({"bootstrap.servers": cluster.db.bootstrap_servers()})


def registered_brokers(cluster) -> set[int]:
    client = admin(cluster)  # held until the result: a dropped client cancels its futures
    return {node.id for node in client.describe_cluster(request_timeout=10).result().nodes}


def described(cluster, topic: str) -> dict[int, tuple[int, list[int], frozenset[int]]]:
    """partition -> (leader, replicas, ISR) as describe_topics reports them."""
    client = admin(cluster)
    future = client.describe_topics(TopicCollection([topic]), request_timeout=10)[topic]
    return {p.id: (p.leader.id, [r.id for r in p.replicas], frozenset(r.id for r in p.isr))
            for p in future.result().partitions}


def eventually(observe: Callable[[], object], expected: object, timeout: float = 15) -> None:
    """observe() == expected within the timeout: brokers apply a metadata change one
    after another, and describe_topics may ask one that has not yet."""
    deadline = time.monotonic() + timeout
    while (seen := observe()) != expected:
        assert time.monotonic() < deadline, f"saw {seen}, expected {expected}"
        time.sleep(0.5)


def new_topic(cluster, partitions: int = 2) -> str:
    """A new topic every broker knows (describe_topics may reach one that has not heard)."""
    topic = f"membership_{time.time_ns()}"  # no '-': the fault widens "a-1" to every "a-*"
    kafka_admin.create_topic(cluster, topic, partitions=partitions)
    brokers = [f"{node.host}:9092" for node in cluster.inventory.nodes]
    deadline = time.monotonic() + 30
    while not all(topic in AdminClient({"bootstrap.servers": b}).list_topics(timeout=10).topics
                  for b in brokers):
        assert time.monotonic() < deadline, f"topic {topic} not known to every broker after 30 s"
        time.sleep(0.5)
    return topic


@pytest.mark.cluster
def test_remove_node_unregisters_and_wipes_it_and_add_node_brings_it_back(healed_cluster):
    cluster = healed_cluster
    topic = new_topic(cluster)
    assert registered_brokers(cluster) == {1, 2, 3}
    fault = MembershipFault([topic])
    value = fault.start(cluster, {"mode": "remove-node", "nodes": ["n3"]})
    assert value == {"mode": "remove-node", "nodes": ["n3"], "broker_id": 3}
    assert fault.stop_f == "add-node"
    eventually(lambda: registered_brokers(cluster), {1, 2})
    assert not cluster.db.is_running("n3")
    # wiped and formatted again: no partition and no metadata log left, only a fresh identity
    listing = cluster.ssh["n3"].exec(f"ls {cluster.db.data_dir('n3')}").stdout.split()
    assert listing == ["bootstrap.checkpoint", "meta.properties"]
    eventually(lambda: {isr for _, _, isr in described(cluster, topic).values()}, {frozenset({1, 2})})
    with pytest.raises(ClusterNotHealed, match="n3: broker is stopped.*removed brokers n3"):
        verify_healed(cluster)

    assert fault.stop(cluster) == {"mode": "remove-node", "nodes": ["n3"]}
    eventually(lambda: registered_brokers(cluster), {1, 2, 3})
    eventually(lambda: {isr for _, _, isr in described(cluster, topic).values()}, {frozenset({1, 2, 3})})
    assert membership_undo.read_trace(cluster) == {"removed": [], "assignment": {}, "voters": {}}
    verify_healed(cluster)


@pytest.mark.cluster
def test_reassign_moves_replicas_and_leader_and_the_stop_puts_them_back(healed_cluster):
    cluster = healed_cluster
    topic = new_topic(cluster, partitions=1)
    before = described(cluster, topic)[0]
    fault = MembershipFault([topic])
    # as replayed from another run, whose topic is gone: the recorded pick and change decide
    value = fault.start(cluster, {"mode": "reassign", "change": "reorder", "pick": 5,
                                  "topic": "membership_gone", "partition": 0, "replicas": [9]})
    assert "errors" not in value
    assert (value["topic"], value["partition"], value["original"]) == (topic, 0, before[1])
    assert sorted(value["replicas"]) == sorted(before[1]) and value["replicas"] != before[1]
    eventually(lambda: described(cluster, topic)[0],
               (value["replicas"][0], value["replicas"], frozenset(value["replicas"])))

    assert fault.stop_f == "restore-assignment"
    assert fault.stop(cluster) == {"mode": "reassign", "topic": topic, "partition": 0,
                                   "replicas": before[1]}
    eventually(lambda: described(cluster, topic)[0], (before[1][0], before[1], frozenset(before[1])))
    assert membership_undo.read_trace(cluster)["assignment"] == {}


@pytest.mark.cluster
def test_heal_from_a_fresh_process_restores_membership_and_is_idempotent(healed_cluster):
    """The control process died mid-fault (here: the fault object is simply dropped, and
    n3's log dir is left wiped but not formatted): `logtrial cluster heal`'s path, a new
    Cluster that knows only what the nodes say, restores it all."""
    cluster = healed_cluster
    topic = new_topic(cluster, partitions=1)
    original = described(cluster, topic)[0][1]
    # as replayed on the same topic: exactly the recorded partition and replicas
    moved = MembershipFault([topic]).start(cluster, {"mode": "reassign", "change": "move", "pick": 1,
                                                     "topic": topic, "partition": 0, "replicas": original[1:]})
    assert (moved["topic"], moved["replicas"]) == (topic, original[1:]) and "errors" not in moved, moved
    eventually(lambda: described(cluster, topic)[0][1], moved["replicas"])
    MembershipFault([topic]).start(cluster, {"mode": "remove-node", "nodes": ["n3"]})
    cluster.ssh["n3"].exec(f"rm -rf {cluster.db.data_dir('n3')}")

    with Cluster.open(cluster.inventory.path, start=False) as fresh:
        with pytest.raises(ClusterNotHealed) as not_healed:
            verify_healed(fresh)
        assert f"{topic}/0 replicas were {original}" in str(not_healed.value)
        actions = heal(fresh)
        assert actions[:2] == ["n3: formatted its log dir", "n3: restarted broker"]
        assert actions[-2:] == ["n3: broker registered again after its removal",
                                f"{topic}/0: restored replicas {original}"]
        verify_healed(fresh)
        eventually(lambda: registered_brokers(fresh), {1, 2, 3})
        eventually(lambda: described(fresh, topic)[0], (original[0], original, frozenset(original)))
        assert kafka_admin.wait_replicated(fresh, 0) == []
        assert heal(fresh) == []  # nothing left to undo


@pytest.mark.cluster
def test_quorum_change_is_skipped_on_a_static_quorum(healed_cluster):
    fault = MembershipFault()
    value = fault.start(healed_cluster, {"mode": "quorum", "pick": 0})
    assert value["kraft_version"] == 0 and value["skipped"].startswith("kraft.version is 0: ")
    assert fault.stop_f == "add-controller"
    assert fault.stop(healed_cluster) == {"mode": "quorum", "skipped": value["skipped"]}


# -- a dynamic controller quorum (its own cluster) ---------------------------------------------
def test_a_dynamic_quorum_needs_kraft_on_3_9_and_is_formatted_with_every_voter(tmp_path):
    from clusters.nodes.inventory import Inventory, Node
    nodes = tuple(Node(name=f"n{i}", host=f"10.0.0.{i}", port=22, user="root", key_file="k", host_key=None,
                       home=f"/h/n{i}") for i in (1, 2, 3))
    inventory = Inventory(name="dq", nodes=nodes, path=tmp_path / "inventory.yaml")
    with pytest.raises(KafkaVersionError, match="--dynamic-quorum needs KRaft on Kafka 3.9.0.*Kafka 3.8.1"):
        KafkaDB(inventory, None, release_settings("3.8.1", None, dynamic_quorum=True))
    db = KafkaDB(inventory, None, release_settings(None, None, dynamic_quorum=True))
    props = db.properties("n2")
    assert "controller.quorum.voters" not in props
    assert props["controller.quorum.bootstrap.servers"] == "10.0.0.1:9093,10.0.0.2:9093,10.0.0.3:9093"
    assert db.paths.initial_voters().split(",")[1] == f"2@10.0.0.2:9093:{directory_id('dq', 2)}"
    assert len(directory_id("dq", 2)) == 22 and directory_id("dq", 2) != directory_id("dq", 1)


def voters(cluster) -> dict[int, str]:
    return kafka_admin.quorum_status(cluster, cluster.nodes[0]).voters


@pytest.fixture
def quorum_cluster(dynamic_quorum_cluster):
    yield dynamic_quorum_cluster
    heal(dynamic_quorum_cluster)
    verify_healed(dynamic_quorum_cluster)


@pytest.mark.own_cluster
def test_remove_controller_takes_the_leader_out_of_the_voters_and_add_controller_puts_it_back(quorum_cluster):
    cluster = quorum_cluster
    status = kafka_admin.quorum_status(cluster, "n1")
    original = status.voters
    assert sorted(original) == [1, 2, 3] and kafka_admin.kraft_version(cluster, "n1") == 1
    leader_node = cluster.inventory.node_names[status.leader - 1]
    fault = MembershipFault()
    value = fault.start(cluster, {"mode": "quorum", "pick": status.leader - 1})
    assert value == {"mode": "quorum", "pick": status.leader - 1, "node": leader_node,
                     "controller_id": status.leader, "leader": status.leader, "voters": [1, 2, 3]}
    # still running, as a broker: an observer once it fetches from the new leader
    eventually(lambda: kafka_admin.quorum_status(cluster, "n1").observers,
               {status.leader: original[status.leader]}, timeout=30)
    after = kafka_admin.quorum_status(cluster, "n1")
    assert set(after.voters) == set(original) - {status.leader}
    assert after.leader in after.voters  # the old leader resigned; the two left elected another
    assert RoleResolver(cluster).controller() == cluster.inventory.node_names[after.leader - 1]
    with pytest.raises(ClusterNotHealed, match="controller voters were \\[1, 2, 3\\]"):
        verify_healed(cluster)

    assert fault.stop_f == "add-controller"
    assert fault.stop(cluster) == {"mode": "quorum", "node": leader_node, "controller_id": status.leader,
                                   "voters": [1, 2, 3]}
    assert voters(cluster) == original  # the same directory ids: the same log dirs voted again
    assert membership_undo.read_trace(cluster)["voters"] == {}
    # a voter just killed may still look caught up to the leader: its node is asked too
    cluster.db.kill("n2")
    assert fault.start(cluster, {"mode": "quorum", "pick": 0})["skipped"] == \
        "controller voters [2] are not running: no voter is removed"
    assert voters(cluster) == original  # the fixture's heal restarts n2


@pytest.mark.own_cluster
def test_heal_from_a_fresh_process_adds_a_removed_voter_back(quorum_cluster):
    """The control process died after remove-controller: `logtrial cluster heal`'s path
    (a new Cluster knowing only what the nodes say) adds the voter back and checks it."""
    cluster = quorum_cluster
    original = voters(cluster)
    follower = next(i for i in sorted(original) if i != kafka_admin.quorum_status(cluster, "n1").leader)
    value = MembershipFault().start(cluster, {"mode": "quorum", "pick": 0, "controller_id": follower})
    assert value["controller_id"] == follower and "errors" not in value, value
    assert set(voters(cluster)) == set(original) - {follower}
    # the fault refuses to shrink a quorum that is already short of a voter
    assert MembershipFault().start(cluster, {"mode": "quorum", "pick": 0})["skipped"].startswith(
        "only 2 controller voters")

    with Cluster.open(cluster.inventory.path, start=False) as fresh:
        actions = heal(fresh)
        node = cluster.inventory.node_names[follower - 1]
        assert actions == [f"{node}: added back as a controller voter", "controller voters restored: [1, 2, 3]"]
        verify_healed(fresh)
        assert voters(fresh) == original
        assert heal(fresh) == []  # nothing left to undo


@pytest.mark.own_cluster
def test_remove_node_in_a_dynamic_quorum_gives_the_voter_a_new_disk_and_add_node_replaces_it(quorum_cluster):
    """KIP-853's disk replacement: the wiped node gets a new directory id and no voters, so
    it never votes with an empty log under its old identity; add-node removes the old
    (id, directory) and adds the new one."""
    cluster = quorum_cluster
    original = voters(cluster)
    fault = MembershipFault()
    value = fault.start(cluster, {"mode": "remove-node", "nodes": ["n3"]})
    assert value == {"mode": "remove-node", "nodes": ["n3"], "broker_id": 3}
    new_disk = cluster.db.disk_directory_id("n3")
    assert new_disk != original[3]
    assert voters(cluster) == original  # the old disk is still a voter, now one that cannot answer
    assert membership_undo.read_trace(cluster)["voters"] == {str(k): v for k, v in original.items()}

    assert fault.stop(cluster) == {"mode": "remove-node", "nodes": ["n3"], "voters": [1, 2, 3]}
    assert voters(cluster) == {**original, 3: new_disk}
    assert membership_undo.read_trace(cluster) == {"removed": [], "assignment": {}, "voters": {}}
    verify_healed(cluster)
