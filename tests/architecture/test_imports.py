"""Imports run one way: harness -> {workloads, nemesis, checkers, results} ->
clusters -> common, with no cycle between files, nor between the checkers' sub-packages.
Every import counts, those inside functions too: an import moved into a
function to dodge a cycle still makes one."""
from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("harness", "workloads", "nemesis", "checkers", "results", "clusters", "common")
# what each package may import besides itself
ALLOWED = {
    "harness": {"workloads", "nemesis", "checkers", "results", "clusters", "common"},
    "workloads": {"checkers", "clusters", "common"},
    "nemesis": {"clusters", "common"},
    "checkers": {"clusters", "common"},
    "results": {"checkers", "nemesis", "clusters", "common"},
    "clusters": {"common"},
    "common": set(),
}


def module_files() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imported_names(path: Path, module: str) -> set[str]:
    """Every dotted name `path` imports, relative imports resolved."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            names |= {base} | {f"{base}.{alias.name}" for alias in node.names}
    return names


def import_graph() -> nx.DiGraph:
    """Module -> the project modules it imports (a name resolves to the longest
    module it starts with: `from checkers.queue import local` is checkers.queue.local)."""
    modules = module_files()
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for module, path in modules.items():
        for name in imported_names(path, module):
            while name and name not in modules:
                name = name.rpartition(".")[0]
            # a package's __init__ is imported on the way to its modules: not an edge of its own
            if name and name != module and not module.startswith(name + "."):
                graph.add_edge(module, name)
    return graph


def cycles_of(graph: nx.DiGraph) -> list[list[str]]:
    return sorted(sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1)


def test_no_import_cycle_between_files():
    assert cycles_of(import_graph()) == []


def test_packages_import_only_down_the_layers():
    against = sorted((a, b) for a, b in import_graph().edges
                     if (pa := a.split(".")[0]) != (pb := b.split(".")[0]) and pb not in ALLOWED[pa])
    assert against == []


def test_no_cycle_between_the_checkers_sub_packages():
    def unit(module: str) -> str:      # checkers.queue.local -> checkers.queue; checkers.api stays
        return ".".join(module.split(".")[:2])
    graph = nx.DiGraph()
    for a, b in import_graph().edges:
        if a.startswith("checkers.") and b.startswith("checkers.") and unit(a) != unit(b):
            graph.add_edge(unit(a), unit(b))
    assert cycles_of(graph) == []


def test_the_graph_sees_imports_inside_functions(tmp_path):
    """The walker is not blind to the imports most likely to hide a cycle."""
    source = tmp_path / "m.py"
    source.write_text("def f():\n    from checkers.queue import local\n    import clusters.nodes.ssh\n")
    assert {"checkers.queue.local", "clusters.nodes.ssh"} <= imported_names(source, "checkers.m")


def test_the_walk_covers_the_findings_probes():
    """The probes were loose scripts once, outside the walk; in harness/probes/ they are in it."""
    walked = set(module_files())
    assert {"harness.commands.probe", "harness.probes.late_batch", "harness.probes.txn_version",
            "harness.probes.stale_offset_fetch"} <= walked


def test_clusters_keeps_its_top_level_small():
    """Kafka's, tansu's and the nodes' modules live in their sub-packages; what is
    left at the top is what every system shares (the cluster, the Database protocol,
    the systems' registry)."""
    top = sorted(p.stem for p in (ROOT / "clusters").glob("*.py") if p.stem != "__init__")
    assert len(top) <= 8, top
    assert {p.name for p in (ROOT / "clusters").iterdir() if (p / "__init__.py").exists()} == {"kafka", "tansu", "nodes"}
