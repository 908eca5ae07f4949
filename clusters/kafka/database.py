"""Apache Kafka brokers driven over SSH, any version clusters/kafka/versions.py knows:
KRaft combined mode (every node is broker and controller) or, for 3.x, ZooKeeper mode
with a ZooKeeper server on every node (clusters/kafka/zookeeper.py). Brokers run under
libfaketime so the clock nemesis can skew a node's clock by rewriting one file.

KafkaDB is the Database (clusters/db.py) composed of its pieces: the settings
(kafka_config), the layout (kafka_paths), the jars (kafka_jars), the broker process
(kafka_process) and what a node holds on disk (kafka_storage). Topics and the other
admin operations are in kafka_admin.
"""
from __future__ import annotations

import shlex
from pathlib import Path

from clusters.db import DatabaseError
from clusters.nodes.inventory import Inventory
from clusters.kafka.config import PRODUCER_STATE_SETTINGS, KafkaConfig
from clusters.kafka.jars import KafkaJars
from clusters.kafka.paths import KafkaPaths
from clusters.nodes.power_layers import PowerLayers
from clusters.kafka.process import START_TIMEOUT, KafkaProcess
from clusters.kafka.storage import FORMATTED, KafkaStorage
from clusters.kafka.versions import ZK, KafkaRelease
from clusters.nodes.daemon import failure_of
from clusters.nodes.ssh import SSHPool
from clusters.kafka.zookeeper import ZooKeeper


