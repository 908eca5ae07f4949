"""companion_columnar writes what companion_write's careful path writes, or
refuses and leaves the history to that path: it never accepts a history the
careful path refuses. Tables are compared as sets of rows (Spark reads them
in no order); the second part runs in-process here unless a test says
otherwise, and the few tests of the child process start one."""
from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys

import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checkers.history import companion_columnar as columnar
from checkers.history.companion import OP_COUNTS
from checkers.history.companion_columnar import NotColumnar, write_columnar
from checkers.history import companion_write
from checkers.history.companion_write import write_companion
from checkers.history.errors import HistoryError
from tests.checkers import test_history_io as bad_io
from tests.checkers.test_history_stream import BROKEN, GOOD
from tests.checkers.test_queue_anomalies import planted_history
from tests.checkers.test_queue_engines import random_events
from tests.checkers.test_queue_engines import histories
from tests.fixtures.depth import examples, profile

SPLIT_SHARES = (None, 0.0, 0.3, 0.5, 0.9)       # None: one part


class _SecondHalfInProcess:
    """_SecondHalf's stand-in: the second part written in this process, after
    the first (what the parent then does with it is the same)."""

    def __init__(self, history, out, start, block_bytes) -> None:
        self.child = None if start is None else "in-process"
        self.args = (history, out, start, block_bytes)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass

    def result(self):
        return columnar.write_second_half(*self.args)


class _RecordsInProcess:
    """history.companion_write._RecordsWriter's stand-in: the careful path's records
    written in this process once the operations are."""

    def __init__(self, history, workload, out, block_bytes) -> None:
        self.args = (history, out, block_bytes) if workload == "queue" else None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass

    def wait(self) -> None:
        if self.args is not None:
            companion_write.write_records(*self.args)

    def stop(self) -> None:
        pass


@pytest.fixture(autouse=True)
def parts_in_process(monkeypatch, request):
    """Each example would otherwise start two processes."""
    if "child_process" not in request.keywords:
        monkeypatch.setattr(columnar, "_SecondHalf", _SecondHalfInProcess)
        monkeypatch.setattr(companion_write, "_RecordsWriter", _RecordsInProcess)


def _split(monkeypatch, share: float | None) -> None:
    monkeypatch.setattr(columnar, "SPLIT_MIN_BYTES", 0 if share is not None else 1 << 62)
    if share is not None:
        monkeypatch.setattr(columnar, "FIRST_SHARE", share)


def _tables(out) -> dict:
    """The companion's tables as sorted rows, and its counts."""
    ops = pq.read_table(out / "ops")
    tables = {"ops": sorted(map(_row, ops.to_pylist())), "op_counts": None}
    if (out / "queue-mops").exists():
        tables["queue-mops"] = sorted(map(_row, pq.read_table(out / "queue-mops").to_pylist()))
    if (out / OP_COUNTS).exists():
        tables["op_counts"] = json.loads((out / OP_COUNTS).read_text())
    return tables


def _row(row: dict) -> tuple:
    return tuple((k, v is None, 0 if v is None else v) for k, v in row.items())


def _careful(history, out):
    """The careful path's companion (tables), or its error text."""
    try:
        return _tables(write_companion(history, out=out, columnar=False))
    except HistoryError as e:
        return str(e)


def _columnar(history, out, block_bytes: int):
    out.mkdir()
    counts = write_columnar(history, out, block_bytes)
    (out / OP_COUNTS).write_text(json.dumps(counts.rows()))
    return _tables(out)


