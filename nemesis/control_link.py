"""control-link: cut the control node's own SSH link to some nodes, and restore it. The
cluster's traffic and the clients' are untouched: only the path the nemesis, the heal
and the log collection take.

The rules live on the control node (this machine), not on the nodes: they are what
cannot be reached. One chain per cluster, jumped to from the top of OUTPUT, drops TCP to
each cut node's SSH port. DROP, not REJECT: a lost link is silence, so every SSH call
to the node must end on its own timeout (clusters/nodes/ssh.py bounds each one), and the
operations that needed it are recorded `info` with the error, never hang. A heal
removes the chain before anything else, since everything after it needs SSH."""
from __future__ import annotations

import hashlib
import re
import subprocess

from clusters.cluster import Cluster
from clusters.nodes.inventory import Inventory
from nemesis import iptables_chain as chains
from nemesis.fault import ClusterTraces, ProcessFault
from nemesis.kind import START, STOP, FaultKind

CUT_F, RESTORE_F = "cut-control-link", "restore-control-link"


class ControlLinkError(RuntimeError):
    """An iptables command on the control node failed (not root? no iptables?)."""


def chain_for(inventory: Inventory, role: str = "NEMESIS") -> str:
    """The cluster's chain on this machine (iptables allows 28 characters): several
    clusters on one control node each have their own."""
    digest = hashlib.sha1(f"{inventory.name}/{role}".encode()).hexdigest()[:10]
    return f"LT-CTL-{digest}"


def cut(inventory: Inventory, node: str, chain: str | None = None) -> None:
    """Drops this machine's packets to the node's SSH port (added to the chain)."""
    chain = chain or chain_for(inventory)
    rule = _rule(inventory, node)
    _local(f"({chains.IPTABLES} -N {chain} 2>/dev/null || true) && "
           f"({chains.IPTABLES} -C OUTPUT -j {chain} 2>/dev/null || {chains.IPTABLES} -I OUTPUT 1 -j {chain}) && "
           f"({chains.IPTABLES} -C {chain} {rule} 2>/dev/null || {chains.IPTABLES} -A {chain} {rule})")


def restore(inventory: Inventory, chain: str | None = None) -> list[str]:
    """Removes the chain; the nodes whose link it had cut. Needs no SSH, so a heal can
    run it before it connects to the nodes (`cluster heal` after a killed run)."""
    chain = chain or chain_for(inventory)
    nodes = cut_nodes(inventory, chain)
    _local(chains.remove_script("OUTPUT", chain))
    return nodes


def cut_nodes(inventory: Inventory, chain: str | None = None) -> list[str]:
    """The nodes whose SSH link the chain cuts now."""
    listed = _local(chains.listing_script(chain or chain_for(inventory)))
    hosts = set(re.findall(r"-d (\S+?)(?:/32)? ", listed))
    return [n.name for n in inventory.nodes if n.host in hosts]


def _rule(inventory: Inventory, node: str) -> str:
    found = inventory.node(node)
    return f"-p tcp -d {found.host} --dport {found.port} -j DROP"


def _local(script: str) -> str:
    done = subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise ControlLinkError(f"on the control node: {script!r} exited {done.returncode}: "
                               f"{done.stderr.strip()[-400:]}")
    return done.stdout


class ControlLinkFault(ProcessFault):
    name = "control-link"
    stop_f = RESTORE_F

    def start_f(self, params: dict) -> str:
        return CUT_F

    def start(self, cluster, params: dict) -> dict:
        return self.start_on_nodes(cluster, params, lambda node: cut(cluster.inventory, node))

    def stop(self, cluster) -> dict:
        nodes, self.struck = self.struck, []
        restore(cluster.inventory)
        return {"nodes": nodes}


def undo_traces(cluster: Cluster) -> list[str]:
    return undo_link_traces(cluster.inventory)


def undo_link_traces(inventory: Inventory) -> list[str]:
    return [f"{node}: restored the control node's SSH link" for node in restore(inventory)]


def traces_left(cluster: Cluster) -> dict[str, list[str]]:
    return {node: [f"control node's SSH link cut (iptables chain {chain_for(cluster.inventory)} here)"]
            for node in cut_nodes(cluster.inventory)}


TRACES = ClusterTraces(undo=undo_traces, left=traces_left)


KIND = FaultKind(
    name="control-link", summary="cut the control node's SSH link to the targets, restore it later",
    make=lambda context: ControlLinkFault(context.resolve_role),
    history_f={CUT_F: START, RESTORE_F: STOP}, params=("target", "nodes"), control_traces=TRACES,
    # only the control node's SSH to the nodes is cut: the cluster's and the clients' traffic
    # is untouched
    loses_data={CUT_F: None},
    by_name_only="it tests the harness, not Kafka")
