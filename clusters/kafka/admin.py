"""Kafka admin operations: creating topics, and those behind the membership fault
(nemesis/membership.py) and its heal: unregistering a broker, reassigning partitions, preferred-leader elections, the
replica and ISR picture of the topics, the finalized kraft.version and the controller
quorum's voters (describe, remove-controller, add-controller).

What the Python client cannot do (unregister, reassign, describe features) is done by
Kafka's own tools, run on a node over SSH with the release's jars, so it works the
same on real machines. Partitions are named "topic/partition" (JSON-friendly; a topic
name cannot hold a '/').
"""
from __future__ import annotations

import json
import re
import shlex
import time
from dataclasses import dataclass
from typing import Iterable

from confluent_kafka import KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from confluent_kafka._model import ElectionType

from clusters.db import DatabaseError
from common.client_logging import QUIET_CLIENT_LOGGER

ADMIN_TIMEOUT_S = 10
TOOL_TIMEOUT_S = 120
# one describe of the quorum: the admin client's default (60 s) would use up the
# whole wait of a caller that asks again (quorum_status_answered) on one attempt
DESCRIBE_TIMEOUT_MS = 15_000


@dataclass(frozen=True)
class PartitionState:
    leader: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]

    @property
    def complete(self) -> bool:
        """Every assigned replica is in sync (and no reassignment adds or drops one)."""
        return bool(self.replicas) and set(self.isr) == set(self.replicas)


def partition_key(topic: str, partition: int) -> str:
    return f"{topic}/{partition}"


def split_key(key: str) -> tuple[str, int]:
    topic, _, partition = key.rpartition("/")
    if not topic or not partition.isdigit():
        raise ValueError(f"partition {key!r}: expected 'topic/partition'")
    return topic, int(partition)


def admin_client(cluster) -> AdminClient:
    return AdminClient({"bootstrap.servers": cluster.db.bootstrap_servers(),
                        "socket.timeout.ms": ADMIN_TIMEOUT_S * 1000, "logger": QUIET_CLIENT_LOGGER})


def create_topic(cluster, name: str, partitions: int = 1, replication_factor: int | None = None,
                 min_insync_replicas: int = 2, config: dict | None = None, timeout: float = 60) -> None:
    """Creates a topic with min.insync.replicas set on the topic itself, so
    acks=all writes need two replicas and Kafka 4.1's eligible leader replicas
    (ELR) can elect safely. An existing topic is an error."""
    rf = replication_factor or min(3, len(cluster.inventory.nodes))
    topic_config = {"min.insync.replicas": str(min_insync_replicas), **(config or {})}
    admin = AdminClient({"bootstrap.servers": cluster.db.bootstrap_servers(), "logger": QUIET_CLIENT_LOGGER})
    future = admin.create_topics([NewTopic(name, partitions, rf, config=topic_config)],
                                 operation_timeout=timeout, request_timeout=timeout)[name]
    try:
        future.result(timeout=timeout)
    except Exception as e:  # noqa: BLE001 - KafkaException carries the broker's reason
        raise DatabaseError("-", f"creating topic {name!r} ({partitions} partitions, "
                            f"RF {rf}) failed: {e}") from None
    _await_topic_leaders(admin, name, partitions, deadline=time.monotonic() + timeout)


def _await_topic_leaders(admin: AdminClient, name: str, partitions: int, deadline: float) -> None:
    while time.monotonic() < deadline:
        topic = admin.list_topics(topic=name, timeout=5).topics.get(name)
        if topic and len(topic.partitions) == partitions and \
                all(p.leader >= 0 for p in topic.partitions.values()):
            return
        time.sleep(0.2)
    raise DatabaseError("-", f"topic {name!r} has partitions without a leader")


def partition_states(cluster, topics: Iterable[str] | None = None) -> dict[str, PartitionState]:
    """"topic/partition" -> leader, replicas, ISR, for the given topics (default: every
    topic, internal ones included). A topic that does not exist is left out."""
    metadata = admin_client(cluster).list_topics(timeout=ADMIN_TIMEOUT_S)
    wanted = set(metadata.topics) if topics is None else set(topics)
    return {partition_key(name, p.id): PartitionState(p.leader, tuple(p.replicas), tuple(p.isrs))
            for name, topic in metadata.topics.items() if name in wanted and topic.error is None
            for p in topic.partitions.values()}


