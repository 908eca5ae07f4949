"""What a Kafka node holds on disk besides the jars: its server.properties, its
formatted (KRaft) log dir and the record of which release and quorum kind it was set
up for, which later commands read to refuse or adopt it."""
from __future__ import annotations

import shlex

from clusters.db import DatabaseError
from clusters.kafka.config import DYNAMIC, KafkaConfig
from clusters.kafka.paths import KafkaPaths, cluster_id
from clusters.kafka.process import KafkaProcess
from clusters.kafka.versions import MODES, RELEASE_PATTERN, KafkaRelease
from clusters.nodes.ssh import NodeSession, SSHPool

FORMATTED, CONFIGURED = "formatted", "configured"


def format_storage_args(cluster_name: str, config_file: str) -> str:
    """StorageTool's main class and arguments that format a node's storage. The id is
    attached with `=`: a base64 id may begin with '-', which argparse would take for
    an option."""
    return ("kafka.tools.StorageTool format --ignore-formatted "
            f"--cluster-id={cluster_id(cluster_name)} --config {shlex.quote(config_file)}")


class KafkaStorage:
    def __init__(self, ssh: SSHPool, paths: KafkaPaths, config: KafkaConfig, process: KafkaProcess) -> None:
        self.ssh, self.paths, self.config, self.process = ssh, paths, config, process

    def _session(self, node: str) -> NodeSession:
        return self.ssh[node]

    def _read(self, node: str, path: str) -> str:
        """The file's text, stripped; empty if it is not there."""
        return self._session(node).exec(f"cat {shlex.quote(path)} 2>/dev/null", check=False,
                                        timeout=15).stdout.strip()

    # -- config and storage -------------------------------------------------------------
    def write_config(self, node: str, properties: dict[str, str]) -> None:
        session = self._session(node)
        session.exec(f"mkdir -p {shlex.quote(self.paths.logs_dir(node))} "
                     f"{shlex.quote(self.paths.data_dir(node))}", timeout=30)
        text = "".join(f"{k}={v}\n" for k, v in properties.items())
        session.write_file(self.paths.config_file(node), "# written by logtrial (clusters/kafka/storage.py)\n"
                           + text)

    def format(self, node: str, replacement: bool = False, durable: bool = True) -> None:
        """Formats the node's KRaft storage with the cluster's id (a no-op if formatted).
        `durable`: then fsyncs what the format wrote, files and directories. Kafka's
        formatter does not (docs/findings.md row 16), so a power loss soon after would
        leave bootstrap.checkpoint empty and the node unbootable; set-up and heals are
        the harness's own work, not what a run tests (the format-power-loss probe
        formats as Kafka does, `durable=False`).
        In a dynamic quorum every node starts as a voter under its own directory id; a
        `replacement` (a node wiped after it ran) gets a new random directory id and no
        voters (`--no-initial-controllers`), so it rejoins as an observer and votes again
        only once add-controller has made it a voter: the KIP-853 way to replace a disk,
        which keeps a voter from coming back with an empty log under its old identity."""
        args = format_storage_args(self.paths.inventory.name, self.paths.config_file(node))
        if self.config.dynamic_quorum:
            args += (" --no-initial-controllers" if replacement
                     else f" --initial-controllers {shlex.quote(self.paths.initial_voters())}")
        self._session(node).exec(self.process.tool_command(node, args, heap="256m"), timeout=180)
        if durable:
            self.fsync_data(node)

    def fsync_data(self, node: str) -> None:
        """Every file and directory under the node's log dir fsynced (`sync FILE`)."""
        data = shlex.quote(self.paths.data_dir(node))
        self._session(node).exec(f"find {data} -print0 | xargs -0 -r sync", timeout=60)

    def found(self, node: str) -> str:
        """FORMATTED, CONFIGURED (a config, no formatted log dir) or "" (neither)."""
        meta = shlex.quote(self.paths.meta_file(node))
        config = shlex.quote(self.paths.config_file(node))
        return self._session(node).exec(
            f"if test -f {meta}; then echo {FORMATTED}; elif test -f {config}; then echo {CONFIGURED}; fi",
            timeout=15).stdout.strip()

    def reformat(self, node: str, durable: bool = True) -> None:
        """Formats a configured node whose log dir is gone, as the disk it replaces."""
        self._session(node).exec(f"mkdir -p {shlex.quote(self.paths.data_dir(node))}", timeout=30)
        # the quorum file is written once set-up has formatted the node: it ran before
        self.format(node, replacement=self.recorded_quorum(node) == DYNAMIC, durable=durable)

    def disk_directory_id(self, node: str) -> str:
        """The directory id in the node's meta.properties (its disk's identity in a
        dynamic quorum); DatabaseError if it has none."""
        text = self._read(node, self.paths.meta_file(node))
        found = [line.split("=", 1)[1].strip() for line in text.splitlines() if line.startswith("directory.id=")]
        if not found:
            raise DatabaseError(node, f"no directory.id in {self.paths.meta_file(node)}")
        return found[0]

    # -- what the node was set up for ---------------------------------------------------
    def record(self, node: str) -> None:
        session = self._session(node)
        release = self.config.release
        session.write_file(self.paths.release_file(node), f"{release.version} {release.mode}\n")
        session.write_file(self.paths.quorum_file(node), self.config.quorum_kind + "\n")

    def recorded_release(self, node: str) -> KafkaRelease | None:
        """The release the node was last set up for (None if never, or before releases
        were recorded: then it was the default)."""
        path = self.paths.release_file(node)
        text = self._read(node, path)
        if not text:
            return None
        version, _, mode = text.partition(" ")
        if not RELEASE_PATTERN.match(version) or mode not in MODES:
            raise DatabaseError(node, f"{path} holds {text!r}, not '<version> <mode>' like '3.0.0 zk'")
        return KafkaRelease(version, mode)

    def recorded_quorum(self, node: str) -> str:
        """The quorum kind the node was formatted for ("static" if never recorded)."""
        return self._read(node, self.paths.quorum_file(node)) or "static"
