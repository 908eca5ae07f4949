"""A system under test is one SystemKind (clusters/system_kind.py), defined in a
module of its own and listed in the registry (clusters/systems.py): adding a system
is that module plus its line there (its import and its place in KINDS). So every
registered kind provides every attribute, and no module outside the registry and
the kinds' own modules branches on a system's name."""
from __future__ import annotations

import ast
import dataclasses
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

from clusters.nodes.inventory import Inventory, Node, parse_inventory
from clusters.system_kind import ExtraNode, SystemKind
from clusters.systems import DEFAULT_SYSTEM, KINDS, SYSTEMS, for_system, kind_of
from tests.architecture.name_scan import PACKAGES, ROOT, branches_on, branches_outside

REGISTRY = ROOT / "clusters" / "systems.py"


def _tools(tools) -> bool:
    return isinstance(tools, Mapping) and all(
        isinstance(k, str) and isinstance(need, str) and isinstance(required, bool)
        for k, (need, required) in tools.items())


# each attribute of SystemKind -> what every kind must give it
ATTRIBUTES = {
    "name": lambda v: isinstance(v, str) and v,
    "open": callable,
    "ensure_installed": callable,
    "install_state": lambda v: v is None or callable(v),
    "broker_tools": _tools,
    "extra_node": lambda v: v is None or (isinstance(v, ExtraNode) and v.role and v.runs and _tools(v.tools)),
    "client_features": lambda v: v is None or (isinstance(v, frozenset) and all(isinstance(f, str) for f in v)),
    "kafka_release": lambda v: isinstance(v, bool),
}


def kind_modules() -> set[Path]:
    """The modules the registered kinds are defined in."""
    return {Path(sys.modules[kind.open.__module__].__file__).resolve() for kind in KINDS.values()}


def test_every_attribute_has_a_check():
    assert set(ATTRIBUTES) == {f.name for f in dataclasses.fields(SystemKind)}


@pytest.mark.parametrize("name", SYSTEMS)
def test_every_registered_kind_provides_every_attribute(name):
    kind = KINDS[name]
    assert isinstance(kind, SystemKind) and kind.name == name
    missing = [attribute for attribute, ok in ATTRIBUTES.items() if not ok(getattr(kind, attribute))]
    assert missing == []
    if kind.install_state is not None:
        present, where = kind.install_state()
        assert isinstance(present, bool) and isinstance(where, str) and where
    for role in (None, *kind.roles):
        assert _tools(kind.node_tools(role))


@pytest.mark.parametrize("name", SYSTEMS)
def test_a_local_clusters_inventory_made_for_a_system_is_one_of_it(name):
    kind = KINDS[name]
    nodes = tuple(Node(f"n{i}", f"10.0.0.{i}", 22, "root", "/k", None, "/h", local=True)
                  for i in range(1, kind.local_nodes(2) + 1))
    inventory = for_system(Inventory("c", nodes), kind, {})
    assert kind_of(inventory) is kind and len(inventory.nodes_with_role(None)) == 2


def test_an_inventory_without_db_runs_the_default_system():
    inventory = parse_inventory({"name": "c", "nodes": [{"name": "n1", "host": "h", "key_file": "/k", "home": "/h"}]})
    assert inventory.db == DEFAULT_SYSTEM and kind_of(inventory) is KINDS[DEFAULT_SYSTEM]


def test_each_kind_is_in_a_module_of_its_own_that_only_the_registry_imports():
    modules = kind_modules()
    assert len(modules) == len(KINDS) and REGISTRY not in modules
    names = {".".join(m.relative_to(ROOT).with_suffix("").parts) for m in modules}
    importers = {path.relative_to(ROOT).as_posix() for package in PACKAGES for path in (ROOT / package).rglob("*.py")
                 if names & _imported(path)}
    assert importers == {"clusters/systems.py"}


def _imported(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found |= {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
    return found


def branches_on_a_system(path: Path) -> list[str]:
    return branches_on(path, SYSTEMS)


def test_no_module_outside_the_registry_branches_on_a_systems_name():
    assert branches_outside({REGISTRY} | kind_modules(), SYSTEMS) == []


def test_the_scan_sees_a_comparison_a_membership_and_a_table(tmp_path):
    """The scan is not blind to the ways code has branched on a system."""
    source = tmp_path / "m.py"
    source.write_text('if system == "tansu":\n    pass\n'
                      'ok = db not in (None, "kafka")\n'
                      'TOOLS = {("kafka", None): 1}\n'
                      'ROLES = {"kafka": (), "tansu": ("storage",)}\n'
                      'label, versions = "kafka" + "-x", {"kafka": "4.1.1", "logtrial": "1"}\n')
    assert branches_on_a_system(source) == ["m.py:1", "m.py:3", "m.py:4", "m.py:5"]
