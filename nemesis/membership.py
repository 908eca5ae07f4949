"""membership: change which brokers hold what, and put it back.

One of three changes per strike, drawn by the seeded rng:

- `remove-node` / `add-node`: stop one broker (SIGTERM, a clean shutdown), unregister
  it from the cluster metadata (`kafka-cluster.sh unregister`), wipe its log dir and
  format it again; the stop starts it, it registers anew and copies its replicas
  from scratch. KRaft only. In combined mode the wiped log dir holds the node's
  copy of the metadata log too: in a static quorum it rejoins as a voter with an
  empty log (see docs/nemesis.md for what that risks beside other faults).
- `reassign` / `restore-assignment`: move one partition of the test topics to a new
  replica list (`kafka-reassign-partitions`), then elect its preferred leader:
  `reorder` rotates the replicas (the preferred leader changes), `move` swaps one
  replica for a broker outside the set, or drops one when every broker holds it
  (never below 2 replicas: min.insync.replicas is 2). The stop puts the original
  list and leader back.
- `remove-controller` / `add-controller`: a KIP-853 controller quorum change. It needs
  kraft.version 1, a dynamic quorum (`--dynamic-quorum`); on a static one
  (controller.quorum.voters, kraft.version 0) the strike changes nothing and says why
  in `skipped`. On a dynamic one it removes one voter (the leader too, if drawn) with
  `kafka-metadata-quorum remove-controller`; the node keeps running, as a broker and
  a quorum observer. Never below three voters, and only when every voter runs and
  is caught up: the smaller quorum must still be able to elect. The stop adds it back
  (`add-controller`, run on the node with its own config) and checks the voter set is
  the original one.

Every change is first written down on the nodes (nemesis/membership_undo.py), so the
heal can undo it from there.
"""
from __future__ import annotations

import random
import shlex
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Sequence

from clusters.kafka import admin as kadmin
from clusters.db import Ensemble, Membership, require
from nemesis import membership_undo as undo
from nemesis.fault import Fault, with_errors
from nemesis.topics import fault_topics, topic_prefixes
from nemesis.kind import START, STOP, FaultKind

MODES = ("remove-node", "reassign", "quorum")
START_F = {"remove-node": "remove-node", "reassign": "reassign", "quorum": "remove-controller"}
STOP_F = {"remove-node": "add-node", "reassign": "restore-assignment", "quorum": "add-controller"}
IDLE_STOP_F = "restore-membership"  # a stop with nothing struck (its start never ran)
CHANGES = ("reorder", "move")
MIN_REPLICAS = 2           # `move` never shrinks a partition below min.insync.replicas
ADD_WAIT_S = 60.0          # add-node: how long the broker may take to serve again
REPLICATED_WAIT_S = 30.0   # how long a stop waits for the partitions to be in sync again
MIN_VOTERS = 3             # remove-controller leaves at least 2 voters: a majority of 2 still elects
CAUGHT_UP_MS = 5000        # a voter that stays must have caught up with the leader this recently
# how long a strike or stop waits for the voter set to change (and for a new leader to
# answer): on a saturated 2-core machine each describe starts a JVM, and 30 s ran out once
VOTERS_WAIT_S = 60.0


