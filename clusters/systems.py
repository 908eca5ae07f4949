"""The systems under test by name, and the Database each inventory gets: Kafka by
default, tansu for an inventory with `db: tansu` (docs/inventory.md)."""
from __future__ import annotations

import dataclasses

from clusters.db import Database
from clusters.inventory import DATABASES, Inventory
from clusters.ssh import SSHPool

SYSTEMS = DATABASES  # "kafka", "tansu"


def open_database(inventory: Inventory, ssh: SSHPool, settings: dict | None = None) -> Database:
    """The inventory's system; its settings are the inventory's, then `settings`."""
    if inventory.db == "tansu":
        from clusters.tansu import TansuDB
        return TansuDB(inventory, ssh, settings)
    from clusters.kafka import KafkaDB
    return KafkaDB(inventory, ssh, settings)


def system_of(db: object) -> tuple[str, str]:
    """(system, version) of a database: ("kafka", "4.1.1"), ("tansu", "0.6.0")."""
    release = getattr(db, "release", None)
    if release is not None:
        return "kafka", release.version
    return db.system, db.version


def client_features(db: object) -> frozenset[str] | None:
    """What of Kafka's producer API a system has (None: all of it, as Kafka)."""
    return getattr(db, "client_features", None)


def features_of(system: str) -> frozenset[str] | None:
    """client_features of a system by name, before any cluster of it exists."""
    if system == "tansu":
        from clusters.tansu import TansuDB
        return TansuDB.client_features
    return None


def local_node_count(system: str, brokers: int) -> int:
    """Nodes a local cluster of `brokers` brokers needs: tansu's storage node is one more."""
    return brokers + (1 if system == "tansu" else 0)


def for_system(inventory: Inventory, system: str, settings: dict[str, str]) -> Inventory:
    """A local cluster's inventory made for `system` (its last node tansu's storage
    node), with the settings later set-ups use."""
    nodes = inventory.nodes
    if system == "tansu":
        nodes = nodes[:-1] + (dataclasses.replace(nodes[-1], role="storage"),)
    return dataclasses.replace(inventory, nodes=nodes, db=system, settings=settings)
