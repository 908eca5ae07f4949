"""What a system under test is to logtrial, as one object (the registry,
clusters/systems.py, lists one per system): its name, how its Database opens on an
inventory, the node it runs beside its brokers, what of Kafka's client API it has,
what doctor looks for on its nodes, and what must be built before a cluster of it
comes up. Code that differs by system asks the kind, never the system's name.

Standard library only at run time: clusters/tansu/install.py (which runs before the
venv exists) raises this module's InstallError."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Mapping

if TYPE_CHECKING:  # for the annotations only
    from clusters.db import Database
    from clusters.nodes.inventory import Inventory
    from clusters.nodes.ssh import SSHPool

Say = Callable[[str], None]
# a command on a node -> (what needs it, whether every run needs it): doctor's table
Tools = Mapping[str, tuple[str, bool]]
# (inventory, its SSH pool, settings over the inventory's) -> the cluster's Database
DatabaseFactory = Callable[["Inventory", "SSHPool", "dict | None"], "Database"]


class InstallError(RuntimeError):
    """What a system needs could not be built or fetched; says where its log is."""


@dataclass(frozen=True)
class ExtraNode:
    """The one node a system runs beside its brokers (tansu: PostgreSQL): a local
    cluster gets one more node, an inventory marks it with `role:`."""
    role: str     # its inventory role ("storage")
    runs: str     # what runs there, for messages ("PostgreSQL")
    tools: Tools  # what doctor looks for on it


@dataclass(frozen=True)
class SystemKind:
    name: str                 # `--db`, an inventory's `db:`, test.json's db.system
    open: DatabaseFactory
    ensure_installed: Callable[[Say], object]  # built or fetched before a cluster comes up; InstallError
    # (present, where it is or how to get it) for doctor; None: nothing beyond doctor's own checks
    install_state: Callable[[], tuple[bool, str]] | None
    broker_tools: Tools = field(default_factory=dict)  # what doctor looks for on a broker node
    extra_node: ExtraNode | None = None
    # what of Kafka's client API the workloads may use on it; None: all of it (Kafka)
    client_features: frozenset[str] | None = None
    # Kafka's release options apply (--kafka-version, --kafka-mode, --dynamic-quorum, --txn-version)
    kafka_release: bool = False

    @property
    def roles(self) -> tuple[str, ...]:
        """The inventory roles its nodes may have besides broker (None)."""
        return (self.extra_node.role,) if self.extra_node else ()

    def local_nodes(self, brokers: int) -> int:
        """Nodes a local cluster of `brokers` brokers needs."""
        return brokers + len(self.roles)

    def node_tools(self, role: str | None) -> Tools:
        """What doctor looks for on a node of `role` (None: a broker), beside every node's."""
        if role is None:
            return self.broker_tools
        return self.extra_node.tools if self.extra_node and role == self.extra_node.role else {}
