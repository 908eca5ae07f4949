"""What both companion writers share (checkers/history/companion_write.py, the
careful path, and history.companion_columnar.py, the fast one): the Parquet schemas, the
part files, the operation counts, the held-back info sends, and the second
writing process."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from checkers.history.queue_records import COLUMNS, INFO, OK, POLL, PROVEN, SEND, proven_ops

OPS_SCHEMA = pa.schema([
    ("process", pa.int64()), ("f", pa.string()), ("invoke_index", pa.int64()), ("invoke_time", pa.int64()),
    ("complete_index", pa.int64()), ("complete_time", pa.int64()), ("type", pa.string()),
    ("invoke_value", pa.string()), ("complete_value", pa.string()), ("error_name", pa.string()),
    ("error_message", pa.string()), ("idempotent", pa.bool_()), ("transactional", pa.bool_()),
    ("starts", pa.string()), ("rebalance_log", pa.string())])
RECORDS_SCHEMA = pa.schema([(c, pa.int64()) for c in COLUMNS])
PART = "part-00000.parquet"
_REPEATED = ("f", "type", "error_name", "kind", "otype", "fcode", "flags")


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


class OpCounts:
    """Operations per (f, type) and the last time of each (a completion's,
    else the invoke's): what queue.spark.op_stats counts in Spark."""

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


class Parts:
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


class ProvenSends:
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

    def merge(self, other: ProvenSends) -> None:
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


def json_text(value) -> str | None:
    if value is None or type(value) is str:
        return value
    try:
        return orjson.dumps(value).decode()
    except TypeError:       # an integer beyond 64 bits, which orjson refuses
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
