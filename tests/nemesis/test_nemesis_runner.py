"""NemesisRunner on the shared cluster: schedule executed, recorded, replayable, healed."""
from __future__ import annotations

import json
import threading

import pytest

from checkers.history.writer import HistoryWriter
from nemesis.heal import verify_healed
from nemesis.registry import F_NAMES
from nemesis.runner import NemesisRunner
from nemesis.schedule import START, load_schedule

pytestmark = pytest.mark.cluster


def nemesis_events(path):
    with open(path, encoding="utf-8") as f:
        return [e for e in map(json.loads, f) if e["process"] == "nemesis"]


def run_for(runner: NemesisRunner, seconds: float) -> None:
    stop = threading.Event()
    thread = threading.Thread(target=runner.run, args=(stop,))
    thread.start()
    try:
        stop.wait(seconds)
    finally:
        stop.set()
        thread.join()
        runner.heal_all()


def test_all_faults_run_overlap_get_recorded_and_heal(cluster, tmp_path):
    path = tmp_path / "history.jsonl"
    with HistoryWriter(path) as history:
        runner = NemesisRunner(cluster, history, ["pause", "kill", "partition", "clock"],
                               interval=2.0, seed=3, targets=["one", "controller"])
        run_for(runner, 12)
    events = nemesis_events(path)
    faults = [e for e in events if e["f"] in F_NAMES]
    assert {F_NAMES[e["f"]][0] for e in faults} == {"pause", "kill", "partition", "clock"}
    for kind in ("pause", "kill", "partition", "clock"):
        actions = [F_NAMES[e["f"]][1] for e in faults if F_NAMES[e["f"]][0] == kind]
        assert actions[0] == START
        assert all(a != b for a, b in zip(actions, actions[1:])), (kind, actions)
    for e in faults:
        if F_NAMES[e["f"]][1] == START and "nodes" in e["value"]:
            assert set(e["value"]["nodes"]) <= set(cluster.nodes)
    assert events[-1]["f"] == "heal"
    verify_healed(cluster)
    # the recorded schedule reads back, fault for fault, in scheduled order
    replayed = load_schedule(path)
    scheduled = sorted(faults, key=lambda e: e["value"]["at"])
    assert [(s.fault, s.action, s.at) for s in replayed] == \
        [(*F_NAMES[e["f"]], e["value"]["at"]) for e in scheduled]


def test_replayed_schedule_strikes_the_recorded_nodes_and_reports_failures(cluster, tmp_path):
    recorded = tmp_path / "recorded.jsonl"
    steps = [  # kill n2, then try to pause it while it is dead: that must fail, and go on
        ("kill", {"target": "one", "nodes": ["n2"], "at": 0.1}),
        ("pause", {"target": "one", "nodes": ["n2"], "at": 0.5}),
        ("resume", {"nodes": ["n2"], "at": 1.0}),
        ("start", {"nodes": ["n2"], "at": 1.5}),
        ("start-partition", {"shape": "one", "grudge": {"n1": ["n2", "n3"], "n2": ["n1"],
                                                         "n3": ["n1"]},
                             "anchor": "n2", "nodes": ["n1", "n2", "n3"], "at": 2.0}),
    ]
    recorded.write_text("".join(
        json.dumps({"index": i, "time": int(v["at"] * 1e9), "type": "info",
                    "process": "nemesis", "f": f, "value": v}) + "\n"
        for i, (f, v) in enumerate(steps)))
    path = tmp_path / "history.jsonl"
    with HistoryWriter(path) as history:
        runner = NemesisRunner(cluster, history, ["replay"], schedule_file=recorded)
        assert sorted(runner.faults) == ["kill", "partition", "pause"]
        run_for(runner, 4)
    events = nemesis_events(path)
    by_f = {e["f"]: e for e in events}
    assert by_f["kill"]["value"]["nodes"] == ["n2"] and "error" not in by_f["kill"]
    assert "not running" in by_f["pause"]["value"]["errors"]["n2"]
    assert by_f["pause"]["error"][0] == "nemesis-error"
    assert by_f["start-partition"]["value"]["grudge"]["n1"] == ["n2", "n3"]
    heal = events[-1]
    assert heal["f"] == "heal"
    assert any("iptables" in action for action in heal["value"]["actions"])
    verify_healed(cluster)
