"""history_io: reading, validating and pairing histories in Spark."""
from __future__ import annotations

import json

import pytest

from checkers.history.spark_read import HistoryError, load_history, pair_operations
from checkers.history.queue_mops_spark import value_check
from tests.checkers.histories import op, write_history


def _lines(path, lines: list[str]):
    path.write_text("".join(line + "\n" for line in lines))
    return path


def test_load_history_keeps_raw_json_values_and_nemesis(spark, tmp_path):
    events = (op(0, "send", [["send", 3, 17]], "ok", [["send", 3, [41, 17]]])
              + [{"type": "info", "process": "nemesis", "f": "pause", "value": {"n1": "paused"}}]
              + op(1, "poll", [["poll"]], "fail", None, ["TIMED_OUT", "no answer"]))
    path = write_history(tmp_path / "history.jsonl", events)
    rows = load_history(spark, path).orderBy("index").collect()
    assert [r["process"] for r in rows] == ["0", "0", "nemesis", "1", "1"]
    assert json.loads(rows[1]["value"]) == [["send", 3, [41, 17]]]
    assert json.loads(rows[2]["value"]) == {"n1": "paused"}
    assert (rows[4]["error_name"], rows[4]["error_message"]) == ("TIMED_OUT", "no answer")
    assert rows[4]["value"] is None


def test_pair_operations_joins_invoke_to_next_event_of_its_process(spark, tmp_path):
    events = [
        {"type": "invoke", "process": 0, "f": "send", "value": [["send", 1, 5]]},
        {"type": "invoke", "process": 1, "f": "poll", "value": [["poll"]]},
        {"type": "ok", "process": 1, "f": "poll", "value": [["poll", {}]]},
        {"type": "info", "process": 0, "f": "send", "value": None, "error": ["TIMEOUT", "t"]},
        {"type": "invoke", "process": 2, "f": "send", "value": [["send", 1, 6]]},
    ]
    path = write_history(tmp_path / "h.jsonl", events)
    ops = {r["invoke_index"]: r for r in pair_operations(load_history(spark, path)).collect()}
    assert set(ops) == {0, 1, 4}
    assert (ops[0]["process"], ops[0]["type"], ops[0]["complete_index"], ops[0]["error_name"]) == (0, "info", 3, "TIMEOUT")
    assert (ops[1]["type"], ops[1]["complete_index"], ops[1]["complete_time"]) == ("ok", 2, 3000)
    # never completed: counts as info, no completion
    assert (ops[4]["type"], ops[4]["complete_index"], ops[4]["complete_value"]) == ("info", None, None)


GOOD = '{"index":0,"time":1,"type":"invoke","process":0,"f":"poll","value":[["poll"]]}'


@pytest.mark.parametrize("bad_line, message", [
    ('{"index":1,"time":2,"type":"ok","process":0,"f":"poll","value":[["poll",{}]]',
     "malformed JSON (Expecting ',' delimiter at the end of the line)"),
    ('{"index":1,"time":2,,"type":"ok"}', "malformed JSON (Expecting property name enclosed in double quotes at column 21)"),
    ('{"index":1,"type":"ok","process":0,"f":"poll","value":null}', "missing field 'time'"),
    ('{"index":"one","time":2,"type":"ok","process":0,"f":"poll","value":null}', "field 'index' must be an integer"),
    ('{"index":1,"time":2,"type":"done","process":0,"f":"poll","value":null}', "type must be one of"),
    ('{"index":1,"time":2,"type":"ok","process":-4,"f":"poll","value":null}', "process must be an int"),
])
def test_bad_lines_are_named_by_file_and_line(spark, tmp_path, bad_line, message):
    path = _lines(tmp_path / "history.jsonl", [GOOD, bad_line, GOOD.replace('"index":0', '"index":2')])
    with pytest.raises(HistoryError) as err:
        load_history(spark, path)
    assert f"{path}:2: {message}" in str(err.value)


