"""The ZooKeeper ensemble a ZooKeeper-mode Kafka (3.x) needs: one server on every node,
from the same jars as the broker (Kafka's pom brings org.apache.zookeeper:zookeeper at the
version Kafka was built against), with the lifecycle of the broker: setup, start, stop,
kill, wipe, logs."""
from __future__ import annotations

import shlex
import socket
import time
from pathlib import Path
from typing import Callable

from clusters.db import DatabaseError
from clusters.nodes.inventory import Inventory
from clusters.kafka.versions import KafkaRelease
from clusters.nodes.daemon import NodeProcess
from clusters.nodes.ssh import SSHPool

CLIENT_PORT = 2181
PEER_PORT = 2888
ELECTION_PORT = 3888
START_TIMEOUT = 120
JVM_OPTS = "-Xms32m -Xmx128m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.awt.headless=true"
SERVING_MODES = ("leader", "follower", "standalone")


class ZooKeeper(NodeProcess):
    label = "zookeeper"

    def __init__(self, inventory: Inventory, ssh: SSHPool, release: KafkaRelease,
                 libs_dir: Callable[[str], str]) -> None:
        super().__init__(ssh)
        self.inventory, self.release = inventory, release
        self.libs_dir = libs_dir  # node -> the directory of the release's jars there

    # -- layout ----------------------------------------------------------------------
    def node_id(self, node: str) -> int:
        return self.inventory.node_names.index(node) + 1

    def home(self, node: str) -> str:
        return f"{self.inventory.node(node).home}/zookeeper"

    def config_file(self, node: str) -> str:
        return f"{self.home(node)}/zookeeper.properties"

    def data_dir(self, node: str) -> str:
        return f"{self.home(node)}/data"

    def logs_dir(self, node: str) -> str:
        return f"{self.home(node)}/logs"

    def pid_file(self, node: str) -> str:
        return f"{self.home(node)}/zookeeper.pid"

    def connect_string(self) -> str:
        return ",".join(f"{n.host}:{CLIENT_PORT}" for n in self.inventory.nodes)

    # -- setup -----------------------------------------------------------------------
    def properties(self, node: str) -> dict[str, str]:
        """One server per node; a single node runs standalone (no server.N lines)."""
        props = {
            "dataDir": self.data_dir(node),
            "clientPort": str(CLIENT_PORT),
            "clientPortAddress": self.inventory.node(node).host,
            # short ticks: a dead peer is noticed in seconds; sessions may last 2-20 ticks
            "tickTime": "1000",
            "initLimit": "30",
            "syncLimit": "5",
            "maxClientCnxns": "0",
            "admin.enableServer": "false",
            "4lw.commands.whitelist": "srvr,ruok",
            "autopurge.purgeInterval": "1",
        }
        if len(self.inventory.nodes) > 1:
            for n in self.inventory.nodes:
                props[f"server.{self.node_id(n.name)}"] = f"{n.host}:{PEER_PORT}:{ELECTION_PORT}"
        return props

    def setup(self, node: str) -> None:
        session = self._session(node)
        session.exec(f"mkdir -p {shlex.quote(self.data_dir(node))} {shlex.quote(self.logs_dir(node))}",
                     timeout=30)
        text = "".join(f"{k}={v}\n" for k, v in self.properties(node).items())
        session.write_file(self.config_file(node), "# written by logtrial (clusters/kafka/zookeeper.py)\n" + text)
        session.write_file(f"{self.data_dir(node)}/myid", f"{self.node_id(node)}\n")
        session.upload(self.release.log_config, f"{self.home(node)}/{self.release.log_config.name}")

    # -- lifecycle -------------------------------------------------------------------
    def start_all(self, nodes: list[str] | None = None) -> None:
        """Starts the servers not running on `nodes` (default: all), then waits until
        every one serves: an ensemble needs a majority to elect a leader."""
        nodes = nodes or self.inventory.node_names
        stopped = [n for n, running in self.ssh.run_on(
            nodes, lambda s: self.is_running(s.node.name)).items() if not running]
        self.ssh.run_on(stopped, lambda s: self.launch(s.node.name))
        self.ssh.run_on(nodes, lambda s: self.wait_ready(s.node.name))

    def launch(self, node: str) -> int:
        log_config = shlex.quote(f"{self.home(node)}/{self.release.log_config.name}")
        command = (f"java {JVM_OPTS} {self.release.log_config_option(log_config)} "
                   f"-Dkafka.logs.dir={shlex.quote(self.logs_dir(node))} "
                   f"-cp {shlex.quote(self.libs_dir(node) + '/*')} "
                   f"org.apache.zookeeper.server.quorum.QuorumPeerMain {shlex.quote(self.config_file(node))}")
        return self._session(node).start_daemon(command, self.pid_file(node),
                                                f"{self.logs_dir(node)}/zookeeper.out")

    def wait_ready(self, node: str, timeout: float = START_TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.is_running(node):
                raise DatabaseError(node, f"zookeeper ({self.release.label}) exited during "
                                    "start-up; last log lines:\n" + self.log_tail(node))
            if self.serving_mode(node) in SERVING_MODES:
                return
            time.sleep(0.5)
        raise DatabaseError(node, f"zookeeper not serving after {timeout:g} s; last log lines:\n"
                            + self.log_tail(node))

    def serving_mode(self, node: str) -> str | None:
        """leader, follower or standalone from the `srvr` command; None if not serving."""
        try:
            with socket.create_connection((self.inventory.node(node).host, CLIENT_PORT), timeout=2) as s:
                s.sendall(b"srvr")
                s.settimeout(2)
                answer = b""
                while chunk := s.recv(4096):
                    answer += chunk
        except OSError:
            return None
        for line in answer.decode(errors="replace").splitlines():
            if line.startswith("Mode:"):
                return line.split(":", 1)[1].strip()
        return None

    def wipe(self, node: str) -> None:
        self.kill(node)
        self._session(node).exec(f"rm -rf {shlex.quote(self.home(node))}", timeout=60)

    # -- logs ------------------------------------------------------------------------
    def log_tail(self, node: str, lines: int = 30) -> str:
        return self._tail(node, [f"{self.logs_dir(node)}/server.log",
                                 f"{self.logs_dir(node)}/zookeeper.out"], lines)

    def collect_logs(self, node: str, dest_dir: Path) -> None:
        self._download_logs(node, self.logs_dir(node), self.config_file(node), dest_dir)
