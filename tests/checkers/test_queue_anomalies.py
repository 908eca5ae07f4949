"""Queue checker: every non-cycle anomaly type, each planted on its own key
in ONE history (one Spark run), asserting the exact type and location; and a
clean history that must report nothing."""
from __future__ import annotations

import pytest

from checkers.history_io import load_history, pair_operations
from checkers.queue import check_queue
from tests.checkers.histories import Builder

PLANTED: dict[str, tuple] = {}  # type -> (key, offsets, values, op indices)


def planted_history() -> Builder:
    h = Builder()
    # key 1: offset 0 holds 11 (sent, polled) and 12 (an info send, polled)
    s = h.send(1, [(1, 0, 11)]); p1 = h.poll(2, {1: [(0, 11)]})
    h.op(3, "send", [["send", 1, 12]], "info", None, ["TIMEOUT", "t"])
    p2 = h.poll(4, {1: [(0, 12)]})
    PLANTED["inconsistent-offsets"] = (1, [0], [11, 12], {s[1], p1[1], p2[1]})  # the info send has no offset
    # key 2: 21 at offsets 0 and 1
    s = h.send(5, [(2, 0, 21)]); p = h.poll(6, {2: [(0, 21), (1, 21)]})
    PLANTED["duplicate"] = (2, [0, 1], [21], {s[1], p[1]})
    # key 3: 31 acknowledged at 0, never polled, though 32 at 1 was
    s = h.send(7, [(3, 0, 31)]); h.send(7, [(3, 1, 32)]); h.poll(8, {3: [(1, 32)]})
    PLANTED["lost-write"] = (3, [0], [31], {s[1]})
    # key 4: acknowledged, never polled, nothing read on the key
    s = h.send(9, [(4, 5, 41)])
    PLANTED["unseen"] = (4, [5], [41], {s[1]})
    # key 5: a failed send polled
    s = h.send(10, [(5, None, 51)], type_="fail"); p = h.poll(11, {5: [(0, 51)]})
    PLANTED["G1a"] = (5, [0], [51], {s[1], p[1]})
    # key 6: a txn polls its own send
    t = h.op(12, "txn", [["send", 6, 61], ["poll"]], "ok", [["send", 6, [0, 61]], ["poll", {"6": [[0, 61]]}]])
    PLANTED["precommitted-read"] = (6, [0], [61], {t[1]})
    # key 7: process 14 reads 0, then 2 (offset 1 is known to hold 72)
    h.send(13, [(7, 0, 71), (7, 1, 72), (7, 2, 73)])
    a = h.poll(14, {7: [(0, 71)]}); h.poll(15, {7: [(0, 71), (1, 72), (2, 73)]}); b = h.poll(14, {7: [(2, 73)]})
    PLANTED["poll-skip"] = (7, [0, 2], [71, 73], {a[1], b[1]})
    # key 8: process 17 reads 0..1, then 1 again
    h.send(16, [(8, 0, 81), (8, 1, 82)])
    a = h.poll(17, {8: [(0, 81), (1, 82)]}); b = h.poll(17, {8: [(1, 82)]})
    PLANTED["nonmonotonic-poll"] = (8, [1, 1], [82, 82], {a[1], b[1]})
    # key 9: going back is fine after an assign
    h.send(19, [(9, 0, 91)]); h.poll(18, {9: [(0, 91)]})
    h.op(18, "assign", [9], "ok", [9]); h.poll(18, {9: [(0, 91)]})
    # key 10: one poll returns 0 then 2
    h.send(20, [(10, 0, 101), (10, 1, 102), (10, 2, 103)])
    p = h.poll(21, {10: [(0, 101), (2, 103)]}); h.poll(22, {10: [(1, 102)]})
    PLANTED["int-poll-skip"] = (10, [0, 2], [101, 103], {p[1]})
    # key 11: two polls in one txn, the second goes back
    h.send(23, [(11, 0, 111), (11, 1, 112)])
    t = h.op(24, "txn", [["poll"], ["poll"]], "ok",
             [["poll", {"11": [[0, 111], [1, 112]]}], ["poll", {"11": [[1, 112]]}]])
    PLANTED["int-nonmonotonic-poll"] = (11, [1, 1], [112, 112], {t[1]})
    # key 12: one send op lands at 0 and 2, another's at 1 in between
    s = h.send(25, [(12, 0, 121), (12, 2, 122)]); h.send(26, [(12, 1, 123)])
    h.poll(27, {12: [(0, 121), (1, 123), (2, 122)]})
    PLANTED["int-send-skip"] = (12, [0, 2], [121, 122], {s[1]})
    # key 13: one send op's offsets go down
    s = h.send(28, [(13, 1, 131), (13, 0, 132)]); h.poll(29, {13: [(0, 132), (1, 131)]})
    PLANTED["int-nonmonotonic-send"] = (13, [1, 0], [131, 132], {s[1]})
    # key 14: a process's second send lands below its first
    a = h.send(30, [(14, 1, 141)]); b = h.send(30, [(14, 0, 142)]); h.poll(31, {14: [(0, 142), (1, 141)]})
    PLANTED["nonmonotonic-send"] = (14, [1, 0], [141, 142], {a[1], b[1]})
    h.poll(32, {})  # final read
    return h


