"""client-delay: hold what the struck brokers RECEIVE from the clients for a fixed time,
longer than the clients wait, while the brokers' own traffic flows as usual.

This is the message fault of Jepsen's Bufstream analysis (2024) aimed at Kafka's
transaction protocol: a producer's Produce requests go to a partition leader, its
AddPartitionsToTxn and EndTxn to the transaction coordinator, over other connections.
Held on the leader's side only, a transaction's send outlives the client's patience:
the client aborts (the coordinator's markers reach the leader at once, brokers are not
delayed), begins its next transaction, and only then does the leader see the old
batch. Where it lands is what the run checks.

A node queues to the userspace holder (nemesis/packet_holder.py, its own queue and pid
file) the TCP segments that come from the control node's address to its client port,
through an INPUT chain of ours. SSH comes from the same address but on another port, so
the nemesis keeps its hold on the node. Held segments keep their order (one delay, no
jitter); TCP's retransmissions are held as well, so nothing is lost, only late. A stop
or a heal releases whatever is still held.
"""
from __future__ import annotations

import random
from typing import Callable, Sequence

from clusters.nodes.ssh import NodeSession
from nemesis import iptables_chain as chains
from nemesis import packet_detect
from nemesis.fault import NodeTraces, ProcessFault
from nemesis.packet_mechanisms import holder_paths, start_holder
from nemesis.packet_traces import stop_holder
from nemesis.kind import START, STOP, FaultKind

START_F, STOP_F = "start-client-delay", "stop-client-delay"
CHAIN = "LOGTRIAL-CLIENT-IN"
QUEUE = 19541
MARK = 0x4C56
HOLDER = "client-delay-holder"
# the hold, as a multiple of the op timeout: always past the client's patience, and
# short enough that the held batch lands while the next transaction is still open
HOLD_RANGE = (1.1, 1.6)
DEFAULT_OP_TIMEOUT_S = 10.0  # the workloads' default --op-timeout


def control_address(session: NodeSession) -> str:
    """The address the node sees the control node at: where its SSH session comes from
    (the clients run on the control node)."""
    address = session.exec("echo ${SSH_CONNECTION%% *}", timeout=15).stdout.strip()
    if not address:
        raise RuntimeError(f"{session.node.name}: SSH_CONNECTION is unset; cannot tell the "
                           "control node's address")
    return address


def client_port(cluster, node: str) -> int:
    """The node's client port, as the bootstrap list names it."""
    host = cluster.inventory.node(node).host
    for endpoint in cluster.db.bootstrap_servers().split(","):
        endpoint_host, _, port = endpoint.rpartition(":")
        if endpoint_host == host:
            return int(port)
    raise RuntimeError(f"{node}: {host} is not in the bootstrap list "
                       f"{cluster.db.bootstrap_servers()}")


def hold_rules(source: str, port: int) -> list[str]:
    return [f"-s {source} -p tcp --dport {port} -j NFQUEUE --queue-num {QUEUE} --queue-bypass"]


class ClientDelayFault(ProcessFault):
    name = "client-delay"
    stop_f = STOP_F

    def __init__(self, resolve_role: Callable[[str], list[str]],
                 op_timeout_s: float = DEFAULT_OP_TIMEOUT_S) -> None:
        super().__init__(resolve_role)
        self.op_timeout_s = op_timeout_s
        self.holds: dict[str, bool] = {}  # node -> whether it can hold (the kernel won't change)

    def start_f(self, params: dict) -> str:
        return START_F

    def plan(self, nodes: Sequence[str], target_specs: Sequence[str],
             rng: random.Random) -> dict:
        # a factor, not milliseconds: the schedule is planned without the run's options
        return {**self.plan_targets(nodes, target_specs, rng),
                "hold_factor": round(rng.uniform(*HOLD_RANGE), 2)}

    def start(self, cluster, params: dict) -> dict:
        hold_ms = round(params["hold_factor"] * self.op_timeout_s * 1000)
        value = self.start_on_nodes(cluster, params,
                                    lambda node: self._hold(cluster, node, hold_ms))
        return {**value, "hold_ms": hold_ms}

    def _hold(self, cluster, node: str, hold_ms: int) -> None:
        session = cluster.ssh[node]
        undo_traces(cluster, session)
        if node not in self.holds:
            self.holds[node] = packet_detect.nfqueue_available(session)
        if not self.holds[node]:
            raise RuntimeError(f"{node}: no NFQUEUE (with python3) here: cannot hold packets")
        start_holder(session, {"delay_ms": hold_ms}, QUEUE, MARK, HOLDER)
        rules = hold_rules(control_address(session), client_port(cluster, node))
        session.exec(chains.create_script("INPUT", CHAIN, rules), timeout=30)

    def stop(self, cluster) -> dict:
        return self.stop_on_struck(lambda node: undo_traces(cluster, cluster.ssh[node]))


def undo_traces(cluster, session: NodeSession) -> list[str]:
    """Removes our chain, then stops the holder (releasing what it held)."""
    node, actions = session.node.name, []
    found = session.exec(f"{chains.listing_script(CHAIN)}; {chains.remove_script('INPUT', CHAIN)}",
                         timeout=30).stdout
    if any(line.startswith("-") for line in found.splitlines()):
        actions.append(f"{node}: removed logtrial's client-delay iptables chain")
    if stop_holder(session, HOLDER):
        actions.append(f"{node}: stopped the client-delay holder (held packets released)")
    return actions


def traces_left(cluster, session: NodeSession) -> list[str]:
    found = session.exec(chains.listing_script(CHAIN), timeout=30).stdout
    problems = [f"logtrial's client-delay rule remains: {line.strip()}"
                for line in found.splitlines() if line.startswith("-")]
    if session.pid_alive(holder_paths(session, HOLDER)[1]):
        problems.append("client-delay holder still running")
    return problems


TRACES = NodeTraces(undo=undo_traces, left=traces_left, network=True)


KIND = FaultKind(
    name="client-delay", summary="hold what a broker receives from the clients for longer than "
                                 "the op timeout (the late batch, docs/findings.md)",
    make=lambda context: ClientDelayFault(context.resolve_role, context.op_timeout_s or DEFAULT_OP_TIMEOUT_S),
    history_f={START_F: START, STOP_F: STOP}, params=("target", "hold_factor"), node_traces=TRACES,
    # a held request lands late or never; what was acknowledged is replicated as ever
    # (a late batch's outcome was unknown to the client: info, not a lost write)
    loses_data={START_F: None},
    by_name_only="a targeted scenario: it holds the clients' requests on purpose")