@pytest.mark.parametrize("lines, line, message", [
    ([GOOD, '{"index":1,"time":2,"type":"ok","process":1,"f":"poll","value":null}'], 2,
     "completion (ok) of process 1 without a pending invoke"),
    ([GOOD, GOOD.replace('"index":0', '"index":1')], 2, "invokes again while its invoke at index 0"),
    ([GOOD.replace('"index":0', '"index":5'), '{"index":3,"time":2,"type":"ok","process":0,"f":"poll","value":null}'],
     1, "index 5 comes before index 3"),
])
def test_sequence_errors_are_named_by_line(spark, tmp_path, lines, line, message):
    path = _lines(tmp_path / "history.jsonl", lines)
    with pytest.raises(HistoryError) as err:
        pair_operations(load_history(spark, path))
    assert f"{path}:{line}: " in str(err.value) and message in str(err.value)


def test_many_bad_lines_are_counted_but_few_shown(spark, tmp_path):
    path = _lines(tmp_path / "history.jsonl", [GOOD] + ["{oops"] * 30)
    with pytest.raises(HistoryError) as err:
        load_history(spark, path)
    assert err.value.count == 30 and len(err.value.problems) == 5
    assert [p.line for p in err.value.problems] == [2, 3, 4, 5, 6]


SEND = '{"index":0,"time":1,"type":"invoke","process":0,"f":"send","value":[["send",3,17]]}'


@pytest.mark.parametrize("lines, message", [
    ([SEND.replace('[["send",3,17]]', '[["send","x",17]]')], "a send micro-op must be [\"send\", key, value]"),
    ([SEND.replace('[["send",3,17]]', '{"send":3}')], "value must be a list of micro-ops"),
    ([SEND.replace('[["send",3,17]]', '[["write",3,17]]')], "unknown micro-op"),
    ([SEND, '{"index":1,"time":2,"type":"ok","process":0,"f":"send","value":[["send",3,41]]}'],
     "a completed send micro-op must be"),
    ([GOOD, '{"index":1,"time":2,"type":"ok","process":0,"f":"poll","value":[["poll",{"k":[[0,1]]}]]}'],
     "a poll result must be"),
    ([GOOD, '{"index":1,"time":2,"type":"ok","process":0,"f":"poll","value":[["poll",{"3":[[0]]}]]}'],
     "a poll result must be"),
])
def test_bad_queue_micro_ops_are_named_by_line(spark, tmp_path, lines, message):
    path = _lines(tmp_path / "history.jsonl", lines)
    with pytest.raises(HistoryError) as err:
        load_history(spark, path, value_check=value_check())
    assert f"{path}:{len(lines)}: {message}" in str(err.value)


def test_good_queue_micro_ops_pass(spark, tmp_path):
    path = _lines(tmp_path / "history.jsonl", [
        SEND, '{"index":1,"time":2,"type":"ok","process":0,"f":"send","value":[["send",3,[null,17]]]}',
        GOOD.replace('"index":0', '"index":2').replace('"process":0', '"process":1'),
        '{"index":3,"time":4,"type":"ok","process":1,"f":"poll","value":[["poll",{"3":[[0,17]],"4":[]}]]}'])
    assert load_history(spark, path, value_check=value_check()).count() == 4


def test_blank_lines_count_in_line_numbers(spark, tmp_path):
    bad = '{"index":3,"time":4,"type":"ok","process":1,"f":"poll","value":[["poll",{"k":[[0,1]]}]]}'
    path = _lines(tmp_path / "history.jsonl", [
        GOOD, "", '{"index":1,"time":2,"type":"ok","process":0,"f":"poll","value":[["poll",{}]]}', "   ",
        GOOD.replace('"index":0', '"index":2').replace('"process":0', '"process":1'), "", bad])
    events = load_history(spark, path, value_check=None)
    assert events.count() == 4
    with pytest.raises(HistoryError) as err:
        load_history(spark, path, value_check=value_check())
    assert f"{path}:7: a poll result must be" in str(err.value)
