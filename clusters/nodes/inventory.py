"""The inventory: which nodes make up a cluster and how the control node reaches them.

A YAML file (format in docs/inventory.md). Local clusters write one on `cluster up`;
users with real machines write their own. Every error names the file, the node and
the field, so a typo is found without reading code. Whether `db:` names a system and
the nodes' roles are its, clusters/systems.py checks (kind_of) when the cluster opens.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

NODE_FIELDS = ("name", "host", "port", "user", "key_file", "host_key", "home", "local", "role")
# the system under test of an inventory without `db:` (every inventory before there
# were others); which systems and roles there are is clusters/systems.py's to check
DEFAULT_DB = "kafka"
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
FINGERPRINT_PATTERN = re.compile(r"^SHA256:[A-Za-z0-9+/]{43}=?$")


class InventoryError(ValueError):
    """A malformed inventory. `path`, `node` and `field` say where."""

    def __init__(self, message: str, path: str | None = None, node: str | None = None,
                 field: str | None = None) -> None:
        self.path, self.node, self.field = path, node, field
        where = [f"inventory {path}" if path else "inventory"]
        if node is not None:
            where.append(f"node {node}")
        if field is not None:
            where.append(f"field '{field}'")
        super().__init__(f"{', '.join(where)}: {message}")


@dataclass(frozen=True)
class Node:
    name: str  # "n1"
    host: str  # IP or DNS name the control node reaches it at
    port: int  # sshd port
    user: str  # login user (root: the harness edits iptables and signals brokers)
    key_file: str  # private key for this node
    host_key: str | None  # "SHA256:..." fingerprint of the node's sshd host key
    home: str  # directory on the node for data, config, logs and pid files
    local: bool = False  # the node shares this machine's filesystem (jars need no upload)
    role: str | None = None  # None: a broker; else the node its system runs beside (tansu: "storage")


@dataclass(frozen=True)
class Inventory:
    name: str  # cluster name
    nodes: tuple[Node, ...]
    path: str | None = None  # file it was read from (for error messages)
    settings: dict[str, str] = field(default_factory=dict)  # database settings overrides
    db: str = DEFAULT_DB  # the system under test (clusters/systems.py checks it names one)

    def node(self, name: str) -> Node:
        for node in self.nodes:
            if node.name == name:
                return node
        raise KeyError(f"cluster {self.name} has no node {name!r} "
                       f"(nodes: {', '.join(self.node_names)})")

    @property
    def node_names(self) -> list[str]:
        return [n.name for n in self.nodes]

    def nodes_with_role(self, role: str | None) -> list[str]:
        """The nodes of one role (None: the brokers)."""
        return [n.name for n in self.nodes if n.role == role]


def load_inventory(path: str | os.PathLike) -> Inventory:
    """Reads and validates an inventory file; InventoryError names file, node, field."""
    path = str(path)
    try:
        with open(path, encoding="utf-8") as f:
            data = yaml.safe_load(f)
    except FileNotFoundError:
        raise InventoryError("file not found", path) from None
    except OSError as e:
        raise InventoryError(f"cannot read: {e.strerror}", path) from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise InventoryError(f"not valid YAML{line}: {getattr(e, 'problem', e)}", path) from None
    return parse_inventory(data, path)


def parse_inventory(data: Any, path: str | None = None) -> Inventory:
    if not isinstance(data, dict):
        raise InventoryError("top level must be a mapping with 'name' and 'nodes'", path)
    unknown = set(data) - {"name", "nodes", "defaults", "settings", "db"}
    if unknown:
        raise InventoryError(f"unknown top-level keys: {', '.join(sorted(unknown))}", path)
    name = _required_str(data, "name", path, None)
    defaults = data.get("defaults") or {}
    if not isinstance(defaults, dict):
        raise InventoryError("must be a mapping of node fields", path, field="defaults")
    raw_nodes = data.get("nodes")
    if not isinstance(raw_nodes, list) or not raw_nodes:
        raise InventoryError("must be a non-empty list of nodes", path, field="nodes")
    nodes = tuple(_parse_node(raw, i, defaults, path) for i, raw in enumerate(raw_nodes))
    _check_unique(nodes, path)
    settings = data.get("settings") or {}
    if not isinstance(settings, dict):
        raise InventoryError("must be a mapping of key: value", path, field="settings")
    db = data.get("db", DEFAULT_DB)
    if not isinstance(db, str):
        raise InventoryError(f"must be the name of a system, got {db!r}", path, field="db")
    return Inventory(name=name, nodes=nodes, path=path,
                     settings={str(k): str(v) for k, v in settings.items()}, db=db)


def _parse_node(raw: Any, index: int, defaults: dict, path: str | None) -> Node:
    label = f"#{index + 1}"
    if not isinstance(raw, dict):
        raise InventoryError("must be a mapping of node fields", path, label)
    if isinstance(raw.get("name"), str):
        label = raw["name"]
    merged = {**defaults, **raw}
    unknown = set(merged) - set(NODE_FIELDS)
    if unknown:
        raise InventoryError(f"unknown field(s): {', '.join(sorted(unknown))}", path, label,
                             sorted(unknown)[0])
    name = _required_str(merged, "name", path, label)
    if not NAME_PATTERN.match(name):
        raise InventoryError(f"{name!r} is not a valid node name (letters, digits, . _ -)",
                             path, label, "name")
    port = merged.get("port", 22)
    if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
        raise InventoryError(f"must be a port number 1-65535, got {port!r}", path, name, "port")
    host_key = merged.get("host_key")
    if host_key is not None and (not isinstance(host_key, str)
                                 or not FINGERPRINT_PATTERN.match(host_key)):
        raise InventoryError(f"must be an OpenSSH fingerprint like 'SHA256:...', got {host_key!r}",
                             path, name, "host_key")
    role = merged.get("role")
    if role is not None and not isinstance(role, str):
        raise InventoryError(f"must be a string, got {role!r}", path, name, "role")
    local = merged.get("local", False)
    if not isinstance(local, bool):
        raise InventoryError(f"must be true or false, got {local!r}", path, name, "local")
    return Node(
        name=name,
        host=_required_str(merged, "host", path, name),
        port=port,
        user=_required_str({"user": "root", **merged}, "user", path, name),
        key_file=_resolve(_required_str(merged, "key_file", path, name), path),
        host_key=host_key,
        home=_required_str(merged, "home", path, name),
        local=local,
        role=role,
    )


def _required_str(data: dict, key: str, path: str | None, node: str | None) -> str:
    value = data.get(key)
    if value is None:
        raise InventoryError("is missing", path, node, key)
    if not isinstance(value, str) or not value.strip():
        raise InventoryError(f"must be a non-empty string, got {value!r}", path, node, key)
    return value


def _resolve(key_file: str, path: str | None) -> str:
    """Key paths are relative to the inventory file, so an inventory can travel with its keys."""
    expanded = os.path.expanduser(key_file)
    if os.path.isabs(expanded) or path is None:
        return expanded
    return str(Path(path).resolve().parent / expanded)


def _check_unique(nodes: tuple[Node, ...], path: str | None) -> None:
    seen: dict[str, str] = {}
    for node in nodes:
        if node.name in seen:
            raise InventoryError("appears twice", path, node.name, "name")
        seen[node.name] = node.name
    endpoints: dict[tuple[str, int], str] = {}
    for node in nodes:
        endpoint = (node.host, node.port)
        if endpoint in endpoints:
            raise InventoryError(f"{node.host}:{node.port} is also node {endpoints[endpoint]}",
                                 path, node.name, "host")
        endpoints[endpoint] = node.name


def inventory_to_dict(inv: Inventory) -> dict:
    nodes = []
    for node in inv.nodes:
        entry = {k: getattr(node, k) for k in NODE_FIELDS if k not in ("local", "role")}
        if node.local:
            entry["local"] = True
        if node.role:
            entry["role"] = node.role
        nodes.append(entry)
    data: dict[str, Any] = {"name": inv.name, "nodes": nodes}
    if inv.db != DEFAULT_DB:
        data["db"] = inv.db
    if inv.settings:
        data["settings"] = dict(inv.settings)
    return data


def write_inventory(inv: Inventory, path: str | os.PathLike) -> None:
    """Writes atomically (temp file + rename): a reader never sees half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(f"# logtrial inventory for cluster {inv.name} (format: docs/inventory.md)\n")
        yaml.safe_dump(inventory_to_dict(inv), f, sort_keys=False)
    os.replace(tmp, path)
