"""power: the struck nodes lose power at the same instant. Each node's data sits on
powerfs (clusters/nodes/powerfs.py), which the run asked for (FaultKind.db_settings):
every process of the struck nodes is frozen (SIGSTOP, so that none sees the cut layer's
EIO), every layer is cut at once, so it forgets whatever was never fsynced, then every
process is SIGKILLed by its pid file and the layer taken off, the data as the loss left
it. The stop restarts the nodes on the layer again. Each start's history
value says what each node's loss dropped ("dropped": files, bytes, name changes).

A minority's loss must lose nothing acknowledged at --safe settings; a majority's may,
where the system acknowledges before an fsync (Kafka's default flush), and must not
where it fsyncs every write it acknowledges (Kafka with log.flush.interval.messages=1,
tansu): each start records the struck system's word (docs/nemesis.md, "power"). The
planned `mode` is `clean` (every unsynced write forgotten) or, with chance TORN_SHARE,
`torn` (the last write of each file half kept)."""
from __future__ import annotations

import random
from typing import Sequence

from clusters.db import Pause, PowerLoss, Process, require
from clusters.nodes import powerfs
from clusters.nodes.powerfs import POWERFS_KEY
from clusters.nodes.ssh import NodeSession
from nemesis.fault import NodeTraces, ProcessFault, strike, with_errors
from nemesis.kind import MAY_LOSE_DATA_KEY, START, STOP, FaultKind
from nemesis.targets import count_for, COUNT_TARGETS

# how long the restart waits for a broker to serve again (log recovery after an unclean
# shutdown takes longer than kill's restart)
RESTART_WAIT_S = 60.0
TORN_SHARE = 0.25
OFF_MINORITY, OFF_MAJORITY, ON = "power-off", "power-off-majority", "power-on"


class PowerFault(ProcessFault):
    name = "power"
    stop_f = ON

    def plan(self, nodes: Sequence[str], target_specs: Sequence[str], rng: random.Random) -> dict:
        params = self.plan_targets(nodes, target_specs, rng)
        # roles (controller, leader) strike one node
        struck = count_for(params["target"], len(nodes)) if params["target"] in COUNT_TARGETS else 1
        return {**params, "majority": 2 * struck > len(nodes),
                "mode": powerfs.TORN if rng.random() < TORN_SHARE else powerfs.CLEAN}

    def start_f(self, params: dict) -> str:
        return OFF_MAJORITY if params.get("majority") else OFF_MINORITY

    def start(self, cluster, params: dict) -> dict:
        db = require(cluster.db, PowerLoss, "the power fault")
        if not db.powerfs:
            raise RuntimeError(f"the brokers run without powerfs ({POWERFS_KEY}=false): "
                               "a power loss would forget nothing")
        try:
            nodes = self.nodes_for(params)
        except Exception as e:  # noqa: BLE001 - a role nobody holds: report it, go on
            return {**params, "nodes": [], "errors": {"*": f"{type(e).__name__}: {e}"}}
        self.struck = nodes
        dropped: dict[str, dict] = {}
        # every process frozen first: after the cut the layer answers EIO, and a broker that
        # saw it would act (mark its log dir offline, tell the controller), which a machine
        # without power cannot do
        strike(nodes, lambda node: _freeze(db, node))
        # then every layer, in parallel: nothing any struck node writes after this counts
        errors = strike(nodes, lambda node: dropped.__setitem__(node, db.power_cut(node, params["mode"])))
        off_errors = strike(nodes, db.power_off)
        errors.update({node: why for node, why in off_errors.items() if node not in errors})
        # whether this system acknowledges before an fsync: the strike's own declaration
        why = db.unsynced_acks()
        return with_errors({**params, "nodes": nodes, "dropped": dropped, MAY_LOSE_DATA_KEY: why}, errors)

    def stop(self, cluster) -> dict:
        db = require(cluster.db, PowerLoss, "the power fault")
        nodes, self.struck = self.struck, []
        # all at once: a KRaft quorum that lost its majority needs a majority back
        errors = strike(nodes, db.power_on)
        waited = strike([n for n in nodes if n not in errors],
                        lambda node: cluster.db.wait_ready(node, timeout=RESTART_WAIT_S))
        return with_errors({"nodes": nodes}, {**errors, **waited})


def _freeze(db: object, node: str) -> None:
    """SIGSTOP what runs on the node (by its pid file; PostgreSQL's whole process group), if
    anything does. A freeze the control node does not live to follow with the kill is
    undone by the heal as a pause is (nemesis/pause.py)."""
    if isinstance(db, Pause) and db.is_running(node):
        db.pause(node)


# -- traces: a layer a run left -------------------------------------------------------------
def _layer_problems(cluster, session: NodeSession) -> list[tuple[str, str, bool]]:
    """(directory, problem, broken) for each layer that must go: broken (a dead daemon, a
    cut, data moved aside), or healthy but not asked for."""
    db = cluster.db
    if not isinstance(db, PowerLoss):
        return []
    found = []
    for directory in db.power_dirs(session.node.name):
        why = powerfs.broken(session, directory)
        if why:
            found.append((directory, why, True))
        elif not db.powerfs and powerfs.present(session, directory):
            found.append((directory, f"powerfs on {directory}, not asked for ({POWERFS_KEY} unset)", False))
    return found


def undo_layers(cluster, session: NodeSession) -> list[str]:
    """Stops the broker (SIGKILL on a broken layer: its data stays as the loss made it; a
    clean stop on a healthy one), then takes the layer off. The heal's revive restarts
    the broker, on a fresh layer if the run wants one."""
    problems = _layer_problems(cluster, session)
    if not problems:
        return []
    node, db = session.node.name, require(cluster.db, Process, "healing the power fault")
    if any(broken for _, _, broken in problems):
        db.kill(node)
    else:
        db.stop(node)
    return [action for directory, _, _ in problems for action in powerfs.unmount(session, directory)]


def layers_left(cluster, session: NodeSession) -> list[str]:
    return [why for _, why, _ in _layer_problems(cluster, session)]


KIND = FaultKind(
    name="power", summary="the targets lose power at once: unsynced writes forgotten, every process killed, restarted later",
    make=lambda context: PowerFault(context.resolve_role),
    history_f={OFF_MINORITY: START, OFF_MAJORITY: START, ON: STOP},
    params=("target", "nodes", "majority", "mode"), needs=PowerLoss,
    by_name_only="it puts every broker's data on powerfs, a FUSE layer that slows it down",
    db_settings={POWERFS_KEY: "true"},
    node_traces=NodeTraces(undo=undo_layers, left=layers_left),
    # a broker recovers its log to what was fsynced, and the next records take the lost ones'
    # offsets: one offset with two values (inconsistent-offsets) is that loss seen twice
    rewrites_offsets=frozenset({OFF_MAJORITY}),
    loses_data={
        # the other replicas keep the record in their page cache: acks=all with min ISR 2
        # put every acknowledged record on a second node that did not lose power
        OFF_MINORITY: None,
        # the most a majority's loss may cost; each start narrows it to the struck system's
        # own word (PowerLoss.unsynced_acks): None where every acknowledged write is fsynced
        OFF_MAJORITY: "the system may acknowledge a write before it is fsynced; when a majority "
                      "loses power at once, every replica of an acknowledged record may lose it"})
