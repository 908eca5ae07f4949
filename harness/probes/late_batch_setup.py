"""The late-batch round's stage, the same for both clients: a fresh topic whose leader
is not the coordinator of the round's transactional id, and the hold on that leader."""
from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from typing import NamedTuple

from confluent_kafka.admin import AdminClient, NewTopic

from clusters.cluster import Cluster
from harness.probes.coordinator import coordinated_id
from harness.probes.late_batch_timing import HOLD_FACTOR, OP_TIMEOUT
from nemesis.client_delay import ClientDelayFault

NOT_TRIED = "not tried"


@dataclass
class RoundSetup:
    """A round's fresh topic, its partition's leader, and a transactional id whose
    coordinator is another broker (so the hold on the leader spares EndTxn)."""
    bootstrap: str
    topic: str
    leader: str
    txn_id: str


class Steps(NamedTuple):
    """What a client's steps saw: the hold, B's delivery report ({} if B was not
    sent), how B's commit ended, and a line of what each step saw."""
    held: dict
    b: dict
    commit: str
    seen: str


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
    # librdkafka refuses a replica assignment beside the default partition count (-1)
    admin.create_topics([NewTopic(topic, num_partitions=1, replica_assignment=[replicas],
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
    """client-delay on the round's leader: the fault (to stop) and what its start reported."""
    fault = ClientDelayFault(lambda role: [setup.leader], OP_TIMEOUT)
    return fault, fault.start(cluster, {"target": "leader", "nodes": [setup.leader],
                                        "hold_factor": HOLD_FACTOR})