def assert_same_or_refused(history, tmp_path, block_bytes: int = 1 << 20) -> bool:
    """Either path's companion of `history` is the same, or the columnar one
    refuses; True if it wrote one. Either way write_companion (columnar
    first) gives what the careful path gives."""
    careful = _careful(history, tmp_path / "careful.parquet")
    try:
        mine = _columnar(history, tmp_path / "columnar.parquet", block_bytes)
    except NotColumnar:
        mine = None
    if mine is not None:
        assert not isinstance(careful, str), f"columnar accepted what the careful path refuses: {careful}"
        assert mine == careful
    try:
        both = _tables(write_companion(history, out=tmp_path / "both.parquet", block_bytes=block_bytes))
    except HistoryError as e:
        both = str(e)
    assert both == careful
    for name in ("careful.parquet", "columnar.parquet", "both.parquet"):
        shutil.rmtree(tmp_path / name, ignore_errors=True)
    return mine is not None


def _write(path, events: list[dict], compact: bool = True, interleave: int | None = None) -> object:
    """`events` as JSON lines, index and time in order; `interleave`: a seed
    to interleave the processes' events (each process keeps its order)."""
    if interleave is not None:
        rnd, queues = random.Random(interleave), {}
        for e in events:
            queues.setdefault(e["process"], []).append(e)
        events = []
        while queues:
            p = rnd.choice(sorted(queues, key=str))
            events.append(queues[p].pop(0))
            if not queues[p]:
                del queues[p]
    separators = (",", ":") if compact else (", ", ": ")
    with open(path, "w") as f:
        for i, e in enumerate(events):
            f.write(json.dumps({"index": i, "time": 1000 * (i + 1), **e}, separators=separators) + "\n")
    return path


def _random(seed: int, n: int = 4) -> list[dict]:
    rnd = random.Random(seed)
    actions = [[(rnd.choice(["send", "send", "poll", "poll", "txn", "assign"]), rnd.randrange(3), rnd.randrange(2),
                 rnd.choice(["ok", "ok", "ok", "fail", "info"]),
                 rnd.choice(("none", "none", "lose", "dup", "skip", "back", "phantom", "offset")), rnd.randrange(4))
                for _ in range(20)] for _ in range(n)]
    return random_events(actions, seed)


NEMESIS = {"type": "info", "process": "nemesis", "f": "partition", "value": {"n1": ["n2"]}}
ODD_VALUES = [   # values whose text is not compact JSON, and fs the checkers ignore
    {"type": "invoke", "process": 40, "f": "assign", "value": [1, 2]},
    {"type": "ok", "process": 40, "f": "assign", "value": [1, 2]},
    {"type": "invoke", "process": 41, "f": "note", "value": "caf\u00e9 \\ \"x\""},
    {"type": "ok", "process": 41, "f": "note", "value": {"a": 1.5, "b": -0.0, "c": 1e20, "d": None}},
    {"type": "invoke", "process": 42, "f": "send", "value": [["send", 7, 123456]],
     "producer": '{"idempotent": true, "transactional": false}'},
    {"type": "info", "process": 42, "f": "send", "value": None, "error": "timed out"},
    {"type": "invoke", "process": 43, "f": "send", "value": [["send", 7, 123457]], "producer": {"idempotent": 1}},
    {"type": "fail", "process": 43, "f": "send", "value": None, "error": ["OUT_OF_ORDER_SEQUENCE_NUMBER"]},
    {"type": "invoke", "process": 44, "f": "poll", "value": [["poll"]]},
    {"type": "info", "process": 44, "f": "poll", "value": [["poll", {"7": [[0, 123456]]}]]},
    {"type": "invoke", "process": 45, "f": "send", "value": [["send", 8, 123458]]},   # never completed
]
VALID = {
    "planted": lambda: planted_history().events,
    "random": lambda: _random(1),
    "odd values": lambda: ODD_VALUES,
    "nemesis between": lambda: [e for pair in zip(_random(2), [NEMESIS] * 10**4) for e in pair],
    "empty": lambda: [],
}


