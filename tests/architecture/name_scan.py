"""Where a module branches on a kind's name: compares a value with one, or keys a
table by them. The kinds' registries are the only modules allowed to (test_systems,
test_clients)."""
from __future__ import annotations

import ast
from collections.abc import Collection
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("harness", "clusters", "nemesis", "workloads", "checkers", "results")


def _names_one(node: ast.AST, names: Collection[str]) -> bool:
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_names_one(e, names) for e in node.elts)
    return isinstance(node, ast.Constant) and node.value in names


def _a_table_by_name(node: ast.Dict, names: Collection[str]) -> bool:
    """Keys naming two kinds, or a tuple key naming one; not a record with one
    field that happens to be called as a kind is (test.json's versions: "kafka")."""
    keys = [k for k in node.keys if k is not None]
    return (sum(_names_one(k, names) for k in keys) >= 2
            or any(isinstance(k, ast.Tuple) and _names_one(k, names) for k in keys))


def branches_on(path: Path, names: Collection[str]) -> list[str]:
    """Where `path` compares with one of `names`, or keys a table by them."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if (isinstance(node, ast.Compare) and any(_names_one(o, names) for o in [node.left, *node.comparators])
                or isinstance(node, ast.Dict) and _a_table_by_name(node, names)):
            found.append(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name}:{node.lineno}")
    return found


def branches_outside(allowed: set[Path], names: Collection[str]) -> list[str]:
    """Every place in the product's packages, outside `allowed`, that branches on `names`."""
    return [hit for package in PACKAGES for path in sorted((ROOT / package).rglob("*.py"))
            if path.resolve() not in allowed for hit in branches_on(path, names)]
