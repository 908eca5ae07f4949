"""Where each Kafka node keeps what, and who it is: node ids, directories, files,
listener addresses and the identities a KRaft cluster is formatted with."""
from __future__ import annotations

import base64
import hashlib

from clusters.nodes.inventory import Inventory, Node
from clusters.kafka.versions import KafkaRelease

CLIENT_PORT = 9092
CONTROLLER_PORT = 9093


def cluster_id(name: str) -> str:
    """A valid KRaft cluster id (22-char base64 UUID), stable for a cluster name."""
    return base64.urlsafe_b64encode(hashlib.sha256(name.encode()).digest()[:16]).decode()[:22]


def directory_id(name: str, node_id: int) -> str:
    """The metadata log dir's directory id (a base64 UUID, as meta.properties holds it) a
    dynamic quorum is formatted with, stable for a cluster name and node."""
    digest = bytearray(hashlib.sha256(f"{name}/{node_id}".encode()).digest()[:16])
    digest[6] = (digest[6] & 0x0F) | 0x40  # a version-4 UUID, as Uuid.randomUuid() makes
    digest[8] = (digest[8] & 0x3F) | 0x80
    return base64.urlsafe_b64encode(bytes(digest)).decode()[:22]


class KafkaPaths:
    """The layout of one release on every node of an inventory."""

    def __init__(self, inventory: Inventory, release: KafkaRelease) -> None:
        self.inventory, self.release = inventory, release

    def node(self, node: str) -> Node:
        return self.inventory.node(node)

    def node_id(self, node: str) -> int:
        return self.inventory.node_names.index(node) + 1

    def kafka_dir(self, node: str) -> str:
        return f"{self.node(node).home}/kafka"

    def config_file(self, node: str) -> str:
        return f"{self.kafka_dir(node)}/server.properties"

    def data_dir(self, node: str) -> str:
        return f"{self.kafka_dir(node)}/data"

    def meta_file(self, node: str) -> str:
        """meta.properties: there once the node's storage is formatted."""
        return f"{self.data_dir(node)}/meta.properties"

    def logs_dir(self, node: str) -> str:
        return f"{self.kafka_dir(node)}/logs"

    def stdout_file(self, node: str) -> str:
        return f"{self.logs_dir(node)}/kafka.out"

    def pid_file(self, node: str) -> str:
        return f"{self.kafka_dir(node)}/kafka.pid"

    def release_file(self, node: str) -> str:
        """Which version and mode the node was set up for ("3.0.0 zk")."""
        return f"{self.kafka_dir(node)}/release"

    def quorum_file(self, node: str) -> str:
        """How the node's KRaft quorum was formatted: static or dynamic."""
        return f"{self.kafka_dir(node)}/quorum"

    def clock_offset_file(self, node: str) -> str:
        return f"{self.node(node).home}/faketime.rc"

    def libs_dir(self, node: str) -> str:
        if self.node(node).local:
            return str(self.release.libs_dir)  # same filesystem: share the cache
        return f"{self.node(node).home}/kafka-{self.release.version}-libs"

    def log_config_file(self, node: str) -> str:
        return f"{self.kafka_dir(node)}/{self.release.log_config.name}"

    def bootstrap_servers(self) -> str:
        return ",".join(f"{n.host}:{CLIENT_PORT}" for n in self.inventory.nodes)

    def controller_servers(self) -> str:
        return ",".join(f"{n.host}:{CONTROLLER_PORT}" for n in self.inventory.nodes)

    def initial_voters(self, with_directories: bool = True) -> str:
        """Every node as a voter: `id@host:port` (controller.quorum.voters) or, for
        `format --initial-controllers`, `id@host:port:directory-id`."""
        return ",".join(f"{self.node_id(n.name)}@{n.host}:{CONTROLLER_PORT}"
                        + (f":{directory_id(self.inventory.name, self.node_id(n.name))}" if with_directories else "")
                        for n in self.inventory.nodes)
