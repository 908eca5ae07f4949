"""The bulk reader of list-append JSON Lines (checkers/history/list_append_lines.py)
gives exactly the careful reader's rows, and refuses (None: the careful
reader then reads the file and names its problems) every history the careful
reader refuses."""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from checkers.history import formats
from checkers.history.errors import HistoryError
from checkers.history.list_append_lines import common_rows
from checkers.history.read import read_history
from tests.checkers.histories import write_history

ORACLE = Path(__file__).resolve().parents[1] / "fixtures" / "oracle"


@pytest.fixture
def careful(monkeypatch):
    """read_history with the bulk reader switched off."""
    monkeypatch.setitem(formats.FORMATS, "list-append",
                        replace(formats.FORMATS["list-append"], common_rows=None))
    return lambda path: read_history(path, "list-append")


def _events(*events: dict) -> list[dict]:
    return [{"index": i, "time": i * 10, **e} for i, e in enumerate(events)]


def _text(events: list[dict]) -> str:
    return "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in events)


GOOD = _events(
    {"type": "invoke", "process": 0, "f": "txn", "value": [["append", 1, 1], ["r", 2, None]],
     "producer": {"idempotent": True, "transactional": False}},
    {"type": "invoke", "process": "nemesis", "f": "kill", "value": {"nodes": ["n1"]}},
    {"type": "invoke", "process": 1, "f": "txn", "value": [["r", 1, None], ["append", 2, "x"]]},
    {"type": "ok", "process": 0, "f": "txn", "value": [["append", 1, 1], ["r", 2, None]], "starts": [1, 2]},
    {"type": "info", "process": 1, "f": "txn", "value": None, "error": ["timeout", "no answer"]},
    {"type": "invoke", "process": 2, "f": "txn", "value": [["append", 1, 2.5], ["append", 1, 3]]},
    {"type": "fail", "process": 2, "f": "txn", "value": [["append", 1, 2.5]], "error": {"code": 7}},
    {"type": "invoke", "process": 3, "f": "txn", "value": [["r", 1, None], ["append", 2, True]]},
    {"type": "ok", "process": 3, "f": "txn", "value": [["r", 1, [1]], ["append", 2, True]],
     "rebalance_log": [], "unknown": 1},
    {"type": "invoke", "process": 4, "f": "txn", "value": []},
    {"type": "invoke", "process": 5, "f": "txn", "value": [["append", 3, 1]]},
)


def test_rows_are_the_careful_readers(tmp_path, careful):
    path = tmp_path / "h.jsonl"
    path.write_text(_text(GOOD))
    found = common_rows(path.read_bytes())
    expected = careful(path)
    assert found is not None
    assert repr(found[0]) == repr(expected.rows) and found[1] == expected.nemesis_events == 1


@pytest.mark.parametrize("name", sorted(p.name for p in ORACLE.glob("list-append-*.jsonl")))
def test_rows_of_the_oracle_histories_are_the_careful_readers(name, careful):
    found = common_rows((ORACLE / name).read_bytes())
    expected = careful(ORACLE / name)
    assert found is not None
    assert repr(found[0]) == repr(expected.rows) and found[1] == expected.nemesis_events


def test_spaced_json_is_read_too(tmp_path, careful):
    path = write_history(tmp_path / "h.jsonl", [{k: v for k, v in e.items() if k not in ("index", "time")}
                                                for e in GOOD])
    found = common_rows(path.read_bytes())
    assert found is not None and repr(found[0]) == repr(careful(path).rows)


def _changed(at: int, **fields) -> list[dict]:
    events = [dict(e) for e in GOOD]
    events[at].update(fields)
    return [{k: v for k, v in e.items() if v is not ...} for e in events]


