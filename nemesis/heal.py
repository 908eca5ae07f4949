"""Heal: undo every fault on every node, from what the nodes themselves show, and prove
it is undone. `logtrial cluster heal`, NemesisRunner.heal_all and the tests' healed
cluster all come here, so a heal never depends on the process that struck still
being alive.

Each fault kind that leaves traces declares how to find and undo them
(its FaultKind, nemesis/kind.py): on the control node first (control-link: its iptables chain, since
everything after needs SSH), then on each node (partition: its iptables chain; packet:
its chains, holder and qdiscs; pause: a stopped broker; clock: the offset, the strobe
loop and a broker that ran skewed), then the database's own part (Cluster.revive:
ZooKeeper, wiped log dirs, dead and stuck brokers, each start retried within the
bound), then the traces that need every broker serving (membership: removed brokers,
moved partitions, controller voters). kill leaves nothing but a dead broker, which
revive restarts; producer-state's overrides are known only to its fault object
(Fault.heal, given this module's heal to bring brokers back first). heal_until_healed repeats heal and verify until healed or its bound.
"""
from __future__ import annotations

import logging
import time
from pathlib import Path

from clusters.cluster import HEAL_BOUND, Cluster
from clusters.nodes.lock import heal_lock
from clusters.db import DatabaseError
from clusters.nodes.inventory import Inventory, load_inventory
from clusters.restarts import NodesNotRevived
from clusters.nodes.ssh import SSHError
from nemesis import control_link
from nemesis.fault import ClusterTraces, NodeTraces
from nemesis.registry import KINDS

# each node's traces, the network's first (NodeTraces.network)
NODE_TRACES: tuple[NodeTraces, ...] = tuple(sorted(
    (kind.node_traces for kind in KINDS if kind.node_traces), key=lambda traces: not traces.network))
CLUSTER_TRACES: tuple[ClusterTraces, ...] = tuple(kind.cluster_traces for kind in KINDS if kind.cluster_traces)
# on the control node itself, undone first: everything after needs SSH
CONTROL_TRACES: tuple[ClusterTraces, ...] = tuple(kind.control_traces for kind in KINDS if kind.control_traces)
# heal_until_healed's wait between two rounds: doubled each time, up to the max
ROUND_BACKOFF_FIRST_S, ROUND_BACKOFF_MAX_S = 2.0, 20.0

log = logging.getLogger(__name__)


class ClusterNotHealed(RuntimeError):
    """verify_healed found faults still in place: {node: [problems]}; `actions`: what
    the heal did before it gave up (heal_until_healed), `after`: how long it tried."""

    def __init__(self, problems: dict[str, list[str]], actions: list[str] | None = None,
                 after: float | None = None) -> None:
        self.problems, self.actions = problems, list(actions or [])
        lines = [f"node {node}: {'; '.join(items)}" for node, items in sorted(problems.items())]
        when = f" after {after:.0f} s" if after is not None else ""
        super().__init__(f"cluster not healed{when}:\n  " + "\n  ".join(lines))


def heal_control_node(inventory: Inventory) -> list[str]:
    """What a heal undoes on this machine, before it can reach any node: a run killed
    while the control-link fault had cut a node's SSH link leaves the cut in place, and
    connecting to the cluster would fail on it."""
    return control_link.undo_link_traces(inventory)


def heal_inventory(inventory_path: str | Path, insecure_host_keys: bool = False,
                   bound: float = HEAL_BOUND) -> list[str]:
    """The heal every caller outside a run uses (`cluster heal`, the watchdog, `test-all
    --resume`): the control node's cuts first, then the cluster opened and healed until
    healed or `bound`. One heal of a cluster at a time on this machine. Raises
    ClusterNotHealed, SSHError, DatabaseError, or InventoryError for a bad inventory."""
    with heal_lock(inventory_path):
        actions = heal_control_node(load_inventory(Path(inventory_path)))
        with Cluster.open(inventory_path, insecure_host_keys, start=False) as cluster:
            return actions + heal_until_healed(cluster, bound)


def heal(cluster: Cluster, deadline: float | None = None) -> list[str]:
    """Undoes every fault on every node, once; a broker that does not start is retried
    until `deadline` (time.monotonic(), default HEAL_BOUND from now; Cluster.revive).
    Idempotent. Returns what it did, one line per action ("n1: resumed paused broker", ...)."""
    actions = [action for traces in CONTROL_TRACES for action in traces.undo(cluster)]
    undone = cluster.ssh.run_on(cluster.nodes, lambda session: [
        action for traces in NODE_TRACES for action in traces.undo(cluster, session)])
    actions += [action for node in cluster.nodes for action in undone[node]]
    actions += cluster.revive(deadline)
    for traces in CLUSTER_TRACES:  # with every broker back
        actions += traces.undo(cluster)
    return actions


def heal_until_healed(cluster: Cluster, bound: float = HEAL_BOUND) -> list[str]:
    """Heals and verifies, again and again with backoff, until the cluster is healed or
    `bound` seconds have passed; then raises ClusterNotHealed saying per node what is
    left and why. A command still running on a node when the heal began (a partition
    sent just before a run died) or a broker fenced again while the box is busy is
    undone by the next round. Returns every action of every round."""
    started = time.monotonic()
    deadline, actions, backoff = started + bound, [], ROUND_BACKOFF_FIRST_S
    while True:
        try:
            actions += heal(cluster, deadline)
            verify_healed(cluster)
            return actions
        except NodesNotRevived as e:
            actions += e.actions
            problems = {node: [why] for node, why in e.left.items()}
        except ClusterNotHealed as e:
            problems = e.problems
        except (SSHError, DatabaseError) as e:  # a node that cannot be reached, a tool that failed
            node = getattr(e, "node", "?")
            problems = {node: [str(e).removeprefix(f"node {node}: ")]}
        if time.monotonic() >= deadline:
            raise ClusterNotHealed(problems, actions, time.monotonic() - started)
        log.warning("heal not finished (%s); healing again", "; ".join(
            f"{node}: {', '.join(items)}" for node, items in sorted(problems.items())))
        time.sleep(max(0.0, min(backoff, deadline - time.monotonic())))
        backoff = min(2 * backoff, ROUND_BACKOFF_MAX_S)


def verify_healed(cluster: Cluster) -> None:
    """Raises ClusterNotHealed naming each node and what is still wrong with it."""
    found = cluster.problems_per_node(lambda session: [
        problem for traces in NODE_TRACES for problem in traces.left(cluster, session)])
    for more in (cluster.database_problems(),
                 *(traces.left(cluster) for traces in (*CONTROL_TRACES, *CLUSTER_TRACES))):
        for node, items in more.items():
            # an unreachable node is said once, however many checks found it so
            found[node] = list(dict.fromkeys(found.get(node, []) + items))
    problems = {node: items for node, items in found.items() if items}
    if problems:
        raise ClusterNotHealed(problems)
