"""Queue checker: every non-cycle anomaly type, each planted on its own key
in ONE history (one Spark run), asserting the exact type and location; the
same for info completions with offsets and aborted polls with results
(histories written the way Jepsen's are); and a clean history that must
report nothing."""
from __future__ import annotations

import pytest

from checkers.history.spark_read import load_history, pair_operations
from checkers.queue.spark import check_queue_spark
from tests.checkers.histories import Builder

PLANTED: dict[str, list[tuple]] = {}  # type -> [(key, offsets, values, op indices), ...]


def plant(kind: str, key: int, offsets: list[int], values: list[int], ops: set[int]) -> None:
    PLANTED.setdefault(kind, []).append((key, offsets, values, ops))


def planted_history() -> Builder:
    PLANTED.clear()
    h = Builder()
    # key 1: offset 0 holds 11 (sent, polled) and 12 (an info send, polled)
    s = h.send(1, [(1, 0, 11)]); p1 = h.poll(2, {1: [(0, 11)]})
    h.op(3, "send", [["send", 1, 12]], "info", None, ["TIMEOUT", "t"])
    p2 = h.poll(4, {1: [(0, 12)]})
    plant("inconsistent-offsets", 1, [0], [11, 12], {s[1], p1[1], p2[1]})  # the info send has no offset
    # key 2: 21 at offsets 0 and 1
    s = h.send(5, [(2, 0, 21)]); p = h.poll(6, {2: [(0, 21), (1, 21)]})
    plant("duplicate", 2, [0, 1], [21], {s[1], p[1]})
    # key 3: 31 acknowledged at 0, never polled, though 32 at 1 was: lost, and
    # (as Jepsen counts it) unseen too
    s = h.send(7, [(3, 0, 31)]); h.send(7, [(3, 1, 32)]); h.poll(8, {3: [(1, 32)]})
    plant("lost-write", 3, [0], [31], {s[1]})
    plant("unseen", 3, [0], [31], {s[1]})
    # key 4: acknowledged, never polled, nothing read on the key
    s = h.send(9, [(4, 5, 41)])
    plant("unseen", 4, [5], [41], {s[1]})
    # key 5: a failed send polled
    s = h.send(10, [(5, None, 51)], type_="fail"); p = h.poll(11, {5: [(0, 51)]})
    plant("G1a", 5, [0], [51], {s[1], p[1]})
    # key 6: a txn polls its own send
    t = h.op(12, "txn", [["send", 6, 61], ["poll"]], "ok", [["send", 6, [0, 61]], ["poll", {"6": [[0, 61]]}]])
    plant("precommitted-read", 6, [0], [61], {t[1]})
    # key 7: process 14 reads 0, then 2 (offset 1 is known to hold 72)
    h.send(13, [(7, 0, 71), (7, 1, 72), (7, 2, 73)])
    a = h.poll(14, {7: [(0, 71)]}); h.poll(15, {7: [(0, 71), (1, 72), (2, 73)]}); b = h.poll(14, {7: [(2, 73)]})
    plant("poll-skip", 7, [0, 2], [71, 73], {a[1], b[1]})
    # key 8: process 17 reads 0..1, then 1 again
    h.send(16, [(8, 0, 81), (8, 1, 82)])
    a = h.poll(17, {8: [(0, 81), (1, 82)]}); b = h.poll(17, {8: [(1, 82)]})
    plant("nonmonotonic-poll", 8, [1, 1], [82, 82], {a[1], b[1]})
    # key 9: going back is fine after an assign that dropped the key (Jepsen's rule)
    h.send(19, [(9, 0, 91)]); h.poll(18, {9: [(0, 91)]})
    h.assign(18, [90]); h.assign(18, [9]); h.poll(18, {9: [(0, 91)]})
    # key 10: one poll returns 0 then 2
    h.send(20, [(10, 0, 101), (10, 1, 102), (10, 2, 103)])
    p = h.poll(21, {10: [(0, 101), (2, 103)]}); h.poll(22, {10: [(1, 102)]})
    plant("int-poll-skip", 10, [0, 2], [101, 103], {p[1]})
    # key 11: two polls in one txn, the second goes back
    h.send(23, [(11, 0, 111), (11, 1, 112)])
    t = h.op(24, "txn", [["poll"], ["poll"]], "ok",
             [["poll", {"11": [[0, 111], [1, 112]]}], ["poll", {"11": [[1, 112]]}]])
    plant("int-nonmonotonic-poll", 11, [1, 1], [112, 112], {t[1]})
    # key 12: one send op lands at 0 and 2, another's at 1 in between
    s = h.send(25, [(12, 0, 121), (12, 2, 122)]); h.send(26, [(12, 1, 123)])
    h.poll(27, {12: [(0, 121), (1, 123), (2, 122)]})
    plant("int-send-skip", 12, [0, 2], [121, 122], {s[1]})
    # key 13: one send op's offsets go down
    s = h.send(28, [(13, 1, 131), (13, 0, 132)]); h.poll(29, {13: [(0, 132), (1, 131)]})
    plant("int-nonmonotonic-send", 13, [1, 0], [131, 132], {s[1]})
    # key 14: a process's second send lands below its first
    a = h.send(30, [(14, 1, 141)]); b = h.send(30, [(14, 0, 142)]); h.poll(31, {14: [(0, 142), (1, 141)]})
    plant("nonmonotonic-send", 14, [1, 0], [141, 142], {a[1], b[1]})
    # key 15: a send that never completed is proven by a poll of 151 at offset
    # 0, where 152 was acknowledged and polled
    h.invoke(40, "send", [["send", 15, 151]])
    s = h.send(41, [(15, 0, 152)]); p1 = h.poll(42, {15: [(0, 151)]}); p2 = h.poll(43, {15: [(0, 152)]})
    plant("inconsistent-offsets", 15, [0], [151, 152], {s[1], p1[1], p2[1]})
    # key 16: the same with the send inside an info txn (which also sent to 17)
    h.op(44, "txn", [["send", 16, 161], ["send", 17, 171]], "info", None, ["TIMEOUT", "t"])
    s = h.send(45, [(16, 0, 162)]); p1 = h.poll(46, {16: [(0, 161)]}); p2 = h.poll(47, {16: [(0, 162)]})
    plant("inconsistent-offsets", 16, [0], [161, 162], {s[1], p1[1], p2[1]})
    # key 18: a value of a failed (aborted) txn polled at two offsets: a
    # duplicate (Jepsen's version order takes every poll), and G1a
    t = h.op(48, "txn", [["send", 18, 181], ["send", 18, 182]], "fail", None, ["ABORTED", "a"])
    p = h.poll(49, {18: [(0, 181), (1, 181)]})
    plant("duplicate", 18, [0, 1], [181], {p[1]})
    plant("G1a", 18, [0], [181], {t[1], p[1]})
    # key 19: a failed assign did not happen: reading 0 again after it goes back
    h.send(51, [(19, 0, 191)])
    a = h.poll(50, {19: [(0, 191)]}); h.op(50, "assign", [19], "fail", None, ["UNKNOWN", "x"])
    b = h.poll(50, {19: [(0, 191)]})
    plant("nonmonotonic-poll", 19, [0, 0], [191, 191], {a[1], b[1]})
    # key 20: an assign that keeps the key keeps the position: going back
    # after it is a nonmonotonic poll (an assign that rewinds, Jepsen's rule)
    h.send(61, [(20, 0, 201), (20, 1, 202)])
    a = h.poll(60, {20: [(0, 201), (1, 202)]}); h.assign(60, [20, 21]); b = h.poll(60, {20: [(0, 201)]})
    plant("nonmonotonic-poll", 20, [1, 0], [202, 201], {a[1], b[1]})
    # key 21: sends too: the assign kept the key, so the second send is checked
    a = h.send(61, [(21, 1, 211)]); h.assign(61, [21]); b = h.send(61, [(21, 0, 212)])
    h.poll(32, {21: [(0, 212), (1, 211)]})
    plant("nonmonotonic-send", 21, [1, 0], [211, 212], {a[1], b[1]})
    # key 22: the assign started the key at 2, its first poll began at 0
    h.send(62, [(22, 0, 221), (22, 1, 222), (22, 2, 223)])
    a = h.assign(63, [22], {22: 2}); b = h.poll(63, {22: [(0, 221), (1, 222), (2, 223)]})
    plant("assign-rewind", 22, [0], [221], {a[1], b[1]})
    # key 23: the assign started the key at 0, its first poll began at 2
    h.send(62, [(23, 0, 231), (23, 1, 232), (23, 2, 233)])
    a = h.assign(64, [23], {23: 0}); b = h.poll(64, {23: [(2, 233)]})
    h.poll(32, {23: [(0, 231), (1, 232)]})
    plant("assign-skip", 23, [2], [233], {a[1], b[1]})
    # key 24: a kept key whose recorded start is where the process was (2):
    # going back to 1 is reported once, against the start
    h.send(62, [(24, 0, 241), (24, 1, 242), (24, 2, 243)])
    h.poll(65, {24: [(0, 241), (1, 242)]}); a = h.assign(65, [24], {24: 2}); b = h.poll(65, {24: [(1, 242), (2, 243)]})
    plant("assign-rewind", 24, [1], [242], {a[1], b[1]})
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
    # a send that never completed and an info txn, read at offsets no other
    # value holds: proven, and consistent
    h.invoke(8, "send", [["send", 3, 30]])
    h.op(9, "txn", [["send", 3, 31], ["send", 4, 40]], "info", None, ["TIMEOUT", "t"])
    h.send(10, [(3, 2, 32)])
    h.poll(11, {3: [(0, 30), (1, 31), (2, 32)]})
    # a failed txn nobody read; one value read at the same offset by two
    # processes is no duplicate; a failed assign between two in-order polls
    h.op(12, "txn", [["send", 4, 41], ["send", 4, 42]], "fail", None, ["ABORTED", "a"])
    h.send(13, [(4, 0, 43), (4, 1, 44)])
    h.poll(14, {4: [(0, 43)]}); h.poll(15, {4: [(0, 43), (1, 44)]})
    h.op(14, "assign", [4], "fail", None, ["UNKNOWN", "x"])
    h.poll(14, {4: [(1, 44)]})
    # an assign's start where no value is (offset 1: a transaction marker, say):
    # the first poll begins at the next offset that holds one
    h.send(16, [(5, 0, 50)]); h.send(16, [(5, 2, 52)])
    h.assign(20, [5], {5: 1}); h.poll(20, {5: [(2, 52)]}); h.poll(17, {5: [(0, 50), (2, 52)]})
    # a kept key continuing at its recorded start; a new key from its start
    h.send(16, [(6, 0, 60), (6, 1, 61)])
    h.poll(21, {6: [(0, 60)]}); h.assign(21, [6, 7], {6: 1, 7: 0}); h.poll(21, {6: [(1, 61)]})
    # sends across an assign that dropped the key: Jepsen forgets the last send
    h.send(22, [(7, 1, 71)]); h.assign(22, [8]); h.send(22, [(7, 0, 70)])
    h.poll(21, {7: [(0, 70), (1, 71)]})
    return h


