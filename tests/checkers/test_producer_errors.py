"""Producer-error table, spurious OUT_OF_ORDER_SEQUENCE_NUMBER and
idempotent duplicates, on hand-written histories."""
from __future__ import annotations

import pytest

from checkers.history_io import load_history, pair_operations
from checkers.producer_errors import IDEMPOTENT_DUPLICATE, SPURIOUS_OOS, analyze
from tests.checkers.histories import write_history

S = 1_000_000_000  # ns per second
IDEMPOTENT = {"idempotent": True, "transactional": False}
PLAIN = {"idempotent": False, "transactional": False}
KV = "key long, value long"


def send(process, key, value, t0, t1, type_="ok", error=None, offset=None, producer=IDEMPOTENT):
    """A single-send operation invoked at t0 s and completed at t1 s."""
    invoke = {"type": "invoke", "process": process, "f": "send", "value": [["send", key, value]],
              "time": int(t0 * S)}
    if producer is not None:
        invoke["producer"] = producer
    done_value = [["send", key, [offset, value]]] if type_ == "ok" else [["send", key, value]]
    done = {"type": type_, "process": process, "f": "send", "value": done_value, "time": int(t1 * S)}
    if error:
        done["error"] = [error, f"{error} from the broker"]
    return [invoke, done]


def _check(spark, tmp_path, events, lost=(), duplicates=()):
    path = write_history(tmp_path / "history.jsonl", events)
    ops = pair_operations(load_history(spark, path))
    return analyze(spark, path, ops, spark.createDataFrame(list(lost), KV),
                   spark.createDataFrame(list(duplicates), KV), window_s=5.0)


def test_error_table_counts_each_name_over_send_operations(spark, tmp_path):
    events = (send(0, 1, 10, 0, 1, offset=0)
              + send(1, 1, 11, 1, 2, "info", "OUT_OF_ORDER_SEQUENCE_NUMBER")
              + send(2, 2, 20, 2, 3, "info", "NOT_LEADER_FOR_PARTITION")
              + send(3, 2, 21, 3, 4, "info", "OUT_OF_ORDER_SEQUENCE_NUMBER")
              + send(4, 3, 30, 4, 5, "info", "UNKNOWN_PRODUCER_ID")
              + send(5, 3, 31, 5, 6, "fail", "INVALID_PRODUCER_EPOCH")
              # a poll's error is not a producer error
              + [{"type": "invoke", "process": 6, "f": "poll", "value": [["poll"]], "time": 7 * S},
                 {"type": "fail", "process": 6, "f": "poll", "value": None, "time": 8 * S,
                  "error": ["UNKNOWN_PRODUCER_ID", "not counted"]}])
    stats = _check(spark, tmp_path, events)["stats"]
    assert stats["producer_errors"] == {"OUT_OF_ORDER_SEQUENCE_NUMBER": 2, "INVALID_PRODUCER_EPOCH": 1,
                                        "NOT_LEADER_FOR_PARTITION": 1, "UNKNOWN_PRODUCER_ID": 1}


def test_out_of_order_sequence_without_nearby_loss_is_spurious(spark, tmp_path):
    events = (send(0, 1, 10, 10, 11, offset=0)                                   # 0, 1: lost later
              + send(1, 1, 11, 12, 13, "info", "OUT_OF_ORDER_SEQUENCE_NUMBER")  # 2, 3: loss 1 s before
              + send(2, 2, 20, 14, 15, "info", "OUT_OF_ORDER_SEQUENCE_NUMBER")  # 4, 5: key 2 lost nothing
              + send(3, 1, 12, 30, 31, "info", "OUT_OF_ORDER_SEQUENCE_NUMBER")  # 6, 7: loss 19 s before
              + send(4, 2, 21, 32, 33, offset=0))
    result = _check(spark, tmp_path, events, lost=[(1, 10)])
    assert result["stats"]["out_of_order_sequence"] == {"total": 3, "with_lost_write": 1, "spurious": 2,
                                                        "window_s": 5.0}
    found = result["anomalies"][SPURIOUS_OOS]
    assert found["count"] == 2
    assert [(e["op"], e["invoke"], e["process"], e["keys"], e["time_s"]) for e in found["examples"]] == [
        (5, 4, 2, [2], 15.0), (7, 6, 3, [1], 31.0)]
    assert IDEMPOTENT_DUPLICATE not in result["anomalies"]


def test_out_of_order_sequence_with_loss_in_window_is_not_reported(spark, tmp_path):
    # the lost write's send ends 4 s before the error's invoke: inside the 5 s window
    events = (send(0, 7, 70, 0, 1, offset=3)
              + send(1, 7, 71, 5, 6, "info", "OUT_OF_ORDER_SEQUENCE_NUMBER"))
    result = _check(spark, tmp_path, events, lost=[(7, 70)])
    assert result["anomalies"] == {}
    assert result["stats"]["out_of_order_sequence"]["with_lost_write"] == 1


def test_duplicates_on_keys_only_idempotent_producers_wrote(spark, tmp_path):
    events = (send(0, 5, 50, 0, 1, offset=0)
              + send(1, 5, 51, 1, 2, offset=1)
              + send(2, 6, 60, 2, 3, offset=0)
              + send(3, 6, 61, 3, 4, offset=1, producer=PLAIN)
              + send(4, 8, 80, 4, 5, offset=0, producer=None))  # no flag: not known to be idempotent
    result = _check(spark, tmp_path, events, duplicates=[(5, 51), (6, 60), (8, 80)])
    found = result["anomalies"][IDEMPOTENT_DUPLICATE]
    assert found["count"] == 1
    assert [(e["key"], e["value"]) for e in found["examples"]] == [(5, 51)]
    assert SPURIOUS_OOS not in result["anomalies"]


def test_clean_history_reports_nothing(spark, tmp_path):
    events = send(0, 1, 10, 0, 1, offset=0) + send(1, 1, 11, 1, 2, offset=1)
    result = _check(spark, tmp_path, events)
    assert result == {"stats": {"producer_errors": {},
                                "out_of_order_sequence": {"total": 0, "with_lost_write": 0, "spurious": 0,
                                                          "window_s": 5.0}},
                      "anomalies": {}}