class KafkaDB(KafkaProcess):
    """The broker process (start, stop, kill, pause, state, logs: KafkaProcess) plus
    set-up, storage and the ZooKeeper ensemble of ZooKeeper mode."""

    producer_state_settings = PRODUCER_STATE_SETTINGS

    def __init__(self, inventory: Inventory, ssh: SSHPool, settings: dict | None = None,
                 start_timeout: float = START_TIMEOUT) -> None:
        """KafkaVersionError (a ValueError) if the settings ask for a release that
        cannot run."""
        config = KafkaConfig(inventory.settings, settings)
        super().__init__(ssh, KafkaPaths(inventory, config.release), config, start_timeout)
        self.inventory = inventory
        self.jars = KafkaJars(ssh, self.paths)
        self.storage = KafkaStorage(ssh, self.paths, config, self)
        # only the broker's log dir (in KRaft mode it holds the metadata log too); not yet
        # ZooKeeper's, whose server starts before the brokers and would need a placement
        # at its own launch
        self.power = PowerLayers(ssh, lambda node: [self.paths.data_dir(node)], lambda: self.config.powerfs_names)
        self.zookeeper = (ZooKeeper(inventory, ssh, self.release, self.paths.libs_dir)
                          if self.release.mode == ZK else None)

    # -- what callers ask of the settings and the layout --------------------------------
    @property
    def release_chosen(self) -> bool:
        return self.config.release_chosen

    @property
    def dynamic_quorum(self) -> bool:
        return self.config.dynamic_quorum

    @property
    def faketime(self) -> bool:
        return self.config.faketime

    @property
    def powerfs(self) -> bool:
        return self.config.powerfs

    def node_id(self, node: str) -> int:
        return self.paths.node_id(node)

    def kafka_dir(self, node: str) -> str:
        return self.paths.kafka_dir(node)

    def config_file(self, node: str) -> str:
        return self.paths.config_file(node)

    def data_dir(self, node: str) -> str:
        return self.paths.data_dir(node)

    def clock_offset_file(self, node: str) -> str:
        return self.paths.clock_offset_file(node)

    def bootstrap_servers(self) -> str:
        return self.paths.bootstrap_servers()

    def controller_servers(self) -> str:
        return self.paths.controller_servers()

    def properties(self, node: str) -> dict[str, str]:
        return self.config.properties(self.paths, node,
                                      self.zookeeper.connect_string() if self.zookeeper else None)

    def disk_directory_id(self, node: str) -> str:
        return self.storage.disk_directory_id(node)

    def recorded_release(self, node: str) -> KafkaRelease | None:
        return self.storage.recorded_release(node)

    def for_release(self, release: KafkaRelease) -> "KafkaDB":
        """The same cluster and settings, another release."""
        return KafkaDB(self.inventory, self.ssh, self.config.for_release(release), self.start_timeout)

    # -- set-up -------------------------------------------------------------------------
    def install(self, node: str) -> None:
        self.jars.install(node)

    def setup(self, node: str) -> None:
        """Writes the config and formats storage (KRaft) or sets up ZooKeeper. A node
        last set up for another release or mode is wiped first: its data cannot be read
        by this one."""
        recorded = self.recorded_release(node)
        if recorded not in (None, self.release):
            self.for_release(recorded).wipe(node)  # its processes and files, ZooKeeper's too
        elif self.storage.recorded_quorum(node) != self.config.quorum_kind:
            self.wipe(node)  # a static quorum's metadata log cannot become dynamic, nor back
        self.storage.write_config(node, self.properties(node))
        self.reset_clock(node)
        if self.zookeeper:
            self.zookeeper.setup(node)
        else:
            self.storage.format(node)
        self.storage.record(node)

    def ensure_formatted(self, node: str) -> bool:
        """Formats a KRaft node whose log dir was wiped (the membership fault does that,
        and its control process may die before the node is formatted again) or never
        formatted (a run stopped during set-up); True if it had to. A broker never
        starts on an unformatted dir ("No readable meta.properties files found")."""
        if self.zookeeper:
            return False
        found = self.storage.found(node)
        if found == FORMATTED:
            return False
        if found:
            self.storage.reformat(node)
        else:
            self.setup(node)  # a run stopped during set-up, before it wrote the node's config
        return True

    def reset_clock(self, node: str) -> None:
        self._session(node).write_file(self.clock_offset_file(node), "+0\n")

    # -- lifecycle ----------------------------------------------------------------------
    def start_all(self, nodes: list[str] | None = None) -> None:
        """Starts several brokers together: a KRaft quorum needs a majority to come up.
        In ZooKeeper mode the ensemble (every node) is started first where it is down."""
        failed = self.start_each(nodes)
        if len(failed) == 1:
            raise next(iter(failed.values()))
        if failed:
            raise DatabaseError(",".join(failed), f"failed on {len(failed)} nodes: "
                                + "; ".join(str(e) for e in failed.values()))

    def start_each(self, nodes: list[str] | None = None) -> dict[str, Exception]:
        """start_all, but each broker that did not start is returned, {node: why}, so
        a heal can retry those alone (Cluster.revive)."""
        nodes = nodes or self.inventory.node_names
        if self.zookeeper:
            self.zookeeper.start_all()
        self.ssh.run_on(nodes, lambda s: self.launch(s.node.name))
        waited = self.ssh.run_on(nodes, lambda s: failure_of(self.wait_ready, s.node.name))
        return {node: e for node, e in waited.items() if e is not None}

    def launch(self, node: str) -> int:
        """Starts the broker without waiting, its data first put on powerfs or taken off
        it as the settings say (a broker already running is left where it is)."""
        if not self.is_running(node):
            self.power.place(node)
        return super().launch(node)

    # -- power loss (nemesis/power.py) -------------------------------------------------
    def power_dirs(self, node: str) -> list[str]:
        return self.power.dirs(node)

    def power_cut(self, node: str, mode: str) -> dict:
        return self.power.cut(node, mode)

    def power_off(self, node: str) -> None:
        """Every process of the node SIGKILLed (the broker, and ZooKeeper in ZooKeeper
        mode), then the layer taken off: the data stays as the cut left it."""
        self.kill(node)
        if self.zookeeper:
            self.zookeeper.kill(node)
        self.power.take_off(node)

    def unsynced_acks(self) -> str | None:
        return self.config.unsynced_acks()

    def power_on(self, node: str) -> None:
        """ZooKeeper first where it runs, then the broker, on the layer again."""
        if self.zookeeper and not self.zookeeper.is_running(node):
            self.zookeeper.launch(node)
            self.zookeeper.wait_ready(node)
        if not self.is_running(node):
            self.launch(node)

    def shutdown(self, node: str) -> None:
        """Stops the broker and, in ZooKeeper mode, the node's ZooKeeper server."""
        self.stop(node)
        if self.zookeeper:
            self.zookeeper.stop(node)

    def wipe(self, node: str) -> None:
        self.kill(node)
        self.power.take_off(node)  # the data moved back first, so that all of it goes
        self._session(node).exec("rm -rf " + " ".join(shlex.quote(p) for p in (
            self.paths.data_dir(node), self.paths.logs_dir(node), self.pid_file(node))), timeout=60)
        if self.zookeeper:
            self.zookeeper.wipe(node)

    def collect_logs(self, node: str, dest_dir: Path) -> None:
        """Copies the broker's logs and its server.properties into dest_dir (and
        ZooKeeper's into dest_dir/zookeeper)."""
        super().collect_logs(node, dest_dir)
        if self.zookeeper:
            self.zookeeper.collect_logs(node, Path(dest_dir) / "zookeeper")

