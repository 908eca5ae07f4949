"""The schedule is a pure function of the options and the seed, and replays from a history."""
import json

import click
import pytest
from click.testing import CliRunner

from nemesis.options import nemesis_options
from nemesis.registry import BY_NAME_ONLY, F_NAMES, FAULT_NAMES, parse_kinds
from nemesis.packet_behaviour import KNOBS
from nemesis.schedule import START, STOP, ScheduleError, Step, build_schedule, load_schedule

NODES = ["n1", "n2", "n3"]
ALL = list(FAULT_NAMES)
F_BY_STEP = {step: f for f, step in F_NAMES.items() if f not in ("bump-clock", "strobe-clock")}


def schedule(seed, kinds=ALL, targets=("one", "majority", "controller"), duration=120):
    return build_schedule(kinds, NODES, 10.0, seed, list(targets), duration)


def test_same_seed_same_schedule_other_seed_other_schedule():
    assert schedule(7) == schedule(7)
    assert schedule(7) != schedule(8)


def test_each_kind_alternates_start_stop_around_the_interval():
    steps = schedule(3, duration=600)
    for kind in ALL:
        own = [s for s in steps if s.fault == kind]
        assert [s.action for s in own[:4]] == [START, STOP, START, STOP]
        gaps = [b.at - a.at for a, b in zip(own, own[1:])]
        assert all(5.0 <= g <= 15.0 for g in gaps), (kind, gaps)
    assert [s.at for s in steps] == sorted(s.at for s in steps)
    assert all(s.at < 600 for s in steps)


def test_kinds_overlap():
    steps = schedule(1, duration=300)
    active, overlapped = set(), False
    for s in steps:
        if s.action == START:
            active.add(s.fault)
            overlapped |= len(active) > 1
        else:
            active.discard(s.fault)
    assert overlapped


def test_adding_a_kind_leaves_the_other_timelines_alone():
    only_pause = schedule(5, kinds=["pause"])
    with_more = [s for s in schedule(5) if s.fault == "pause"]
    assert only_pause == with_more


def test_plans_respect_targets():
    for step in schedule(9, targets=["majority"], duration=600):
        if step.action == START and step.fault in ("pause", "kill", "clock"):
            assert step.params["target"] == "majority" and len(step.params["nodes"]) == 2
    roles = [s for s in schedule(9, targets=["controller"]) if s.action == START
             and s.fault == "kill"]
    assert roles and all(s.params["nodes"] is None for s in roles)


def recorded_history(tmp_path, steps):
    """A history as the runner writes it: the value is the plan plus what happened."""
    lines = [{"index": 0, "time": 5, "type": "invoke", "process": 0, "f": "send",
              "value": [["send", 1, 1]]}]
    for step in steps:
        value = {**(step.params or {}), "at": step.at, "errors": {}}
        if step.params and step.params.get("nodes") is None and "target" in step.params:
            value["nodes"] = ["n2"]  # the role, resolved when it struck
        f = F_BY_STEP.get((step.fault, step.action)) or f"{step.params['mode']}-clock"
        lines.append({"index": len(lines), "time": int(step.at * 1e9) + 1000, "type": "info",
                      "process": "nemesis", "f": f, "value": value})
    lines.append({"index": len(lines), "time": 10**12, "type": "info", "process": "nemesis",
                  "f": "heal", "value": {"actions": []}})
    path = tmp_path / "history.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in lines))
    return path


def test_replay_gives_back_the_recorded_schedule(tmp_path):
    original = schedule(21)
    replayed = load_schedule(recorded_history(tmp_path, original))
    assert len(replayed) == len(original)
    for a, b in zip(original, replayed):
        assert (a.at, a.fault, a.action) == (b.at, b.fault, b.action)
        if a.action == START:
            expected = dict(a.params)
            if expected.get("nodes") is None and "target" in expected:
                expected["nodes"] = ["n2"]
            assert b.params == expected