def wait_replicated(cluster, timeout: float, assignment: dict[str, list[int]] | None = None) -> list[str]:
    """Waits until every partition of every topic (or, given an assignment, each partition
    named there, on exactly those replicas: a reassignment in flight lists old and new
    ones) has its whole replica set in sync. Returns those still not there at the
    timeout, each with its replicas and ISR."""
    topics = None if assignment is None else {split_key(k)[0] for k in assignment}
    deadline = time.monotonic() + timeout
    while True:
        try:
            lagging = _not_in_place(partition_states(cluster, topics), assignment)
        except KafkaException as e:  # no broker answers yet
            lagging = [f"metadata unavailable: {e}"]
        if not lagging or time.monotonic() > deadline:
            return lagging
        time.sleep(1)


def _not_in_place(states: dict[str, PartitionState], assignment: dict[str, list[int]] | None) -> list[str]:
    keys = sorted(states) if assignment is None else sorted(k for k in assignment if k in states)
    return [f"{key} replicas {list(states[key].replicas)} ISR {list(states[key].isr)}" for key in keys
            if not states[key].complete
            or (assignment is not None and list(states[key].replicas) != list(assignment[key]))]


def _tool(cluster, tool: str) -> str:
    """The tool's main class in the cluster's release (3.x moved them into kafka-tools)."""
    return cluster.db.release.tool_class(tool)


def run_tool(cluster, node: str, main_and_args: str, what: str) -> str:
    """Runs a Kafka tool on the node; its stdout, or DatabaseError naming what failed and
    the tool's last words."""
    result = cluster.ssh[node].exec(cluster.db.tool_command(node, main_and_args),
                                    timeout=TOOL_TIMEOUT_S, check=False)
    if result.exit_code != 0:
        output = (result.stdout + result.stderr).strip()[-600:]
        raise DatabaseError(node, f"{what} failed (exit {result.exit_code}): {output}")
    return result.stdout


def _bootstrap(cluster) -> str:
    return shlex.quote(cluster.db.bootstrap_servers())


def unregister_broker(cluster, via: str, broker_id: int) -> None:
    """Removes a (stopped) broker's registration from the cluster metadata
    (`kafka-cluster.sh unregister`)."""
    run_tool(cluster, via, f"{_tool(cluster, 'cluster')} unregister --bootstrap-server {_bootstrap(cluster)} "
             f"--id {broker_id}", f"unregistering broker {broker_id}")


def reassign(cluster, via: str, assignment: dict[str, list[int]]) -> None:
    """Starts moving each partition to its new replica list (`kafka-reassign-partitions
    --execute`); the first replica is the preferred leader. Returns once the controller
    accepted it: wait_replicated says when it is done."""
    plan = {"version": 1, "partitions": [
        {"topic": topic, "partition": partition, "replicas": list(replicas)}
        for topic, partition, replicas in ((*split_key(k), r) for k, r in sorted(assignment.items()))]}
    path = f"{cluster.inventory.node(via).home}/membership-reassignment.json"
    cluster.ssh[via].write_file(path, json.dumps(plan))
    run_tool(cluster, via, f"{_tool(cluster, 'reassign')} --bootstrap-server {_bootstrap(cluster)} "
             f"--reassignment-json-file {shlex.quote(path)} --execute",
             f"reassigning {', '.join(sorted(assignment))}")


def elect_preferred(cluster, keys: Iterable[str]) -> dict[str, str]:
    """Moves each partition's leadership to its first replica; {partition: error} for the
    ones that could not (already being the leader is no error)."""
    partitions = [TopicPartition(*split_key(k)) for k in sorted(keys)]
    if not partitions:
        return {}
    try:
        # no request_timeout/operation_timeout: confluent-kafka 2.16 rejects both here
        # ("more argument specifiers than keyword list entries"); socket.timeout.ms bounds it
        admin = admin_client(cluster)  # held until the result: a dropped client cancels it
        results = admin.elect_leaders(ElectionType.PREFERRED, partitions).result(timeout=ADMIN_TIMEOUT_S * 2)
    except (KafkaException, TimeoutError) as e:
        return {partition_key(tp.topic, tp.partition): str(e) for tp in partitions}
    return {partition_key(tp.topic, tp.partition): str(error) for tp, error in results.items()
            if error is not None and error.code() != KafkaError.ELECTION_NOT_NEEDED}


def finalized_feature(cluster, via: str, feature: str) -> int:
    """A feature's finalized level; 0 when the cluster never finalized it (the tool omits
    it or says so)."""
    text = run_tool(cluster, via, f"{_tool(cluster, 'feature')} --bootstrap-server {_bootstrap(cluster)} describe",
                    "describing features")
    match = re.search(rf"Feature: {re.escape(feature)}\s.*?FinalizedVersionLevel: (\d+)", text)
    return int(match.group(1)) if match else 0


