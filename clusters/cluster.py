"""A cluster as the runner and the nemeses see it: inventory + SSH + database, and the
database's part of a heal (revive, database_problems), which knows nothing of faults:
nemesis/heal.py undoes and checks their traces, then calls it."""
from __future__ import annotations

import logging
import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable

from clusters.db import Database, DatabaseError, Ensemble, LogFiles, Process, Versions, require
from clusters.nodes.inventory import Inventory, load_inventory
from clusters.kafka.paths import CLIENT_PORT
from clusters.restarts import NodesNotRevived, start_within
from clusters.nodes.ssh import NodeSession, SSHError, SSHPool
from clusters.systems import open_database

log = logging.getLogger(__name__)

# how long a heal may keep trying to bring every node back (a voter refused until the
# quorum moves on past a wiped leader took minutes in docs/findings.md, seed 50)
HEAL_BOUND = 300.0
# how long a broker may take to rejoin after the faults are undone before heal restarts it
HEAL_SETTLE_TIMEOUT = 30.0
VERIFY_SETTLE_TIMEOUT = 20.0  # seconds a healed broker may take to answer metadata again
BROKER_IS = "broker is "


class Cluster:
    def __init__(self, inventory: Inventory, ssh: SSHPool, db: Database) -> None:
        self.inventory, self.ssh, self.db = inventory, ssh, db

    @classmethod
    def open(cls, inventory_path: str | os.PathLike, insecure_host_keys: bool = False,
             db_settings: dict | None = None, start: bool = True) -> "Cluster":
        """Connects to every node and (unless start=False) makes sure the database is
        installed, configured and serving; brokers already running are left alone."""
        inventory = load_inventory(inventory_path)
        ssh = SSHPool(inventory, insecure_host_keys=insecure_host_keys)
        cluster = cls(inventory, ssh, open_database(inventory, ssh, db_settings))
        try:
            ssh.run_on(inventory.node_names, NodeSession.connect)
            if start:
                cluster.start_database()
            else:
                cluster.db = adopt_recorded_release(cluster.db)
        except BaseException:
            ssh.close()
            raise
        return cluster

    @property
    def nodes(self) -> list[str]:
        return self.inventory.node_names

    def start_database(self) -> None:
        db = require(self.db, Process, "starting the database")
        stopped = [n for n, running in self.ssh.run_on(
            self.nodes, lambda s: db.is_running(s.node.name)).items() if not running]
        # a release named by the inventory or the caller may replace a stopped one
        # (setup wipes it); the default never replaces anything silently
        if isinstance(self.db, Versions):
            self._check_recorded_release(self.nodes if not self.db.release_chosen else
                                         [n for n in self.nodes if n not in stopped])
        if not stopped:
            return
        self.ssh.run_on(stopped, lambda s: (self.db.install(s.node.name),
                                            self.db.setup(s.node.name)))
        self.db.start_all(stopped)

    def _check_recorded_release(self, nodes: list[str]) -> None:
        """A node set up for another version or mode is an error naming both: a run
        must never test a release other than the one it asked for."""
        found = self.ssh.run_on(nodes, lambda s: self.db.recorded_release(s.node.name))
        for node in nodes:
            release = found[node]
            if release is not None and release != self.db.release:
                raise DatabaseError(
                    node, f"is set up for {release.label}, but {self.db.release.label} was asked for; pass "
                    f"--kafka-version {release.version} --kafka-mode {release.mode}, or take the "
                    "cluster down first (logtrial cluster down)")

    def reset_database(self) -> None:
        """A clean slate for the next test: kill every broker, wipe its data, format
        and start again (same settings)."""
        self.ssh.run_on(self.nodes, lambda s: (self.db.wipe(s.node.name),
                                                self.db.setup(s.node.name)))
        self.db.start_all()

    def collect_logs(self, dest_dir: str | os.PathLike) -> dict[str, str]:
        """Copies every node's database logs into dest_dir/<node>/, in parallel. Best
        effort: a node that cannot be reached gets an ERROR file instead, and the rest
        are still collected. Returns {node: error} for the nodes that failed."""
        db = require(self.db, LogFiles, "collecting logs")

        def collect(session: NodeSession) -> str | None:
            node_dir = Path(dest_dir) / session.node.name
            try:
                db.collect_logs(session.node.name, node_dir)
                return None
            except (SSHError, OSError) as e:
                node_dir.mkdir(parents=True, exist_ok=True)
                (node_dir / "ERROR").write_text(f"{e}\n")
                return str(e)

        results = self.ssh.run_on(self.nodes, collect)
        return {node: error for node, error in results.items() if error}

    # -- the database's part of a heal ------------------------------------------------
    # It knows nothing of faults (nemesis/heal.py undoes their traces first): it brings
    # back whatever of the database is not running or not serving.
    def revive(self, deadline: float | None = None) -> list[str]:
        """Restarts the coordination service where it is down or paused, formats a wiped
        log dir, restarts dead brokers, and restarts brokers that survived yet do not
        serve within HEAL_SETTLE_TIMEOUT; a broker that does not start is retried until
        `deadline` (time.monotonic(); default HEAL_BOUND from now), then NodesNotRevived
        names each node left and why (clusters/restarts.py). Idempotent. Returns what it
        did, one line per action."""
        deadline = deadline if deadline is not None else time.monotonic() + HEAL_BOUND
        db = require(self.db, Process, "healing the cluster")
        found = self.ssh.run_on(self.nodes, lambda s: (self._revive_ensemble(s.node.name),
                                                       db.state(s.node.name) != "stopped"))
        dead = [node for node in self.nodes if not found[node][1]]
        # the membership fault wipes a node's log dir, a run stopped during set-up may never
        # have formatted it; either process may have died before doing so
        formatted = [node for node, did in self.ssh.run_on(
            dead, lambda s: db.ensure_formatted(s.node.name)).items() if did] if dead else []
        done = [a for node in self.nodes for a in found[node][0]]
        done += [f"{node}: formatted its log dir" for node in formatted]
        done += self._restart(dead, deadline, done)
        # A broker can survive a fault yet never serve again (seen after a partition plus
        # clock jumps: its heartbeats to the controller "time out before being sent"
        # forever). Give each a while to rejoin, then restart it, and say so.
        stuck = self._not_serving([n for n in self.nodes if n not in dead], HEAL_SETTLE_TIMEOUT)
        if stuck:
            self.ssh.run_on(stuck, lambda s: db.stop(s.node.name))
            done += self._restart(stuck, deadline, done, f" (not serving {HEAL_SETTLE_TIMEOUT:g} s after the heal)")
        return done

    def _restart(self, nodes: list[str], deadline: float, done: list[str], note: str = "") -> list[str]:
        """start_within; what was done before a NodesNotRevived is kept in it."""
        try:
            return start_within(self.db, self.ssh, nodes, deadline, note) if nodes else []
        except NodesNotRevived as e:
            e.actions[:0] = done
            raise

    def _ensemble(self):
        """The coordination service beside the database (ZooKeeper), or None."""
        return self.db.zookeeper if isinstance(self.db, Ensemble) else None

    def _revive_ensemble(self, node: str) -> list[str]:
        zookeeper = self._ensemble()
        state = zookeeper.state(node) if zookeeper else "running"
        if state == "paused":
            zookeeper.resume(node)
            return [f"{node}: resumed paused zookeeper"]
        if state == "stopped":
            zookeeper.launch(node)
            zookeeper.wait_ready(node)
            return [f"{node}: restarted zookeeper"]
        return []

    def _not_serving(self, nodes: list[str], timeout: float) -> list[str]:
        """The nodes whose broker still does not serve metadata after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        waiting = list(nodes)
        while waiting:
            with ThreadPoolExecutor(max_workers=len(waiting)) as pool:
                serving = dict(zip(waiting, pool.map(self.db.serves_metadata, waiting)))
            waiting = [n for n in waiting if not serving[n]]
            if not waiting or time.monotonic() > deadline:
                break
            time.sleep(1)
        return waiting

    def problems_per_node(self, check: Callable[[NodeSession], list[str]]) -> dict[str, list[str]]:
        """check(session) on every node in parallel; a node SSH cannot reach has that
        as its problem."""
        def checked(session: NodeSession) -> list[str]:
            try:
                return check(session)
            except SSHError as e:
                return [f"unreachable over SSH ({e})"]

        return self.ssh.run_on(self.nodes, checked)

    def database_problems(self) -> dict[str, list[str]]:
        """{node: [problem]}: a broker or ZooKeeper not running, or a broker not serving
        metadata VERIFY_SETTLE_TIMEOUT seconds after a heal."""
        found = self.problems_per_node(self._process_problems)
        # a broker that was just restarted, or is busy, may need a moment to answer
        running = [node for node in self.nodes if not any(p.startswith(BROKER_IS) for p in found[node])]
        for node in self._not_serving(running, VERIFY_SETTLE_TIMEOUT):
            found[node].append("storage node not accepting connections" if self.inventory.node(node).role
                               else f"broker not serving metadata on port {CLIENT_PORT}")
        return found

    def _process_problems(self, session: NodeSession) -> list[str]:
        node = session.node.name
        found = []
        state = require(self.db, Process, "checking the cluster").state(node)
        if state != "running":
            found.append(f"{BROKER_IS}{state}")
        zookeeper = self._ensemble()
        if zookeeper and zookeeper.state(node) != "running":
            found.append(f"zookeeper is {zookeeper.state(node)}")
        return found

    def close(self) -> None:
        self.ssh.close()

    def __enter__(self) -> "Cluster":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def adopt_recorded_release(db: Database, nodes: list[str] | None = None) -> Database:
    """For commands that manage what is there (status, heal, down): when neither the
    inventory nor the caller named a release, the one the nodes were set up for (an
    inventory of real machines is never rewritten, so it may not say). The first
    reachable node that recorded one decides. A database of one release is kept."""
    if not isinstance(db, Versions) or db.release_chosen:
        return db
    for node in nodes or db.inventory.node_names:
        try:
            recorded = db.recorded_release(node)
        except SSHError:
            continue  # the caller reports unreachable nodes
        if recorded is not None:
            if recorded == db.release:
                return db
            return db.for_release(recorded)
    return db

