"""A tansu broker as a process on a node: its settings (tansu's own command-line
flags, written to a properties file so a reused cluster can be compared with what a
test asks for: clusters/reconfigure.py), launching it under its pid file, waiting
until it serves, and its log.

Every tansu 0.6.0 broker calls itself node 111 (tansu_broker::NODE_ID) and
answers metadata with itself as the one broker and leader of every partition: the
brokers share nothing but the storage engine."""
from __future__ import annotations

import shlex
from pathlib import Path

from clusters.nodes.inventory import Inventory
from clusters.nodes.local import port_open
from clusters.nodes.daemon import NodeProcess
from clusters.nodes.ssh import SSHPool
from clusters.nodes.powerfs import POWERFS_KEY, names_model
from clusters.tansu.install import TANSU_VERSION, binary, build_dir

CLIENT_PORT = 9092
NODE_ID = 111  # tansu_broker::NODE_ID: every broker's id
START_TIMEOUT = 60
LOG_LEVEL_KEY = "logtrial.rust_log"  # tansu's RUST_LOG
POSTGRES_PREFIX = "postgres."  # --set postgres.<name>=value: a setting of the storage node


class TansuConfig:
    """The inventory's settings, then the caller's (which win), split into the
    brokers' flags, logtrial's own keys and the storage node's settings."""

    def __init__(self, inventory_settings: dict[str, str], settings: dict | None = None) -> None:
        merged = {**inventory_settings, **(settings or {})}
        self.log_level = merged.pop(LOG_LEVEL_KEY, "warn")
        # the storage node's data dir on powerfs, for the power fault (the brokers keep nothing)
        self.powerfs_names = names_model(merged.pop(POWERFS_KEY, "false"))
        self.postgres = {k[len(POSTGRES_PREFIX):]: v for k, v in merged.items() if k.startswith(POSTGRES_PREFIX)}
        self.flags = {k: v for k, v in merged.items() if not k.startswith((POSTGRES_PREFIX, "logtrial."))}


class TansuBroker(NodeProcess):
    label = "broker"

    def __init__(self, ssh: SSHPool, inventory: Inventory, config: TansuConfig, storage_url: str) -> None:
        super().__init__(ssh)
        self.inventory, self.config, self.storage_url = inventory, config, storage_url

    # -- layout -----------------------------------------------------------------------
    def dir(self, node: str) -> str:
        return f"{self.inventory.node(node).home}/tansu"

    def config_file(self, node: str) -> str:
        return f"{self.dir(node)}/broker.properties"

    def pid_file(self, node: str) -> str:
        return f"{self.dir(node)}/tansu.pid"

    def log_file(self, node: str) -> str:
        return f"{self.dir(node)}/tansu.log"

    def binary(self, node: str) -> str:
        """The cache's binary on a node that shares this machine's disk, else an uploaded
        copy, in a directory named as the cache's (a build with other flags is another copy)."""
        if self.inventory.node(node).local:
            return str(binary())
        return f"{self.inventory.node(node).home}/{build_dir().name}/tansu"

    def address(self, node: str) -> str:
        return f"{self.inventory.node(node).host}:{CLIENT_PORT}"

    def properties(self, node: str) -> dict[str, str]:
        """tansu broker's flags (`tansu broker --help`), logtrial's defaults first."""
        url = f"tcp://{self.address(node)}"
        return {"cluster-id": self.inventory.name, "listener-url": url, "advertised-listener-url": url,
                "storage-engine": self.storage_url, **self.config.flags}

    # -- set-up -----------------------------------------------------------------------
    def install(self, node: str) -> None:
        """Uploads the cache's binary to a remote node that lacks it (60 MB, once)."""
        if self.inventory.node(node).local:
            return
        session, target = self._session(node), self.binary(node)
        if session.exec(f"test -x {shlex.quote(target)}", check=False, timeout=15).exit_code:
            session.exec(f"mkdir -p {shlex.quote(str(Path(target).parent))}", timeout=15)
            session.upload(binary(), target + ".tmp")
            session.exec(f"chmod +x {shlex.quote(target)}.tmp && mv {shlex.quote(target)}.tmp "
                         f"{shlex.quote(target)}", timeout=15)

    def setup(self, node: str) -> None:
        session = self._session(node)
        session.exec(f"mkdir -p {shlex.quote(self.dir(node))}", timeout=15)
        session.write_file(self.config_file(node),
                           "".join(f"{k}={v}\n" for k, v in self.properties(node).items()))

    # -- lifecycle --------------------------------------------------------------------
    def start(self, node: str) -> None:
        self.launch(node)
        self.wait_ready(node)

    def launch(self, node: str) -> int:
        flags = " ".join(f"--{k} {shlex.quote(v)}" for k, v in self.properties(node).items())
        return self._session(node).start_daemon(f"{shlex.quote(self.binary(node))} broker {flags}",
                                                self.pid_file(node), self.log_file(node),
                                                env={"RUST_LOG": self.config.log_level})

    def wait_ready(self, node: str, timeout: float | None = None) -> None:
        self._wait_serving(node, timeout or START_TIMEOUT, f"tansu {TANSU_VERSION} broker")

    def serves_metadata(self, node: str) -> bool:
        """It answers metadata on its listener, naming itself (which needs the storage engine)."""
        host = self.inventory.node(node).host
        return port_open(host, CLIENT_PORT, 1) and host in _broker_hosts(host)

    # -- logs -------------------------------------------------------------------------
    def log_tail(self, node: str, lines: int = 40) -> str:
        return self._tail(node, [self.log_file(node)], lines)

    def collect_logs(self, node: str, dest_dir: Path) -> None:
        self._download_files(node, [self.log_file(node), self.config_file(node)], dest_dir)


def _broker_hosts(host: str) -> set[str]:
    """Hosts of the brokers in the metadata served at host (empty if none answers)."""
    from confluent_kafka.admin import AdminClient  # loads librdkafka: only when needed

    from common.client_logging import QUIET_CLIENT_LOGGER
    admin = AdminClient({"bootstrap.servers": f"{host}:{CLIENT_PORT}", "logger": QUIET_CLIENT_LOGGER,
                         "socket.connection.setup.timeout.ms": 3000})
    try:
        return {b.host for b in admin.list_topics(timeout=3).brokers.values()}
    except Exception:  # noqa: BLE001 - any client error just means "not ready yet"
        return set()
