"""Finding the nodes that hold a role right now: the active KRaft controller and the
leader of a partition under test.

The controller comes from the KRaft quorum state each voter persists
(`<log.dirs>/__cluster_metadata-0/quorum-state`: leaderId and leaderEpoch); the newest epoch
among the nodes that answer names the active controller. The Admin API's
describe_cluster is no help here: a KRaft broker answers it with a random live
broker as "controller", since clients never talk to controllers. Partition leaders
come from ordinary topic metadata. Broker ids are mapped to node names through the
broker's advertised host.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from confluent_kafka.admin import AdminClient

from common.client_logging import librdkafka_logging
from clusters.db import Membership, require
from clusters.kafka.quorum import quorum_state

ADMIN_TIMEOUT_S = 10


class RoleError(RuntimeError):
    """No node could be found holding the role."""


class RoleResolver:
    def __init__(self, cluster, topics: list[str] | None = None) -> None:
        self.cluster = cluster
        self.topics = list(topics or [])

    def resolve(self, role: str) -> list[str]:
        if role == "controller":
            return [self.controller()]
        if role == "leader":
            return [self.leader()]
        raise RoleError(f"unknown role {role!r} (valid: controller, leader)")

    # -- the active controller ----------------------------------------------------------
    def controller(self) -> str:
        require(self.cluster.db, Membership, "the controller role")  # it reads the KRaft log dir
        nodes = self.cluster.inventory.node_names
        with ThreadPoolExecutor(max_workers=len(nodes)) as pool:
            read = dict(zip(nodes, pool.map(self._quorum_state, nodes)))
        states = {node: state for node, state in read.items() if state is not None}
        elected = [s for s in states.values() if s.get("leaderId", -1) >= 0]
        if not elected:
            raise RoleError("no node knows an active KRaft controller "
                            f"(quorum states read: {states or 'none'})")
        newest = max(elected, key=lambda s: s.get("leaderEpoch", -1))
        return self._node_for_broker_id(newest["leaderId"])

    def _quorum_state(self, node: str) -> dict | None:
        return quorum_state(self.cluster.ssh[node], self.cluster.db.data_dir(node))

    # -- partition leaders ----------------------------------------------------------------
    def leader(self) -> str:
        metadata = self._admin().list_topics(timeout=ADMIN_TIMEOUT_S)
        topics = self.topics or sorted(t for t in metadata.topics if not t.startswith("__"))
        for topic in topics:
            info = metadata.topics.get(topic)
            if info is None or info.error is not None or not info.partitions:
                continue
            leader = info.partitions[min(info.partitions)].leader
            if leader >= 0:
                return self._node_for_broker_id(leader, metadata)
        raise RoleError(f"no partition leader found for topics {topics or '(none exist)'}")

    # -- broker ids -> node names -------------------------------------------------------
    def _admin(self) -> AdminClient:
        return AdminClient({"bootstrap.servers": self.cluster.db.bootstrap_servers(),
                            "socket.timeout.ms": ADMIN_TIMEOUT_S * 1000, **librdkafka_logging()})

    def _node_for_broker_id(self, broker_id: int, metadata=None) -> str:
        node_id = getattr(self.cluster.db, "node_id", None)  # KafkaDB: node name -> node.id
        if node_id is not None:
            for node in self.cluster.inventory.node_names:
                if node_id(node) == broker_id:
                    return node
        metadata = metadata or self._admin().list_topics(timeout=ADMIN_TIMEOUT_S)
        broker = metadata.brokers.get(broker_id)
        if broker is None:
            raise RoleError(f"broker id {broker_id} is not in the cluster metadata")
        for node in self.cluster.inventory.nodes:
            if node.host == broker.host:
                return node.name
        raise RoleError(f"broker {broker_id} advertises host {broker.host}, which is no "
                        "inventory node's host")
