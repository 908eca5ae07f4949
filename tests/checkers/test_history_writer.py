"""HistoryWriter: stamping, thread safety, the one-second flush promise, and
reading back a history whose writer died mid-line."""
import json
import threading
import time

import pytest

from checkers.history.stream import raw_events
from checkers.history.writer import HistoryWriter
from checkers.history.wellformed import wellformedness_problems


def test_events_get_consecutive_indexes_and_monotonic_times(tmp_path):
    path = tmp_path / "history.jsonl"
    with HistoryWriter(path) as history:
        history.invoke(0, "send", [["send", 1, 10]])
        history.nemesis("start-partition", {"n1": ["n2"]})
        history.complete("ok", 0, "send", [["send", 1, [0, 10]]])
    events = list(raw_events(path))
    assert [e["index"] for e in events] == [0, 1, 2]
    assert events[0]["time"] <= events[1]["time"] <= events[2]["time"]
    assert events[1] == {"index": 1, "time": events[1]["time"], "type": "info", "process": "nemesis",
                         "f": "start-partition", "value": {"n1": ["n2"]}}
    assert "error" not in events[2]
    assert history.counts == {"ok": 1}


def test_error_is_written_as_name_and_message(tmp_path):
    path = tmp_path / "history.jsonl"
    with HistoryWriter(path) as history:
        history.invoke(3, "poll", [["poll"]])
        history.complete("info", 3, "poll", [["poll"]], error=("_TIMED_OUT", "Local: Timed out"),
                         poll_errors=["x"])
    last = list(raw_events(path))[-1]
    assert last["error"] == ["_TIMED_OUT", "Local: Timed out"]
    assert last["poll_errors"] == ["x"]


def test_completion_type_is_validated(tmp_path):
    with HistoryWriter(tmp_path / "h.jsonl") as history:
        with pytest.raises(ValueError, match="completion type"):
            history.complete("done", 0, "send", [])


def test_concurrent_writers_never_interleave_lines(tmp_path):
    path = tmp_path / "history.jsonl"
    threads_n, ops_n = 8, 500
    with HistoryWriter(path) as history:
        def worker(process: int) -> None:
            for i in range(ops_n):
                value = process * ops_n + i
                history.invoke(process, "send", [["send", process, value]])
                history.complete("ok", process, "send", [["send", process, [i, value]]])
        threads = [threading.Thread(target=worker, args=(p,)) for p in range(threads_n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    events = list(raw_events(path))
    assert len(events) == threads_n * ops_n * 2
    assert wellformedness_problems(events) == []


def test_events_reach_the_disk_within_a_second_without_close(tmp_path):
    path = tmp_path / "history.jsonl"
    history = HistoryWriter(path)
    try:
        history.invoke(0, "poll", [["poll"]])
        time.sleep(1.5)  # the promise: a crash loses at most the last second
        lines = path.read_text().splitlines()
        assert json.loads(lines[0])["f"] == "poll"
    finally:
        history.close()


def test_torn_last_line_is_skipped_but_a_bad_middle_line_is_named(tmp_path):
    path = tmp_path / "history.jsonl"
    good = '{"index":0,"time":1,"type":"invoke","process":0,"f":"poll","value":[["poll"]]}\n'
    path.write_text(good + '{"index":1,"time":2,"ty')
    assert len(list(raw_events(path))) == 1
    path.write_text(good + "garbage\n" + good)
    with pytest.raises(ValueError, match=r"history.jsonl:2"):
        list(raw_events(path))


def test_writing_after_close_is_refused(tmp_path):
    history = HistoryWriter(tmp_path / "h.jsonl")
    history.close()
    history.close()  # idempotent
    with pytest.raises(RuntimeError, match="closed"):
        history.invoke(0, "poll", [["poll"]])
