"""Reading and validating a history in one streaming pass, with no JVM.

`read_history(path, workload)` parses history.jsonl line by line, checks it
against the contract (docs/history-format.md) and pairs each invoke with
its completion. A broken history raises HistoryError naming the file, the
line(s) and what is wrong, before any checker runs:

- each line: a JSON object with int `index` >= 0, int `time`, `type` one of
  invoke/ok/fail/info, `process` an int >= 0 or "nemesis", string `f`;
- per process: a completion needs a pending invoke of the same `f`, an
  invoke needs none pending, indexes increase;
- micro-ops (checkers/history/mop_rules.py): the workload's shapes, keys are ints,
  a completion's micro-ops match its invoke's (same f, key and value), and
  written values are unique (queue: across the history; list-append: per
  key, as Elle requires).

The result, `ParsedHistory.ops` (checkers/history/ops_frame.py), has the columns of
history.spark_read.pair_operations (one row per client operation) with values
parsed, plus the line numbers of both events. It is built on first use:
`ParsedHistory.rows` holds the same rows as tuples, for a checker that
needs no DataFrame (list-append in-process) and for validation alone.
"""
from __future__ import annotations

import gc
import json
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from checkers.history.errors import MAX_REPORTED, TYPES, HistoryError, Problem, malformed_json
from checkers.history.formats import format_for
from checkers.history.lines import BLOCK_BYTES, Lines, first_undecodable, line_blocks, read_lines
from checkers.history.mop_rules import MopProblem
from checkers.history.op_row import ROW_COLUMNS, error_parts, producer_flags
from checkers import progress

if TYPE_CHECKING:
    import pandas as pd


@dataclass
class ParsedHistory:
    rows: list[tuple]          # OP_COLUMNS, in invoke order
    source_bytes: int
    nemesis_events: int = 0

    @cached_property
    def ops(self) -> pd.DataFrame:
        """The rows as a DataFrame sorted by invoke index (pandas is imported
        only here: a bad history, or a check that needs no frame, goes without)."""
        from checkers.history.ops_frame import ops_frame  # loads pandas: only when needed
        return ops_frame(self.rows)

    def rows_by_index(self) -> list[tuple] | None:
        """The rows if they are in invoke-index order already (as `ops` has
        them), else None."""
        index = [row[_INVOKE_INDEX] for row in self.rows]
        return self.rows if all(a < b for a, b in zip(index, index[1:])) else None


class _Problems:
    """The first MAX_REPORTED problems, and how many in all."""

    def __init__(self, file: str) -> None:
        self.file, self.first, self.count = file, [], 0

    def add(self, line: int, what: str) -> None:
        self.count += 1
        if len(self.first) < MAX_REPORTED:
            self.first.append(Problem(self.file, line, what))

    def raise_any(self) -> None:
        if self.count:
            raise HistoryError(self.first, self.count)


def _what_is_wrong(e) -> str | None:
    if not isinstance(e, dict):
        return f"an event must be a JSON object, not {type(e).__name__}"
    for name in ("index", "time", "type", "process", "f"):
        if name not in e or e[name] is None:
            return f"missing field '{name}'"
    for name in ("index", "time"):
        if not isinstance(e[name], int) or isinstance(e[name], bool):
            return f"field '{name}' must be an integer, not {json.dumps(e[name])[:60]}"
    if e["index"] < 0:
        return "index must be >= 0"
    if e["type"] not in TYPES:
        return f"type must be one of invoke/ok/fail/info, not {json.dumps(e['type'])[:60]}"
    p = e["process"]
    if p != "nemesis" and (not isinstance(p, int) or isinstance(p, bool) or p < 0):
        return f'process must be an int >= 0 or "nemesis", not {json.dumps(p)[:60]}'
    if not isinstance(e["f"], str):
        return f"field 'f' must be a string, not {json.dumps(e['f'])[:60]}"
    return None


