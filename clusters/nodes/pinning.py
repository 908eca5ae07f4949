"""Clients pinned to nodes: one client network namespace per node of a local
cluster, on the cluster's bridge, whose firewall lets it reach that node only.

A worker thread enters a client namespace with setns(2) before it makes its
Kafka clients. The network namespace belongs to a thread, not the process,
and a new thread starts in its creator's, so librdkafka's own threads (made by
the client's constructor, and the broker threads its main thread makes later)
open every socket in that namespace: the client's metadata, produce and fetch
requests go to its node and nowhere else. Connections to other nodes are
refused at once (TCP reset), so a client never waits on a silent drop to
learn it cannot go there. What Kafka clients do when pinned is in
docs/pinned-clients.md.
"""
from __future__ import annotations

import ctypes
import ipaddress
import os
from dataclasses import dataclass

import yaml

from clusters.nodes.local import FIRST_NODE_HOST, LocalCluster, LocalClusterError, run

CLONE_NEWNET = 0x40000000
# clients of node i get .21+i beside the nodes' .11+i (a cluster has at most 9 nodes)
FIRST_CLIENT_HOST = FIRST_NODE_HOST + 10
IPTABLES = ["iptables", "-w", "10"]
_libc = ctypes.CDLL(None, use_errno=True)


class PinningError(ValueError):
    """The cluster cannot have pinned clients (bad input: exit code 3)."""


@dataclass(frozen=True)
class ClientNamespace:
    node: str       # the one node its clients may reach
    netns: str
    ip: str         # the clients' source address
    node_ip: str


def firewall_rules(node_ip: str) -> list[list[str]]:
    """OUTPUT rules of a client namespace: loopback and its node, nothing else."""
    return [["-o", "lo", "-j", "ACCEPT"],
            ["-d", node_ip, "-j", "ACCEPT"],
            ["-p", "tcp", "-j", "REJECT", "--reject-with", "tcp-reset"],
            ["-j", "REJECT", "--reject-with", "icmp-net-prohibited"]]


def create(local: LocalCluster, nodes: list[str] | None = None) -> list[ClientNamespace]:
    """One client namespace per node of the local cluster (or of `nodes`: a tansu
    cluster's brokers, not its storage node), made afresh."""
    if not local.exists():
        raise PinningError(f"--pin-clients needs a local cluster; {local.name} does not exist "
                           f"(no {local.state_path})")
    state = yaml.safe_load(local.state_path.read_text())
    net = ipaddress.ip_network(state["subnet"])
    if FIRST_CLIENT_HOST + len(state["nodes"]) >= net.num_addresses - 1:
        raise PinningError(f"cluster {local.name}'s subnet {net} has no room for client addresses "
                           f"(.{FIRST_CLIENT_HOST} on): bring it up with a /27 or larger")
    remove(local)
    made = []
    try:
        for i, (node, node_ip) in enumerate(state["nodes"].items()):
            if nodes is not None and node not in nodes:
                continue
            made.append(ClientNamespace(node, local.client_netns(node),
                                        str(net[FIRST_CLIENT_HOST + i]), node_ip))
            _make(local, made[-1], net.prefixlen)
    except BaseException:
        remove(local)
        raise
    return made


def _make(local: LocalCluster, ns: ClientNamespace, prefixlen: int) -> None:
    local.attach_namespace(ns.netns, local.client_veth(ns.node), ns.ip, prefixlen)
    for rule in firewall_rules(ns.node_ip):
        run(["ip", "netns", "exec", ns.netns] + IPTABLES + ["-A", "OUTPUT"] + rule)


def remove(local: LocalCluster) -> list[str]:
    """Deletes the cluster's client namespaces and their veths."""
    return local.delete_client_namespaces()


def enter(netns: str) -> None:
    """Moves the calling thread (only it) into `netns`; threads it starts later follow."""
    fd = os.open(f"/run/netns/{netns}", os.O_RDONLY)
    try:
        if _libc.setns(fd, CLONE_NEWNET) != 0:
            raise PinningError(f"setns into {netns}: {os.strerror(ctypes.get_errno())}")
    finally:
        os.close(fd)


class ClientPins:
    """A run's processes pinned to nodes round-robin (process p to node p mod n)."""

    def __init__(self, local: LocalCluster, nodes: list[str] | None = None) -> None:
        self.local = local
        self.spaces = create(local, nodes)
        self.pinned: dict[int, str] = {}  # process -> node, for the processes that entered

    def enter(self, process: int) -> None:
        """Moves the calling thread to the namespace of the process's node."""
        space = self.spaces[process % len(self.spaces)]
        enter(space.netns)
        self.pinned[process] = space.node

    def node_field(self, process: int) -> dict[str, str]:
        """The history's optional `node` field; none for unpinned processes (final reads)."""
        node = self.pinned.get(process)
        return {"node": node} if node else {}

    def addresses(self) -> dict[str, str]:
        return {ns.node: ns.ip for ns in self.spaces}

    def remove(self) -> None:
        remove(self.local)


def local_cluster_of(inventory_path: str) -> LocalCluster:
    """The local cluster whose inventory this is: pinning needs its bridge."""
    from clusters.nodes.inventory import load_inventory
    name = load_inventory(inventory_path).name
    try:
        local = LocalCluster(name)
    except LocalClusterError:
        local = None
    if local is None or not local.exists() or \
            os.path.realpath(local.inventory_path) != os.path.realpath(inventory_path):
        raise PinningError(f"--pin-clients needs a local cluster (logtrial cluster up): {inventory_path} "
                           "is not the inventory of one; real machines have no client namespaces")
    return local
