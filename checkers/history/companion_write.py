"""Writing a history's Parquet companion in-process, in one streaming pass.

history.read.stream_history parses, validates and pairs the JSON Lines a
block of lines at a time, with the in-process engine's rules and messages;
each block's operations become a row group of ops/ and, for the queue, their
micro-op records (history.queue_records.record_rows) a row group of queue-mops/. The
layout and columns are those checkers/history/spark_load.py reads (Spark wrote
them before; its records of the same operations are the same rows).

For the queue, two processes share the work, one per core: this one
validates (the micro-op rules are the costliest part) and writes ops/,
while a child process (`python -m checkers.history.companion_write`) reads the same
file with those rules left out and writes queue-mops/ (the records are the
costliest part to make). The companion is complete, with its _SOURCE.json,
only once both are done; bad input raises HistoryError after the whole
pass, stops the child and leaves no companion, and so does any other
failure.

Memory stays bounded by a block, bar what a pass must remember about the
whole history: every written value (validation refuses one written twice),
and the (key, value) of every ok poll, because PROVEN marks the sends of an
info operation that any poll read, in any block. The records of info sends
are few: they are held back and written last, once every poll is known.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa

from checkers.history.collector import without_cyclic_gc
from checkers.history.companion import OP_COUNTS, SOURCE, companion_path, fingerprint
from checkers.history.companion_columnar import NotColumnar, write_columnar
from checkers.history.companion_parts import (OPS_SCHEMA, RECORDS_SCHEMA, Child, OpCounts, Parts, ProvenSends,
                                              json_text)
from checkers.history.errors import HistoryError, Problem
from checkers.progress import stage
from checkers.history.formats import format_for
from checkers.history.lines import BLOCK_BYTES
from checkers.history.read import OP_COLUMNS, stream_history
from checkers.history.queue_records import NULL
from checkers.history.queue_records import record_rows, records_table

_AT = {c: i for i, c in enumerate(OP_COLUMNS)}
def write_companion(history: Path, workload: str = "queue", out: Path | None = None,
                    block_bytes: int = BLOCK_BYTES, columnar: bool = True) -> Path:
    """Validate `history` (JSON Lines) and write its companion at `out`
    (default: beside it, history.parquet/). Raises HistoryError on bad
    input, leaving no companion. `columnar=False`: the careful path only."""
    history = Path(history)
    out = Path(out) if out is not None else companion_path(history)
    if out.exists():
        shutil.rmtree(out)
    source = fingerprint(history)
    if not history.is_file():
        raise HistoryError([Problem(str(history), None, "no such file")])
    out.mkdir(parents=True)    # here, so a folder that cannot be written raises here
    with stage("writing the Parquet companion"):
        counts = _write_companion_parts(history, workload, out, block_bytes, columnar)
    (out / OP_COUNTS).write_text(json.dumps(counts.rows()))
    tmp = out / (SOURCE + ".tmp")
    tmp.write_text(json.dumps(source))
    os.replace(tmp, out / SOURCE)      # last: a companion without it is ignored
    return out


def _write_companion_parts(history: Path, workload: str, out: Path, block_bytes: int,
                           columnar: bool) -> OpCounts:
    counts = _write_columnar(history, workload, out, block_bytes) if columnar else None
    if counts is None:
        with _RecordsWriter(history, workload, out, block_bytes) as records:
            try:
                counts = _write_operations(history, workload, out, block_bytes)
                records.wait()
            except BaseException:
                records.stop()
                shutil.rmtree(out, ignore_errors=True)
                raise
    return counts


def _write_columnar(history: Path, workload: str, out: Path, block_bytes: int) -> OpCounts | None:
    """The companion of a queue history in the common shape, written by
    checkers/history/companion_columnar.py (several times faster); None, with `out`
    emptied again, where the careful path below must write it."""
    if not format_for(workload).micro_records:     # the fast path writes only the queue's shape
        return None
    try:
        return write_columnar(history, out, block_bytes)
    except NotColumnar:
        pass
    except BaseException:
        shutil.rmtree(out, ignore_errors=True)
        raise
    shutil.rmtree(out)
    out.mkdir()
    return None


class _RecordsWriter:
    """The child process that writes queue-mops/ (nothing for other workloads)."""

    def __init__(self, history: Path, workload: str, out: Path, block_bytes: int) -> None:
        self.child = Child(__name__, [str(history), str(out), str(block_bytes)],
                           "writing the queue's micro-op records") if format_for(workload).micro_records else None

    def __enter__(self) -> _RecordsWriter:
        return self

    def __exit__(self, *exc) -> None:
        if self.child is not None:
            self.child.close()

    def wait(self) -> None:
        if self.child is not None and self.child.wait() != 0:
            raise self.child.failure()

    def stop(self) -> None:
        if self.child is not None:
            self.child.stop()


def _write_operations(history: Path, workload: str, out: Path, block_bytes: int) -> OpCounts:
    """Validate the history, write ops/ and count the operations. A value
    Parquet cannot hold stops the writing, not the validation: the
    history's own problems, if it has any, are what is reported."""
    ops, counts = Parts(out / "ops", OPS_SCHEMA), OpCounts()
    unwritable = None
    try:
        with without_cyclic_gc():
            for rows in stream_history(history, workload, block_bytes):
                if rows and unwritable is None:
                    try:
                        table = ops_table(rows, history)
                    except HistoryError as e:
                        unwritable = e
                        continue
                    ops.write(table)
                    counts.add(table)
    finally:
        ops.close()
    if unwritable is not None:
        raise unwritable
    return counts