def valid_cases() -> list[tuple[bool, str, float | None]]:
    """(compact, name, share): every combination under the nightly profile. Under
    `commit` half of them, chosen so that every pair of values (name and share,
    name and compact, share and compact) still meets: the property test below
    draws the rest at random."""
    names = sorted(VALID)
    if profile() == "nightly":
        return [(compact, name, share) for name in names for share in SPLIT_SHARES for compact in (True, False)]
    return [((i + j) % 2 == 0, name, share) for i, name in enumerate(names) for j, share in enumerate(SPLIT_SHARES)]


@pytest.mark.parametrize("compact, name, share", valid_cases())
def test_columnar_writes_what_the_careful_path_writes(tmp_path, monkeypatch, name, share, compact):
    _split(monkeypatch, share)
    for seed in (None, 5):
        history = _write(tmp_path / "history.jsonl", VALID[name](), compact, interleave=seed)
        for block_bytes in (300, 1 << 20):
            assert assert_same_or_refused(history, tmp_path, block_bytes), (seed, block_bytes)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=list(HealthCheck))
@given(histories, st.integers(0, 11), st.integers(0, 10**6),
       st.sampled_from(SPLIT_SHARES), st.sampled_from([1, 200, 4096, 1 << 20]), st.booleans())
def test_random_histories_written_alike(tmp_path_factory, batch, producer_seed, interleave, share, block_bytes,
                                        compact):
    """Simulated queue histories with planted faults, producer flags and
    errors, processes interleaved, any split point and block size."""
    tmp_path = tmp_path_factory.mktemp("random")
    with pytest.MonkeyPatch.context() as monkeypatch:
        _split(monkeypatch, share)
        events = random_events(batch, producer_seed)
        history = _write(tmp_path / "history.jsonl", events, compact, interleave)
        assert assert_same_or_refused(history, tmp_path, block_bytes)


def _mutations(events: list[dict]) -> st.SearchStrategy:
    """One change to one event, of the kinds that break the contract."""
    junk = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.just(1 << 64), st.text(max_size=3),
                     st.just(1.5), st.just([]), st.just([["send", 1, 1]]), st.just([["poll"]]),
                     st.just([["poll", {"1": [[0, 1]]}]]), st.just([["send", 1, [0, 1]]]), st.just({}))
    fields = st.sampled_from(["index", "time", "type", "process", "f", "value", "error", "producer", "extra"])
    return st.tuples(st.integers(0, max(len(events) - 1, 0)), fields, junk,
                     st.sampled_from(["set", "drop", "duplicate", "swap", "blank", "crlf", "two on a line"]))


def _mutated(events: list[dict], mutation) -> list[str]:
    at, field, junk, how = mutation
    lines = [json.dumps({"index": i, "time": 1000 * (i + 1), **e}, separators=(",", ":"))
             for i, e in enumerate(events)]
    if not lines:
        return lines
    event = json.loads(lines[at])
    if how == "set":
        event[field] = junk
        lines[at] = json.dumps(event, separators=(",", ":"))
    elif how == "drop":
        event.pop(field, None)
        lines[at] = json.dumps(event, separators=(",", ":"))
    elif how == "duplicate":
        lines.insert(at, lines[at])
    elif how == "swap":
        lines[at], lines[-1] = lines[-1], lines[at]
    elif how == "blank":
        lines.insert(at, "")
    elif how == "crlf":
        lines[at] += "\r"
    else:
        lines[at] += lines[-1]
    return lines


@settings(max_examples=examples(150), deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data(), st.integers(0, 30), st.sampled_from(SPLIT_SHARES), st.sampled_from([1, 300, 1 << 20]))
def test_columnar_never_accepts_what_the_careful_path_refuses(tmp_path_factory, data, seed, share, block_bytes):
    """Valid histories with one change: a field set to junk or dropped, a
    line repeated, moved, blanked, given a CR or a second object."""
    tmp_path = tmp_path_factory.mktemp("mutated")
    events = _random(seed, 2)
    lines = _mutated(events, data.draw(_mutations(events)))
    history = tmp_path / "history.jsonl"
    history.write_text("".join(line + "\n" for line in lines))
    with pytest.MonkeyPatch.context() as monkeypatch:
        _split(monkeypatch, share)
        assert_same_or_refused(history, tmp_path, block_bytes)


