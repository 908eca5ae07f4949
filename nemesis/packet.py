"""packet: delay, lose, duplicate, reorder, corrupt or throttle the traffic between DB
nodes (Jepsen 0.3's packet nemesis), on chosen nodes or on chosen links.

A start strikes a set of directed links (sender -> receiver). Node targets (the count
targets and roles of --db-targets) strike every link to and from the struck nodes; a
`links` target strikes a drawn set of links. Only traffic between DB nodes is touched:
the control node (clients, SSH) keeps its plain path, so the nemesis can always heal.
How each node does it (netem, or iptables + htb + the NFQUEUE holder where the kernel
has no netem) is nemesis/packet_mechanisms.py; the value records it per node.
"""
from __future__ import annotations

import random
from typing import Callable, Sequence

from nemesis import packet_behaviour as behaviours
from nemesis import packet_detect, packet_traces
from nemesis import packet_mechanisms as mechanisms
from nemesis.fault import ProcessFault, strike, with_errors
from nemesis.kind import START, STOP, FaultKind

START_F, STOP_F = "start-packet", "stop-packet"
LINKS = "links"


def links_touching(nodes: Sequence[str], everyone: Sequence[str]) -> list[list[str]]:
    """Every directed link to or from one of `nodes`."""
    struck = set(nodes)
    return [[a, b] for a in sorted(everyone) for b in sorted(everyone)
            if a != b and (a in struck or b in struck)]


def draw_links(nodes: Sequence[str], rng: random.Random) -> list[list[str]]:
    """One or more directed links, at least one and at most half of them."""
    every = [[a, b] for a in sorted(nodes) for b in sorted(nodes) if a != b]
    if not every:
        return []
    return sorted(rng.sample(every, rng.randint(1, max(1, len(every) // 2))))


class PacketFault(ProcessFault):
    name = "packet"
    stop_f = STOP_F

    def __init__(self, resolve_role: Callable[[str], list[str]]) -> None:
        super().__init__(resolve_role)
        self.detected: dict[str, dict] = {}  # node -> what it has (the kernel won't change)

    def start_f(self, params: dict) -> str:
        return START_F

    def plan(self, nodes: Sequence[str], target_specs: Sequence[str],
             rng: random.Random) -> dict:
        if rng.random() < 0.5:
            targets = {"target": LINKS, "links": draw_links(nodes, rng)}
        else:
            targets = self.plan_targets(nodes, target_specs, rng)
        return {**targets, "behaviour": behaviours.plan_behaviour(rng)}

    def targets_for(self, cluster, params: dict) -> dict:
        """{"links": [...]}, plus the struck "nodes" for a node target (roles resolved)."""
        if params["target"] == LINKS:
            return {"links": [list(link) for link in params["links"]]}
        nodes = self.nodes_for(params)
        return {"nodes": nodes, "links": links_touching(nodes, cluster.nodes)}

    def start(self, cluster, params: dict) -> dict:
        try:
            targets = self.targets_for(cluster, params)
        except Exception as e:  # noqa: BLE001 - a role nobody holds: report it, go on
            return {**params, "links": [], "errors": {"*": f"{type(e).__name__}: {e}"}}
        used, errors = self._strike_links(cluster, targets["links"], params["behaviour"])
        return with_errors({**params, **targets, "mechanisms": used}, errors)

    def _strike_links(self, cluster, links: list[list[str]], behaviour: dict
                      ) -> tuple[dict[str, dict], dict[str, str]]:
        """({node: what it has and used}, {node: error}) for the nodes of `links`."""
        involved = sorted({n for link in links for n in link})
        self.struck = sorted(set(self.struck) | set(involved))
        errors = strike(involved, lambda node: self._prepare(cluster, node))
        used: dict[str, list[str]] = {n: [] for n in involved if n not in errors}
        errors |= strike(list(used), lambda node: used[node].extend(
            self._apply(cluster, node, links, behaviour)))
        return {n: {**self.detected[n], "used": used.get(n, [])} for n in involved
                if n in self.detected}, errors

    def _prepare(self, cluster, node: str) -> None:
        """Clears what an earlier strike may have left, and learns what the node has."""
        session = cluster.ssh[node]
        packet_traces.undo_traces(cluster, session)
        if node not in self.detected:
            self.detected[node] = packet_detect.detect(session)

    def _apply(self, cluster, node: str, links: list[list[str]], behaviour: dict) -> list[str]:
        session, host = cluster.ssh[node], cluster.inventory.node
        used = []
        to = [host(b).host for a, b in links if a == node]
        if to:
            used += mechanisms.shape_egress(session, to, behaviour, self.detected[node])
        # fallback loss happens where the packet arrives: at this node, from fallback senders
        lossy_from = [host(a).host for a, b in links if b == node
                      and a in self.detected and self.detected[a]["path"] == "fallback"]
        if behaviour.get("loss_pct") and lossy_from:
            used += mechanisms.drop_ingress(session, lossy_from, behaviour["loss_pct"])
        return used

    def stop(self, cluster) -> dict:
        return self.stop_on_struck(lambda node: packet_traces.undo_traces(cluster,
                                                                          cluster.ssh[node]))


KIND = FaultKind(
    name="packet", summary="delay, lose, duplicate or reorder packets on links between nodes",
    make=lambda context: PacketFault(context.resolve_role),
    history_f={START_F: START, STOP_F: STOP}, params=("target", "behaviour"),
    # TCP retransmits what is lost or corrupted, and a follower holds only what it fetched
    # and checked (CRC): a bad link slows replication, it deletes nothing
    loses_data={START_F: None},
    node_traces=packet_traces.TRACES,
    by_name_only="it slows replication for whole intervals, so `all` runs stay as they were")
