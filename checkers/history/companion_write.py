"""Writing a history's Parquet companion in-process, in one streaming pass.

history_read.stream_history parses, validates and pairs the JSON Lines a
block of lines at a time, with the in-process engine's rules and messages;
each block's operations become a row group of ops/ and, for the queue, their
micro-op records (queue_local.record_rows) a row group of queue-mops/. The
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
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from checkers.history.collector import without_cyclic_gc
from checkers.history.companion import OP_COUNTS, SOURCE, companion_path, fingerprint
from checkers.history.errors import HistoryError, Problem
from checkers.history.lines import BLOCK_BYTES
from checkers.history.read import OP_COLUMNS, stream_history
from checkers.queue.frame import COLUMNS, INFO, NULL, OK, POLL, PROVEN, SEND, proven_ops
from checkers.queue.local import record_rows, records_table

OPS_SCHEMA = pa.schema([
    ("process", pa.int64()), ("f", pa.string()), ("invoke_index", pa.int64()), ("invoke_time", pa.int64()),
    ("complete_index", pa.int64()), ("complete_time", pa.int64()), ("type", pa.string()),
    ("invoke_value", pa.string()), ("complete_value", pa.string()), ("error_name", pa.string()),
    ("error_message", pa.string()), ("idempotent", pa.bool_()), ("transactional", pa.bool_())])
RECORDS_SCHEMA = pa.schema([(c, pa.int64()) for c in COLUMNS])
_AT = {c: i for i, c in enumerate(OP_COLUMNS)}
PART = "part-00000.parquet"
_REPEATED = ("f", "type", "error_name", "kind", "otype", "fcode", "flags")


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
    (out / OP_COUNTS).write_text(json.dumps(counts.rows()))
    tmp = out / (SOURCE + ".tmp")
    tmp.write_text(json.dumps(source))
    os.replace(tmp, out / SOURCE)      # last: a companion without it is ignored
    return out


def _write_columnar(history: Path, workload: str, out: Path, block_bytes: int) -> OpCounts | None:
    """The companion of a queue history in the common shape, written by
    checkers/history/companion_columnar.py (several times faster); None, with `out`
    emptied again, where the careful path below must write it."""
    if workload != "queue":
        return None
    from checkers.history.companion_columnar import NotColumnar, write_columnar
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


class CompanionWriteError(RuntimeError):
    """The process writing the records failed on a history that validated."""


class Child:
    """A second writing process, `python -m module *args` and this process's
    pid (the child stops once its parent is gone). Its errors go to a file,
    not a pipe: a full pipe would stall it while this process is busy."""

    def __init__(self, module: str, args: list[str], what: str) -> None:
        self.what = what
        self.errors = tempfile.TemporaryFile("w+")
        self.process = subprocess.Popen([sys.executable, "-m", module, *args, str(os.getpid())],
                                        stdout=subprocess.DEVNULL, stderr=self.errors)

    def wait(self) -> int:
        return self.process.wait()

    def failure(self) -> CompanionWriteError:
        """What went wrong, once it exited with an error."""
        self.errors.seek(0)
        return CompanionWriteError(f"{self.what} failed (exit {self.process.returncode}): "
                                   f"{self.errors.read().strip()[-2000:]}")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()

    def close(self) -> None:
        self.errors.close()


class _RecordsWriter:
    """The child process that writes queue-mops/ (nothing for other workloads)."""

    def __init__(self, history: Path, workload: str, out: Path, block_bytes: int) -> None:
        self.child = Child(__name__, [str(history), str(out), str(block_bytes)],
                           "writing the queue's micro-op records") if workload == "queue" else None

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
    ops, counts = _Parts(out / "ops", OPS_SCHEMA), OpCounts()
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


class OpCounts:
    """Operations per (f, type) and the last time of each (a completion's,
    else the invoke's): what queue_spark.op_stats counts in Spark."""

    def __init__(self) -> None:
        self.counts: dict[tuple[str, str], list[int]] = {}

    def add(self, ops: pa.Table) -> None:
        end = pc.coalesce(ops["complete_time"], ops["invoke_time"])
        grouped = pa.table({"f": ops["f"], "type": ops["type"], "end": end}).group_by(["f", "type"]).aggregate(
            [("end", "count"), ("end", "max")])
        for f, kind, n, last in zip(*(grouped[c].to_pylist() for c in ("f", "type", "end_count", "end_max"))):
            self._count((f, kind), n, last)

    def merge(self, other: OpCounts) -> None:
        for key, (n, last) in other.counts.items():
            self._count(key, n, last)

    def _count(self, key: tuple[str, str], n: int, last: int) -> None:
        seen = self.counts.setdefault(key, [0, last])
        seen[0] += n
        seen[1] = max(seen[1], last)

    def rows(self) -> list[list]:
        return [[f, kind, n, last] for (f, kind), (n, last) in sorted(self.counts.items())]


def write_records(history: Path, out: Path, block_bytes: int = BLOCK_BYTES, parent: int | None = None) -> None:
    """queue-mops/ of a queue `history` into `out`: its micro-op records, read
    without the micro-op rules (write_companion's other process checks them).
    `parent`: the pid of that process; should it die, this one stops at the
    next block instead of finishing a companion nobody will complete."""
    records = _Parts(out / "queue-mops", RECORDS_SCHEMA)
    proven = _ProvenSends()
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


class _Parts:
    """One Parquet file in `folder`, a row group per write; an empty history
    still gets a file with the schema (Spark needs one to read the folder)."""

    def __init__(self, folder: Path, schema: pa.Schema, name: str = PART) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        # dictionaries only where values repeat: trying them on the others costs
        # more than the rest of the writing
        self.writer = pq.ParquetWriter(folder / name, schema, use_dictionary=[
            f.name for f in schema if f.name in _REPEATED])
        self.schema = schema

    def write(self, table: pa.Table | pd.DataFrame) -> None:
        if isinstance(table, pd.DataFrame):
            table = pa.Table.from_pandas(table, schema=self.schema, preserve_index=False)
        if table.num_rows:
            self.writer.write_table(table)

    def close(self) -> None:
        self.writer.close()


class _ProvenSends:
    """PROVEN: a send of an info operation whose value an ok poll returned
    on the same key, in any block. The records of info sends wait here
    (they are few) with the (key, value) of every ok poll read so far."""

    def __init__(self) -> None:
        self.info: list[pd.DataFrame] = []
        self.keys: list[np.ndarray] = []
        self.values: list[np.ndarray] = []

    def hold_back(self, records: pd.DataFrame) -> pd.DataFrame:
        """`records` without the info sends, which are kept for later."""
        kind, otype = records["kind"].to_numpy(), records["otype"].to_numpy()
        polled = (kind == POLL) & (otype == OK)
        self.keys.append(records["key"].to_numpy()[polled])
        self.values.append(records["value"].to_numpy()[polled])
        info = (kind == SEND) & (otype == INFO)
        if not info.any():
            return records
        self.info.append(records[info])
        return records[~info]

    def merge(self, other: _ProvenSends) -> None:
        """Take in the held-back sends and the polls of another part."""
        self.info += other.info
        self.keys += other.keys
        self.values += other.values

    def held_back(self) -> pd.DataFrame:
        """The info sends' records, PROVEN set where a poll read them."""
        if not self.info:
            return pd.DataFrame({c: np.array([], dtype=np.int64) for c in COLUMNS})
        info = pd.concat(self.info, ignore_index=True)
        read = pd.DataFrame({"key": np.concatenate(self.keys), "value": np.concatenate(self.values)})
        info.loc[info["op"].isin(proven_ops(info, read)).to_numpy(), "flags"] |= PROVEN
        return info


def _record_inputs(rows: list[tuple]) -> Iterator[tuple]:
    """record_rows' input tuples from history_read rows."""
    f, t, op, p, it = (_AT[c] for c in ("f", "type", "invoke_index", "process", "invoke_time"))
    ct, ci, iv, cv, idem = (_AT[c] for c in ("complete_time", "complete_index", "invoke_value",
                                             "complete_value", "idempotent"))
    for r in rows:
        yield (r[f], r[t], r[op], r[p], r[it], NULL if r[ct] is None else r[ct],
               NULL if r[ci] is None else r[ci], r[iv], r[cv], r[idem])


def ops_table(rows: list[tuple], history: Path) -> pa.Table:
    """The rows' OPS_SCHEMA columns: values as JSON text, the way Spark
    keeps a JSON value in a string column (a string's own text, anything
    else compact JSON), producer flags only when they are booleans."""
    columns = list(zip(*rows))
    arrays = []
    for field in OPS_SCHEMA:
        values = columns[_AT[field.name]]
        if field.name in ("invoke_value", "complete_value"):
            values = [_json_text(v) for v in values]
        elif field.type == pa.bool_():
            values = [v if type(v) is bool else None for v in values]
        try:
            arrays.append(pa.array(values, type=field.type))
        except (OverflowError, pa.ArrowInvalid, pa.ArrowTypeError):
            raise _out_of_range(rows, field.name, history) from None
    return pa.Table.from_arrays(arrays, schema=OPS_SCHEMA)


def _json_text(value) -> str | None:
    if value is None or type(value) is str:
        return value
    try:
        return orjson.dumps(value).decode()
    except TypeError:       # an integer beyond 64 bits, which orjson refuses
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


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
