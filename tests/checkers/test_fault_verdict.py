"""Faults that may lose data: the verdict "expected under the faults that ran"
(checkers/verdict/faults.py), from the start events' `fault` and
`may_lose_data` (docs/history-format.md). Each history is checked on both
engines through checkers.api.check_history, and each must give the exact
`faults` section; the rule's edges are checked on `judge` itself."""
from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from checkers.api import check_history
from checkers.history.fault_events import declared_starts
from checkers.verdict import faults
from checkers.verdict.taxonomy import TYPES
from common import exit_codes
from harness.commands.check import check as check_command
from tests.checkers.histories import Builder

TRUNCATE_WHY = "DeleteRecords moves the log start of every test partition to its high watermark"
TRUNCATE = ("truncate-log", {"mode": "truncate", "at": 1.0, "fault": "producer-state", "may_lose_data": TRUNCATE_WHY})
EXPIRE = ("expire-producer-ids", {"mode": "expire", "at": 2.0, "fault": "producer-state", "may_lose_data": None})
PARTITION = ("start-partition", {"shape": "one", "at": 1.0, "fault": "partition", "may_lose_data": None})
OLD_TRUNCATE = ("truncate-log", {"mode": "truncate", "at": 1.0})   # written before the declaration existed
POWER_WHY = "Kafka acknowledges a write before any fsync"
POWER = ("power-off-majority", {"target": "majority", "nodes": ["n1", "n2"], "majority": True, "mode": "clean",
                                "at": 1.0, "fault": "power", "may_lose_data": POWER_WHY, "rewrites_offsets": True})
# the same strike as written before it declared rewrites_offsets
POWER_BEFORE = ("power-off-majority", {k: v for k, v in POWER[1].items() if k != "rewrites_offsets"})
ENGINES = ["local", "spark"]


def lost_write(*starts: tuple[str, dict], duplicate: bool = False) -> Builder:
    """Key 1: 10 acknowledged at offset 0, then the faults strike, then 11 at
    offset 1, and the one poll reads only offset 1: 10 is a lost write (and
    unseen). With `duplicate`, key 2's 20 is read at two offsets too."""
    h = Builder()
    h.send(0, [(1, 0, 10)])
    for f, value in starts:
        h.nemesis(f, value)
    h.send(0, [(1, 1, 11)])
    h.poll(1, {1: [(1, 11)]})
    if duplicate:
        h.send(2, [(2, 0, 20)])
        h.poll(3, {2: [(0, 20), (1, 20)]})
    return h


def check(h: Builder, tmp_path: Path, engine: str) -> dict:
    tmp_path.mkdir(parents=True, exist_ok=True)
    history = h.write(tmp_path / "history.jsonl")
    return check_history(history, out_dir=tmp_path / engine, engine=engine)


def producer_state(*fs: str, why: dict | None = None, strikes: int = 1) -> dict:
    return {"fault": "producer-state", "f": list(fs), "strikes": strikes,
            "may_lose_data": {"truncate-log": TRUNCATE_WHY} if why is None else why}


PARTITION_IN_FORCE = {"fault": "partition", "f": ["start-partition"], "strikes": 1, "may_lose_data": {}}
FIRST_TRUNCATE = {"index": 2, "time": 3000, "fault": "producer-state", "f": "truncate-log"}


@pytest.mark.parametrize("engine", ENGINES)
def test_a_lost_write_after_a_truncate_is_expected_under_the_faults_that_ran(spark, tmp_path, engine):
    results = check(lost_write(TRUNCATE), tmp_path, engine)
    assert results["valid"] is False and results["bad_anomaly_types"] == ["lost-write", "unseen"]
    section = results["faults"]
    assert {k: v for k, v in section.items() if k != "explanation"} == {
        "verdict": "expected-under-faults",
        "in_force": [producer_state("truncate-log")],
        "may_lose_data": ["producer-state"],
        "first_loss_strike": FIRST_TRUNCATE,
        "reads_end": 7000,
        "struck_before_reads_end": True,
        "explained": ["lost-write", "unseen"],
        "unexplained": [],
    }
    assert section["explanation"] == (
        "Faults that ran: producer-state. Of these, producer-state may lose acknowledged data; the first "
        "such strike (truncate-log, event 2) came before the last operation ended. Expected under the faults "
        "that ran: every anomaly that makes the run invalid (lost-write, unseen) is acknowledged data missing "
        "from reads, which producer-state can cause. The checker does not trace each missing record to a strike.")


@pytest.mark.parametrize("engine", ENGINES)
def test_the_same_loss_under_a_partition_alone_stays_invalid(spark, tmp_path, engine):
    results = check(lost_write(PARTITION), tmp_path, engine)
    assert results["valid"] is False and results["bad_anomaly_types"] == ["lost-write", "unseen"]
    assert results["faults"] == {
        "verdict": "invalid",
        "in_force": [PARTITION_IN_FORCE],
        "may_lose_data": [],
        "first_loss_strike": None,
        "reads_end": 7000,
        "struck_before_reads_end": False,
        "explained": [],
        "unexplained": ["lost-write", "unseen"],
        "explanation": "Faults that ran: partition. None of them may lose acknowledged data. Not explained by "
                       "the faults that ran: the run is invalid (lost-write, unseen).",
    }