@pytest.fixture(scope="module")
def planted(spark, tmp_path_factory):
    path = planted_history().write(tmp_path_factory.mktemp("queue") / "history.jsonl")
    return check_queue_spark(spark, pair_operations(load_history(spark, path)), cycles=False)


def test_exactly_the_planted_types_are_found(planted):
    assert set(planted["anomalies"]) == set(PLANTED)
    assert {kind: found["count"] for kind, found in planted["anomalies"].items()} == {
        kind: len(where) for kind, where in PLANTED.items()}


def _location(example: dict) -> tuple:
    return example["key"], example["offsets"], example["values"], {op["index"] for op in example["ops"]}


@pytest.mark.parametrize("kind", sorted([
    "inconsistent-offsets", "duplicate", "lost-write", "unseen", "G1a", "precommitted-read", "poll-skip",
    "nonmonotonic-poll", "int-poll-skip", "int-nonmonotonic-poll", "int-send-skip", "int-nonmonotonic-send",
    "nonmonotonic-send", "assign-skip", "assign-rewind"]))
def test_anomaly_location(planted, kind):
    examples = planted["anomalies"][kind]["examples"]
    assert [_location(e) for e in examples] == sorted(PLANTED[kind], key=lambda where: where[0])
    for example in examples:
        assert all({"index", "process", "time", "f", "type"} <= set(op) for op in example["ops"])
        assert str(example["key"]) in example["explanation"]


