"""The power fault's plan and its replay, without a cluster: whether a strike takes a
majority decides its history f (and so whether it may lose data), and a recorded
start replays from its plan, never from what it dropped."""
from __future__ import annotations

import dataclasses
import json
import random
from pathlib import Path

import pytest

from nemesis.kind import MAY_LOSE_DATA_KEY, REWRITES_OFFSETS_KEY, FaultContext
from nemesis.power import KIND, OFF_MAJORITY, OFF_MINORITY
from nemesis.schedule import START, load_schedule

NODES = ["n1", "n2", "n3"]


@pytest.mark.parametrize("target, majority", [("one", False), ("minority", False), ("majority", True),
                                              ("all", True), ("leader", False), ("controller", False)])
def test_a_strike_is_a_majority_loss_when_it_takes_more_than_half(target: str, majority: bool) -> None:
    params = KIND.make(FaultContext()).plan(NODES, [target], random.Random(1))
    assert params["majority"] is majority and params["mode"] in ("clean", "torn")
    assert KIND.make(FaultContext()).start_f(params) == (OFF_MAJORITY if majority else OFF_MINORITY)
    assert (KIND.loses_data[KIND.make(FaultContext()).start_f(params)] is not None) is majority


def test_both_modes_are_planned_from_the_seed() -> None:
    fault = KIND.make(FaultContext())
    modes = [fault.plan(NODES, ["one"], random.Random(seed))["mode"] for seed in range(40)]
    assert {"clean", "torn"} == set(modes)
    assert modes == [fault.plan(NODES, ["one"], random.Random(seed))["mode"] for seed in range(40)]


def test_a_recorded_power_loss_replays_from_its_plan_not_from_what_it_dropped(tmp_path: Path) -> None:
    dropped = {"n2": {"files": 3, "bytes": 120, "kept": 0, "names": 1, "mode": "clean",
                      "file_list": [], "name_list": []}}
    events = [{"index": 0, "time": 1, "type": "info", "process": "nemesis", "f": OFF_MAJORITY,
               "value": {"target": "majority", "nodes": ["n1", "n2"], "majority": True, "mode": "torn",
                         "dropped": dropped, "at": 2.5, "fault": "power", "may_lose_data": "..."}},
              {"index": 1, "time": 2, "type": "info", "process": "nemesis", "f": "power-on",
               "value": {"nodes": ["n1", "n2"], "at": 9.0}}]
    history = tmp_path / "history.jsonl"
    history.write_text("".join(json.dumps(event) + "\n" for event in events))
    start, stop = load_schedule(history)
    assert (start.fault, start.action, start.at) == ("power", START, 2.5)
    assert start.params == {"target": "majority", "nodes": ["n1", "n2"], "majority": True, "mode": "torn"}
    assert (stop.fault, stop.at) == ("power", 9.0)


def test_a_majority_loss_declares_that_it_may_write_offsets_again_and_a_minority_loss_nothing():
    assert KIND.declared(OFF_MAJORITY, {})[REWRITES_OFFSETS_KEY] is True
    assert KIND.declared(OFF_MINORITY, {}) == {"fault": "power", "may_lose_data": None}


def test_a_majority_loss_takes_the_struck_systems_word_and_a_minority_loss_never_widens():
    why = "the system acknowledges before an fsync"
    assert KIND.declared(OFF_MAJORITY, {MAY_LOSE_DATA_KEY: why}) == \
        {"fault": "power", "may_lose_data": why, REWRITES_OFFSETS_KEY: True}
    # a system that fsyncs every write it acknowledges: its loss may lose nothing, nor rewrite offsets
    assert KIND.declared(OFF_MAJORITY, {MAY_LOSE_DATA_KEY: None}) == {"fault": "power", "may_lose_data": None}
    assert KIND.declared(OFF_MINORITY, {MAY_LOSE_DATA_KEY: why}) == {"fault": "power", "may_lose_data": None}


def test_a_kind_may_not_say_that_a_strike_losing_nothing_rewrites_offsets():
    with pytest.raises(ValueError, match="rewrites_offsets names start fs that lose no data"):
        dataclasses.replace(KIND, rewrites_offsets=frozenset({OFF_MINORITY}))