@pytest.mark.parametrize("engine", ENGINES)
def test_a_duplicate_beside_the_lost_write_still_condemns(spark, tmp_path, engine):
    results = check(lost_write(TRUNCATE, EXPIRE, duplicate=True), tmp_path, engine)
    assert results["valid"] is False and results["bad_anomaly_types"] == ["duplicate", "lost-write", "unseen"]
    section = results["faults"]
    assert section["verdict"] == "invalid"
    assert section["in_force"] == [producer_state("expire-producer-ids", "truncate-log", strikes=2)]
    assert (section["explained"], section["unexplained"]) == (["lost-write", "unseen"], ["duplicate"])
    assert section["explanation"].endswith(
        "Not explained by the faults that ran: duplicate is not acknowledged data missing from reads, so the "
        "run is invalid. lost-write, unseen alone would be expected under producer-state.")


@pytest.mark.parametrize("engine", ENGINES)
def test_an_old_history_checks_exactly_as_before(spark, tmp_path, engine):
    """Without the declaration: no `faults`, and everything else as the
    declared history's results (the declaration changes nothing else)."""
    old = check(lost_write(OLD_TRUNCATE), tmp_path / "old", engine)
    new = check(lost_write(TRUNCATE), tmp_path / "new", engine)
    assert "faults" not in old and old["valid"] is False and old["bad_anomaly_types"] == ["lost-write", "unseen"]
    assert {k: v for k, v in old.items() if k != "checker"} == \
        {k: v for k, v in new.items() if k not in ("checker", "faults")}


@pytest.mark.parametrize("engine", ENGINES)
def test_a_clean_history_is_valid_and_names_the_faults_in_force(spark, tmp_path, engine):
    h = Builder()
    h.nemesis(*PARTITION)
    h.send(0, [(1, 0, 10)])
    h.nemesis(*TRUNCATE)
    h.nemesis("restore-producer-state", {"mode": "truncate", "at": 3.0})   # a stop declares nothing
    h.poll(1, {1: [(0, 10)]})
    results = check(h, tmp_path, engine)
    assert results["valid"] is True and results["bad_anomaly_types"] == []
    assert results["faults"] == {
        "verdict": "valid",
        "in_force": [PARTITION_IN_FORCE, producer_state("truncate-log")],
        "may_lose_data": ["producer-state"],
        "first_loss_strike": {"index": 3, "time": 4000, "fault": "producer-state", "f": "truncate-log"},
        "reads_end": 7000,
        "struck_before_reads_end": True,
        "explained": [],
        "unexplained": [],
        "explanation": "Faults that ran: partition, producer-state. Of these, producer-state may lose "
                       "acknowledged data; the first such strike (truncate-log, event 3) came before the last "
                       "operation ended. Nothing made the run invalid.",
    }


# ---- the rule's edges, on judge itself ----------------------------------------------------

def strike(time: int, why: str | None = TRUNCATE_WHY, f: str = "truncate-log") -> faults.Strike:
    return faults.Strike(time, time, "producer-state", f, why)


def test_a_strike_after_the_last_operation_explains_nothing():
    section = faults.judge(False, ["lost-write"], [strike(9000)], reads_end=7000)
    assert (section["verdict"], section["struck_before_reads_end"], section["explained"]) == ("invalid", False, [])
    assert "but no such strike came before the last operation ended" in section["explanation"]


def test_without_the_end_of_the_reads_nothing_is_explained():
    """list-append has no stats.end_time (and no data-loss type either)."""
    assert faults.judge(False, ["lost-write"], [strike(1)], reads_end=None)["verdict"] == "invalid"


def test_an_unknown_verdict_stays_unknown_and_an_unknown_type_condemns():
    assert faults.judge("unknown", ["unseen"], [strike(1)], reads_end=7000)["verdict"] == "unknown"
    assert faults.judge(False, ["lost-write", "made-up"], [strike(1)], 7000)["unexplained"] == ["made-up"]


def test_only_the_types_a_deleted_record_accounts_for_are_data_loss():
    assert sorted(t.name for t in TYPES.values() if t.data_loss) == \
        ["assign-skip", "lost-write", "partial-txn-read", "poll-skip", "rebalance-skip", "unseen"]
    assert all(t.workloads == ("queue",) for t in TYPES.values() if t.data_loss)