def test_verdict_for_planted(planted):
    assert planted["valid"] is False
    # int-send-skip is normal in Kafka; the rest are bad
    assert set(planted["bad_anomaly_types"]) == set(PLANTED) - {"int-send-skip"}


def test_unseen_series_counts_the_unread_send(planted):
    series = planted["series"]["unseen"]
    assert len(series["times"]) <= 200
    # every acknowledged send is unseen until first polled; only the lost
    # (key 3) and the unseen (key 4) sends stay unseen to the end
    final = {key: counts[-1] for key, counts in series["keys"].items()}
    assert {key for key, n in final.items() if n} == {"3", "4"}
    assert final["3"] == final["4"] == 1
    assert max(series["keys"]["7"]) == 3     # key 7's three sends before anyone polled


def test_unseen_lost_write_says_so(planted):
    lost_too = [e for e in planted["anomalies"]["unseen"]["examples"] if e["key"] == 3]
    assert lost_too[0]["max_read_offset"] == 1 and "lost-write too" in lost_too[0]["explanation"]


# --- info completions with offsets, aborted polls with results ---------------
# Histories written elsewhere (Jepsen's) complete an indefinite send or txn
# with the offsets it got, and an aborted poll with what it returned. An info
# op's offsets count once an ok poll returned one of its values, on any key
# (it happened); an aborted poll shows what the log held, but consumed
# nothing.