def _cases_of(test) -> list:
    return next(m for m in test.pytestmark if m.name == "parametrize").args[1]


def _broken_histories() -> dict[str, list[str]]:
    found = {f"stream: {name}": lines for name, lines in BROKEN.items() if lines is not None}
    for i, (bad_line, _) in enumerate(_cases_of(bad_io.test_bad_lines_are_named_by_file_and_line)):
        found[f"io line {i}"] = [bad_io.GOOD, bad_line, bad_io.GOOD.replace('"index":0', '"index":2')]
    for i, (lines, _, _) in enumerate(_cases_of(bad_io.test_sequence_errors_are_named_by_line)):
        found[f"io sequence {i}"] = lines
    for i, (lines, _) in enumerate(_cases_of(bad_io.test_bad_queue_micro_ops_are_named_by_line)):
        found[f"io micro-op {i}"] = lines
    return found


BROKEN_HISTORIES = _broken_histories()


@pytest.mark.parametrize("share", SPLIT_SHARES)
@pytest.mark.parametrize("name", sorted(BROKEN_HISTORIES))
def test_broken_histories_are_refused(tmp_path, monkeypatch, name, share):
    """Every broken history of the reading tests: refused here, reported by
    the careful path as ever."""
    _split(monkeypatch, share)
    history = tmp_path / "history.jsonl"
    history.write_text("".join(line + "\n" for line in BROKEN_HISTORIES[name]))
    assert not assert_same_or_refused(history, tmp_path, 50)
    with pytest.raises(HistoryError):
        write_companion(history, out=tmp_path / "c.parquet")
    assert not (tmp_path / "c.parquet").exists()


SEND = '{"index":%d,"time":1,"type":"invoke","process":%d,"f":"send","value":[["send",1,%d]]}'
SENT = '{"index":%d,"time":2,"type":"ok","process":%d,"f":"send","value":[["send",1,[0,%d]]]}'
FILLER = [SEND % (10 + 2 * i, 7, 100 + i) + "\n" + SENT % (11 + 2 * i, 7, 100 + i) for i in range(20)]


@pytest.mark.parametrize("lines, accepted", [
    ([SEND % (0, 0, 1)] + FILLER + [SENT % (99, 0, 1)], True),                         # completes in part 2
    ([SEND % (0, 0, 1)] + FILLER, True),                                              # never completes
    ([SEND % (0, 0, 1)] + FILLER + [SEND % (99, 0, 2)], False),                       # invokes again
    ([SEND % (0, 0, 1), SENT % (5, 0, 1)] + FILLER + [SEND % (3, 0, 2), SENT % (4, 0, 2)], False),  # index back
    ([SEND % (0, 0, 1), SENT % (1, 0, 1)] + FILLER + [SEND % (98, 0, 1), SENT % (99, 0, 1)], False),  # sent twice
    (FILLER + [SENT % (99, 0, 1)], False),                                            # no invoke
    ([SEND % (0, 0, 1), SENT % (1, 0, 1)] + FILLER + [SENT % (99, 0, 1)], False),     # completes twice
])
@pytest.mark.parametrize("share", [0.1, 0.5, 0.9])
def test_operations_across_the_split(tmp_path, monkeypatch, lines, accepted, share):
    _split(monkeypatch, share)
    history = tmp_path / "history.jsonl"
    history.write_text("\n".join(lines) + "\n")
    assert assert_same_or_refused(history, tmp_path, 100) == accepted