def test_malformed_declarations_are_left_out():
    events = [{"index": 1, "time": 5, "f": "truncate-log", "process": "nemesis",
               "value": {"fault": "producer-state", "may_lose_data": why}} for why in (None, "why", 3, [])]
    events.append({"index": "2", "time": 5, "f": "x", "value": {"fault": "k", "may_lose_data": None}})
    assert [s.may_lose_data for s in faults.strikes(events)] == [None, "why"]


def offset_written_twice(*starts: tuple[str, dict]) -> Builder:
    """Key 1: 10 acknowledged at offset 0 and read there, then the faults strike, then 11
    acknowledged at offset 0 and read there: one offset, two values."""
    h = Builder()
    h.send(0, [(1, 0, 10)])
    h.poll(1, {1: [(0, 10)]})
    for f, value in starts:
        h.nemesis(f, value)
    h.send(0, [(1, 0, 11)])
    h.poll(2, {1: [(0, 11)]})
    return h


@pytest.mark.parametrize("engine", ENGINES)
def test_an_offset_written_again_after_a_power_loss_is_expected_under_it(spark, tmp_path, engine):
    results = check(offset_written_twice(POWER), tmp_path, engine)
    both = ["inconsistent-offsets", "nonmonotonic-send"]    # process 0's second send went back to offset 0
    assert results["valid"] is False and results["bad_anomaly_types"] == both
    example = results["anomalies"]["inconsistent-offsets"]["examples"][0]
    assert (example["key"], example["offsets"], example["values"]) == (1, [0], [10, 11])
    section = results["faults"]
    assert (section["verdict"], section["explained"], section["unexplained"], section["rewrites_offsets"]) == \
        ("expected-under-faults", both, [], ["power"])
    assert "or what follows when power cut a log's acknowledged tail" in section["explanation"]


@pytest.mark.parametrize("engine", ENGINES)
def test_the_same_offset_under_a_strike_that_only_deletes_stays_invalid(spark, tmp_path, engine):
    """A deletion (truncate-log) or a power strike from before the declaration never
    writes an offset twice: one offset with two values is then something else."""
    for starts in ((TRUNCATE,), (POWER_BEFORE,)):
        results = check(offset_written_twice(*starts), tmp_path / starts[0][0], engine)
        section = results["faults"]
        assert (section["verdict"], section["unexplained"]) == ("invalid", ["inconsistent-offsets", "nonmonotonic-send"])
        assert "rewrites_offsets" not in section


def test_a_rewriting_strike_after_the_last_operation_explains_nothing():
    power = faults.Strike(9000, 9000, "power", "power-off-majority", POWER_WHY, rewrites_offsets=True)
    section = faults.judge(False, ["inconsistent-offsets"], [power], reads_end=7000)
    assert (section["verdict"], section["explained"]) == ("invalid", []) and "rewrites_offsets" not in section


def test_only_the_types_a_cut_log_tail_accounts_for_are_tail_cut():
    assert sorted(t.name for t in TYPES.values() if t.tail_cut) == \
        ["assign-rewind", "inconsistent-offsets", "int-poll-skip", "nonmonotonic-poll", "nonmonotonic-send",
         "rebalance-rewind"]
    assert all(t.workloads == ("queue",) and not t.data_loss for t in TYPES.values() if t.tail_cut)


def test_a_rewrites_offsets_declaration_counts_only_as_true_and_with_a_reason():
    def event(why, flag):
        return {"index": 1, "time": 5, "f": "power-off-majority", "process": "nemesis",
                "value": {"fault": "power", "may_lose_data": why, "rewrites_offsets": flag}}
    assert [s.rewrites_offsets for s in faults.strikes([event("why", True), event("why", "yes"),
                                                        event(None, True)])] == [True, False, False]


# ---- reading the declarations --------------------------------------------------------------

def test_declared_starts_are_found_across_block_boundaries_and_through_a_companion(tmp_path):
    path = lost_write(PARTITION, OLD_TRUNCATE, TRUNCATE, duplicate=True).write(tmp_path / "history.jsonl")
    expected = [(2, "start-partition"), (4, "truncate-log")]
    for block in (7, 64, 1 << 20):
        assert [(e["index"], e["f"]) for e in declared_starts(path, block_bytes=block)] == expected
    companion = tmp_path / "history.parquet"
    companion.mkdir()
    (companion / "_SOURCE.json").write_text('{"history": "history.jsonl"}')
    assert [(e["index"], e["f"]) for e in declared_starts(companion)] == expected
    assert declared_starts(tmp_path / "events.parquet") == []


def test_logtrial_check_prints_it_and_still_exits_invalid(tmp_path):
    """`valid` stays false, so does the exit status: a run that lost data never passes unseen."""
    history = lost_write(TRUNCATE).write(tmp_path / "history.jsonl")
    result = CliRunner().invoke(check_command, [str(history), "--engine", "local", "--out", str(tmp_path / "out")])
    assert result.exit_code == exit_codes.INVALID, result.output
    assert "faults: expected-under-faults: Faults that ran: producer-state." in result.output
