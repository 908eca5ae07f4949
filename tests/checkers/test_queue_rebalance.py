"""Queue checker, `--sub-via subscribe`: where a consumer group's rebalance
started each key (the third item of an "assigned" `rebalance_log` entry) is
checked against the key's first poll after it, as an assign's `starts` are
(checkers/queue/order.py). Planted rebalance-skip and rebalance-rewind with
their exact location, clean look-alikes that must report nothing, the
evidence rule (queue_records.evidence_logs), and both engines."""
from __future__ import annotations

import copy
from pathlib import Path

import pytest

from checkers.history.read import read_history
from checkers.queue.local import check_queue_local
from tests.checkers.histories import Builder

PLANTED: dict[str, list[tuple]] = {}   # type -> [(key, start, offsets, values, op indices)]


def _logged(h: Builder, at: tuple[int, int], *entries) -> tuple[int, int]:
    """The completion at `at` carries these rebalance_log entries."""
    h.events[at[1]]["rebalance_log"] = [[what, keys, *([{str(k): o for k, o in starts.items()}]
                                                        if starts is not None else [])]
                                        for what, keys, starts in entries]
    return at


def rebalance_history() -> Builder:
    """Process 0 subscribes to keys 1-10; each key's story is its own."""
    PLANTED.clear()
    h = Builder()
    h.op(0, "subscribe", list(range(1, 11)), "ok", list(range(1, 11)))
    for key in range(1, 11):
        h.send(9, [(key, o, key * 10 + o) for o in _offsets(key)])
    # key 1: a rebalance starts it at 1; the same poll returns it from 3
    a = _logged(h, h.poll(0, {1: [(3, 13), (4, 14)]}), ("assigned", [1], {1: 1}))
    PLANTED.setdefault("rebalance-skip", []).append((1, 1, [3], [13], {a[1]}))
    # key 2: started at 4 by a rebalance in a poll that did not return it;
    # the next poll returns it from 2
    a = _logged(h, h.poll(0, {}), ("assigned", [2], {2: 4}))
    b = h.poll(0, {2: [(2, 22), (3, 23)]})
    PLANTED.setdefault("rebalance-rewind", []).append((2, 4, [2], [22], {a[1], b[1]}))
    # key 3: kept across a rebalance: read up to 1, started at 2, read from 2
    h.poll(0, {3: [(0, 30), (1, 31)]})
    _logged(h, h.poll(0, {3: [(2, 32)]}), ("revoked", [3], None), ("assigned", [3], {3: 2}))
    # key 4: revoked after reading up to 1; another consumer reads on; given
    # back at 4, where the poll begins (no poll-skip against the old position)
    h.poll(0, {4: [(0, 40), (1, 41)]})
    _logged(h, h.poll(0, {}), ("revoked", [4], None))
    h.poll(5, {4: [(0, 40), (1, 41), (2, 42), (3, 43)]})
    _logged(h, h.poll(0, {4: [(4, 44)]}), ("assigned", [4], {4: 4}))
    # key 5: started at 1, where no value is (a transaction marker, say): the
    # poll begins at the next offset that holds one
    h.poll(5, {5: [(0, 50), (2, 52)]})
    _logged(h, h.poll(0, {5: [(2, 52)]}), ("assigned", [5], {5: 1}))
    # key 6: assigned with a start, then revoked in the same log: no start
    # stands (the key's last entry decides), nothing to check against
    _logged(h, h.poll(0, {}), ("assigned", [6], {6: 0}), ("revoked", [6], None))
    h.poll(6, {6: [(0, 60), (1, 61), (2, 62), (3, 63), (4, 64), (5, 65)]})
    # key 7: the start a rebalance names is superseded by a later entry of the same log
    _logged(h, h.poll(0, {7: [(3, 73)]}), ("assigned", [7], {7: 0}), ("revoked", [7], None),
            ("assigned", [7], {7: 3}))
    # key 9 (CI's run at 3e46f54): started at 0, revoked before any poll of it,
    # given back by a txn with two polls (its start no evidence), which reads
    # it from 4: the old start no longer stands
    _logged(h, h.poll(0, {}), ("assigned", [9], {9: 0}))
    _logged(h, h.poll(0, {}), ("revoked", [9], None))
    _logged(h, h.op(0, "txn", [["poll"], ["poll"]], "ok", [["poll", {"9": [[4, 94], [5, 95]]}], ["poll", {}]]),
            ("assigned", [9], {9: 4}))
    # key 10: the same, but an aborted poll logs the revocation and no other
    # log names the key: the start stands no longer either
    _logged(h, h.poll(0, {}), ("assigned", [10], {10: 0}))
    _logged(h, h.op(0, "txn", [["poll"]], "fail", [["poll"]], ["ABORTED", "a"]), ("revoked", [10], None))
    h.poll(0, {10: [(3, 103)]})
    # key 8: read by the others up to the end, for the final reads
    h.poll(7, {k: [(o, k * 10 + o) for o in _offsets(k)] for k in (1, 2, 3, 4, 5, 7, 8, 9, 10)})
    return h


def _offsets(key: int) -> list[int]:
    """Offsets 0-5 hold values, except offset 1 of key 5."""
    return [o for o in range(6) if (key, o) != (5, 1)]


def _location(example: dict) -> tuple:
    return example["key"], example["start"], example["offsets"], example["values"], {op["index"] for op in example["ops"]}


