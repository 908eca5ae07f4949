"""producer-state as a fault kind: seeded plans, history f names, replay (no cluster)."""
from __future__ import annotations

import json

from nemesis.producer_state import MODES, START_F, STOP_F, ProducerStateFault, topic_prefixes
from nemesis.registry import F_NAMES, parse_kinds
from nemesis.schedule import START, STOP, Step, build_schedule, load_schedule

NODES = ["n1", "n2", "n3"]


def test_plans_are_seeded_and_draw_every_mode():
    steps = build_schedule(["producer-state"], NODES, 10.0, 7, ["one"], 600)
    assert steps == build_schedule(["producer-state"], NODES, 10.0, 7, ["one"], 600)
    starts = [s for s in steps if s.action == START]
    assert {s.params["mode"] for s in starts} == set(MODES)
    assert [s.action for s in steps[:4]] == [START, STOP, START, STOP]


def test_it_is_a_fault_kind_with_its_own_history_names():
    assert "producer-state" not in parse_kinds("all")  # it deletes records: by name only
    assert parse_kinds("producer-state,pause") == ["producer-state", "pause"]
    assert {F_NAMES[f] for f in START_F.values()} == {("producer-state", "start")}
    assert F_NAMES[STOP_F] == ("producer-state", "stop")
    assert ProducerStateFault().start_f({"mode": "expire"}) == "expire-producer-ids"


def test_replay_reads_the_mode_back_from_the_history(tmp_path):
    events = [
        {"index": 0, "time": 1, "type": "info", "process": "nemesis", "f": "truncate-log",
         "value": {"mode": "truncate", "partitions": {"lt-q-0/0": 12}, "at": 3.0}},
        {"index": 1, "time": 2, "type": "info", "process": "nemesis", "f": "restore-producer-state",
         "value": {"restored": [], "at": 5.5}},
        {"index": 2, "time": 3, "type": "info", "process": "nemesis", "f": "expire-producer-ids",
         "value": {"mode": "expire", "configs": {"producer.id.expiration.ms": "2000"}, "at": 9.0,
                   "errors": {"broker 2": "down"}}},
    ]
    path = tmp_path / "history.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    assert load_schedule(path) == [
        Step(3.0, "producer-state", START, {"mode": "truncate", "partitions": {"lt-q-0/0": 12}}),
        Step(5.5, "producer-state", STOP),
        Step(9.0, "producer-state", START, {"mode": "expire", "configs": {"producer.id.expiration.ms": "2000"}}),
    ]


def test_topic_prefixes_follow_key_rotation():
    assert topic_prefixes(["lt1-q-0", "lt1-q-1", "lt1-q-7"]) == ["lt1-q-"]
    assert topic_prefixes([]) == []
