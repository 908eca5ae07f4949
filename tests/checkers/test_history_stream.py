"""Reading a history in blocks (history.lines.line_blocks,
history.read.stream_history) gives what reading it whole gives: the same
lines, the same operations, the same errors, whatever the block size."""
from __future__ import annotations

import json
import random

import pytest

from checkers.history.errors import MAX_REPORTED, HistoryError
from checkers.history.lines import line_blocks, read_lines
from checkers.history.read import OP_COLUMNS, read_history, stream_history
from tests.checkers.histories import write_history
from tests.checkers.la_histories import history
from tests.checkers.test_list_append import SCENARIOS
from tests.checkers.test_queue_anomalies import planted_history
from tests.checkers.test_queue_engines import _write, random_events
from tests.checkers.test_queue_property import FAULTS

BLOCKS = (1, 2, 3, 7, 64, 500, 1 << 20)

TEXTS = {
    "plain": 'a\nbc\n\nd\n',
    "no final newline": 'a\nbc\nd',
    "crlf": 'a\r\nbc\r\n\r\nd\r\n',
    "lone cr": 'a\rbc\r\rd\re',
    "mixed": 'a\r\n\rb\n\r',
    "unicode": 'é€\n𝄞x\n\nü',
    "long integer": '{"index":1,"time":12345678901234567890}\nx\n',
    "empty": '',
}


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_line_blocks_give_the_lines_read_lines_gives(tmp_path, name):
    path = tmp_path / "h.jsonl"
    path.write_bytes(TEXTS[name].encode("utf-8"))
    whole = read_lines(path)
    for size in BLOCKS:
        blocks = list(line_blocks(path, size))
        assert [t for b in blocks for t in b.texts] == whole.texts, size
        assert [b.first for b in blocks] == [1 + sum(len(b.texts) for b in blocks[:i]) for i in range(len(blocks))]
        originals = [b.original(n) for b in blocks for n in range(b.first, b.first + len(b.texts))]
        assert originals == [whole.original(n) for n in range(1, len(whole.texts) + 1)], size
        # a block with 19 digits in a row is parsed by json, which keeps big integers exact
        assert all(b.fast is json.loads for b in blocks if any("1234567890123456789" in t for t in b.texts))


def test_a_bad_byte_raises_the_error_text_mode_reading_raises(tmp_path):
    path = tmp_path / "h.jsonl"
    path.write_bytes(b'{"a":1}\n' * 50 + b'{"b":"\xff"}\n' + b'{"c":2}\n')
    with pytest.raises(UnicodeDecodeError) as whole:
        read_lines(path)
    for size in (16, 1 << 20):
        with pytest.raises(UnicodeDecodeError) as blocks:
            list(line_blocks(path, size))
        assert str(blocks.value) == str(whole.value)


def _by_index(rows: list[tuple]) -> list[tuple]:
    return sorted(rows, key=lambda r: r[OP_COLUMNS.index("invoke_index")])


def _streamed(path, workload: str, size: int) -> list[tuple]:
    return _by_index([row for rows in stream_history(path, workload, size) for row in rows])


def _random_actions(seed: int, n: int) -> list[tuple]:
    """test_queue_property's simulated actions, drawn without hypothesis."""
    rnd = random.Random(seed)
    return [(rnd.choice(["send", "send", "poll", "poll", "txn", "assign"]), rnd.randrange(3), rnd.randrange(2),
             rnd.choice(["ok", "ok", "ok", "fail", "info"]), rnd.choice(FAULTS), rnd.randrange(4))
            for _ in range(n)]


def _cases(tmp_path) -> list[tuple]:
    never_completed = planted_history().events + [
        {"type": "invoke", "process": 999, "f": "send", "value": [["send", 99, 9999]]}]
    randoms = [_random_actions(seed, 25) for seed in range(4)]
    return [(planted_history().write(tmp_path / "planted.jsonl"), "queue"),
            (_write(random_events(randoms, 1), tmp_path / "random.jsonl"), "queue"),
            (_write(never_completed, tmp_path / "pending.jsonl"), "queue"),
            (write_history(tmp_path / "la.jsonl", history(*SCENARIOS.values())), "list-append")]


def test_streamed_rows_are_read_history_rows(tmp_path):
    cases = _cases(tmp_path)
    for path, workload in cases:
        whole = read_history(path, workload).rows
        for size in (1, 100, 4096, 1 << 20):
            assert _streamed(path, workload, size) == _by_index(whole), (path.name, size)
    pending = _streamed(cases[2][0], "queue", 100)[-1]
    assert pending[OP_COLUMNS.index("type")] == "info" and pending[OP_COLUMNS.index("complete_index")] is None


