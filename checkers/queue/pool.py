"""The queue checker over the Parquet companion, in worker processes: no JVM.

    check_queue_pool(companion, allow=(), forbid=()) -> results dict

The same analysis as both other engines (checkers/queue/assemble.py): the
micro-op records of the companion's queue-mops/, plus the RESET, HOLD and
START rows its ops/ give (what queue.bucket.bucketed adds on Spark), are
grouped by key into buckets (checkers/queue/buckets.py), and
checkers/queue/bucket.analyze_bucket runs over each bucket in one of
`workers` processes (this one and forked children, which inherit the
records instead of receiving them). What the gathering needs of the
operations (op details of cycle examples, order steps, producer errors,
the last polls) is read from ops/ with a filter, never all of it.

At 10^7 operations this checks the companion in about half the time of
Spark in local mode on the same two cores (docs/benchmarks.md): no Arrow
hand-over to Python workers, no JVM, no shuffle.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from checkers.history.collector import jemalloc_for_arrow, kept_heap
from checkers.history.companion import OP_COUNTS
from checkers.history.companion_parts import OpCounts
from checkers.history.queue_records import (COLUMNS, NULL, RESET, SEND, evidence_logs, op_tuples, record_rows,
                                            records_table)
from checkers.queue import cycles as queue_cycles
from checkers.queue import producer_errors
from checkers.queue.assemble import QUEUE_OPS, results, stats_from_counts
from checkers.queue.buckets import Buckets, run_buckets
from checkers.queue.local import PassedRows, no_rows
from checkers.verdict.taxonomy import DEFAULT_EXAMPLES


class NotAQueueCompanion(ValueError):
    """The folder is not the Parquet companion of a queue history."""


class CompanionOps:
    """A companion's ops/, read a filtered part at a time."""

    def __init__(self, companion: Path) -> None:
        self.dataset = ds.dataset(str(companion / "ops"), format="parquet")

    def frame(self, where: ds.Expression, columns: list[str] | None = None) -> pd.DataFrame:
        """The operations `where` holds for, nullable integers kept exact."""
        table = self.dataset.to_table(columns=columns, filter=where)
        return table.to_pandas(types_mapper={pa.int64(): pd.Int64Dtype()}.get)

    def of_fs(self, fs: tuple[str, ...], columns: list[str] | None = None) -> pd.DataFrame:
        return self.frame(pc.field("f").isin(list(fs)), columns)

    def polled_after(self, time: int) -> bool:
        """LocalPass.polled_after: an ok poll/txn invoked after `time` whose
        completion holds a poll (its JSON text names one, as on Spark)."""
        where = (pc.field("type") == "ok") & pc.field("f").isin(["poll", "txn"]) & (pc.field("invoke_time") > time)
        values = self.dataset.to_table(columns=["complete_value"], filter=where)["complete_value"]
        return bool(pc.any(pc.match_substring(values, '"poll"')).as_py())

    def details(self, ids: list[int]) -> dict[int, dict]:
        """queue.cycles.local_op_details for the operations `ids`."""
        frame = self.frame(pc.field("invoke_index").isin(ids), list(_DETAIL_COLUMNS))
        return queue_cycles.local_op_details(frame)(ids)

    def counts(self) -> list[list]:
        """op_counts.json's rows, for a companion written without it."""
        counts = OpCounts()
        counts.add(self.dataset.to_table(columns=["f", "type", "invoke_time", "complete_time"]))
        return counts.rows()


_DETAIL_COLUMNS = ("invoke_index", "process", "f", "type", "complete_index", "complete_time", "invoke_time")
_ORDER_COLUMNS = ("invoke_index", "process", "f", "type", "complete_index")
# record_rows' inputs (queue_records.op_tuples) for assign/subscribe and rebalancing polls
_RECORD_COLUMNS = ("f", "type", "invoke_index", "process", "invoke_time", "complete_time", "complete_index",
                   "invoke_value", "complete_value", "idempotent", "starts", "rebalance_log")


def op_counts(companion: Path, ops: CompanionOps) -> list[list]:
    path = companion / OP_COUNTS
    return json.loads(path.read_text()) if path.is_file() else ops.counts()