class _Pairing:
    """Pairs invokes with completions per process and checks micro-ops.
    Each operation's row has a slot from its invoke on, so the rows come out
    in invoke order (usually index order: no sort)."""

    def __init__(self, workload: str, problems: _Problems, checked: bool = True) -> None:
        self.problems = problems
        form = format_for(workload)
        self.check_invoke, self.check_completion = ((form.check_invoke, form.check_completion) if checked
                                                    else (_unchecked, _unchecked))
        self.pending: dict[int, tuple[dict, int, int]] = {}
        self.last_index: dict[int, int] = {}
        self.written: dict = {}
        self.rows: list[tuple | None] = []

    def event(self, e: dict, line: int) -> None:
        p, index = e["process"], e["index"]
        last = self.last_index.get(p)
        if last is not None and index <= last:
            return self.problems.add(line, f"index {index} is not greater than the previous index "
                                           f"{last} of process {p}")
        self.last_index[p] = index
        if e["type"] == "invoke":
            return self._invoke(e, line)
        self._complete(e, line)

    def _invoke(self, e: dict, line: int) -> None:
        p = e["process"]
        if p in self.pending:
            return self.problems.add(line, f"process {p} invokes again while its invoke at index "
                                           f"{self.pending[p][0]['index']} (line {self.pending[p][1]}) "
                                           "is still pending")
        found = self.check_invoke(e, line, self.written)
        if found:
            self._mop_problems(found, line)
        self.pending[p] = (e, line, len(self.rows))
        self.rows.append(None)

    def _complete(self, e: dict, line: int) -> None:
        p = e["process"]
        if p not in self.pending:
            return self.problems.add(line, f"completion ({e['type']}) of process {p} without a pending invoke")
        invoke, invoke_line, slot = self.pending.pop(p)
        if e["f"] != invoke["f"]:
            return self.problems.add(line, f"completion f '{e['f']}' differs from its invoke's f "
                                           f"'{invoke['f']}' (line {invoke_line})")
        found = self.check_completion(invoke, e)
        if found:
            self._mop_problems(found, line, invoke_line)
        self.rows[slot] = _row(invoke, invoke_line, e, line)

    def _mop_problems(self, found: list[MopProblem], line: int, other_line: int | None = None) -> None:
        for problem in found:
            where = f" (its invoke: line {other_line})" if other_line is not None and problem.both else ""
            self.problems.add(line, problem.what + where)

    def finish(self) -> list[tuple]:
        """The operations' rows in invoke order. Only called when no problem
        was found, so every slot holds a row."""
        for invoke, line, slot in self.pending.values():
            self.rows[slot] = _row(invoke, line, None, None)
        return self.rows

    def drain(self) -> list[tuple]:
        """The rows of the operations completed so far (in invoke order),
        handed over and forgotten; the pending ones keep a slot."""
        done = [row for row in self.rows if row is not None]
        self.rows = []
        for p, (invoke, line, _) in list(self.pending.items()):
            self.pending[p] = (invoke, line, len(self.rows))
            self.rows.append(None)
        return done


def _unchecked(*_) -> list:
    return []


OP_COLUMNS = ROW_COLUMNS   # one operation's row (checkers/history/op_row.py)
_INVOKE_INDEX = OP_COLUMNS.index("invoke_index")


def _row(invoke: dict, invoke_line: int, done: dict | None, line: int | None) -> tuple:
    """One row of OP_COLUMNS; `done` None: never completed."""
    if done is None:
        complete_index = complete_time = complete_value = error_name = error_message = None
        kind = "info"
    else:
        complete_index, complete_time, kind, complete_value = done["index"], done["time"], done["type"], \
            done.get("value")
        error = done.get("error")
        error_name, error_message = error_parts(error) if error is not None else (None, None)
    idempotent, transactional = producer_flags(invoke.get("producer"))
    return (invoke["process"], invoke["f"], invoke["index"], invoke["time"], complete_index, complete_time,
            kind, invoke.get("value"), complete_value, error_name, error_message, idempotent, transactional,
            None if done is None else done.get("starts"), None if done is None else done.get("rebalance_log"),
            invoke_line, line)


# ---------------------------------------------------------------- reading

_SKIP = object()
PROGRESS_LINES = 1 << 16  # lines parsed between two reports to checkers/progress.py


@contextmanager
def gc_paused() -> Iterator[None]:
    """Every parsed event survives until the end, so the collector's passes
    over them (half the time of reading) find nothing to free. They hold no
    reference cycles and live as long as the check: frozen, the collector
    leaves them alone afterwards too (refcounting still frees them).

    Freezing takes in everything alive, garbage cycles not yet collected
    too, and frozen cycles are never collected. In a process that reads
    history after history (the tests, a runner) those were PySpark objects
    from the checks before, each holding its query plans in the JVM: the
    driver's heap grew by about 25 MB a check until Spark ran out of memory.
    So a read after an earlier freeze first collects what came since; the
    first read of a process (the CLI's only one) skips that."""
    if gc.get_freeze_count():
        gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


def _careful_parse(lines: Lines, number: int, problems: _Problems):
    """A line the fast parser refused: blank (skipped), or parsed again the
    way errors are reported."""
    text = lines.original(number)
    if not text.strip():
        return _SKIP
    try:
        return lines.careful(text)
    except json.JSONDecodeError as err:
        problems.add(number, malformed_json(err, text))
        return _SKIP


def _scan(lines: Lines, pairing: _Pairing, problems: _Problems) -> int:
    """Validate and pair every event; the number of nemesis events."""
    nemesis = 0
    for start in range(0, len(lines.texts), PROGRESS_LINES):
        chunk = lines.texts[start:start + PROGRESS_LINES]
        nemesis += _scan_chunk(lines, chunk, lines.first + start, pairing, problems)
        progress.parsed(sum(map(len, chunk)) + len(chunk))  # characters and line ends: about the bytes
    return nemesis


