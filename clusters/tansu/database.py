"""tansu (https://crates.io/crates/tansu), a Kafka-compatible broker whose brokers
are stateless and keep everything in a storage engine, here PostgreSQL.

TansuDB is the Database (clusters/db.py) of an inventory with `db: tansu`: every
node without a role runs a broker (clusters/tansu/process.py), the one node with
`role: storage` runs PostgreSQL (clusters/tansu/postgres.py). Each call names a node
and goes to what runs there, so the faults that strike nodes (pause, kill,
partition) strike the storage node as they strike a broker, and heal and
verification bring back either.

What it has, as capabilities: Process, Pause, LogFiles, Config, PowerLoss (the storage
node's data dir on powerfs: PostgreSQL fsyncs its commits, so a power loss must lose
nothing it acknowledged). What it lacks:
Clock (libfaketime preloaded into `setpriv` is set up as root and cannot be used by
the PostgreSQL server it becomes, so the storage node's clock cannot be skewed the
way the brokers' could; a clock fault that skewed only some nodes would be recorded
as skewing all of them), Versions (one pinned release), Membership (no KRaft, no
reassignment), Ensemble, ProducerState. Its SystemKind (clusters/tansu/system.py) says what
tansu does of Kafka's producer API (docs/findings.md, tansu)."""
from __future__ import annotations

import shlex
import time
from pathlib import Path

from clusters.db import DatabaseError
from clusters.nodes.inventory import Inventory
from clusters.nodes.daemon import NodeProcess, failure_of
from clusters.nodes.power_layers import PowerLayers
from clusters.tansu.postgres import PostgresNode
from clusters.nodes.ssh import SSHPool
from clusters.tansu.install import TANSU_VERSION, TansuInstallError, ensure_installed
from clusters.tansu.process import NODE_ID, TansuBroker, TansuConfig

STORAGE_ROLE = "storage"
STORAGE_WAIT_S = 60.0


