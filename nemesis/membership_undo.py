"""Undoing the membership fault (nemesis/membership.py), from what the nodes say.

Before the fault changes anything it leaves a trace on every node,
`<home>/membership-fault.json`: the nodes it removed, the original replica list
of every partition it reassigned and the original controller voters ({id: directory
id}) before it removed one. The fault's own stop undoes one change and
forgets it; `heal` (run by nemesis/heal.py, so `logtrial cluster heal` runs it
after the control process died) undoes whatever is still recorded: removed brokers
are back (the heal's Cluster.revive formats and restarts dead ones first), every recorded
partition gets its original replica list and preferred leader again, every removed
voter is added back, and then it *checks* that every affected partition has its
whole replica set in sync and that the voter set is the original one. Only
then is the trace removed; `problems` reports a trace left behind, which is how
verify_healed knows the membership is not restored.
"""
from __future__ import annotations

import json
import logging
import shlex
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Iterable

from clusters.kafka import admin as kadmin
from clusters.db import DatabaseError
from clusters.nodes.ssh import SSHError
from nemesis.fault import ClusterTraces

log = logging.getLogger(__name__)

TRACE_NAME = "membership-fault.json"
REPLICATED_TIMEOUT_S = 90.0  # heal: how long partitions may take to be fully in sync again
VOTERS_TIMEOUT_S = 60.0      # how long a voter may take to be added back (it must catch up first)


def trace_file(cluster, node: str) -> str:
    return f"{cluster.inventory.node(node).home}/{TRACE_NAME}"


# -- the trace ---------------------------------------------------------------------------
def read_trace(cluster) -> dict:
    """{"removed": [nodes], "assignment": {partition: original replicas}, "voters": {id:
    directory id}} merged from every node that answers (the first node to record a
    partition's original list, or the original voters, wins)."""
    merged: dict = {"removed": [], "assignment": {}, "voters": {}}
    for trace in _traces(cluster).values():
        merged["removed"] = sorted(set(merged["removed"]) | set(trace.get("removed", [])))
        merged["assignment"] = {**trace.get("assignment", {}), **merged["assignment"]}
        merged["voters"] = merged["voters"] or trace.get("voters", {})
    return merged


def _traces(cluster) -> dict[str, dict]:
    """{node: its trace} for the nodes that hold one."""
    def read(node: str) -> dict:
        try:
            text = cluster.ssh[node].exec(f"cat {shlex.quote(trace_file(cluster, node))} 2>/dev/null",
                                          check=False, timeout=15).stdout
            return json.loads(text) if text.strip() else {}
        except (SSHError, ValueError) as e:  # an unreachable node must not hide the others
            log.info("node %s: cannot read the membership trace: %s", node, e)
            return {}

    with ThreadPoolExecutor(max_workers=len(cluster.nodes)) as pool:
        traces = dict(zip(cluster.nodes, pool.map(read, cluster.nodes)))
    return {node: trace for node, trace in traces.items() if trace}


def _write_trace(cluster, trace: dict) -> None:
    empty = _empty(trace)
    text = json.dumps(trace, sort_keys=True) + "\n"

    def write(session) -> None:
        path = trace_file(cluster, session.node.name)
        if empty:
            session.exec(f"rm -f {shlex.quote(path)}", timeout=15)
        else:
            session.write_file(path, text)

    cluster.ssh.run_on(cluster.nodes, write)


def _empty(trace: dict) -> bool:
    return not trace["removed"] and not trace["assignment"] and not trace["voters"]


def record(cluster, removed: Iterable[str] = (), assignment: dict[str, list[int]] | None = None,
           voters: dict[int, str] | None = None) -> None:
    """Adds to the trace on every node, before the change is made. A partition already
    recorded keeps its first (original) replica list, the quorum its first voter set."""
    trace = read_trace(cluster)
    trace["removed"] = sorted(set(trace["removed"]) | set(removed))
    trace["assignment"] = {**(assignment or {}), **trace["assignment"]}
    trace["voters"] = trace["voters"] or {str(k): v for k, v in (voters or {}).items()}
    _write_trace(cluster, trace)


def forget(cluster, removed: Iterable[str] = (), partitions: Iterable[str] = (), voters: bool = False) -> None:
    """Drops undone changes from the trace (the file goes once nothing is left)."""
    trace = read_trace(cluster)
    trace["removed"] = [n for n in trace["removed"] if n not in set(removed)]
    trace["assignment"] = {k: v for k, v in trace["assignment"].items() if k not in set(partitions)}
    trace["voters"] = {} if voters else trace["voters"]
    _write_trace(cluster, trace)


