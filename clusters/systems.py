"""Every system under test, one SystemKind each (clusters/system_kind.py), and the
kind and Database an inventory gets: Kafka by default, tansu for an inventory with
`db: tansu` (docs/inventory.md). The CLI's choices, the runner, doctor and test-all
ask the kind here instead of branching on a system's name; a new system is its own
modules, with its kind in one of them, and one line in KINDS (docs/cluster.md)."""
from __future__ import annotations

import dataclasses

from clusters.db import Database, Versions
from clusters.nodes.inventory import DEFAULT_DB, Inventory, InventoryError
from clusters.kafka.system import KAFKA
from clusters.nodes.ssh import SSHPool
from clusters.system_kind import SystemKind
from clusters.tansu.system import TANSU

KINDS: dict[str, SystemKind] = {kind.name: kind for kind in (KAFKA, TANSU)}
SYSTEMS: tuple[str, ...] = tuple(KINDS)  # --db's choices
DEFAULT_SYSTEM = DEFAULT_DB  # an inventory without `db:`, and --db's default


def system_kind(name: str) -> SystemKind:
    """The system called `name`; ValueError names the known ones."""
    try:
        return KINDS[name]
    except KeyError:
        raise ValueError(f"unknown system {name!r} (known: {', '.join(SYSTEMS)})") from None


def kind_of(inventory: Inventory) -> SystemKind:
    """The inventory's system, its nodes' roles checked against it; InventoryError
    names the file and the field."""
    kind = KINDS.get(inventory.db)
    if kind is None:
        raise InventoryError(f"must be one of {', '.join(SYSTEMS)}, got {inventory.db!r}", inventory.path,
                             field="db")
    _check_roles(inventory, kind)
    return kind


def _check_roles(inventory: Inventory, kind: SystemKind) -> None:
    """Each role the system knows, on one node (tansu: one PostgreSQL node), and brokers."""
    path, db = inventory.path, kind.name
    for node in inventory.nodes:
        if node.role is not None and node.role not in kind.roles:
            known = ", ".join(kind.roles) or "none (every node is a broker)"
            raise InventoryError(f"{db} nodes have no role {node.role!r} (roles: {known})", path, node.name, "role")
    for role in kind.roles:
        holders = inventory.nodes_with_role(role)
        if len(holders) != 1:
            raise InventoryError(f"{db} needs exactly one node with role: {role}, found "
                                 f"{len(holders)} ({', '.join(holders) or 'none'})", path, field="role")
    if not inventory.nodes_with_role(None):
        raise InventoryError("needs at least one broker (a node without a role)", path, field="nodes")


def open_database(inventory: Inventory, ssh: SSHPool, settings: dict | None = None) -> Database:
    """The inventory's system; its settings are the inventory's, then `settings`."""
    return kind_of(inventory).open(inventory, ssh, settings)


def system_of(db: Database) -> tuple[str, str]:
    """(system, version) of a database: ("kafka", "4.1.1"), ("tansu", "0.6.0")."""
    version = db.release.version if isinstance(db, Versions) else db.version
    return db.inventory.db, version


def client_features(db: Database) -> frozenset[str] | None:
    """What of Kafka's client API a system has (None: all of it, as Kafka)."""
    return system_kind(db.inventory.db).client_features


def for_system(inventory: Inventory, kind: SystemKind, settings: dict[str, str]) -> Inventory:
    """A local cluster's inventory made for `kind` (its last node the one it runs
    beside its brokers), with the settings later set-ups use."""
    nodes = inventory.nodes
    if kind.extra_node:
        nodes = nodes[:-1] + (dataclasses.replace(nodes[-1], role=kind.extra_node.role),)
    return dataclasses.replace(inventory, nodes=nodes, db=kind.name, settings=settings)