class MembershipFault(Fault):
    name = "membership"

    def __init__(self, topics: Sequence[str] | None = None, modes: Sequence[str] = MODES) -> None:
        unknown = [m for m in modes if m not in MODES]
        if unknown or not modes:
            raise ValueError(f"membership modes {list(modes)}: valid are {', '.join(MODES)}")
        self.modes = list(modes)
        self.prefixes = topic_prefixes(topics or [])
        self.active: dict | None = None  # the value of the last start, until its stop

    # -- planning ----------------------------------------------------------------------
    def plan(self, nodes: Sequence[str], target_specs: Sequence[str], rng: random.Random) -> dict:
        mode = rng.choice(self.modes)
        if mode == "remove-node":
            return {"mode": mode, "nodes": [rng.choice(sorted(nodes))]}
        if mode == "reassign":  # which partition and how: drawn here, resolved at the strike
            return {"mode": mode, "change": rng.choice(CHANGES), "pick": rng.randrange(2 ** 31)}
        return {"mode": mode, "pick": rng.randrange(2 ** 31)}  # which voter: resolved at the strike

    def start_f(self, params: dict) -> str:
        return START_F[params["mode"]]

    @property
    def stop_f(self) -> str:  # type: ignore[override]
        return STOP_F[self.active["mode"]] if self.active else IDLE_STOP_F

    # -- striking ----------------------------------------------------------------------
    def start(self, cluster, params: dict) -> dict:
        strikes = {"remove-node": self._remove, "reassign": self._reassign, "quorum": self._quorum}
        if params.get("mode") not in strikes:
            raise ValueError(f"unknown membership mode {params.get('mode')!r} (valid: {', '.join(MODES)})")
        require(cluster.db, Membership, "the membership fault")
        self.active = dict(params)  # set first: a strike that fails half-way is still stopped
        self.active = strikes[params["mode"]](cluster, params)
        return self.active

    def stop(self, cluster) -> dict:
        active, self.active = self.active, None
        if active is None:
            return {}
        if active.get("skipped") or (active["mode"] == "quorum" and "voters" not in active) or \
                (active["mode"] == "reassign" and "original" not in active):
            return {"mode": active["mode"], "skipped": active.get("skipped", "its start changed nothing")}
        stops = {"remove-node": self._add, "reassign": self._restore, "quorum": self._add_controller}
        return stops[active["mode"]](cluster, active)

    def heal(self, cluster) -> None:
        """nemesis/heal.py undoes what the trace on the nodes records; only forget here."""
        self.active = None

    # -- remove-node / add-node --------------------------------------------------------------
    def _remove(self, cluster, params: dict) -> dict:
        if _zookeeper_mode(cluster):
            return {**params, "skipped": "remove-node needs KRaft (kafka-cluster.sh unregister); "
                                         "this cluster runs in ZooKeeper mode"}
        node = params["nodes"][0]
        broker_id = cluster.db.node_id(node)
        value = {**params, "broker_id": broker_id}
        try:
            # a dynamic quorum's voter comes back on a new disk: add-node replaces it
            voters = _answered_status(cluster).voters if _dynamic(cluster) else None
            undo.record(cluster, removed=[node], voters=voters)
            cluster.db.stop(node)
        except Exception as e:  # noqa: BLE001 - reported; add-node or the heal brings it back
            return with_errors(value, {node: f"{type(e).__name__}: {e}"})
        # two JVMs (the unregister tool on a peer, the storage formatter here): side by side
        peer = undo.peer(cluster, node)
        with ThreadPoolExecutor(max_workers=2) as pool:
            futures = {f"unregister via {peer}": pool.submit(kadmin.unregister_broker, cluster, peer, broker_id),
                       node: pool.submit(_wipe, cluster, node)}
        errors = {where: f"{type(e).__name__}: {e}" for where, future in futures.items()
                  if (e := future.exception()) is not None}
        return with_errors(value, errors)

    def _add(self, cluster, active: dict) -> dict:
        node = active["nodes"][0]
        value = {"mode": active["mode"], "nodes": [node]}
        try:
            cluster.db.ensure_formatted(node)
            if not cluster.db.is_running(node):  # another fault may have started it already
                cluster.db.launch(node)
            cluster.db.wait_ready(node, timeout=ADD_WAIT_S)
            voters = {int(k): v for k, v in undo.read_trace(cluster)["voters"].items()}
            if voters:  # the new disk's directory id takes the old one's place among the voters
                undo.restore_voters(cluster, voters, VOTERS_WAIT_S)
                undo.forget(cluster, voters=True)
                value["voters"] = sorted(voters)
        except Exception as e:  # noqa: BLE001 - the final heal retries and checks it
            return with_errors(value, {node: f"{type(e).__name__}: {e}"})
        lagging = kadmin.wait_replicated(cluster, REPLICATED_WAIT_S)
        if lagging:  # left in the trace: the final heal waits for it and checks
            return {**value, "lagging": lagging}
        undo.forget(cluster, removed=[node])
        return value

    # -- reassign / restore-assignment ------------------------------------------------------
    def _reassign(self, cluster, params: dict) -> dict:
        topics = fault_topics(kadmin.admin_client(cluster).list_topics(timeout=kadmin.ADMIN_TIMEOUT_S).topics,
                              self.prefixes)
        states = kadmin.partition_states(cluster, topics)
        recorded = kadmin.partition_key(params["topic"], params["partition"]) if "topic" in params else None
        if recorded in states:  # replayed on the same topics: the same partition, the same replicas
            key, target = recorded, params["replicas"]
        elif states:  # drawn, or replayed on a new run's topics: the same pick and change
            key = sorted(states)[params["pick"] % len(states)]
            brokers = [cluster.db.node_id(n) for n in cluster.nodes]
            target = new_replicas(list(states[key].replicas), brokers, params["change"],
                                  random.Random(params["pick"]))
        else:
            return {**params, "skipped": f"no partition to reassign (topics: {topics or 'none'})"}
        topic, partition = kadmin.split_key(key)
        original = list(states[key].replicas)
        value = {**params, "topic": topic, "partition": partition, "replicas": target, "original": original}
        try:
            undo.record(cluster, assignment={key: original})
            kadmin.reassign(cluster, cluster.nodes[0], {key: target})
            lagging = kadmin.wait_replicated(cluster, REPLICATED_WAIT_S, {key: target})
            errors = kadmin.elect_preferred(cluster, [key])
        except Exception as e:  # noqa: BLE001 - reported; the stop or the heal restores it
            return with_errors(value, {key: f"{type(e).__name__}: {e}"})
        return with_errors({**value, **({"lagging": lagging} if lagging else {})}, errors)

    def _restore(self, cluster, active: dict) -> dict:
        key = kadmin.partition_key(active["topic"], active["partition"])
        value = {"mode": active["mode"], "topic": active["topic"], "partition": active["partition"],
                 "replicas": active["original"]}
        try:
            lagging, errors = undo.restore_assignment(cluster, {key: active["original"]}, cluster.nodes[0],
                                                      REPLICATED_WAIT_S)
        except Exception as e:  # noqa: BLE001 - the final heal retries and checks it
            return with_errors(value, {key: f"{type(e).__name__}: {e}"})
        if lagging:
            return with_errors({**value, "lagging": lagging}, errors)
        undo.forget(cluster, partitions=[key])
        return with_errors(value, errors)

    # -- remove-controller / add-controller ---------------------------------------------------
    def _quorum(self, cluster, params: dict) -> dict:
        if _zookeeper_mode(cluster):
            return {**params, "skipped": "ZooKeeper mode has no KRaft controller quorum to change"}
        version = kadmin.kraft_version(cluster, cluster.nodes[0])
        if version == 0:
            return {**params, "kraft_version": 0, "skipped": (
                "kraft.version is 0: the controller quorum is static (controller.quorum.voters); "
                "KIP-853 add-controller/remove-controller need kraft.version 1, a dynamically "
                "formatted quorum (logtrial cluster up / test --dynamic-quorum)")}
        status = _answered_status(cluster)
        unsafe = _unsafe_removal(cluster, status)
        if unsafe:
            return {**params, "skipped": unsafe}
        # replayed: the recorded voter if it still is one; else the recorded pick decides
        node_id = params.get("controller_id")
        if node_id not in status.voters:
            node_id = sorted(status.voters)[params["pick"] % len(status.voters)]
        value = {**params, "node": cluster.inventory.node_names[node_id - 1], "controller_id": node_id,
                 "leader": status.leader, "voters": sorted(status.voters)}
        try:
            undo.record(cluster, voters=status.voters)
            kadmin.remove_controller(cluster, undo.peer(cluster, value["node"]), node_id, status.voters[node_id])
            _wait_voters(cluster, set(status.voters) - {node_id})
        except Exception as e:  # noqa: BLE001 - reported; the stop or the heal adds it back
            return with_errors(value, {value["node"]: f"{type(e).__name__}: {e}"})
        return value

    def _add_controller(self, cluster, active: dict) -> dict:
        node = active["node"]
        value = {"mode": active["mode"], "node": node, "controller_id": active["controller_id"]}
        original = {int(k): v for k, v in undo.read_trace(cluster)["voters"].items()}
        try:
            if not cluster.db.is_running(node):  # another fault stopped it: a voter must run
                cluster.db.launch(node)
                cluster.db.wait_ready(node, timeout=ADD_WAIT_S)
            undo.restore_voters(cluster, original, VOTERS_WAIT_S)
        except Exception as e:  # noqa: BLE001 - left in the trace: the final heal retries and checks
            return with_errors(value, {node: f"{type(e).__name__}: {e}"})
        undo.forget(cluster, voters=True)
        return {**value, "voters": sorted(original)}