@pytest.mark.parametrize("text", [
    GOOD[0] + "\n\n" + GOOD[1] + "\n",               # a blank line
    GOOD[0] + "\r\n" + GOOD[1] + "\r\n",              # CRLF
    GOOD[0] + "\n" + GOOD[1],                         # no final newline (written)
    '{"index":0,"time":1,"type":"invoke","process":0,"f":"poll","value":[["poll",1]]}\n'
    '{"index":1,"time":2,"type":"ok","process":0,"f":"poll","value":[["poll",{}]]}\n',   # a poll with more
    '{"index":0,"time":1,"type":"invoke","process":0,"f":"note","value":1e999}\n',       # beyond a double
])
def test_shapes_left_to_the_careful_path(tmp_path, text):
    history = tmp_path / "history.jsonl"
    history.write_text(text)
    written = assert_same_or_refused(history, tmp_path)
    assert written == (not text.count("\n\n") and "\r" not in text and '["poll",1]' not in text
                       and "1e999" not in text)
    assert _tables(write_companion(history, out=tmp_path / "c.parquet"))["ops"]


def test_two_objects_on_a_line_and_one_over_two_lines(tmp_path):
    """As many objects as lines, but not one per line: refused, and the
    careful path names the lines."""
    history = tmp_path / "history.jsonl"
    history.write_text(GOOD[0] + GOOD[1] + "\n" + GOOD[2][:-1] + "\n}\n")
    assert not assert_same_or_refused(history, tmp_path)
    with pytest.raises(HistoryError, match="malformed JSON"):
        write_companion(history, out=tmp_path / "c.parquet")


@pytest.mark.child_process
def test_second_part_in_a_child_process(tmp_path, monkeypatch):
    _split(monkeypatch, 0.5)
    events = _random(3, 6)
    history = _write(tmp_path / "history.jsonl", events)
    assert assert_same_or_refused(history, tmp_path, 500)
    companion = write_companion(history, out=tmp_path / "x.parquet", block_bytes=500)
    assert sorted(p.name for p in (companion / "queue-mops").iterdir()) == ["part-00000.parquet",
                                                                           "part-00001.parquet"]
    # a value sent again at the end, in the child's part: the careful path reports it by line
    value = next(e["value"][0][2] for e in events if e["type"] == "invoke" and e["f"] == "send")
    with open(history, "a") as f:
        f.write(SEND % (10**6, 999, value) + "\n")
    with pytest.raises(HistoryError, match=f"value {value} is sent again"):
        write_companion(history, out=tmp_path / "y.parquet", block_bytes=500)
    assert not (tmp_path / "y.parquet").exists()


@pytest.mark.child_process
def test_second_part_stops_once_the_first_parts_process_is_gone(tmp_path):
    """Given a parent pid that is not its parent (as after the first part's
    process died and it was re-parented), the child stops at its first block."""
    history = _write(tmp_path / "history.jsonl", _random(4))
    out = tmp_path / "history.parquet"
    out.mkdir()
    done = subprocess.run([sys.executable, "-m", "checkers.history.companion_columnar", str(history), str(out), "0", "300",
                           str(tmp_path / "half.pickle"), "1"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "the process writing the first part (1) is gone" in done.stderr
    assert not (tmp_path / "half.pickle").exists()


@pytest.mark.child_process
def test_an_f_beyond_the_known_ones_is_compared_by_name_across_processes(tmp_path, monkeypatch):
    """Each process numbers the fs it does not know as it meets them: 'foo'
    in the first part and 'bar' in the second get the same number there, and
    must still differ when the parent pairs them."""
    _split(monkeypatch, 0.5)
    invoke = '{"index":0,"time":1,"type":"invoke","process":0,"f":"foo","value":null}'
    done = '{"index":99,"time":2,"type":"ok","process":0,"f":"bar","value":null}'
    history = tmp_path / "history.jsonl"
    history.write_text("\n".join([invoke] + FILLER + [done]) + "\n")
    with pytest.raises(HistoryError, match="completion f 'bar' differs from its invoke's f 'foo'"):
        write_companion(history, out=tmp_path / "c.parquet", block_bytes=100)