# -- undoing -----------------------------------------------------------------------------
def restore_assignment(cluster, original: dict[str, list[int]], via: str,
                       timeout: float) -> tuple[list[str], dict[str, str]]:
    """Puts each partition back on its original replicas (only those that differ; a
    deleted topic has nothing to restore) and its preferred leader back in charge.
    Returns (partitions not fully in sync at the timeout, election errors)."""
    current = kadmin.partition_states(cluster, {kadmin.split_key(k)[0] for k in original})
    moved = {k: v for k, v in original.items() if k in current and list(current[k].replicas) != v}
    if moved:
        kadmin.reassign(cluster, via, moved)
    present = {k: v for k, v in original.items() if k in current}
    lagging = kadmin.wait_replicated(cluster, timeout, present)
    return lagging, kadmin.elect_preferred(cluster, present)


def restore_voters(cluster, original: dict[int, str], timeout: float) -> list[str]:
    """Makes the voters the original node ids again, each under the directory id its
    disk holds now, retrying until the timeout (the leader refuses a lagging voter, and
    takes one change at a time): a voter whose node was wiped since (remove-node formats
    a new directory id) is removed under its old one, and every missing voter is added
    back, running on its own node. Returns the nodes added; DatabaseError says what the
    voter set is if it never got there."""
    deadline = time.monotonic() + timeout
    wanted = {i: cluster.db.disk_directory_id(cluster.inventory.node_names[i - 1]) for i in sorted(original)}
    added: list[str] = []
    while True:
        status = kadmin.quorum_status_answered(cluster, cluster.nodes[0], deadline)
        if status.voters == wanted:
            return added
        error = None
        try:
            for voter, stale in sorted(status.voters.items()):
                if voter in wanted and stale != wanted[voter]:
                    node = cluster.inventory.node_names[voter - 1]
                    kadmin.remove_controller(cluster, peer(cluster, node), voter, stale)
            for voter in sorted(set(wanted) - set(status.voters)):
                node = cluster.inventory.node_names[voter - 1]
                kadmin.add_controller(cluster, node)
                added.append(node)
        except DatabaseError as e:  # not caught up yet, or a change still in flight
            error = e
        if time.monotonic() > deadline:
            raise DatabaseError("quorum", f"voters {status.voters}, not {wanted} after "
                                f"{timeout:g} s" + (f"; last error: {error}" if error else ""))
        time.sleep(1)


def peer(cluster, node: str) -> str:
    """A node other than `node` to run a tool on (the node itself on a 1-node cluster)."""
    return next((n for n in cluster.nodes if n != node), node)


def heal(cluster) -> list[str]:
    """Undoes every membership change still in the trace and checks it; returns what it
    did. Whatever could not be restored (or is not fully in sync after
    REPLICATED_TIMEOUT_S) is said in an action and stays in the trace, so
    verify_healed reports it and a second heal tries again."""
    trace = read_trace(cluster)
    if _empty(trace):
        return []
    actions = [f"{node}: broker registered again after its removal" for node in trace["removed"]]
    try:
        if trace["voters"]:  # first: a quorum short of a voter tolerates no other failure
            voters = {int(k): v for k, v in trace["voters"].items()}
            added = restore_voters(cluster, voters, VOTERS_TIMEOUT_S)
            actions += [f"{node}: added back as a controller voter" for node in added]
            actions.append(f"controller voters restored: {sorted(voters)}")
        lagging, elect_errors = (restore_assignment(cluster, trace["assignment"], cluster.nodes[0],
                                                    REPLICATED_TIMEOUT_S)
                                 if trace["assignment"] else ([], {}))
        actions += [f"{key}: restored replicas {replicas}" for key, replicas in sorted(trace["assignment"].items())]
        actions += [f"{key}: preferred leader not elected: {error}" for key, error in elect_errors.items()]
        if trace["removed"]:  # a wiped broker copies every replica it holds from scratch
            lagging += kadmin.wait_replicated(cluster, REPLICATED_TIMEOUT_S)
    except Exception as e:  # noqa: BLE001 - said, and left in the trace for verify_healed
        return actions + [f"membership not restored: {type(e).__name__}: {e}"]
    if lagging:
        return actions + [f"membership not restored: not fully in sync after {REPLICATED_TIMEOUT_S:g} s: "
                          + "; ".join(lagging)]
    forget(cluster, trace["removed"], trace["assignment"], voters=True)
    return actions


def problems(cluster) -> dict[str, list[str]]:
    """{node: [problem]} for each node still holding a trace of a change not undone."""
    found = {}
    for node, trace in _traces(cluster).items():
        items = [f"removed brokers {', '.join(trace['removed'])}"] if trace.get("removed") else []
        items += [f"{k} replicas were {v}" for k, v in sorted(trace.get("assignment", {}).items())]
        items += [f"controller voters were {sorted(int(k) for k in trace['voters'])}"] if trace.get("voters") else []
        found[node] = [f"membership fault not undone ({trace_file(cluster, node)}): {'; '.join(items)}"]
    return found


TRACES = ClusterTraces(undo=heal, left=problems)