def _unsafe_removal(cluster, status: kadmin.QuorumStatus) -> str | None:
    """Why removing any voter now could leave a quorum that cannot elect, or None."""
    if len(status.voters) < MIN_VOTERS:
        return (f"only {len(status.voters)} controller voters ({sorted(status.voters)}): removing one "
                f"would leave fewer than {MIN_VOTERS - 1}")
    # a voter killed an instant ago still looks caught up in the leader's view: ask its node
    stopped = sorted(v for v in status.voters if not cluster.db.is_running(cluster.inventory.node_names[v - 1]))
    if stopped:
        return f"controller voters {stopped} are not running: no voter is removed"
    caught_up = kadmin.quorum_caught_up(cluster, cluster.nodes[0], CAUGHT_UP_MS)
    behind = sorted(v for v in status.voters if not caught_up.get(v, False))
    if behind:  # one of them may be the one left out, the rest could not form a majority
        return f"controller voters {behind} are not caught up with the leader: no voter is removed"
    return None


def _answered_status(cluster) -> kadmin.QuorumStatus:
    """The quorum's status, asked for up to VOTERS_WAIT_S: a leader killed an instant
    ago leaves none to answer until the others elect one."""
    return kadmin.quorum_status_answered(cluster, cluster.nodes[0], time.monotonic() + VOTERS_WAIT_S)


