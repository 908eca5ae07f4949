"""Heal: undo every fault on every node, from what the nodes themselves show, and prove
it is undone. `logtrial cluster heal`, NemesisRunner.heal_all and the tests' healed
cluster all come here, so a heal never depends on the process that struck still
being alive.

Each fault kind that leaves traces declares how to find and undo them
(nemesis/fault.py): on each node first (partition: its iptables chain; packet: its chains, holder and qdiscs; pause: a
stopped broker; clock: the offset and the strobe loop), then the database's own part
(Cluster.revive: ZooKeeper, wiped log dirs, dead and stuck brokers), then the traces
that need every broker serving (membership: removed brokers, moved partitions,
controller voters). kill leaves nothing but a dead broker, which revive restarts;
producer-state's overrides are known only to its fault object (Fault.heal).
"""
from __future__ import annotations

from clusters.cluster import Cluster
from nemesis import client_delay, clock, membership_undo, packet_traces, partition, pause
from nemesis.fault import ClusterTraces, NodeTraces

NODE_TRACES: tuple[NodeTraces, ...] = (partition.TRACES, packet_traces.TRACES,
                                        client_delay.TRACES, pause.TRACES, clock.TRACES)
CLUSTER_TRACES: tuple[ClusterTraces, ...] = (membership_undo.TRACES,)


class ClusterNotHealed(RuntimeError):
    """verify_healed found faults still in place: {node: [problems]}."""

    def __init__(self, problems: dict[str, list[str]]) -> None:
        self.problems = problems
        lines = [f"node {node}: {'; '.join(items)}" for node, items in sorted(problems.items())]
        super().__init__("cluster not healed:\n  " + "\n  ".join(lines))


def heal(cluster: Cluster) -> list[str]:
    """Undoes every fault on every node. Idempotent. Returns what it did, one line per
    action ("n1: resumed paused broker", ...)."""
    undone = cluster.ssh.run_on(cluster.nodes, lambda session: [
        action for traces in NODE_TRACES for action in traces.undo(cluster, session)])
    actions = [action for node in cluster.nodes for action in undone[node]]
    actions += cluster.revive()
    for traces in CLUSTER_TRACES:  # with every broker back
        actions += traces.undo(cluster)
    return actions


def verify_healed(cluster: Cluster) -> None:
    """Raises ClusterNotHealed naming each node and what is still wrong with it."""
    found = cluster.problems_per_node(lambda session: [
        problem for traces in NODE_TRACES for problem in traces.left(cluster, session)])
    for more in (cluster.database_problems(), *(traces.left(cluster) for traces in CLUSTER_TRACES)):
        for node, items in more.items():
            # an unreachable node is said once, however many checks found it so
            found[node] = list(dict.fromkeys(found.get(node, []) + items))
    problems = {node: items for node, items in found.items() if items}
    if problems:
        raise ClusterNotHealed(problems)