PROVEN: dict[str, list[tuple]] = {}


def proven_history() -> Builder:
    PROVEN.clear()
    h = Builder()

    def plant_(kind, key, offsets, values, ops):
        PROVEN.setdefault(kind, []).append((key, offsets, values, ops))
    # key 20: an info send put 201 at 20@0 (and 211 to key 21); 202 was
    # acknowledged and polled at 20@0; a poll of 211 proves the info send
    i = h.op(1, "send", [["send", 20, 201], ["send", 21, 211]], "info",
             [["send", 20, [0, 201]], ["send", 21, [None, 211]]], ["TIMEOUT", "t"])
    s = h.send(2, [(20, 0, 202)]); p = h.poll(3, {20: [(0, 202)]}); h.poll(4, {21: [(3, 211)]})
    plant_("inconsistent-offsets", 20, [0], [201, 202], {i[1], s[1], p[1]})
    plant_("lost-write", 20, [0], [201], {i[1]})   # landed at or below what was read, never read
    # key 22: the same inside an info txn, proven by its send to key 23;
    # 222, acknowledged at 22@1, was never polled
    t = h.op(5, "txn", [["send", 22, 221], ["send", 23, 231]], "info",
             [["send", 22, [1, 221]], ["send", 23, [5, 231]]], ["TIMEOUT", "t"])
    s = h.send(6, [(22, 1, 222)]); h.poll(7, {23: [(5, 231)]})
    plant_("inconsistent-offsets", 22, [1], [221, 222], {t[1], s[1]})
    plant_("unseen", 22, [1], [222], {s[1]})
    # key 24: 240 acknowledged and polled at 24@1; an aborted txn's poll
    # returned it at 24@11: a duplicate (Jepsen's duplicate-test "aborted txns")
    s = h.send(8, [(24, 1, 240)]); p = h.poll(9, {24: [(1, 240)]})
    f = h.op(10, "txn", [["poll"]], "fail", [["poll", {"24": [[11, 240]]}]], ["ABORTED", "a"])
    plant_("duplicate", 24, [1, 11], [240], {s[1], p[1], f[1]})
    # key 26: process 11 polls 26@0 (ok), then aborted 26@2..3, then info
    # 26@4: both skip 26@1, checked against the last ok poll (Jepsen's
    # poll-skip-test "txn abort")
    h.send(12, [(26, v, 260 + v) for v in range(5)])
    a = h.op(11, "txn", [["poll"]], "ok", [["poll", {"26": [[0, 260]]}]])
    b = h.op(11, "txn", [["poll"]], "fail", [["poll", {"26": [[2, 262], [3, 263]]}]], ["ABORTED", "a"])
    c = h.op(11, "txn", [["poll"]], "info", [["poll", {"26": [[4, 264]]}]], ["TIMEOUT", "t"])
    plant_("poll-skip", 26, [0, 2], [260, 262], {a[1], b[1]})
    plant_("poll-skip", 26, [0, 4], [260, 264], {a[1], c[1]})
    h.poll(13, {26: [(o, 260 + o) for o in range(5)]})
    # look-alikes, clean: an unproven info send whose offset another value
    # holds (key 30); an aborted poll re-read after its rewind (key 31); a
    # failed send that reports an offset (key 32)
    h.op(14, "send", [["send", 30, 301]], "info", [["send", 30, [0, 301]]], ["TIMEOUT", "t"])
    h.send(15, [(30, 0, 302)]); h.poll(16, {30: [(0, 302)]})
    h.send(17, [(31, 0, 310), (31, 1, 311)])
    h.op(18, "txn", [["poll"]], "ok", [["poll", {"31": [[0, 310]]}]])
    h.op(18, "txn", [["poll"]], "fail", [["poll", {"31": [[1, 311]]}]], ["ABORTED", "a"])
    h.op(18, "txn", [["poll"]], "ok", [["poll", {"31": [[1, 311]]}]])
    h.op(19, "send", [["send", 32, 321]], "fail", [["send", 32, [0, 321]]], ["NOT_ENOUGH_REPLICAS", "x"])
    h.send(20, [(32, 0, 322)]); h.poll(21, {32: [(0, 322)]})
    return h


