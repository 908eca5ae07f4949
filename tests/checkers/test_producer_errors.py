"""Producer-error table, spurious OUT_OF_ORDER_SEQUENCE_NUMBER and idempotent
duplicates, on hand-written histories (lost writes and duplicates found by the
queue checker's own detectors from the polls)."""
from __future__ import annotations

import pytest

from checkers.history.read import read_history
from checkers.history.spark_load import load
from checkers.queue.local import check_queue_local
from checkers.queue.producer_errors import IDEMPOTENT_DUPLICATE, OOS_WINDOW_S, SPURIOUS_OOS, ProducerChecks
from checkers.verdict.verdict import verdict
from checkers.queue.spark import check_queue_spark
from tests.checkers.histories import write_history

S = 1_000_000_000  # ns per second
IDEMPOTENT = {"idempotent": True, "transactional": False}
PLAIN = {"idempotent": False, "transactional": False}
OOS = "OUT_OF_ORDER_SEQUENCE_NUMBER"
# the same broker error as the Java client, aiokafka and kafka-python name it
JAVA_OOS, AIOKAFKA_OOS, KAFKA_PYTHON_OOS = ("OutOfOrderSequenceException", "OutOfOrderSequenceNumber",
                                            "OutOfOrderSequenceNumberError")


def send(process, key, value, t0, t1, type_="ok", error=None, offset=None, producer=IDEMPOTENT):
    """A one-send operation invoked at t0 s and completed at t1 s."""
    invoke = {"type": "invoke", "process": process, "f": "send", "value": [["send", key, value]],
              "time": int(t0 * S)}
    if producer is not None:
        invoke["producer"] = producer
    result = [offset, value] if type_ == "ok" else value
    done = {"type": type_, "process": process, "f": "send", "value": [["send", key, result]], "time": int(t1 * S)}
    if error:
        done["error"] = [error, f"Broker: {error}"]
    return [invoke, done]


def poll(process, t0, t1, polled: dict):
    return [{"type": "invoke", "process": process, "f": "poll", "value": [["poll"]], "time": int(t0 * S)},
            {"type": "ok", "process": process, "f": "poll", "value": [["poll", polled]], "time": int(t1 * S)}]


# One history with every case (processes and keys kept apart), analyzed once for all
# tests (the queue checker's own detectors find the lost writes and duplicates).
SPURIOUS = (send(0, 1, 10, 10, 11, offset=0)               # 0, 1: lost (offset 1 is read, 0 is not)
            + send(1, 1, 11, 12, 13, "info", OOS)          # 2, 3: the loss is 1 s before: explained
            + send(2, 2, 20, 14, 15, "info", JAVA_OOS)     # 4, 5: nothing of key 2 lost: spurious
            + send(3, 1, 12, 30, 31, "info", AIOKAFKA_OOS)  # 6, 7: the loss is 19 s before: spurious
            + send(4, 2, 21, 32, 33, offset=0)             # 8, 9
            + send(5, 1, 13, 34, 35, offset=1)             # 10, 11
            + poll(6, 40, 41, {"1": [[1, 13]], "2": [[0, 21]]}))  # 12, 13
# the lost write's send ends 4 s before the error's invoke: inside the window
IN_WINDOW = (send(10, 7, 70, 50, 51, offset=3)
             + send(11, 7, 71, 55, 56, "info", KAFKA_PYTHON_OOS)
             + send(12, 7, 72, 57, 58, offset=4)
             + poll(13, 59, 60, {"7": [[4, 72]]}))
DUPLICATES = (send(20, 5, 50, 70, 71, offset=0)
              + send(21, 5, 51, 71, 72, offset=1)
              + send(22, 6, 60, 72, 73, offset=0)
              + send(23, 6, 61, 73, 74, offset=1, producer=PLAIN)
              + send(24, 8, 80, 74, 75, offset=0, producer=None)  # no flag: not known to be idempotent
              + poll(25, 76, 77, {"5": [[0, 50], [1, 51], [2, 51]], "6": [[0, 60], [1, 61], [2, 60]],
                                  "8": [[0, 80], [1, 80]]}))
OTHER_ERRORS = (send(30, 3, 30, 80, 81, "info", "NOT_LEADER_FOR_PARTITION")
                + send(31, 3, 31, 82, 83, "info", "UNKNOWN_PRODUCER_ID")
                + send(32, 3, 32, 84, 85, "fail", "INVALID_PRODUCER_EPOCH")
                # a poll's error is not a producer error
                + [{"type": "invoke", "process": 33, "f": "poll", "value": [["poll"]], "time": 86 * S},
                   {"type": "fail", "process": 33, "f": "poll", "value": None, "time": 87 * S,
                    "error": ["UNKNOWN_PRODUCER_ID", "not counted"]}])


