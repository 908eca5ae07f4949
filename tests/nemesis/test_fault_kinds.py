"""Every fault kind is one FaultKind, declared in its own module and listed once in
nemesis/registry.py; each table about faults is read from that list. These tests say
what a new kind must provide, and that no other module keeps a table of kinds."""
from __future__ import annotations

import ast
import random
from pathlib import Path

import pytest

from nemesis import heal, registry
from nemesis.fault import Fault
from nemesis.kind import START, STOP, FaultContext, FaultKind
from nemesis.schedule import build_schedule

ROOT = Path(__file__).resolve().parents[2]
NODES = ["n1", "n2", "n3"]
# the layers that must ask the registry instead of naming fault kinds themselves
LAYERS = ("harness", "nemesis", "results", "checkers", "clusters", "workloads", "benchmarks")


@pytest.mark.parametrize("kind", registry.KINDS, ids=lambda kind: kind.name)
def test_each_kind_makes_a_fault_that_writes_its_own_history_names(kind: FaultKind) -> None:
    fault = kind.make(FaultContext())
    assert isinstance(fault, Fault) and fault.name == kind.name
    params = fault.plan(NODES, ["one"], random.Random(1))
    assert kind.history_f[fault.start_f(params)] == START
    assert kind.history_f[fault.stop_f] == STOP
    assert all(key in params for key in kind.params), (kind.params, params)


def test_a_planned_schedule_replays_through_the_kinds_own_params() -> None:
    steps = build_schedule(registry.FAULT_NAMES, NODES, 5, 3, ["one", "majority"], 60)
    starts = [s for s in steps if s.action == START]
    assert {s.fault for s in starts} == set(registry.FAULT_NAMES)
    for step in starts:
        assert set(registry.BY_NAME[step.fault].params) <= set(step.params), step


def test_no_history_name_is_claimed_by_two_kinds() -> None:
    claimed = [f for kind in registry.KINDS for f in kind.history_f]
    assert len(claimed) == len(set(claimed)) == len(registry.F_NAMES)


def test_all_is_every_kind_not_kept_for_asking_by_name_and_each_exception_says_why() -> None:
    assert registry.parse_kinds("all") == [k.name for k in registry.KINDS if k.by_name_only is None]
    assert registry.BY_NAME_ONLY == ("producer-state", "membership", "packet", "client-delay", "control-link")
    assert all(len(registry.BY_NAME[name].by_name_only) > 20 for name in registry.BY_NAME_ONLY)


def test_a_heal_undoes_every_kinds_traces_the_networks_first() -> None:
    node_traces = [k.node_traces for k in registry.KINDS if k.node_traces]
    assert sorted(heal.NODE_TRACES, key=id) == sorted(node_traces, key=id)
    assert [t.network for t in heal.NODE_TRACES] == sorted((t.network for t in heal.NODE_TRACES), reverse=True)
    assert heal.CLUSTER_TRACES == tuple(k.cluster_traces for k in registry.KINDS if k.cluster_traces)
    assert heal.CONTROL_TRACES == tuple(k.control_traces for k in registry.KINDS if k.control_traces)


def test_a_kind_with_a_history_name_that_is_neither_start_nor_stop_is_refused() -> None:
    with pytest.raises(ValueError, match="kill: history_f"):
        FaultKind("kill", "", lambda context: None, {"kill": "begin", "start": STOP}, ())


def kind_names_in(path: Path) -> set[str]:
    names = set(registry.FAULT_NAMES)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and node.value in names}


def test_no_module_keeps_its_own_table_of_fault_kinds() -> None:
    """A module that names two or more kinds is a table the registry should give it
    (membership names `partition` only as a field of its values)."""
    tables = {}
    for layer in LAYERS:
        for path in sorted((ROOT / layer).rglob("*.py")):
            named = kind_names_in(path) - {"partition"}
            if len(named) >= 2:
                tables[str(path.relative_to(ROOT))] = sorted(named)
    assert tables == {}
