"""The history's Parquet companion: the same operations, validated, paired
and (for the queue) parsed into typed micro-op records, so a large history is
parsed once and checked many times at Parquet speed.

`history.parquet/` beside `history.jsonl`:

    ops/          one row per operation: op_row.OP_COLUMNS
    queue-mops/   the queue's micro-op records (checkers/queue/bucket.records)
    op_counts.json  [[f, type, operations, last time], ...]: what counting the
                  operations in Spark would give (a scan of all of them)
    _SOURCE.json  {"history", "bytes", "mtime_ns", "format"}: what it was made
                  from. Written last, so a companion without it (an
                  interrupted conversion) is ignored, and so is one whose
                  history has changed since.

history.jsonl stays the contract (docs/history-format.md); the companion
is a cache of it that `logtrial check` writes for a large history it checks
on Spark, and `logtrial to-parquet` on demand, both in-process
(checkers/history/companion_write.py). `load` reads a history's
operations from whichever of the two is usable.
"""
from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession

from checkers.history.companion import OP_COUNTS, SOURCE, companion_for, is_companion
from checkers.history.formats import format_for
from checkers.history.spark_read import ValueCheck, cached_history, load_history, pair_operations


def value_check(workload: str) -> ValueCheck | None:
    """The workload's check of each event's `value` (spark_read.load_history)."""
    make = format_for(workload).spark_value_check
    return make() if make is not None else None


@dataclass
class Loaded:
    """What a checker reads: operations, and what the companion adds."""

    ops: DataFrame                          # op_row.OP_COLUMNS
    queue_records: DataFrame | None = None  # queue micro-op records, when the companion has them
    op_counts: list[tuple] | None = None    # (f, type, operations, last time), when the companion has them
    source_bytes: int = 0
    from_companion: bool = False


def load_companion(spark: SparkSession, companion: Path) -> Loaded:
    recorded = json.loads((companion / SOURCE).read_text())
    ops = spark.read.parquet(str(companion / "ops"))
    records = spark.read.parquet(str(companion / "queue-mops")) if (companion / "queue-mops").is_dir() else None
    counts = companion / OP_COUNTS
    op_counts = [tuple(c) for c in json.loads(counts.read_text())] if counts.is_file() else None
    return Loaded(ops=ops, queue_records=records, source_bytes=recorded["bytes"], from_companion=True,
                  op_counts=op_counts)


@contextmanager
def load(spark: SparkSession, history_path: Path, workload: str = "queue", validated: bool = False
         ) -> Iterator[Loaded]:
    """The operations of the history at `history_path`, for the `with` block:
    from its companion when `history_path` is one or has an up-to-date one
    beside it, else parsed from the file itself, and validated there unless
    `validated` (it was, in-process: Spark's checks would cost two jobs for
    nothing). A file Spark validates (a large one) is parsed once and kept
    (memory, then disk) for the block: the validation, the pairing's checks
    and the checker would otherwise each parse its JSON again (at 10^7
    operations, minutes each)."""
    companion = history_path if is_companion(history_path) else companion_for(history_path)
    if companion is not None:
        yield load_companion(spark, companion)
        return
    if validated:   # small (validated in-process): a few cheap reparses beat a cache in the JVM's heap
        yield Loaded(ops=pair_operations(load_history(spark, history_path, validate=False), validate=False),
                     source_bytes=_bytes(history_path))
        return
    with cached_history(spark, history_path, value_check(workload)) as events:
        yield Loaded(ops=pair_operations(events), source_bytes=_bytes(history_path))


def _bytes(path: Path) -> int:
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return path.stat().st_size if path.exists() else 0