def write_records(history: Path, out: Path, block_bytes: int = BLOCK_BYTES, parent: int | None = None) -> None:
    """queue-mops/ of a queue `history` into `out`: its micro-op records, read
    without the micro-op rules (write_companion's other process checks them).
    `parent`: the pid of that process; should it die, this one stops at the
    next block instead of finishing a companion nobody will complete."""
    records = Parts(out / "queue-mops", RECORDS_SCHEMA)
    proven = ProvenSends()
    try:
        with without_cyclic_gc():
            for rows in stream_history(history, "queue", block_bytes, checked=False):
                if parent is not None and os.getppid() != parent:
                    raise SystemExit(f"{history}: the validating process {parent} is gone")
                if rows:
                    records.write(proven.hold_back(records_table(record_rows(_record_inputs(rows), resets=False))))
        records.write(proven.held_back())
    finally:
        records.close()


def _record_inputs(rows: list[tuple]) -> Iterator[tuple]:
    """record_rows' input tuples from history_read rows."""
    f, t, op, p, it = (_AT[c] for c in ("f", "type", "invoke_index", "process", "invoke_time"))
    ct, ci, iv, cv, idem = (_AT[c] for c in ("complete_time", "complete_index", "invoke_value",
                                             "complete_value", "idempotent"))
    for r in rows:
        yield (r[f], r[t], r[op], r[p], r[it], NULL if r[ct] is None else r[ct],
               NULL if r[ci] is None else r[ci], r[iv], r[cv], r[idem], None, None)


def ops_table(rows: list[tuple], history: Path) -> pa.Table:
    """The rows' OPS_SCHEMA columns: values as JSON text, the way Spark
    keeps a JSON value in a string column (a string's own text, anything
    else compact JSON), producer flags only when they are booleans."""
    columns = list(zip(*rows))
    arrays = []
    for field in OPS_SCHEMA:
        values = columns[_AT[field.name]]
        if field.name in ("invoke_value", "complete_value", "starts", "rebalance_log"):
            values = [json_text(v) for v in values]
        elif field.type == pa.bool_():
            values = [v if type(v) is bool else None for v in values]
        try:
            arrays.append(pa.array(values, type=field.type))
        except (OverflowError, pa.ArrowInvalid, pa.ArrowTypeError):
            raise _out_of_range(rows, field.name, history) from None
    return pa.Table.from_arrays(arrays, schema=OPS_SCHEMA)


def _out_of_range(rows: list[tuple], name: str, history: Path) -> HistoryError:
    """The first row whose `name` a 64-bit integer cannot hold."""
    line = _AT["complete_line"] if name.startswith("complete") else _AT["invoke_line"]
    for r in rows:
        v = r[_AT[name]]
        if type(v) is int and not -(1 << 63) <= v < (1 << 63):
            return HistoryError([Problem(str(history), r[line],
                                         f"field '{name.split('_')[-1]}' {v} does not fit in 64 bits")])
    return HistoryError([Problem(str(history), None, f"column {name} cannot be written to Parquet")])


if __name__ == "__main__":      # write_companion's second process
    write_records(Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
