"""partial-txn-read (checkers/queue/txn_reads.py): a consumer saw part of a
committed transaction and read past the rest. Planted histories with the
exact location, and clean look-alikes that must report nothing."""
from __future__ import annotations

import pytest

from tests.checkers.test_queue_engines import IN_SPARK, _write, assert_same, local_check, spark_check

NAME = "partial-txn-read"


def op(process: int, f: str, invoked, type_: str, done) -> list[dict]:
    return [{"type": "invoke", "process": process, "f": f, "value": invoked},
            {"type": type_, "process": process, "f": f, "value": done}]


def txn(process: int = 0, type_: str = "ok", b_key: int = 2) -> list[dict]:
    """T: value 201 to key 1 at offset 10, value 202 to key b_key at offset 7."""
    return op(process, "txn", [["send", 1, 201], ["send", b_key, 202]], type_,
              [["send", 1, [10, 201]], ["send", b_key, [7, 202]]])


def poll(process: int, polled: dict) -> list[dict]:
    return op(process, "poll", [["poll"]], "ok", [["poll", {str(k): v for k, v in polled.items()}]])


def assign(process: int, keys: list[int]) -> list[dict]:
    return op(process, "assign", keys, "ok", keys)


def fill(key: int, offsets: range, process: int = 9) -> list[dict]:
    """Plain sends that put values at those offsets of `key` (value 1000*key + offset)."""
    return [e for o in offsets for e in op(process, "send", [["send", key, 1000 * key + o]], "ok",
                                           [["send", key, [o, 1000 * key + o]]])]


def key2(*offsets: int) -> list[list[int]]:
    return [[o, 2000 + o] for o in offsets]


# the consumer (process 5) reads key 1 up to T's 201, and key 2 around T's offset 7
PLANTED = (fill(1, range(10)) + fill(2, range(7)) + fill(2, range(8, 10)) + txn() + assign(5, [1, 2])
           + poll(5, {1: [[9, 1009], [10, 201]], 2: key2(5, 6)})
           + poll(5, {2: key2(8, 9)}))


def check(tmp_path, events, **options) -> dict:
    return local_check(_write(events, tmp_path / "history.jsonl"), **options)


def test_planted_partial_read_names_the_txn_the_consumer_and_the_missing_part(tmp_path):
    result = check(tmp_path, PLANTED)
    found = result["anomalies"][NAME]
    assert found["count"] == 1
    (example,) = found["examples"]
    txn_index = next(i for i, e in enumerate(PLANTED) if e["f"] == "txn" and e["type"] == "invoke")
    poll_index = next(i for i, e in enumerate(PLANTED) if e["f"] == "poll" and e["type"] == "ok")
    assert example["txn"] == txn_index and example["process"] == 5
    assert example["seen"] == {"key": 1, "value": 201, "poll": poll_index}
    assert example["missing"] == {"key": 2, "value": 202, "offset": 7}
    assert example["read_offsets"] == [5, 9]
    assert "only in part" in example["explanation"]
    assert NAME in result["bad_anomaly_types"] and result["valid"] is False


def test_the_missed_part_read_before_the_seen_one_counts_too(tmp_path):
    events = (fill(1, range(10)) + fill(2, range(7)) + fill(2, range(8, 10)) + txn() + assign(5, [1, 2])
              + poll(5, {2: key2(6, 8)}) + poll(5, {1: [[10, 201]]}))
    assert check(tmp_path, events)["anomalies"][NAME]["count"] == 1


CLEAN = {
    # the consumer has not read key 2 past offset 7 yet
    "not yet past": poll(5, {1: [[10, 201]], 2: key2(5, 6)}),
    # it read key 2 past 7 and did return 202
    "read in full": poll(5, {1: [[10, 201]], 2: key2(6)}) + poll(5, {2: [[7, 202]] + key2(8)}),
    # its first read of key 2 is already past 7 (a seek or an offset reset)
    "started past it": poll(5, {1: [[10, 201]], 2: key2(8, 9)}),
    # an assign between the polls: the position may move anywhere
    "reassigned": poll(5, {1: [[10, 201]], 2: key2(6)}) + assign(5, [1, 2]) + poll(5, {2: key2(8)}),
}


@pytest.mark.parametrize("case", sorted(CLEAN))
def test_clean_look_alikes_report_nothing(tmp_path, case):
    events = fill(1, range(10)) + fill(2, range(7)) + fill(2, range(8, 10)) + txn() + assign(5, [1, 2]) + CLEAN[case]
    assert NAME not in check(tmp_path, events)["anomalies"]


@pytest.mark.spark
def test_clean_look_alikes_report_nothing_when_gathered_in_spark(spark, tmp_path):
    """Spark's records hold no assign/subscribe: SparkPass.txn_reads must add
    them, or every consumer has one epoch and "reassigned" is flagged. The
    look-alikes are one history, a consumer process each (partial-txn-read is
    judged per consumer), so Spark's fixed cost per check is paid once."""
    events = fill(1, range(10)) + fill(2, range(7)) + fill(2, range(8, 10)) + txn()
    for n, case in enumerate(sorted(CLEAN)):
        consumer = 10 * (n + 1)
        events += [{**e, "process": consumer} for e in assign(5, [1, 2]) + CLEAN[case]]
    path = _write(events, tmp_path / "look-alikes.jsonl")
    local = local_check(path)
    assert NAME not in local["anomalies"]
    assert_same(local, spark_check(spark, path, **IN_SPARK))


@pytest.mark.parametrize("type_", ["fail", "info"])
def test_a_txn_that_did_not_commit_is_not_a_partial_read(tmp_path, type_):
    events = (fill(1, range(10)) + fill(2, range(7)) + fill(2, range(8, 10)) + txn(type_=type_) + assign(5, [1, 2])
              + poll(5, {1: [[9, 1009]], 2: key2(5, 6)}) + poll(5, {2: key2(8, 9)}))
    assert NAME not in check(tmp_path, events)["anomalies"]


def test_a_txn_on_one_key_is_not_a_partial_read(tmp_path):
    events = (fill(1, range(10)) + txn(b_key=1) + assign(5, [1])
              + poll(5, {1: [[9, 1009], [10, 201]]}))
    assert NAME not in check(tmp_path, events)["anomalies"]


def test_another_consumer_reading_past_is_not_this_ones_partial_read(tmp_path):
    events = (fill(1, range(10)) + fill(2, range(7)) + fill(2, range(8, 10)) + txn() + assign(5, [1])
              + assign(6, [2]) + poll(5, {1: [[10, 201]]}) + poll(6, {2: key2(6, 8)}))
    assert NAME not in check(tmp_path, events)["anomalies"]


def test_subscribed_consumers_excuse_it(tmp_path):
    events = [e if e["f"] != "assign" else {**e, "f": "subscribe"} for e in PLANTED]
    result = check(tmp_path, events)
    assert result["anomalies"][NAME]["count"] == 1 and NAME not in result["bad_anomaly_types"]


@pytest.mark.spark
def test_both_engines_find_the_same(spark, tmp_path):
    events = PLANTED + op(7, "assign", [2], "ok", [2]) + poll(7, {2: key2(8)})
    path = _write(events, tmp_path / "history.jsonl")
    # gathered on the driver, then in Spark (SparkPass.txn_reads: per consumer process in executors)
    for options in ({}, {"limit": 1, **IN_SPARK}):
        local = local_check(path, **{k: v for k, v in options.items() if k not in IN_SPARK})
        assert local["anomalies"][NAME]["count"] == 1
        assert_same(local, spark_check(spark, path, **options))