def read_records(companion: Path) -> dict[str, list[np.ndarray]]:
    """queue-mops/ as int64 columns (COLUMNS), each the list of its chunks
    (views of Arrow's buffers: joined once, with the other records, by
    buckets.run_buckets; every copy of 1.7 GB costs a second here)."""
    folder = companion / "queue-mops"
    if not folder.is_dir():
        raise NotAQueueCompanion(f"{companion}: no queue-mops/ (not the companion of a queue history)")
    table = pq.read_table(str(folder), columns=list(COLUMNS))
    return {c: [chunk.to_numpy() for chunk in table[c].chunks] for c in COLUMNS}   # no nulls: NULL marks them


def op_records(ops: CompanionOps, subscribed: bool) -> pd.DataFrame:
    """The RESET and HOLD rows of every assign/subscribe and, in a history
    that subscribed, the START rows of rebalances: the records the companion
    leaves to the check (queue_records.record_rows builds them, as for the
    in-process engine)."""
    frame = ops.of_fs(("assign", "subscribe", "poll", "txn") if subscribed else ("assign", "subscribe"),
                      list(_RECORD_COLUMNS))
    logs = evidence_logs(frame)
    if subscribed:      # START rows: only the polls with a log need their values parsed
        keep = frame["f"].isin(["assign", "subscribe"]).to_numpy() | np.array([e is not None for e in logs])
        frame, logs = frame[keep], [e for e, kept in zip(logs, keep) if kept]
    rows = records_table(record_rows(op_tuples(frame, logs)))
    return rows[rows["kind"].to_numpy() >= RESET]


class PoolPass(PassedRows):
    """queue.Gathered from the buckets' rows (run in `workers` processes) and
    the companion's ops/."""

    def __init__(self, companion: Path, limit: int = DEFAULT_EXAMPLES, realtime: bool = False,
                 workers: int | None = None, buckets: Buckets | None = None) -> None:
        self.ops = CompanionOps(companion)
        self.op_stats = stats_from_counts([c for c in op_counts(companion, self.ops) if c[0] in QUEUE_OPS])
        records = read_records(companion)
        self.sends = _sends(records)
        extra = op_records(self.ops, "subscribe" in self.op_stats["by_f"])
        passed = run_buckets(records, extra, buckets or Buckets(), workers or os.cpu_count() or 1, limit,
                             self.op_stats["end_time"], shrink=not realtime)
        super().__init__(passed if passed is not None else no_rows(), limit, realtime)

    def cycles(self) -> tuple[dict[str, dict], dict]:
        order = None
        if self.realtime:
            data = self.ops.of_fs(queue_cycles.DATA_FS, list(_ORDER_COLUMNS))
            order = queue_cycles.order_steps(data[data["type"] != "fail"])
        return queue_cycles.find_cycles_with(self._rec("edge"), self.limit, self.ops.details, order)

    def used_subscribe(self) -> bool:
        return "subscribe" in self.op_stats["by_f"]

    def polled_after(self, time: int) -> bool:
        return self.ops.polled_after(time)

    def producer(self, checks: producer_errors.ProducerChecks) -> dict:
        """The producer checks read only the operations that erred."""
        lost, dups = self.lost_and_duplicated()
        erring = self.ops.frame(pc.field("error_name").is_valid())
        sends = self.sends[self.sends["op"].isin(erring["invoke_index"].to_numpy("int64", na_value=NULL))]
        return producer_errors.analyze_local(erring, sends, checks, lost, dups, null_key=NULL)


def _sends(records: dict[str, list[np.ndarray]]) -> pd.DataFrame:
    """The send records' (op, key): what the producer checks read of them."""
    parts = [(op[kind == SEND], key[kind == SEND]) for kind, op, key in zip(*(records[c] for c in ("kind", "op", "key")))]
    return pd.DataFrame({"op": np.concatenate([o for o, _ in parts] or [np.zeros(0, np.int64)]),
                         "key": np.concatenate([k for _, k in parts] or [np.zeros(0, np.int64)])})


def check_queue_pool(companion: Path, allow=(), forbid=(), limit: int = DEFAULT_EXAMPLES,
                     realtime: bool = False, producer: producer_errors.ProducerChecks | None = None,
                     cycles: bool = True, workers: int | None = None, buckets: Buckets | None = None) -> dict:
    """queue.check_queue_spark's results for the queue history whose Parquet
    companion is `companion`, computed in `workers` processes (default:
    one per core) without a JVM. `buckets`: how records are grouped by key
    (checkers/queue/buckets.Buckets)."""
    with kept_heap(), jemalloc_for_arrow():
        return results(PoolPass(Path(companion), limit, realtime, workers, buckets), allow, forbid, cycles, producer)