def _wait_voters(cluster, expected: set[int]) -> None:
    """Waits until the quorum's voters are exactly `expected` (the change commits first)."""
    deadline = time.monotonic() + VOTERS_WAIT_S
    while (voters := set(kadmin.quorum_status_answered(cluster, cluster.nodes[0], deadline).voters)) != expected:
        if time.monotonic() > deadline:
            raise TimeoutError(f"controller voters {sorted(voters)}, expected {sorted(expected)} "
                               f"after {VOTERS_WAIT_S:g} s")
        time.sleep(0.5)


def new_replicas(current: list[int], brokers: Sequence[int], change: str, rng: random.Random) -> list[int]:
    """The replica list a `reassign` moves a partition to; always differs from `current`
    when it has two replicas or more."""
    if change not in CHANGES:
        raise ValueError(f"unknown reassign change {change!r} (valid: {', '.join(CHANGES)})")
    spare = sorted(set(brokers) - set(current))
    if change == "move" and spare:
        moved = list(current)
        moved[rng.randrange(len(moved))] = rng.choice(spare)
        return moved
    if change == "move" and len(current) > MIN_REPLICAS:
        dropped = list(current)
        del dropped[rng.randrange(len(dropped))]
        return dropped
    shift = rng.randrange(1, len(current)) if len(current) > 1 else 0
    return current[shift:] + current[:shift]


def _wipe(cluster, node: str) -> None:
    """Empties the node's log dir and formats it again: a broker with a new identity (and
    in a dynamic quorum a new directory id, see KafkaStorage.format)."""
    data = shlex.quote(cluster.db.data_dir(node))
    cluster.ssh[node].exec(f"rm -rf {data} && mkdir -p {data}", timeout=60)
    cluster.db.ensure_formatted(node)


def _dynamic(cluster) -> bool:
    """Whether the cluster runs a dynamic (KIP-853) controller quorum."""
    return cluster.db.dynamic_quorum


def _zookeeper_mode(cluster) -> bool:
    """Whether the brokers keep their metadata in ZooKeeper (no KRaft to change)."""
    return isinstance(cluster.db, Ensemble) and cluster.db.zookeeper is not None


KIND = FaultKind(
    name="membership", summary="remove a broker and add it back wiped, reassign partitions, or "
                               "remove a controller from the quorum",
    make=lambda context: MembershipFault(context.topics),
    history_f={**{f: START for f in START_F.values()},
               **{f: STOP for f in (*STOP_F.values(), IDLE_STOP_F)}},
    params=("mode",), needs=Membership, cluster_traces=undo.TRACES,
    loses_data={
        START_F["remove-node"]: "wipes the broker's log dir: its replicas are gone until it copies "
                                "them back, so a record that only it and the leader held is lost if "
                                "the leader fails first (and in a static quorum a voter rejoins with "
                                "an empty metadata log, docs/nemesis.md)",
        # Kafka copies a partition to its new replicas before it drops old ones, and the
        # fault never goes below min ISR 2
        START_F["reassign"]: None,
        # on a dynamic quorum the voter leaves with its log intact and a majority keeps what
        # was committed; on a static one the strike is skipped
        START_F["quorum"]: None,
    },
    by_name_only="it wipes a node's log dir, a KRaft voter's included, which beside kill or pause "
                 "can lose what a static quorum committed (docs/nemesis.md)")