class TansuDB:
    version = TANSU_VERSION

    def __init__(self, inventory: Inventory, ssh: SSHPool, settings: dict | None = None) -> None:
        self.inventory, self.ssh = inventory, ssh
        self.config = TansuConfig(inventory.settings, settings)
        self.storage_node = inventory.nodes_with_role(STORAGE_ROLE)[0]  # the inventory checked there is one
        self.broker_nodes = inventory.nodes_with_role(None)
        self.postgres = PostgresNode(ssh, inventory, self.config.postgres)
        self.power = PowerLayers(ssh, self.power_dirs, lambda: self.config.powerfs_names)
        self.brokers = TansuBroker(ssh, inventory, self.config, self.postgres.url(self.storage_node))

    def _on(self, node: str) -> NodeProcess:
        """What runs on `node`: PostgreSQL or a broker."""
        return self.postgres if node == self.storage_node else self.brokers

    # -- Database -----------------------------------------------------------------------
    def install(self, node: str) -> None:
        """tansu built into the cache (once: clusters/tansu/install.py) with its schema, then
        what the node needs of it."""
        try:
            ensure_installed()
        except TansuInstallError as e:
            raise DatabaseError(node, str(e)) from None
        self._on(node).install(node)

    def setup(self, node: str) -> None:
        self._on(node).setup(node)

    def wipe(self, node: str) -> None:
        if node == self.storage_node:
            self.postgres.kill(node)
            self.power.take_off(node)   # the data moved back first, so that all of it goes
            self.postgres.wipe(node)
            return
        self.brokers.kill(node)
        self.ssh[node].exec(f"rm -rf {shlex.quote(self.brokers.dir(node))}", timeout=60)

    def ensure_formatted(self, node: str) -> bool:
        """Sets up a storage node that has no data dir (a run stopped during set-up);
        brokers keep nothing."""
        if node != self.storage_node or self.postgres.is_formatted(node):
            return False
        self.postgres.setup(node)
        return True

    def start_all(self, nodes: list[str] | None = None) -> None:
        failed = self.start_each(nodes)
        if failed:
            raise DatabaseError(",".join(failed), "; ".join(str(e) for e in failed.values()))

    def start_each(self, nodes: list[str] | None = None) -> dict[str, Exception]:
        """The storage node first (a broker cannot serve without it), then the brokers
        together; {node: why} for each that did not start."""
        nodes = nodes or self.inventory.node_names
        failed: dict[str, Exception] = {}
        if self.storage_node in nodes:
            failed.update(self._start([self.storage_node]))
        brokers = [n for n in nodes if n != self.storage_node]
        if brokers:
            failed.update(self._start(brokers))
        return failed

    def _start(self, nodes: list[str]) -> dict[str, Exception]:
        self.ssh.run_on(nodes, lambda s: self.launch(s.node.name) if not self.is_running(s.node.name) else None)
        waited = self.ssh.run_on(nodes, lambda s: failure_of(self.wait_ready, s.node.name))
        return {node: e for node, e in waited.items() if e is not None}

    def serves_metadata(self, node: str) -> bool:
        """A broker answers metadata; the storage node accepts connections."""
        return self._on(node).serves_metadata(node)

    def bootstrap_servers(self) -> str:
        return ",".join(self.brokers.address(n) for n in self.broker_nodes)

    def node_id(self, node: str) -> int:
        return NODE_ID  # every tansu broker's

    def daemon_name(self, node: str) -> str:
        """How heal actions name what runs on `node` (clusters/restarts.daemon_name)."""
        return "PostgreSQL" if node == self.storage_node else "broker"

    def data_dir(self, node: str) -> str:
        return self.postgres.data_dir(node) if node == self.storage_node else self.brokers.dir(node)

    # -- Process, Pause -----------------------------------------------------------------
    def pid_file(self, node: str) -> str:
        return self._on(node).pid_file(node)

    def start(self, node: str) -> None:
        self._on(node).start(node)

    def launch(self, node: str) -> int:
        """Starts what runs on the node without waiting; the storage node's data first
        put on powerfs or taken off it as the settings say (unless it is running)."""
        if node == self.storage_node and not self.is_running(node):
            self.power.place(node)
        return self._on(node).launch(node)

    def wait_ready(self, node: str, timeout: float | None = None) -> None:
        self._on(node).wait_ready(node, timeout)

    def stop(self, node: str) -> None:
        self._on(node).stop(node)

    def shutdown(self, node: str) -> None:
        self.stop(node)

    def kill(self, node: str) -> None:
        self._on(node).kill(node)

    def is_running(self, node: str) -> bool:
        return self._on(node).is_running(node)

    def state(self, node: str) -> str:
        return self._on(node).state(node)

    def pause(self, node: str) -> None:
        self._on(node).pause(node)

    def resume(self, node: str) -> None:
        self._on(node).resume(node)

    # -- PowerLoss (nemesis/power.py) ---------------------------------------------------
    @property
    def powerfs(self) -> bool:
        return self.power.wanted

    def power_dirs(self, node: str) -> list[str]:
        """The storage node's PostgreSQL data dir (its WAL inside); a broker keeps nothing."""
        return [self.postgres.data_dir(node)] if node == self.storage_node else []

    def power_cut(self, node: str, mode: str) -> dict:
        return self.power.cut(node, mode)

    def power_off(self, node: str) -> None:
        """What runs on the node SIGKILLed (PostgreSQL's whole process group, or the
        broker), then the layer taken off: the data stays as the cut left it."""
        self.kill(node)
        self.power.take_off(node)

    def unsynced_acks(self) -> None:
        """None: tansu answers a produce once PostgreSQL has committed it (tansu-storage
        0.6.0's `Postgres::produce` commits its transaction before it returns), and
        PostgreSQL, with fsync and synchronous_commit on (clusters/tansu/postgres.py),
        fsyncs its WAL before a commit returns."""
        return None

    def power_on(self, node: str) -> None:
        """Started again, on the layer again. A broker waits (up to STORAGE_WAIT_S) for the
        storage node, which comes back in the same strike when every node lost power: a
        broker that starts before PostgreSQL listens exits at once (connection refused)."""
        if node != self.storage_node:
            self._await_storage(STORAGE_WAIT_S)
        if not self.is_running(node):
            self.launch(node)

    def _await_storage(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not self.postgres.serves_metadata(self.storage_node) and time.monotonic() < deadline:
            time.sleep(0.25)

    # -- LogFiles, Config ---------------------------------------------------------------
    def log_tail(self, node: str, lines: int = 40) -> str:
        return self._on(node).log_tail(node, lines)

    def collect_logs(self, node: str, dest_dir: Path) -> None:
        self._on(node).collect_logs(node, dest_dir)

    def config_file(self, node: str) -> str:
        return self._on(node).config_file(node)

    def properties(self, node: str) -> dict[str, str]:
        return self._on(node).properties(node)

