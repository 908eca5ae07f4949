"""A cluster as the runner and the nemeses see it: inventory + SSH + database, and the
one place that knows how to undo every fault (heal) and prove it is undone."""
from __future__ import annotations

import logging
import os
import shlex
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from clusters.db import DatabaseError
from clusters.inventory import Inventory, load_inventory
from clusters.kafka import KafkaDB
from clusters.kafka_paths import CLIENT_PORT
from clusters.ssh import NodeSession, SSHError, SSHPool
from nemesis import membership_undo, partition

log = logging.getLogger(__name__)

# Network faults live only in logtrial's own iptables chain (nemesis/partition.py):
# heal removes that chain and the jump into it, and leaves every other rule alone
# (on real machines the user's firewall lives there).
OUR_RULES = f"{partition.IPTABLES} -S 2>/dev/null | grep -- {shlex.quote(partition.CHAIN)} || true"


# how long a broker may take to rejoin after the faults are undone before heal restarts it
HEAL_SETTLE_TIMEOUT = 30.0
VERIFY_SETTLE_TIMEOUT = 20.0  # seconds a healed broker may take to answer metadata again
BROKER_IS = "broker is "


def clock_strobe_pid_file(offset_file: str) -> str:
    """Pid file of the clock nemesis's strobe loop, which keeps rewriting the offset file
    (nemesis/clock.py): heal must stop it, or it would undo the clock reset."""
    return f"{offset_file}.strobe.pid"


class ClusterNotHealed(RuntimeError):
    """verify_healed found faults still in place: {node: [problems]}."""

    def __init__(self, problems: dict[str, list[str]]) -> None:
        self.problems = problems
        lines = [f"node {node}: {'; '.join(items)}" for node, items in sorted(problems.items())]
        super().__init__("cluster not healed:\n  " + "\n  ".join(lines))