def kraft_version(cluster, via: str) -> int:
    """The cluster's finalized kraft.version: 0 for a static controller quorum
    (controller.quorum.voters), 1 once the quorum is dynamic (KIP-853)."""
    return finalized_feature(cluster, via, "kraft.version")


TRANSACTION_VERSION = "transaction.version"


def set_transaction_version(cluster, via: str, level: int) -> int:
    """Finalizes transaction.version (Kafka 4.0+, KIP-890: 2 bumps the producer epoch at
    every transaction's end and adds partitions implicitly) at `level`, upgrading or
    downgrading; the level the cluster then reports."""
    current = finalized_feature(cluster, via, TRANSACTION_VERSION)
    if current != level:
        verb = "upgrade" if level > current else "downgrade"
        run_tool(cluster, via, f"{_tool(cluster, 'feature')} --bootstrap-server {_bootstrap(cluster)} {verb} "
                 f"--feature {TRANSACTION_VERSION}={level}", f"setting {TRANSACTION_VERSION} to {level}")
    return finalized_feature(cluster, via, TRANSACTION_VERSION)


# -- the KRaft controller quorum (KIP-853) -------------------------------------------------
@dataclass(frozen=True)
class QuorumStatus:
    leader: int
    voters: dict[int, str]     # node id -> directory id
    observers: dict[int, str]


def _quorum_tool(cluster, via: str, args: str, what: str) -> str:
    return run_tool(cluster, via, f"{_tool(cluster, 'quorum')} --bootstrap-controller "
                    f"{shlex.quote(cluster.db.controller_servers())} {args}", what)


def _describe_quorum(cluster, via: str, args: str, what: str) -> str:
    """A `describe` of the quorum that gives up after DESCRIBE_TIMEOUT_MS."""
    config = f"{cluster.db.kafka_dir(via)}/describe-quorum.properties"
    cluster.ssh[via].write_file(config, f"default.api.timeout.ms={DESCRIBE_TIMEOUT_MS}\n"
                                        f"request.timeout.ms={DESCRIBE_TIMEOUT_MS // 3}\n")
    return _quorum_tool(cluster, via, f"--command-config {shlex.quote(config)} {args}", what)


def quorum_status(cluster, via: str) -> QuorumStatus:
    """The controller quorum as `kafka-metadata-quorum describe --status` reports it."""
    text = _describe_quorum(cluster, via, "describe --status", "describing the controller quorum")
    fields = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)

    def members(key: str) -> dict[int, str]:
        return {m["id"]: m.get("directoryId", "") for m in json.loads(fields.get(key, "[]"))}

    return QuorumStatus(int(fields["LeaderId"]), members("CurrentVoters"), members("CurrentObservers"))


def quorum_status_answered(cluster, via: str, deadline: float) -> QuorumStatus:
    """quorum_status, asked again until time.monotonic() passes `deadline`
    while it fails: right after the leader leaves the voters there is no
    leader to answer until the others elect one."""
    while True:
        try:
            return quorum_status(cluster, via)
        except DatabaseError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def quorum_caught_up(cluster, via: str, within_ms: int) -> dict[int, bool]:
    """{voter id: caught up with the leader within the last `within_ms`}, from
    `describe --replication` (timestamps are the leader's clock)."""
    text = _describe_quorum(cluster, via, "describe --replication", "describing quorum replication")
    rows = [line.split() for line in text.splitlines()[1:] if line.strip()]
    voters = {int(r[0]): int(r[5]) for r in rows if len(r) >= 7 and r[6] in ("Leader", "Follower")}
    newest = max(voters.values(), default=0)
    return {node_id: newest - caught_up <= within_ms for node_id, caught_up in voters.items()}


def remove_controller(cluster, via: str, node_id: int, directory_id: str) -> None:
    _quorum_tool(cluster, via, f"remove-controller --controller-id {node_id} "
                 f"--controller-directory-id {shlex.quote(directory_id)}",
                 f"removing controller {node_id} from the quorum")


def add_controller(cluster, node: str) -> None:
    """Adds the (running) node back as a voter: the tool reads its id, directory id and
    controller endpoint from the node's own config and log dir, so it runs there."""
    _quorum_tool(cluster, node, f"--command-config {shlex.quote(cluster.db.config_file(node))} add-controller",
                 f"adding controller {node} to the quorum")