BAD = {
    "index below 0": _changed(0, index=-1),
    "index a bool": _changed(0, index=True),
    "time a float": _changed(2, time=1.5),
    "type unknown": _changed(3, type="done"),
    "process negative": _changed(2, process=-1),
    "process another string": _changed(2, process="client"),
    "f missing": _changed(2, f=...),
    "f null": _changed(2, f=None),
    "f a number": _changed(2, f=1),
    "index not increasing": _changed(3, index=0),
    "invoke while pending": _changed(3, type="invoke"),
    "completion without invoke": _changed(9, type="ok"),
    "completion of another f": _changed(3, f="read"),
    "txn without micro-ops": _changed(2, value=None),
    "txn value not a list": _changed(2, value="append"),
    "micro-op not a list": _changed(2, value=[["r", 1, None], "append"]),
    "micro-op of two": _changed(2, value=[["r", 1], ["append", 2, "x"]]),
    "micro-op of four": _changed(2, value=[["r", 1, None, 1], ["append", 2, "x"]]),
    "micro-op f unknown": _changed(2, value=[["read", 1, None], ["append", 2, "x"]]),
    "micro-op f unhashable": _changed(2, value=[[["r"], 1, None], ["append", 2, "x"]]),
    "key a string": _changed(2, value=[["r", "1", None], ["append", 2, "x"]]),
    "key a bool": _changed(2, value=[["r", True, None], ["append", 2, "x"]]),
    "key a float": _changed(2, value=[["r", 1.0, None], ["append", 2, "x"]]),
    "append of null": _changed(2, value=[["r", 1, None], ["append", 2, None]]),
    "append of a list": _changed(2, value=[["r", 1, None], ["append", 2, [1]]]),
    "append of a map": _changed(2, value=[["r", 1, None], ["append", 2, {}]]),
    "element appended twice": _changed(2, value=[["r", 1, None], ["append", 1, 1]]),
    "element appended twice, int and float": _changed(9, value=[["append", 1, 1.0]]),
    "ok with fewer micro-ops": _changed(3, value=[["append", 1, 1]]),
    "ok with no value": _changed(3, value=None),
    "ok with another key": _changed(3, value=[["append", 1, 1], ["r", 3, None]]),
    "ok with another f": _changed(3, value=[["append", 1, 1], ["append", 2, None]]),
    "ok with another element": _changed(3, value=[["append", 1, 5], ["r", 2, None]]),
    "ok read of a number": _changed(3, value=[["append", 1, 1], ["r", 2, 5]]),
    "ok read of a map": _changed(3, value=[["append", 1, 1], ["r", 2, {}]]),
    "ok micro-op of two": _changed(3, value=[["append", 1, 1], ["r", 2]]),
    "ok micro-op not a list": _changed(3, value=[["append", 1, 1], "r"]),
    "ok value a map": _changed(3, value={"append": 1}),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_what_the_careful_reader_refuses_is_refused(name, tmp_path, careful):
    path = tmp_path / "h.jsonl"
    path.write_text(_text(BAD[name]))
    with pytest.raises(HistoryError):
        careful(path)
    assert common_rows(path.read_bytes()) is None


@pytest.mark.parametrize("text", ["", "\n", "[1]\n", "{}\n", "not json\n", '{"index": 0} {"index": 1}\n'])
def test_not_one_event_per_line_is_refused(text):
    assert common_rows(text.encode()) is None


@pytest.mark.parametrize("name, change", [
    ("a blank line", lambda t: t.replace("\n", "\n\n", 1)),
    ("CRLF line ends", lambda t: t.replace("\n", "\r\n")),
    ("a space after an object", lambda t: t.replace("}\n", "} \n", 1)),
    ("no line end at the end", lambda t: t.rstrip("\n")),
    ("an escaped lone surrogate", lambda t: t.replace('"x"', '"\\ud800"')),
])
def test_other_shapes_are_read_as_the_careful_reader_reads_them(name, change, tmp_path, careful):
    path = tmp_path / "h.jsonl"
    path.write_text(change(_text(GOOD)))
    expected = careful(path)
    found = common_rows(path.read_bytes())
    rows = read_history(path, "list-append").rows
    assert repr(rows) == repr(expected.rows)
    assert found is None or repr(found[0]) == repr(expected.rows)