class Cluster:
    def __init__(self, inventory: Inventory, ssh: SSHPool, db: KafkaDB) -> None:
        self.inventory, self.ssh, self.db = inventory, ssh, db

    @classmethod
    def open(cls, inventory_path: str | os.PathLike, insecure_host_keys: bool = False,
             db_settings: dict | None = None, start: bool = True) -> "Cluster":
        """Connects to every node and (unless start=False) makes sure the database is
        installed, configured and serving; brokers already running are left alone."""
        inventory = load_inventory(inventory_path)
        ssh = SSHPool(inventory, insecure_host_keys=insecure_host_keys)
        cluster = cls(inventory, ssh, KafkaDB(inventory, ssh, db_settings))
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
        stopped = [n for n, running in self.ssh.run_on(
            self.nodes, lambda s: self.db.is_running(s.node.name)).items() if not running]
        # a release named by the inventory or the caller may replace a stopped one
        # (setup wipes it); the default never replaces anything silently
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
        def collect(session: NodeSession) -> str | None:
            node_dir = Path(dest_dir) / session.node.name
            try:
                self.db.collect_logs(session.node.name, node_dir)
                return None
            except (SSHError, OSError) as e:
                node_dir.mkdir(parents=True, exist_ok=True)
                (node_dir / "ERROR").write_text(f"{e}\n")
                return str(e)

        results = self.ssh.run_on(self.nodes, collect)
        return {node: error for node, error in results.items() if error}

    # -- heal -------------------------------------------------------------------------
    def heal(self) -> list[str]:
        """Undoes every fault on every node: network rules, paused and dead brokers,
        skewed clocks, membership changes (nemesis/membership_undo.py). Idempotent.
        Returns what it did, one line per action."""
        healed = self.ssh.run_on(self.nodes, self._heal_node)
        dead = [node for node in self.nodes if not healed[node][1]]
        # the membership fault wipes a node's log dir, a run stopped during set-up may never
        # have formatted it; either process may have died before doing so
        formatted = [node for node, did in self.ssh.run_on(
            dead, lambda s: self.db.ensure_formatted(s.node.name)).items() if did] if dead else []
        if dead:
            self.db.start_all(dead)
        done = [a for node in self.nodes for a in healed[node][0]]
        done += [f"{node}: formatted its log dir" for node in formatted]
        done += [f"{node}: restarted broker" for node in dead]
        # A broker can survive a fault yet never serve again (seen after a partition plus
        # clock jumps: its heartbeats to the controller "time out before being sent"
        # forever). Give each a while to rejoin, then restart it, and say so.
        stuck = self._not_serving([n for n in self.nodes if n not in dead], HEAL_SETTLE_TIMEOUT)
        if stuck:
            self.ssh.run_on(stuck, lambda s: self.db.stop(s.node.name))
            self.db.start_all(stuck)
            done += [f"{node}: restarted broker (not serving {HEAL_SETTLE_TIMEOUT:g} s "
                     "after the heal)" for node in stuck]
        # with every broker back: removed brokers replicated again, moved partitions put back
        return done + membership_undo.heal(self)

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

    def _heal_node(self, session: NodeSession) -> tuple[list[str], bool]:
        """Heals one node; returns its actions and whether its broker process is alive."""
        node = session.node.name
        actions = []
        # list and flush in one round trip: heal runs often and SSH is slow on a busy box
        ours = _rule_lines(session.exec(f"{OUR_RULES}; {partition.HEAL_SCRIPT}", timeout=30).stdout)
        if ours:
            dropped = sum(line.startswith(f"-A {partition.CHAIN} ") for line in ours)
            actions.append(f"{node}: removed logtrial's iptables chain ({dropped} rules)")
        state = self.db.state(node)
        if state == "paused":
            self.db.resume(node)
            actions.append(f"{node}: resumed paused broker")
        strobe = clock_strobe_pid_file(self.db.clock_offset_file(node))
        if session.signal(strobe, "TERM"):
            session.wait_exit(strobe, 10)
            actions.append(f"{node}: stopped clock strobe")
        if self._clock_offset(session) != "+0":
            self.db.reset_clock(node)
            actions.append(f"{node}: reset clock offset")
        if self.db.zookeeper:
            actions += self._heal_zookeeper(node)
        return actions, state != "stopped"

    def _heal_zookeeper(self, node: str) -> list[str]:
        zookeeper = self.db.zookeeper
        state = zookeeper.state(node)
        if state == "paused":
            zookeeper.resume(node)
            return [f"{node}: resumed paused zookeeper"]
        if state == "stopped":
            zookeeper.launch(node)
            zookeeper.wait_ready(node)
            return [f"{node}: restarted zookeeper"]
        return []

    def _clock_offset(self, session: NodeSession) -> str:
        return session.exec(f"cat {shlex.quote(self.db.clock_offset_file(session.node.name))}",
                            check=False, timeout=15).stdout.strip()

    def verify_healed(self) -> None:
        """Raises ClusterNotHealed naming each node and what is still wrong with it."""
        def check(session: NodeSession) -> list[str]:
            try:
                return self._node_problems(session)
            except SSHError as e:
                return [f"unreachable over SSH ({e})"]

        found = self.ssh.run_on(self.nodes, check)
        # a broker that was just restarted, or is busy, may need a moment to answer
        running = [node for node in self.nodes if not any(p.startswith(BROKER_IS) for p in found[node])]
        for node in self._not_serving(running, VERIFY_SETTLE_TIMEOUT):
            found[node].append(f"broker not serving metadata on port {CLIENT_PORT}")
        for node, items in membership_undo.problems(self).items():
            found[node] += items
        problems = {node: items for node, items in found.items() if items}
        if problems:
            raise ClusterNotHealed(problems)

    def _node_problems(self, session: NodeSession) -> list[str]:
        """What is wrong on the node itself (serving metadata is checked after)."""
        node = session.node.name
        found = []
        rules = _rule_lines(session.exec(OUR_RULES, timeout=30).stdout)
        if rules:
            found.append(f"logtrial's iptables rules remain: {' | '.join(rules)}")
        state = self.db.state(node)
        if state != "running":
            found.append(f"{BROKER_IS}{state}")
        if self.db.zookeeper and self.db.zookeeper.state(node) != "running":
            found.append(f"zookeeper is {self.db.zookeeper.state(node)}")
        clock = self._clock_offset(session)
        if clock != "+0":
            found.append(f"clock offset is {clock or 'missing'!r}, not +0")
        if session.pid_alive(clock_strobe_pid_file(self.db.clock_offset_file(node))):
            found.append("clock strobe still running")
        return found

    def close(self) -> None:
        self.ssh.close()

    def __enter__(self) -> "Cluster":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def adopt_recorded_release(db: KafkaDB, nodes: list[str] | None = None) -> KafkaDB:
    """For commands that manage what is there (status, heal, down): when neither the
    inventory nor the caller named a release, the one the nodes were set up for (an
    inventory of real machines is never rewritten, so it may not say). The first
    reachable node that recorded one decides."""
    if db.release_chosen:
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


def _rule_lines(listing: str) -> list[str]:
    return [line for line in listing.splitlines() if line.strip()]
