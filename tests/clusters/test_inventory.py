"""Inventory files: round trip, and errors that name the file, the node and the field."""
from __future__ import annotations

import pytest
import yaml

from clusters.nodes.inventory import Inventory, InventoryError, Node, load_inventory, write_inventory

FP = "SHA256:" + "A" * 43


def node_entry(**overrides) -> dict:
    return {"name": "n1", "host": "10.0.0.1", "port": 22, "user": "root",
            "key_file": "/keys/id", "host_key": FP, "home": "/srv/lt", **overrides}


def write(tmp_path, data) -> str:
    path = tmp_path / "inventory.yaml"
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data))
    return str(path)


def load_error(tmp_path, data) -> InventoryError:
    path = write(tmp_path, data)
    with pytest.raises(InventoryError) as caught:
        load_inventory(path)
    assert path in str(caught.value)
    return caught.value


def test_round_trip(tmp_path):
    inv = Inventory(name="c1", nodes=(
        Node("n1", "10.0.0.1", 22, "root", "/k/id", FP, "/srv/n1", local=True),
        Node("n2", "10.0.0.2", 2222, "admin", "/k/id", None, "/srv/n2")),
        settings={"min.insync.replicas": "2"})
    path = tmp_path / "sub" / "inv.yaml"
    write_inventory(inv, path)
    loaded = load_inventory(path)
    assert loaded.nodes == inv.nodes
    assert loaded.settings == inv.settings
    assert loaded.name == "c1" and loaded.path == str(path)


def test_defaults_apply_to_every_node_and_relative_keys_resolve(tmp_path):
    path = write(tmp_path, {"name": "c", "defaults": {"key_file": "keys/id", "home": "/srv"},
                            "nodes": [{"name": "a", "host": "h1"}, {"name": "b", "host": "h2"}]})
    inv = load_inventory(path)
    assert [n.key_file for n in inv.nodes] == [str(tmp_path / "keys" / "id")] * 2
    assert [(n.port, n.user, n.host_key) for n in inv.nodes] == [(22, "root", None)] * 2


def test_missing_field_names_node_and_field(tmp_path):
    entry = node_entry(name="n2")
    del entry["host"]
    err = load_error(tmp_path, {"name": "c", "nodes": [node_entry(), entry]})
    assert (err.node, err.field) == ("n2", "host")
    assert "node n2" in str(err) and "'host'" in str(err)


def test_bad_port(tmp_path):
    err = load_error(tmp_path, {"name": "c", "nodes": [node_entry(port=70000)]})
    assert (err.node, err.field) == ("n1", "port")


def test_bad_host_key(tmp_path):
    err = load_error(tmp_path, {"name": "c", "nodes": [node_entry(host_key="md5:ab")]})
    assert (err.node, err.field) == ("n1", "host_key")


def test_unknown_field(tmp_path):
    err = load_error(tmp_path, {"name": "c", "nodes": [node_entry(hots="x")]})
    assert (err.node, err.field) == ("n1", "hots")


def test_duplicate_node_names(tmp_path):
    err = load_error(tmp_path, {"name": "c", "nodes": [node_entry(), node_entry(host="h2")]})
    assert (err.node, err.field) == ("n1", "name")


def test_node_without_name_is_named_by_position(tmp_path):
    entry = node_entry()
    del entry["name"]
    err = load_error(tmp_path, {"name": "c", "nodes": [node_entry(), entry]})
    assert (err.node, err.field) == ("#2", "name")


def test_invalid_yaml_names_line(tmp_path):
    err = load_error(tmp_path, "name: c\nnodes:\n  - name: n1\n   host: [\n")
    assert "line" in str(err)


def test_empty_nodes_and_missing_file(tmp_path):
    err = load_error(tmp_path, {"name": "c", "nodes": []})
    assert err.field == "nodes"
    with pytest.raises(InventoryError, match="not found"):
        load_inventory(tmp_path / "nope.yaml")