def _assert_planted(results: dict) -> None:
    order = results["anomalies"]     # the look-alikes (keys 3-7, 9, 10) report nothing at all
    assert {k: v["count"] for k, v in order.items()} == {k: len(v) for k, v in PLANTED.items()}
    for kind, where in PLANTED.items():
        assert [_location(e) for e in order[kind]["examples"]] == where
        assert all("rebalance" in e["explanation"] for e in order[kind]["examples"])
    # subscribing excuses poll-skips, not these: their evidence is the recorded start
    assert results["valid"] is False
    assert set(PLANTED) <= set(results["bad_anomaly_types"])


def local(h: Builder, path: Path, **options) -> dict:
    return check_queue_local(read_history(h.write(path), "queue").ops, cycles=False, **options)


def test_planted_rebalance_skip_and_rewind_local(tmp_path):
    _assert_planted(local(rebalance_history(), tmp_path / "h.jsonl"))


@pytest.mark.spark
def test_planted_rebalance_skip_and_rewind_spark(spark, tmp_path):
    from tests.checkers.test_queue_engines import IN_SPARK, spark_check
    path = rebalance_history().write(tmp_path / "h.jsonl")
    _assert_planted(spark_check(spark, path, cycles=False))
    _assert_planted(spark_check(spark, path, cycles=False, **IN_SPARK))


def _without_starts(h: Builder) -> Builder:
    """The same history, every rebalance_log entry stripped of its starts."""
    bare = copy.deepcopy(h)
    for e in bare.events:
        if "rebalance_log" in e:
            e["rebalance_log"] = [entry[:2] for entry in e["rebalance_log"]]
    return bare


def _without_logs(h: Builder) -> Builder:
    bare = copy.deepcopy(h)
    for e in bare.events:
        e.pop("rebalance_log", None)
    return bare


def test_entries_without_starts_change_nothing(tmp_path):
    """Logs without starts check exactly as histories without any log do
    (today's rule: the jumps are Jepsen's poll-skips, excused by subscribe)."""
    h = rebalance_history()
    bare = local(_without_starts(h), tmp_path / "bare.jsonl")
    assert bare == local(_without_logs(h), tmp_path / "none.jsonl")
    assert not {"rebalance-skip", "rebalance-rewind"} & set(bare["anomalies"])
    assert bare["valid"] is True


def _one_key(poll_ops) -> Builder:
    """Key 1 with offsets 0-3; process 0 subscribed; then `poll_ops(h)`."""
    h = Builder()
    h.op(0, "subscribe", [1], "ok", [1])
    h.send(9, [(1, o, 10 + o) for o in range(4)])
    poll_ops(h)
    h.poll(7, {1: [(o, 10 + o) for o in range(4)]})
    return h


def _rebalance_types(results: dict) -> set[str]:
    return {k for k in results["anomalies"] if k.startswith("rebalance-")}


def _aborted_between(h: Builder) -> None:
    # an aborted txn ran between the previous ok poll and the one that logs
    # the rebalance: the callback may have run in it, and its abort rewound
    # the consumer elsewhere, so the start is no evidence
    h.poll(0, {1: [(0, 10)]})
    h.op(0, "txn", [["poll"], ["poll"]], "fail", [["poll"], ["poll"]], ["ABORTED", "a"])
    _logged(h, h.poll(0, {1: [(3, 13)]}), ("assigned", [1], {1: 1}))


def _two_polls(h: Builder) -> None:
    # a txn with two polls: the callback may have run after the first
    h.poll(0, {1: [(0, 10)]})
    _logged(h, h.op(0, "txn", [["poll"], ["poll"]], "ok", [["poll", {"1": [[1, 11]]}], ["poll", {}]]),
            ("assigned", [1], {1: 2}))


def _one_poll_txn(h: Builder) -> None:
    # a txn with one poll (and a send) is evidence as a poll is: rewind to 1
    _logged(h, h.op(0, "txn", [["send", 2, 20], ["poll"]], "ok", [["send", 2, [0, 20]], ["poll", {"1": [[1, 11]]}]]),
            ("assigned", [1], {1: 2}))


@pytest.mark.parametrize("story, found", [(_aborted_between, set()), (_two_polls, set()),
                                          (_one_poll_txn, {"rebalance-rewind"})])
def test_starts_count_only_where_they_are_evidence(tmp_path, story, found):
    assert _rebalance_types(local(_one_key(story), tmp_path / "h.jsonl")) == found


def test_a_history_without_subscribe_ignores_rebalance_logs(tmp_path):
    """rebalance_log exists only with subscribe: both engines read it only then."""
    h = rebalance_history()
    del h.events[:2]    # its subscribe
    assert not _rebalance_types(local(h, tmp_path / "h.jsonl"))


@pytest.mark.spark
def test_a_companion_checks_rebalances_as_its_history_does(spark, tmp_path):
    """The Parquet companion (format 5) keeps each completion's rebalance_log."""
    from checkers.api import check_history
    from checkers.history.companion_write import write_companion
    history = rebalance_history().write(tmp_path / "history.jsonl")
    from_json = check_history(history, out_dir=tmp_path / "json", engine="local")
    write_companion(history)
    from_parquet = check_history(history, out_dir=tmp_path / "parquet", engine="spark")
    assert from_parquet["checker"]["parquet_companion"] is True
    assert set(PLANTED) <= set(from_parquet["anomalies"])
    assert from_parquet["anomalies"] == from_json["anomalies"]
