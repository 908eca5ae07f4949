"""partition: iptables rules inside each node (over SSH, so remote machines work the
same way) that drop traffic between groups of DB nodes.

All rules live in one dedicated chain, jumped to from the top of INPUT, so healing
removes exactly ours and nothing an operator put there. Dropping on INPUT at both
ends of a cut link is enough: TCP needs both directions.

The control node keeps reaching every node unless `--partition-clients`: then the
nodes on the far side of the partition (see Partition.clients_cut_from) drop
everything except loopback, the other DB nodes they still see, and SSH (the
nemesis must still reach them to heal).
"""
from __future__ import annotations

import random
import shlex
from typing import Sequence

from nemesis import iptables_chain as chains
from nemesis import shapes
from nemesis.fault import Fault, NodeTraces, strike, with_errors
from nemesis.kind import START, STOP, FaultKind

CHAIN = "LOGTRIAL-NEMESIS"


def rules_for(node: str, partition: shapes.Partition, hosts: dict[str, str],
              ssh_port: int, partition_clients: bool) -> list[str]:
    """The iptables rule specs (after `-A CHAIN`) for one node; empty if it is unaffected."""
    rules = [f"-s {hosts[peer]} -j DROP" for peer in partition.grudge.get(node, ())]
    if partition_clients and node in partition.clients_cut_from():
        rules += ["-i lo -j RETURN", f"-p tcp --dport {ssh_port} -j RETURN"]
        rules += [f"-s {hosts[peer]} -j RETURN" for peer in partition.sees(node) if peer != node]
        rules += ["-j DROP"]
    return rules


def apply_script(rules: Sequence[str]) -> str:
    """Shell that (re)creates our chain with `rules` and hooks it into INPUT."""
    return chains.create_script("INPUT", CHAIN, rules)


HEAL_SCRIPT = chains.remove_script("INPUT", CHAIN)
# prints the number of our rules left (0 when healed)
COUNT_SCRIPT = f"{chains.IPTABLES} -S | grep -c -- {shlex.quote(CHAIN)} || true"
# lists our rules: our chain and the jump into it (on real machines the user's firewall
# lives beside them)
OUR_RULES = chains.listing_script(CHAIN)


def heal_node(session) -> None:
    session.exec(HEAL_SCRIPT, timeout=30)


def leftover_rules(session) -> int:
    return int(session.exec(COUNT_SCRIPT, timeout=30).stdout.strip() or 0)


def undo_traces(cluster, session) -> list[str]:
    """Removes our chain and the jump into it from the node."""
    # list and flush in one round trip: heal runs often and SSH is slow on a busy box
    ours = _rule_lines(session.exec(f"{OUR_RULES}; {HEAL_SCRIPT}", timeout=30).stdout)
    if not ours:
        return []
    dropped = sum(line.startswith(f"-A {CHAIN} ") for line in ours)
    return [f"{session.node.name}: removed logtrial's iptables chain ({dropped} rules)"]


def traces_left(cluster, session) -> list[str]:
    rules = _rule_lines(session.exec(OUR_RULES, timeout=30).stdout)
    return [f"logtrial's iptables rules remain: {' | '.join(rules)}"] if rules else []


def _rule_lines(listing: str) -> list[str]:
    return [line for line in listing.splitlines() if line.strip()]


TRACES = NodeTraces(undo=undo_traces, left=traces_left, network=True)


class PartitionFault(Fault):
    name = "partition"
    stop_f = "stop-partition"

    def __init__(self, partition_clients: bool = False,
                 shape_names: Sequence[str] = tuple(shapes.SHAPES)) -> None:
        self.partition_clients = partition_clients
        self.shape_names = list(shape_names)
        self.struck: list[str] = []

    def start_f(self, params: dict) -> str:
        return "start-partition"

    def plan(self, nodes: Sequence[str], target_specs: Sequence[str],
             rng: random.Random) -> dict:
        shape = rng.choice(self.shape_names)
        return shapes.SHAPES[shape](nodes, rng).to_value()

    def start(self, cluster, params: dict) -> dict:
        partition = shapes.Partition.from_value(params)
        hosts = {n.name: n.host for n in cluster.inventory.nodes}
        plans = {n.name: rules_for(n.name, partition, hosts, n.port, self.partition_clients)
                 for n in cluster.inventory.nodes}
        affected = [node for node, rules in plans.items() if rules]
        self.struck = sorted(set(self.struck) | set(affected))
        errors = strike(affected, lambda node: cluster.ssh[node].exec(
            apply_script(plans[node]), timeout=30))
        value = {**partition.to_value(), "nodes": affected}
        if self.partition_clients:
            value["clients_cut_from"] = partition.clients_cut_from()
        return with_errors(value, errors)

    def stop(self, cluster) -> dict:
        nodes, self.struck = self.struck, []
        return with_errors({"nodes": nodes},
                           strike(nodes, lambda node: heal_node(cluster.ssh[node])))

    def heal(self, cluster) -> None:
        self.struck = []


KIND = FaultKind(
    name="partition", summary="iptables rules that cut the nodes into groups, drawn from the "
                              "partition shapes",
    make=lambda context: PartitionFault(context.partition_clients,
                                        list(context.partition_shapes or shapes.SHAPES)),
    history_f={"start-partition": START, "stop-partition": STOP}, params=("shape", "grudge", "anchor"),
    # with min ISR 2 and no unclean election a leader cut off from its followers cannot
    # acknowledge alone, nor can a replica without an acknowledged record be elected
    loses_data={"start-partition": None},
    node_traces=TRACES)