def test_packet_plans_are_seeded_and_replay_without_what_happened(tmp_path):
    starts = [s for s in schedule(4, kinds=["packet"], duration=600) if s.action == START]
    assert starts == [s for s in schedule(4, kinds=["packet"], duration=600) if s.action == START]
    assert {s.params["target"] for s in starts} >= {"links", "one"}
    for step in starts:
        assert step.params["behaviour"] and set(step.params["behaviour"]) <= set(KNOBS)
        if step.params["target"] == "links":
            assert all(a != b and {a, b} <= set(NODES) for a, b in step.params["links"])
    # what a start records beside its plan (mechanisms per node) is no part of the replay
    recorded = [Step(s.at, s.fault, s.action, {**s.params, "mechanisms": {"n1": {
        "path": "fallback", "used": ["nfqueue"]}}}) for s in starts]
    replayed = [s for s in load_schedule(recorded_history(tmp_path, recorded)) if s.action == START]
    assert [s.params["behaviour"] for s in replayed] == [s.params["behaviour"] for s in starts]
    assert all("mechanisms" not in s.params for s in replayed)


def test_replay_errors_name_file_and_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"index":0}\nnot json\n{"index":2}\n')
    with pytest.raises(ScheduleError, match=r"bad.jsonl:2: not a JSON object"):
        load_schedule(bad)
    missing = tmp_path / "missing.jsonl"
    missing.write_text('{"index":0,"time":1,"type":"info","process":"nemesis","f":"pause",'
                       '"value":{"nodes":["n1"]}}\n')
    with pytest.raises(ScheduleError, match=r"missing.jsonl:1: .*'pause' lacks target"):
        load_schedule(missing)
    empty = tmp_path / "empty.jsonl"
    empty.write_text('{"index":0,"time":1,"type":"invoke","process":0,"f":"send","value":[]}\n')
    with pytest.raises(ScheduleError, match="no nemesis events"):
        load_schedule(empty)


def test_parse_kinds():
    assert parse_kinds("all") == [k for k in ALL if k not in BY_NAME_ONLY]
    assert parse_kinds("none") == []
    assert parse_kinds("kill, pause,kill") == ["kill", "pause"]
    with pytest.raises(ValueError, match="unknown fault 'wobble'.*valid: pause, kill"):
        parse_kinds("pause,wobble")


@click.command()
@nemesis_options
def show(**options):
    click.echo(json.dumps(options))


def test_options_parse_and_reject_unknown_names():
    ok = CliRunner().invoke(show, ["--nemesis", "pause,partition", "--db-targets",
                                   "controller,one", "--nemesis-interval", "3",
                                   "--partition-clients"])
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.output) == {"nemesis": ["pause", "partition"],
                                     "nemesis_interval": 3.0,
                                     "db_targets": ["controller", "one"],
                                     "nemesis_schedule": None, "partition_clients": True}
    bad_fault = CliRunner().invoke(show, ["--nemesis", "pause,explode"])
    assert bad_fault.exit_code == 2
    assert "unknown fault 'explode'" in bad_fault.output
    assert "valid: pause, kill, partition, clock, producer-state, membership, packet, client-delay, control-link, power, all, none" in bad_fault.output
    bad_target = CliRunner().invoke(show, ["--db-targets", "one,primary"])
    assert bad_target.exit_code == 2
    assert "unknown target 'primary'" in bad_target.output
    assert "valid: one, minority, majority, all, controller, leader" in bad_target.output
    bad_interval = CliRunner().invoke(show, ["--nemesis-interval", "0"])
    assert bad_interval.exit_code == 2 and "positive" in bad_interval.output


def test_replay_option_reads_the_history_up_front(tmp_path):
    bad = tmp_path / "earlier.jsonl"
    bad.write_text('{"index":0,"time":1,"type":"info","process":"nemesis","f":"kill",'
                   '"value":{"target":"one"}}\n{"index":1}\n')
    result = CliRunner().invoke(show, ["--nemesis-schedule", str(bad)])
    assert result.exit_code == 2
    assert "earlier.jsonl:1" in result.output and "lacks nodes" in result.output
    good = recorded_history(tmp_path, schedule(2, duration=30))
    ok = CliRunner().invoke(show, ["--nemesis-schedule", str(good)])
    assert ok.exit_code == 0 and json.loads(ok.output)["nemesis_schedule"] == str(good)