@pytest.fixture(scope="module")
def proven(spark, tmp_path_factory):
    path = proven_history().write(tmp_path_factory.mktemp("queue-proven") / "history.jsonl")
    return check_queue_spark(spark, pair_operations(load_history(spark, path)), cycles=False)


def test_proven_info_and_aborted_polls(proven):
    assert {kind: found["count"] for kind, found in proven["anomalies"].items()} == {
        kind: len(where) for kind, where in PROVEN.items()}
    for kind, where in PROVEN.items():
        assert [_location(e) for e in proven["anomalies"][kind]["examples"]] == sorted(where, key=lambda w: w[0])


def test_lost_write_names_the_read_that_passed_it(planted):
    # key 3: 31 at offset 0 never read; process 8's poll read 32 at offset 1
    [e] = [e for e in planted["anomalies"]["lost-write"]["examples"] if e["key"] == 3]
    reader = e["max_read_op"]
    assert (reader["process"], reader["f"], reader["offset"], reader["value"]) == (8, "poll", 1, 32)
    assert (e["first_offset"], e["max_read_offset"], e["max_read_first_offset"]) == (0, 1, 1)
    assert f"op {reader['index']} (poll ok, process 8" in e["explanation"] and "read 32 there" in e["explanation"]
    assert "first" not in e["explanation"].split("there")[-1]   # first seen where it was acknowledged


def test_proven_info_lost_write_says_so(proven):
    [e] = proven["anomalies"]["lost-write"]["examples"]
    assert e["ops"][0]["type"] == "info" and "indefinite" in e["explanation"]


def test_clean_history_reports_nothing(spark, tmp_path):
    path = clean_history().write(tmp_path / "history.jsonl")
    results = check_queue_spark(spark, pair_operations(load_history(spark, path)))
    assert results["anomalies"] == {} and results["valid"] is True
    assert results["stats"]["used_subscribe"] is True