def analyze(spark, path, window_s: float = OOS_WINDOW_S) -> dict:
    """The producer part of the queue checker's results for the history at `path`."""
    with load(spark, path) as loaded:
        results = check_queue_spark(spark, loaded.ops, producer=ProducerChecks(window_s))
    return {"stats": {k: results["stats"][k] for k in ("producer_errors", "out_of_order_sequence")},
            "anomalies": {k: v for k, v in results["anomalies"].items() if k in (IDEMPOTENT_DUPLICATE, SPURIOUS_OOS)}}


@pytest.fixture(scope="module")
def checked(spark, tmp_path_factory):
    path = write_history(tmp_path_factory.mktemp("producer") / "history.jsonl",
                         SPURIOUS + IN_WINDOW + DUPLICATES + OTHER_ERRORS)
    return analyze(spark, path)  # window: OOS_WINDOW_S = 10 s


def test_error_table_counts_each_name_over_send_operations(checked):
    assert checked["stats"]["producer_errors"] == {
        OOS: 1, JAVA_OOS: 1, AIOKAFKA_OOS: 1, KAFKA_PYTHON_OOS: 1, "INVALID_PRODUCER_EPOCH": 1,
        "NOT_LEADER_FOR_PARTITION": 1, "UNKNOWN_PRODUCER_ID": 1}


def test_out_of_order_sequence_without_nearby_loss_is_spurious(checked):
    # of the four (one by each client's name), the ones at ops 3 (loss 1 s before) and 17
    # (loss 4 s before) are explained
    assert checked["stats"]["out_of_order_sequence"] == {"total": 4, "with_lost_write": 2, "spurious": 2,
                                                         "window_s": 10.0}
    found = checked["anomalies"][SPURIOUS_OOS]
    assert found["count"] == 2
    assert [(e["op"], e["ops"][0]["invoke_index"], e["ops"][0]["process"], e["keys"], e["time_s"])
            for e in found["examples"]] == [(5, 4, 2, [2], 15.0), (7, 6, 3, [1], 31.0)]


def test_duplicates_on_keys_only_idempotent_producers_wrote(checked):
    # the queue checker sees three duplicates: (5, 51), (6, 60), (8, 80); only key 5 was
    # written by idempotent producers alone
    found = checked["anomalies"][IDEMPOTENT_DUPLICATE]
    assert found["count"] == 1
    assert [(e["key"], e["value"]) for e in found["examples"]] == [(5, 51)]


def test_verdict_idempotent_duplicate_is_bad_spurious_error_allowed_unless_forbidden(checked):
    # the queue's types found in the same history, plus the producer's (checkers/verdict/taxonomy.py decides)
    found = ["duplicate", "lost-write", *checked["anomalies"]]
    assert sorted(checked["anomalies"]) == [IDEMPOTENT_DUPLICATE, SPURIOUS_OOS]
    assert verdict(found) == (False, ["duplicate", IDEMPOTENT_DUPLICATE, "lost-write"])
    assert SPURIOUS_OOS in verdict(found, forbid=[SPURIOUS_OOS])[1]
    assert verdict([SPURIOUS_OOS]) == (True, [])
    assert checked["stats"]["producer_errors"][OOS] == 1


def test_the_in_process_engine_finds_the_same(checked, tmp_path):
    path = write_history(tmp_path / "history.jsonl", SPURIOUS + IN_WINDOW + DUPLICATES + OTHER_ERRORS)
    results = check_queue_local(read_history(path, "queue").ops, producer=ProducerChecks())
    assert {k: results["stats"][k] for k in ("producer_errors", "out_of_order_sequence")} == checked["stats"]
    assert {k: results["anomalies"][k] for k in (IDEMPOTENT_DUPLICATE, SPURIOUS_OOS)} == checked["anomalies"]


def test_clean_history_reports_nothing(spark, tmp_path):
    events = (send(0, 1, 10, 0, 1, offset=0) + send(1, 1, 11, 1, 2, offset=1)
              + poll(2, 3, 4, {"1": [[0, 10], [1, 11]]}))
    path = write_history(tmp_path / "history.jsonl", events)
    result = analyze(spark, path, window_s=5.0)
    assert result == {"stats": {"producer_errors": {},
                                "out_of_order_sequence": {"total": 0, "with_lost_write": 0, "spurious": 0,
                                                          "window_s": 5.0}},
                      "anomalies": {}}