def _scan_chunk(lines: Lines, chunk: list[str], first: int, pairing: _Pairing, problems: _Problems) -> int:
    return scan_events(_parsed(lines, chunk, first, problems), pairing, problems)


def _parsed(lines: Lines, chunk: list[str], first: int, problems: _Problems) -> Iterator[tuple[int, Any]]:
    """(line number, parsed value) of each line of `chunk` but blank ones and
    those that are not JSON (reported to `problems`)."""
    loads = lines.fast
    for number, text in enumerate(chunk, start=first):
        try:
            yield number, loads(text)
        except ValueError:
            e = _careful_parse(lines, number, problems)
            if e is not _SKIP:
                yield number, e


def scan_events(numbered: Iterable[tuple[int, Any]], pairing: _Pairing, problems: _Problems) -> int:
    """Validate and pair each (line number, event) parsed; the number of
    nemesis events. A history read from JSON Lines or from EDN
    (checkers/history/edn_fast.py) comes through here alike."""
    nemesis, event = 0, pairing.event
    for number, e in numbered:
        try:    # the well-formed event in one expression (this runs for every event); _what_is_wrong names the rest
            p = e["process"]
            good = type(e["index"]) is int and e["index"] >= 0 and type(e["time"]) is int \
                and e["type"] in TYPES and type(e["f"]) is str and (p == "nemesis" or type(p) is int and p >= 0)
        except (KeyError, TypeError):
            good = False
        problem = None if good else _what_is_wrong(e)
        if problem:
            problems.add(number, problem)
        elif e["process"] == "nemesis":
            nemesis += 1
        else:
            event(e, number)
    return nemesis


def _decoded(path: Path, read: Callable[[], Any]) -> Any:
    """read() of `path`'s lines, a file that is not UTF-8 reported as bad
    input (file and line, exit 3), not as the checker failing."""
    try:
        return read()
    except UnicodeDecodeError:
        line, what = first_undecodable(path)
        raise HistoryError([Problem(str(path), line, what)]) from None


def read_history(path: str | Path, workload: str) -> ParsedHistory:
    """The validated, paired history at `path` (JSON Lines). Raises
    HistoryError listing the first few problems by file:line. A history in
    its workload's common shape is read in bulk (formats.HistoryFormat.common_rows,
    same rows); any other, or a bad one, by the careful pass here."""
    path = Path(path)
    if not path.is_file():
        raise HistoryError([Problem(str(path), None, "no such file")])
    problems = _Problems(str(path))
    with gc_paused():
        data = path.read_bytes()
        common = format_for(workload).common_rows
        found = common(data) if common is not None else None
        if found is not None:
            progress.parsed(len(data))
            return ParsedHistory(found[0], len(data), found[1])
        lines = _decoded(path, lambda: read_lines(path, data))
        pairing = _Pairing(workload, problems)
        nemesis = _scan(lines, pairing, problems)
        problems.raise_any()
        rows = pairing.finish()
    return ParsedHistory(rows, path.stat().st_size, nemesis)


def read_parsed(source: str, blocks: Iterable[Iterable[tuple[int, Any]]], workload: str,
                source_bytes: int) -> ParsedHistory:
    """read_history of events parsed elsewhere (an EDN history,
    checkers/history/edn_fast.py): blocks of (line number, event), validated
    and paired the same way, problems named by `source` and line."""
    problems = _Problems(source)
    with gc_paused():
        pairing = _Pairing(workload, problems)
        nemesis = sum(scan_events(block, pairing, problems) for block in blocks)
        problems.raise_any()
        rows = pairing.finish()
    return ParsedHistory(rows, source_bytes, nemesis)


def stream_history(path: str | Path, workload: str, block_bytes: int = BLOCK_BYTES,
                   checked: bool = True) -> Iterator[list[tuple]]:
    """read_history's rows for a file of any size, a block of lines at a
    time: each item holds the operations completed in one block (in invoke
    order within it), the last one those never completed. The same checks
    run, and the same HistoryError is raised, but only after the last block
    (a consumer that keeps what it was given must then drop it).
    `checked=False` leaves out the micro-op rules (mop_rules), the costliest
    checks: only for a reader whose file another pass validates."""
    path = Path(path)
    if not path.is_file():
        raise HistoryError([Problem(str(path), None, "no such file")])
    problems = _Problems(str(path))
    pairing = _Pairing(workload, problems, checked)
    blocks = line_blocks(path, block_bytes)
    while (lines := _decoded(path, lambda: next(blocks, None))) is not None:
        _scan(lines, pairing, problems)
        yield pairing.drain()
    problems.raise_any()
    yield pairing.finish()
