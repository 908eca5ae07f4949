"""Every fault kind is one FaultKind, declared in its own module and listed once in
nemesis/registry.py; each table about faults is read from that list. These tests say
what a new kind must provide, and that no other module keeps a table of kinds."""
from __future__ import annotations

import ast
import dataclasses
import json
import random
from pathlib import Path
from types import SimpleNamespace

import pytest

from checkers.history.writer import HistoryWriter
from nemesis import heal, registry
from nemesis.fault import Fault
from nemesis.kind import FAULT_KEY, MAY_LOSE_DATA_KEY, START, STOP, FaultContext, FaultKind
from nemesis.runner import NemesisRunner
from nemesis.schedule import Step, build_schedule, load_schedule

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
    assert registry.BY_NAME_ONLY == ("producer-state", "membership", "packet", "client-delay", "control-link",
                                     "power")
    assert all(len(registry.BY_NAME[name].by_name_only) > 20 for name in registry.BY_NAME_ONLY)


def test_a_heal_undoes_every_kinds_traces_the_networks_first() -> None:
    node_traces = [k.node_traces for k in registry.KINDS if k.node_traces]
    assert sorted(heal.NODE_TRACES, key=id) == sorted(node_traces, key=id)
    assert [t.network for t in heal.NODE_TRACES] == sorted((t.network for t in heal.NODE_TRACES), reverse=True)
    assert heal.CLUSTER_TRACES == tuple(k.cluster_traces for k in registry.KINDS if k.cluster_traces)
    assert heal.CONTROL_TRACES == tuple(k.control_traces for k in registry.KINDS if k.control_traces)


def test_a_kind_with_a_history_name_that_is_neither_start_nor_stop_is_refused() -> None:
    with pytest.raises(ValueError, match="kill: history_f"):
        FaultKind("kill", "", lambda context: None, {"kill": "begin", "start": STOP}, (), {"kill": None})


# -- whether a fault may lose acknowledged data ---------------------------------------------
# what docs/nemesis.md and docs/producer-state.md say each start does, at --safe settings
MUST_LOSE_NOTHING = {"pause", "kill", "start-partition", "bump-clock", "strobe-clock", "start-packet",
                     "start-client-delay", "cut-control-link", "expire-producer-ids", "reassign",
                     "remove-controller", "power-off"}
MAY_LOSE_DATA = {"truncate-log", "shrink-retention", "remove-node", "power-off-majority"}


def test_loses_data_has_no_default_and_every_kind_passes_it_by_name_in_its_own_module() -> None:
    field = {f.name: f for f in dataclasses.fields(FaultKind)}["loses_data"]
    assert field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING
    for kind in registry.KINDS:
        module = ROOT / (kind.make.__module__.replace(".", "/") + ".py")
        calls = [node for node in ast.walk(ast.parse(module.read_text(encoding="utf-8")))
                 if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "FaultKind"]
        assert len(calls) == 1 and "loses_data" in {k.arg for k in calls[0].keywords}, kind.name


@pytest.mark.parametrize("kind", registry.KINDS, ids=lambda kind: kind.name)
def test_each_kind_says_for_each_start_whether_it_may_lose_data_and_why(kind: FaultKind) -> None:
    assert set(kind.loses_data) == set(kind.start_fs) == {f for f, a in kind.history_f.items() if a == START}
    for f, why in kind.loses_data.items():
        assert why is None or (isinstance(why, str) and len(why) > 40), (f, why)


def test_only_deleting_records_wiping_a_node_or_a_majority_losing_power_may_lose_data() -> None:
    declared = {f: why for kind in registry.KINDS for f, why in kind.loses_data.items()}
    assert {f for f, why in declared.items() if why is None} == MUST_LOSE_NOTHING
    assert {f for f, why in declared.items() if why is not None} == MAY_LOSE_DATA
    assert {k.name for k in registry.KINDS if any(k.loses_data.values())} == {"producer-state", "membership", "power"}


def test_a_kind_that_leaves_a_start_undeclared_is_refused() -> None:
    with pytest.raises(ValueError, match="clock: loses_data must say, for each start f"):
        FaultKind("clock", "", lambda context: None,
                  {"bump-clock": START, "strobe-clock": START, "reset-clock": STOP}, (), {"bump-clock": None})


def test_a_start_declares_its_kind_and_a_skipped_strike_loses_nothing() -> None:
    membership = registry.BY_NAME["membership"]
    assert membership.declared("remove-node", {"mode": "remove-node", "nodes": ["n1"]}) == \
        {FAULT_KEY: "membership", MAY_LOSE_DATA_KEY: membership.loses_data["remove-node"]}
    assert membership.declared("remove-node", {"mode": "remove-node", "skipped": "ZooKeeper mode"}) == \
        {FAULT_KEY: "membership", MAY_LOSE_DATA_KEY: None}
    assert registry.BY_NAME["pause"].declared("pause", {"nodes": ["n1"]}) == \
        {FAULT_KEY: "pause", MAY_LOSE_DATA_KEY: None}


def _runner_without_a_cluster(history: HistoryWriter) -> NemesisRunner:
    """A runner whose producer-state fault strikes nothing: what it records is under test."""
    cluster = SimpleNamespace(inventory=SimpleNamespace(node_names=NODES))
    runner = NemesisRunner(cluster, history, ["producer-state"], seed=1)
    fault = runner.faults["producer-state"]
    fault.start = lambda cluster, params: dict(params)
    fault.stop = lambda cluster: {"mode": "truncate"}
    return runner


def test_the_runner_writes_the_declaration_on_start_events_only_and_a_replay_plans_without_it(tmp_path) -> None:
    path = tmp_path / "history.jsonl"
    with HistoryWriter(path) as history:
        runner = _runner_without_a_cluster(history)
        for step in (Step(1.0, "producer-state", START, {"mode": "truncate"}), Step(2.0, "producer-state", STOP),
                     Step(3.0, "producer-state", START, {"mode": "expire"})):
            runner._execute(step)
    events = [json.loads(line) for line in path.read_text().splitlines()]
    assert [(e["f"], e["value"].get(FAULT_KEY), e["value"].get(MAY_LOSE_DATA_KEY, "absent")) for e in events] == [
        ("truncate-log", "producer-state", registry.BY_NAME["producer-state"].loses_data["truncate-log"]),
        ("restore-producer-state", None, "absent"),
        ("expire-producer-ids", "producer-state", None)]
    assert set(events[0]["value"]) == {"mode", "at", FAULT_KEY, MAY_LOSE_DATA_KEY}
    # the declaration is the kind's, written afresh on a replay: it is no plan
    assert [s.params for s in load_schedule(path) if s.action == START] == [{"mode": "truncate"}, {"mode": "expire"}]


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