GOOD = [json.dumps(e) for e in (
    {"index": 0, "time": 1, "type": "invoke", "process": 0, "f": "send", "value": [["send", 1, 10]]},
    {"index": 1, "time": 2, "type": "ok", "process": 0, "f": "send", "value": [["send", 1, [0, 10]]]},
    {"index": 2, "time": 3, "type": "invoke", "process": 1, "f": "poll", "value": [["poll"]]},
    {"index": 3, "time": 4, "type": "ok", "process": 1, "f": "poll", "value": [["poll", {"1": [[0, 10]]}]]},
)]
SEND_AGAIN = '{"index":%d,"time":9,"type":"invoke","process":%d,"f":"send","value":[["send",1,10]]}'

BROKEN = {
    "malformed": GOOD[:2] + ['{"index":2,"time":3,"type":"invoke"'] + GOOD[3:],
    "missing field": GOOD[:1] + ['{"index":1,"type":"ok","process":0,"f":"send","value":null}'] + GOOD[2:],
    "bad type": GOOD[:3] + ['{"index":3,"time":4,"type":"done","process":1,"f":"poll","value":null}'],
    "no invoke": GOOD[2:] + ['{"index":7,"time":9,"type":"ok","process":5,"f":"poll","value":[["poll",{}]]}'],
    "invoke again": GOOD[:1] + [SEND_AGAIN.replace("10]", "11]") % (1, 0)] + GOOD[1:],
    "index goes back": GOOD + ['{"index":1,"time":9,"type":"invoke","process":1,"f":"poll","value":[["poll"]]}'],
    "f differs": GOOD[:1] + [GOOD[1].replace('"f": "send"', '"f": "poll"')] + GOOD[2:],
    "value sent twice, far apart": GOOD + [""] * 40 + [SEND_AGAIN % (9, 7)],
    "bad micro-op": GOOD[:2] + ['{"index":2,"time":3,"type":"invoke","process":1,"f":"poll","value":[["peek"]]}']
    + GOOD[3:],
    "many bad lines": GOOD + ["{"] * (MAX_REPORTED + 3),
    "bad byte": None,
}


def test_malformed_json_is_placed_within_its_line(tmp_path):
    path = tmp_path / "history.jsonl"
    path.write_text("\n".join([GOOD[0], GOOD[1][:-1], '{"index":2,"time":3,,"type":"ok"}', *GOOD[3:]]) + "\n")
    with pytest.raises(HistoryError) as err:
        read_history(path, "queue")
    assert f"{path}:2: malformed JSON (Expecting ',' delimiter at the end of the line)" in str(err.value)
    assert f"{path}:3: malformed JSON (Expecting property name enclosed in double quotes at column 21)" in str(err.value)


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_streamed_errors_are_read_history_errors(tmp_path, name):
    path = tmp_path / "history.jsonl"
    if BROKEN[name] is None:
        path.write_bytes("\n".join(GOOD).encode() + b'\n{"index":4,"time":5,"type":"\xff"}\n')
    else:
        path.write_text("".join(line + "\n" for line in BROKEN[name]))
    with pytest.raises(HistoryError) as whole:
        read_history(path, "queue")
    for size in (1, 50, 1 << 20):
        with pytest.raises(HistoryError) as streamed:
            list(stream_history(path, "queue", size))
        assert str(streamed.value) == str(whole.value), size
    assert f"{path}:" in str(whole.value)
    if BROKEN[name] is None:   # bad input at its line, not the checker failing (UnicodeDecodeError)
        assert f"{path}:5: not UTF-8: byte 0xff at character 29 (invalid start byte)" in str(whole.value)


class _Cycle:
    """Garbage only the cyclic collector frees (as PySpark objects are)."""

    def __init__(self):
        self.me = self


def test_a_read_does_not_freeze_the_garbage_before_it_for_good(tmp_path):
    """read_history freezes what is alive when it ends (its events); garbage
    cycles made after one read must not be frozen by the next, or a process
    checking history after history keeps every earlier check's PySpark
    objects, and the JVM their plans."""
    import gc
    import weakref
    path = tmp_path / "history.jsonl"
    path.write_text("".join(line + "\n" for line in GOOD))
    read_history(path, "queue")
    garbage = _Cycle()
    gone = weakref.ref(garbage)
    del garbage
    read_history(path, "queue")
    gc.collect()
    assert gone() is None

