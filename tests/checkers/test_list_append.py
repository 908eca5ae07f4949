"""The list-append checker on hand-written histories: every anomaly type at
an exact place, and clean look-alikes that must report nothing. Scenarios are
batched into two histories (one Spark check each: Spark is the slow part)."""

import json

import pytest

from checkers.history_io import load_history, pair_operations
from checkers.list_append import check_list_append
from tests.checkers.la_histories import T, a, concurrent, history, r, sequential

pytestmark = pytest.mark.spark

# Each scenario uses its own keys and processes; (name, processes involved).
SCENARIOS = {
    "G0": concurrent(T(1, a("g0a", 1), a("g0b", 1)), T(2, a("g0a", 2), a("g0b", 2)))
    + sequential(T(3, r("g0a", [1, 2]), r("g0b", [2, 1]))),
    "G1c": concurrent(T(4, a("g1ca", 1), r("g1cb", [1])), T(5, a("g1cb", 1), r("g1ca", [1]))),
    "G-single": concurrent(T(6, a("gsx", 1), a("gsy", 1)), T(7, r("gsx", [1]), r("gsy", [])))
    + sequential(T(8, r("gsy", [1]))),
    "G2-item": concurrent(T(9, r("g2p", []), a("g2q", 1)), T(10, r("g2q", []), a("g2p", 1)))
    + sequential(T(11, r("g2p", [1]), r("g2q", [1]))),
    "G1a": sequential(T(12, a("g1a", 1), type="fail"), T(13, r("g1a", [1]))),
    "G1b": concurrent(T(14, a("g1b", 1), a("g1b", 2)), T(15, r("g1b", [1]))),
    "internal": sequential(T(16, a("int", 1), r("int", []))),
    "duplicate-elements": sequential(T(17, a("dup", 1)), T(18, r("dup", [1, 1]))),
    "incompatible-order": concurrent(T(19, a("inc", 1)), T(20, a("inc", 2)))
    + concurrent(T(21, r("inc", [1, 2])), T(22, r("inc", [2]))),
    "future-read": sequential(T(23, r("fut", [1]), a("fut", 1))),
    "dirty-update": sequential(T(24, a("dirty", 1), type="fail"), T(25, a("dirty", 2)),
                               T(26, r("dirty", [1, 2]))),
    "lost-update": concurrent(T(27, r("lost", []), a("lost", 1)), T(28, r("lost", []), a("lost", 2)))
    + sequential(T(29, r("lost", [1, 2]))),
    "G-single-realtime": sequential(T(30, a("stale", 1)), T(31, r("stale", [])),
                                    T(32, r("stale", [1]))),
    "G0-realtime": sequential(T(33, a("g0rt", 1)), T(34, a("g0rt", 2)), T(35, r("g0rt", [2, 1]))),
    "G1c-process": sequential(T(36, r("g1cp_z", [1]), a("g1cp_w", 1)), T(36, a("g1cp_z", 1))),
}

# What each scenario must produce: {type: {frozenset(processes), ...}}.
EXPECTED = {
    "G0": {frozenset({1, 2})},
    "G1c": {frozenset({4, 5})},
    # the lost-update scenario is also a G-single: 28 read [] before 27's append,
    # and 27's append came first
    "G-single": {frozenset({6, 7}), frozenset({27, 28})},
    "G2-item": {frozenset({9, 10})},
    "G1a": {frozenset({13}), frozenset({26})},          # 26 read 24's aborted append
    "G1b": {frozenset({15})},
    "internal": {frozenset({16})},
    "duplicate-elements": {frozenset({18})},
    "incompatible-order": {frozenset({22})},
    "future-read": {frozenset({23})},
    "dirty-update": {frozenset({25})},
    "lost-update": {frozenset({27, 28})},
    "G-single-realtime": {frozenset({30, 31})},
    "G0-realtime": {frozenset({33, 34})},
    # process order implies realtime order: the same cycle is found both ways
    "G1c-process": {frozenset({36})},
    "G1c-realtime": {frozenset({36})},
}


def processes(example: dict) -> frozenset:
    if "cycle" in example:
        return frozenset(step["op"]["process"] for step in example["cycle"])
    if "ops" in example:
        return frozenset(op["process"] for op in example["ops"])
    return frozenset({example["op"]["process"]})


def run_check(spark, tmp_path, events, **kwargs):
    path = tmp_path / "history.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return check_list_append(spark, pair_operations(load_history(spark, str(path))),
                             examples=50, **kwargs)


@pytest.fixture(scope="module")
def results(spark, tmp_path_factory):
    return run_check(spark, tmp_path_factory.mktemp("la"), history(*SCENARIOS.values()))


@pytest.mark.parametrize("anomaly", sorted(EXPECTED))
def test_anomaly_found_exactly_where_planted(results, anomaly):
    found = results["anomalies"][anomaly]
    assert found["count"] == len(EXPECTED[anomaly])
    assert {processes(e) for e in found["examples"]} == EXPECTED[anomaly]


def test_no_other_anomaly(results):
    assert results["anomaly_types"] == sorted(EXPECTED)
    assert results["valid"] is False
    assert results["bad_anomaly_types"] == sorted(EXPECTED)   # strict-serializable forbids all
    assert results["not"] == ["read-uncommitted"]
    assert "strict-serializable" in results["also_not"]


def test_examples_name_keys_values_and_ops(results):
    g1a = next(e for e in results["anomalies"]["G1a"]["examples"] if e["key"] == "g1a")
    assert g1a["element"] == "1" and g1a["writer"]["type"] == "fail"
    assert set(g1a["op"]) == {"index", "process", "time", "f", "type"}
    failed = next(e["index"] for e in history(*SCENARIOS.values())
                  if e["process"] == 12 and e["type"] == "fail")
    assert g1a["writer"]["index"] == failed
    assert g1a["explanation"].endswith(
        f"containing 1, appended by op {failed} (process 12, fail) which failed")
    stale = results["anomalies"]["G-single-realtime"]["examples"][0]
    assert stale["explanation"].endswith(": a contradiction.")
    assert any("read key stale without" in s for s in stale["steps"])
    internal = results["anomalies"]["internal"]["examples"][0]
    assert (internal["key"], internal["read"]) == ("int", "[]")


CLEAN = [
    # own appends read back, in order, after an earlier read
    sequential(T(1, r("c1", []), a("c1", 1), a("c1", 2), r("c1", [1, 2]))),
    # appends seen in one order by everyone, reads are prefixes
    concurrent(T(2, a("c2", 1)), T(3, a("c2", 2))) + sequential(T(4, r("c2", [1, 2])),
                                                                T(5, r("c2", [1, 2]))),
    # a failed append nobody reads; an info append that shows up
    sequential(T(6, a("c3", 1), type="fail"), T(7, a("c3", 2), type="info"),
               T(8, r("c3", [2]))),
    # read-then-append by two txns one after the other (no lost update)
    sequential(T(9, r("c4", []), a("c4", 1)), T(10, r("c4", [1]), a("c4", 2)),
               T(11, r("c4", [1, 2]))),
    # a last append read (not intermediate), writes read by later txns only
    sequential(T(12, a("c5", 1), a("c5", 2)), T(13, r("c5", [1, 2]), a("c6", 1)),
               T(13, r("c6", [1]))),
]


def test_clean_histories_report_nothing(spark, tmp_path):
    results = run_check(spark, tmp_path, history(*CLEAN))
    assert results["anomalies"] == {}
    assert results["valid"] is True
    assert results["not"] == [] and results["also_not"] == []
    assert results["stats"]["ops"] == {"ok": 12, "fail": 1, "info": 1}