def clean_history() -> Builder:
    h = Builder()
    h.op(0, "subscribe", [1, 2], "ok", [1, 2])
    h.send(1, [(1, 0, 10), (1, 1, 11)])
    h.send(2, [(2, 0, 20)])
    h.send(3, [(1, None, 12)], type_="fail")
    h.op(4, "send", [["send", 2, 21]], "info", None, ["TIMEOUT", "t"])
    h.poll(0, {1: [(0, 10)]})
    h.op(5, "txn", [["send", 1, 13], ["poll"]], "ok", [["send", 1, [2, 13]], ["poll", {"2": [[0, 20], [1, 21]]}]])
    h.poll(0, {1: [(1, 11), (2, 13)]}, {2: [(0, 20)]})
    h.op(6, "poll", [["poll"]], "fail", None, ["NOT_LEADER", "x"])
    h.poll(7, {1: [(0, 10), (1, 11), (2, 13)], 2: [(0, 20), (1, 21)]})
    return h


@pytest.fixture(scope="module")
def planted(spark, tmp_path_factory):
    path = planted_history().write(tmp_path_factory.mktemp("queue") / "history.jsonl")
    return check_queue(spark, pair_operations(load_history(spark, path)), cycles=False)


def test_exactly_the_planted_types_are_found(planted):
    assert set(planted["anomalies"]) == set(PLANTED)
    assert all(found["count"] == 1 for found in planted["anomalies"].values())


@pytest.mark.parametrize("kind", sorted([
    "inconsistent-offsets", "duplicate", "lost-write", "unseen", "G1a", "precommitted-read", "poll-skip",
    "nonmonotonic-poll", "int-poll-skip", "int-nonmonotonic-poll", "int-send-skip", "int-nonmonotonic-send",
    "nonmonotonic-send"]))
def test_anomaly_location(planted, kind):
    key, offsets, values, op_indices = PLANTED[kind]
    example = planted["anomalies"][kind]["examples"][0]
    assert (example["key"], example["offsets"], example["values"]) == (key, offsets, values)
    assert {op["index"] for op in example["ops"]} == op_indices
    assert all({"index", "process", "time", "f", "type"} <= set(op) for op in example["ops"])
    assert str(key) in example["explanation"]


def test_verdict_for_planted(planted):
    assert planted["valid"] is False
    # int-send-skip is normal in Kafka; the rest are bad
    assert set(planted["bad_anomaly_types"]) == set(PLANTED) - {"int-send-skip"}


def test_unseen_series_counts_the_unread_send(planted):
    series = planted["series"]["unseen"]
    assert len(series["times"]) <= 200
    # every send is unseen until first polled; only the lost (key 3) and the
    # unseen (key 4) sends stay unseen to the end
    final = {key: counts[-1] for key, counts in series["keys"].items()}
    assert {key for key, n in final.items() if n} == {"3", "4"}
    assert final["3"] == final["4"] == 1
    assert max(series["keys"]["7"]) == 3     # key 7's three sends before anyone polled


def test_clean_history_reports_nothing(spark, tmp_path):
    path = clean_history().write(tmp_path / "history.jsonl")
    results = check_queue(spark, pair_operations(load_history(spark, path)))
    assert results["anomalies"] == {} and results["valid"] is True
    assert results["stats"]["used_subscribe"] is True
