"""Reading and validating a history in one streaming pass, with no JVM.

`read_history(path, workload)` parses history.jsonl line by line, checks it
against the contract (shared/history-format.md) and pairs each invoke with
its completion. A broken history raises HistoryError naming the file, the
line(s) and what is wrong, before any checker runs:

- each line: a JSON object with int `index` >= 0, int `time`, `type` one of
  invoke/ok/fail/info, `process` an int >= 0 or "nemesis", string `f`;
- per process: a completion needs a pending invoke of the same `f`, an
  invoke needs none pending, indexes increase;
- micro-ops (checkers/mop_rules.py): the workload's shapes, keys are ints,
  a completion's micro-ops match its invoke's (same f, key and value), and
  written values are unique (queue: across the history; list-append: per
  key, as Elle requires).

The result, `ParsedHistory.ops`, has the columns of
history_io.pair_operations (one row per client operation) with values
parsed, plus the line numbers of both events.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import orjson
import pandas as pd

from checkers.history_errors import MAX_REPORTED, TYPES, HistoryError, Problem
from checkers.mop_rules import MopProblem, check_completion, check_invoke

OP_COLUMNS = ("process", "f", "invoke_index", "invoke_time", "complete_index", "complete_time", "type",
              "invoke_value", "complete_value", "error_name", "error_message", "idempotent",
              "transactional", "invoke_line", "complete_line")


@dataclass
class ParsedHistory:
    ops: pd.DataFrame
    source_bytes: int
    nemesis_events: int = 0


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


def _event_problem(e) -> str | None:
    try:    # the usual, well-formed event in one expression; the rest below names what is wrong
        p = e["process"]
        if type(e["index"]) is int and e["index"] >= 0 and type(e["time"]) is int and e["type"] in TYPES \
                and type(e["f"]) is str and (p == "nemesis" or type(p) is int and p >= 0):
            return None
    except (KeyError, TypeError):
        pass
    return _what_is_wrong(e)


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


# 19 digits in a row may be an integer beyond 64 bits, which orjson turns
# into a float where json keeps it exact: a file with such a run is read by
# json alone. Digits map to "1", every other byte to "0", then one search.
_DIGIT_MAP = bytes(0x31 if 0x30 <= b <= 0x39 else 0x30 for b in range(256))
_LONG_RUN = b"1" * 19


def _has_long_digit_run(path: Path, chunk: int = 1 << 24) -> bool:
    carry = b""
    with open(path, "rb") as f:
        while block := f.read(chunk):
            digits = carry + block.translate(_DIGIT_MAP)
            if _LONG_RUN in digits:
                return True
            carry = digits[-18:]
    return False


def _orjson_loads(text: str):
    """orjson (faster than json), falling back to json for whatever orjson
    refuses: json accepts more (NaN, lone surrogates) and its error messages
    are the ones reported. Both give the same objects for everything else."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


def _error_parts(error) -> tuple[str | None, str | None]:
    if error is None:
        return None, None
    if isinstance(error, list) and error:
        return str(error[0]), (str(error[1]) if len(error) > 1 else None)
    return str(error) if isinstance(error, str) else json.dumps(error), None


def _producer(e: dict) -> tuple:
    p = e.get("producer")
    if isinstance(p, str):
        try:
            p = json.loads(p)
        except json.JSONDecodeError:
            p = None
    if not isinstance(p, dict):
        return None, None
    return p.get("idempotent"), p.get("transactional")


class _Pairing:
    """Pairs invokes with completions per process and checks micro-ops."""

    def __init__(self, workload: str, problems: _Problems) -> None:
        self.workload, self.problems = workload, problems
        self.pending: dict[int, tuple[dict, int]] = {}
        self.last_index: dict[int, int] = {}
        self.written: dict = {}
        self.rows: list[tuple] = []

    def event(self, e: dict, line: int) -> None:
        p = e["process"]
        last = self.last_index.get(p)
        if last is not None and e["index"] <= last:
            return self.problems.add(line, f"index {e['index']} is not greater than the previous index "
                                           f"{last} of process {p}")
        self.last_index[p] = e["index"]
        if e["type"] == "invoke":
            return self._invoke(e, line)
        self._complete(e, line)

    def _invoke(self, e: dict, line: int) -> None:
        p = e["process"]
        if p in self.pending:
            return self.problems.add(line, f"process {p} invokes again while its invoke at index "
                                           f"{self.pending[p][0]['index']} (line {self.pending[p][1]}) "
                                           "is still pending")
        self._mop_problems(check_invoke(self.workload, e, line, self.written), line)
        self.pending[p] = (e, line)

    def _complete(self, e: dict, line: int) -> None:
        p = e["process"]
        if p not in self.pending:
            return self.problems.add(line, f"completion ({e['type']}) of process {p} without a pending invoke")
        invoke, invoke_line = self.pending.pop(p)
        if e["f"] != invoke["f"]:
            return self.problems.add(line, f"completion f '{e['f']}' differs from its invoke's f "
                                           f"'{invoke['f']}' (line {invoke_line})")
        self._mop_problems(check_completion(self.workload, invoke, e), line, invoke_line)
        self._row(invoke, invoke_line, e, line)

    def _mop_problems(self, found: list[MopProblem], line: int, other_line: int | None = None) -> None:
        for problem in found:
            where = f" (its invoke: line {other_line})" if other_line is not None and problem.both else ""
            self.problems.add(line, problem.what + where)

    def _row(self, invoke: dict, invoke_line: int, done: dict | None, line: int | None) -> None:
        error_name, error_message = _error_parts(done.get("error") if done else None)
        idempotent, transactional = _producer(invoke)
        self.rows.append((invoke["process"], invoke["f"], invoke["index"], invoke["time"],
                          done["index"] if done else None, done["time"] if done else None,
                          done["type"] if done else "info", invoke.get("value"),
                          done.get("value") if done else None, error_name, error_message,
                          idempotent, transactional, invoke_line, line))

    def finish(self) -> pd.DataFrame:
        for invoke, line in self.pending.values():
            self._row(invoke, line, None, None)
        ops = pd.DataFrame(self.rows, columns=list(OP_COLUMNS))
        for c in ("complete_index", "complete_time", "complete_line"):
            ops[c] = ops[c].astype("Int64")
        return ops.sort_values("invoke_index", ignore_index=True)


def read_history(path: str | Path, workload: str) -> ParsedHistory:
    """The validated, paired history at `path` (JSON Lines). Raises
    HistoryError listing the first few problems by file:line."""
    path = Path(path)
    if not path.is_file():
        raise HistoryError([Problem(str(path), None, "no such file")])
    problems = _Problems(str(path))
    pairing = _Pairing(workload, problems)
    nemesis = 0
    loads = json.loads if _has_long_digit_run(path) else _orjson_loads
    with open(path, encoding="utf-8", errors="strict") as lines:
        for number, text in enumerate(lines, start=1):
            if not text.strip():
                continue
            try:
                e = loads(text)
            except json.JSONDecodeError as err:
                problems.add(number, f"malformed JSON ({err.msg} at column {err.colno}): {text.strip()[:120]!r}")
                continue
            problem = _event_problem(e)
            if problem:
                problems.add(number, problem)
            elif e["process"] == "nemesis":
                nemesis += 1
            else:
                pairing.event(e, number)
    problems.raise_any()
    return ParsedHistory(pairing.finish(), path.stat().st_size, nemesis)
