"""The Kafka broker as a process on a node: the java command line (the release's jars,
its class archive, libfaketime), launching it under its pid file, waiting until it
serves, and its logs. Kafka's tools run with the same class path."""
from __future__ import annotations

import shlex
import socket
from pathlib import Path

from confluent_kafka.admin import AdminClient

from common.client_logging import QUIET_CLIENT_LOGGER
from clusters.nodes.faketime import faketime_env, leftover_files, skewed_marker
from common.jvm_archive import use_options_shell
from clusters.kafka.archive import archive_file
from clusters.kafka.config import DEFAULT_JVM_OPTS, KafkaConfig
from clusters.kafka.paths import CLIENT_PORT, KafkaPaths
from clusters.kafka.versions import KafkaRelease
from clusters.nodes.daemon import NodeProcess
from clusters.nodes.ssh import SSHPool

START_TIMEOUT = 240  # generous: the box is shared and a starved JVM starts slowly


class KafkaProcess(NodeProcess):
    label = "broker"

    def __init__(self, ssh: SSHPool, paths: KafkaPaths, config: KafkaConfig,
                 start_timeout: float = START_TIMEOUT) -> None:
        super().__init__(ssh)
        self.paths, self.config = paths, config
        self.start_timeout = start_timeout

    @property
    def release(self) -> KafkaRelease:
        return self.config.release

    def pid_file(self, node: str) -> str:
        return self.paths.pid_file(node)

    # -- command lines ----------------------------------------------------------------
    def tool_command(self, node: str, main_and_args: str, heap: str = "128m") -> str:
        """Shell command running one of Kafka's tools (a main class and its arguments) on the
        node, with the release's jars and a small JVM."""
        return self._java(f"-Xmx{heap} -XX:TieredStopAtLevel=1 -XX:+UseSerialGC", node, main_and_args)

    def _java(self, jvm_opts: str, node: str, main_and_args: str) -> str:
        classpath = shlex.quote(f"{self.paths.libs_dir(node)}/*")
        log_config = self.release.log_config_option(shlex.quote(self.paths.log_config_file(node)))
        logs = shlex.quote(self.paths.logs_dir(node))
        return (f"java {jvm_opts}{self._archive_options(node)} {log_config} -Dkafka.logs.dir={logs} "
                f"-cp {classpath} {main_and_args}")

    def _archive_options(self, node: str) -> str:
        """Maps the release's class archive (clusters/kafka/archive.py) where the node
        shares the cache it lives in and the archive is there; tools use it too."""
        if not self.paths.node(node).local:
            return ""
        options = use_options_shell(str(archive_file(self.release, DEFAULT_JVM_OPTS)))
        return f" {options}" if options else ""

    def _faketime_env(self, node: str) -> dict[str, str]:
        return faketime_env(self.paths.clock_offset_file(node)) if self.config.faketime else {}

    # -- lifecycle --------------------------------------------------------------------
    def start(self, node: str) -> None:
        self.launch(node)
        self.wait_ready(node)

    def launch(self, node: str) -> int:
        """Starts the broker process without waiting for it to serve clients."""
        self._forget_dead_process(node)
        self._session(node).exec(f"rm -f {shlex.quote(skewed_marker(self.paths.clock_offset_file(node)))}",
                                 timeout=15)  # a new process: it has run with no skew yet
        command = self._java(self.config.jvm_opts, node,
                             f"kafka.Kafka {shlex.quote(self.paths.config_file(node))}")
        return self._session(node).start_daemon(command, self.pid_file(node),
                                                self.paths.stdout_file(node),
                                                env=self._faketime_env(node))

    def wait_ready(self, node: str, timeout: float | None = None) -> None:
        """Waits until the broker is registered (unfenced) in the cluster metadata it
        serves on its own listener."""
        self._wait_serving(node, timeout or self.start_timeout, f"broker ({self.release.label})")

    def serves_metadata(self, node: str) -> bool:
        """The broker answers on its listener and is registered, unfenced, in the metadata."""
        host = self.paths.node(node).host
        return _port_open(host, CLIENT_PORT) and self.paths.node_id(node) in _broker_ids(host)

    def _forget_dead_process(self, node: str) -> None:
        """Removes what a dead broker left in /dev/shm (libfaketime cleans up only on a
        clean exit); never touches the files of a live process that reused the pid."""
        session = self._session(node)
        pid = session.exited_pid(self.pid_file(node))
        if pid is not None:
            session.exec("rm -f " + " ".join(leftover_files(pid)), timeout=15)

    # -- logs -------------------------------------------------------------------------
    def log_tail(self, node: str, lines: int = 40) -> str:
        return self._tail(node, [f"{self.paths.logs_dir(node)}/server.log", self.paths.stdout_file(node)], lines)

    def collect_logs(self, node: str, dest_dir: Path) -> None:
        """Copies the broker's logs and its server.properties into dest_dir."""
        self._download_logs(node, self.paths.logs_dir(node), self.paths.config_file(node), dest_dir)


def _broker_ids(host: str) -> set[int]:
    """Ids of the live brokers in the metadata served at host (empty if none answers)."""
    admin = AdminClient({"bootstrap.servers": f"{host}:{CLIENT_PORT}", "logger": QUIET_CLIENT_LOGGER,
                         "socket.connection.setup.timeout.ms": 3000})
    try:
        return set(admin.list_topics(timeout=3).brokers)
    except Exception:  # noqa: BLE001 - any client error just means "not ready yet"
        return set()


def _port_open(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False
