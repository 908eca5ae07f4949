"""The history's Parquet companion: the same operations, validated, paired
and (for the queue) parsed into typed micro-op records, so a large history is
parsed once and checked many times at Parquet speed.

`history.parquet/` beside `history.jsonl`:

    ops/          one row per operation: history_io.OP_COLUMNS plus the
                  optional producer flags `idempotent`, `transactional`
    queue-mops/   the queue's micro-op records (checkers/queue_bucket.records)
    _SOURCE.json  {"history", "bytes", "mtime_ns", "format"}: what it was made
                  from. Written last, so a companion without it (an
                  interrupted conversion) is ignored, and so is one whose
                  history has changed since.

history.jsonl stays the contract (shared/history-format.md); the companion
is a cache of it that `logtrial test` writes for large runs and
`logtrial to-parquet` writes on demand.
"""
from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession

from checkers.history_io import load_history, pair_operations, release

SOURCE = "_SOURCE.json"
FORMAT = 1
LARGE_HISTORY_BYTES = 100 << 20


def _fingerprint(history: Path) -> dict:
    st = history.stat()
    return {"history": history.name, "bytes": st.st_size, "mtime_ns": st.st_mtime_ns, "format": FORMAT}


def companion_path(history: Path) -> Path:
    return history.with_suffix(".parquet")


def is_companion(path: Path) -> bool:
    return path.is_dir() and (path / SOURCE).is_file()


def companion_for(history: Path) -> Path | None:
    """The complete, up-to-date companion of `history`, if there is one."""
    companion = companion_path(history)
    if not is_companion(companion) or not history.is_file():
        return None
    try:
        recorded = json.loads((companion / SOURCE).read_text())
    except json.JSONDecodeError:
        return None
    return companion if recorded == _fingerprint(history) else None


def write_companion(spark: SparkSession, history: Path, workload: str = "queue") -> Path:
    """Validate and convert `history` (JSON Lines) into its companion.
    Raises history_io.HistoryError on bad input, leaving no companion."""
    from checkers.api import value_problem
    from checkers.producer_errors import producer_flags, with_producer_flags
    from checkers.queue_bucket import records

    history = Path(history)
    out = companion_path(history)
    if out.exists():
        shutil.rmtree(out)
    fingerprint = _fingerprint(history)
    events = None
    try:
        # parsed once, kept for the validation, the pairing's checks and the write
        events = load_history(spark, history, value_problem=value_problem(workload), cache=True)
        ops = with_producer_flags(pair_operations(events), producer_flags(spark, history))
        ops.write.parquet(str(out / "ops"))
        if workload == "queue":
            records(spark.read.parquet(str(out / "ops"))).write.parquet(str(out / "queue-mops"))
    except BaseException:
        shutil.rmtree(out, ignore_errors=True)
        raise
    finally:
        if events is not None:
            release(events)
    tmp = out / (SOURCE + ".tmp")
    tmp.write_text(json.dumps(fingerprint))
    os.replace(tmp, out / SOURCE)
    return out


@dataclass
class Loaded:
    """What a checker reads: operations, and what the companion adds."""

    ops: DataFrame                          # with producer flags `idempotent`, `transactional`
    queue_records: DataFrame | None = None  # queue micro-op records, when the companion has them
    source_bytes: int = 0
    from_companion: bool = False


def load_companion(spark: SparkSession, companion: Path) -> Loaded:
    recorded = json.loads((companion / SOURCE).read_text())
    ops = spark.read.parquet(str(companion / "ops"))
    records = spark.read.parquet(str(companion / "queue-mops")) if (companion / "queue-mops").is_dir() else None
    return Loaded(ops=ops, queue_records=records, source_bytes=recorded["bytes"], from_companion=True)
