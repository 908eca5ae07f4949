"""The queue checker's one pass over the history, by buckets of keys.

Every queue anomaly is a property of one key (its log, its readers, the
order in which each process saw it), so the micro-operations are shuffled
ONCE, by a hash of their key into `buckets` groups, and each group is
analysed in an executor with vectorised pandas/numpy code
(checkers/queue/versions, queue_writes, queue_order, queue_edges,
queue_series). assign/subscribe operations, which reset a process's polls
on every key, are few; each bucket gets a copy.

A bucket returns rows of one schema (OUT_SCHEMA), told apart by `rec`:
- "count":   (type, count) exact count of an anomaly type in the bucket;
- "anomaly": (type, sort, sort2, example) one of its first `limit` examples;
- "edge":    (src, dst, kind, key, value, offset, prev) a dependency edge;
- "lost": (key, value, sort = invoke time, sort2 = completion time) of a lost
  write, "idem_dup": (key, value) of a duplicate on a key that only
  idempotent producers wrote (for checkers/queue/producer_errors.py; both stay in
  Spark);
- "unseen":  (key, count = peak, sort = last count, example = JSON counts) a
  series candidate;
- "txn_send", "txn_read", "txn_range": what the partial-txn-read finder
  needs of the bucket (checkers/queue/txn_reads.BUCKET_ROWS says which
  column carries what);
- "stat":    (type = name, count), summed over buckets, and "max":
  (type = name, count) maximised (last_ack: the last completion of a send
  that may have landed).
On Spark (`run`: `records`, `bucketed`, one applyInPandas) only counts,
examples and series candidates, which do not grow with the history, are
collected to the driver. The in-process engine (checkers/queue/local.py)
builds the same records with pandas and calls `analyze_bucket` itself, so
this module imports pyspark only inside its Spark functions.
"""
from __future__ import annotations

import json
import math
import os
from functools import reduce
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from checkers.history.queue_records import (COLUMNS, FAIL, FS, HOLD, IDEMPOTENT, INFO, NULL, OK, POLL, PROVEN, RESET,
                                            SEND, SINGLE_KEY_WRITER, START, TYPES)
from checkers.queue import edges as queue_edges
from checkers.queue import order as queue_order
from checkers.queue import series as queue_series
from checkers.queue import txn_reads as queue_txn_reads
from checkers.queue import versions as queue_versions
from checkers.queue import writes as queue_writes
from checkers.queue.frame import Found, proven_sends

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

OUT_SCHEMA = ("rec string, type string, sort long, sort2 long, example string, count long, "
              "src long, dst long, kind string, key long, value long, offset long, prev long")
OUT_COLUMNS = [c.split()[0] for c in OUT_SCHEMA.split(", ")]
LONG_COLUMNS = [c.split()[0] for c in OUT_SCHEMA.split(", ") if c.endswith("long")]
OPS_PER_BUCKET = 200_000


def bucket_count(ops: int) -> int:
    """Enough buckets that each holds ~OPS_PER_BUCKET operations' records
    (bounded executor memory), and at least two per core."""
    return max(2 * (os.cpu_count() or 2), math.ceil(ops / OPS_PER_BUCKET))


def _code(column: str, names: tuple[str, ...]) -> Column:
    from pyspark.sql import functions as F  # loads pyspark: only when needed
    return (F.array_position(F.array(*[F.lit(n) for n in names]), F.col(column)) - 1).cast("long")


def _long(column: str) -> Column:
    from pyspark.sql import functions as F  # loads pyspark: only when needed
    return F.coalesce(F.col(column).cast("long"), F.lit(NULL))


def _rows(df: DataFrame, kind: int, pos: Column, flags: Column) -> DataFrame:
    from pyspark.sql import functions as F  # loads pyspark: only when needed
    return df.select(_long("key").alias("key"), _long("offset").alias("offset"), _long("value").alias("value"),
                     F.col("op_id").alias("op"), F.col("process").cast("long").alias("process"),
                     F.lit(kind).cast("long").alias("kind"), _code("type", TYPES).alias("otype"),
                     _code("f", FS).alias("fcode"), pos.alias("pos"), _long("invoke_time").alias("itime"),
                     _long("complete_time").alias("ctime"), _long("complete_index").alias("cindex"),
                     flags.alias("flags"))


def _also_as_ok(parse, ops: DataFrame, outcomes: tuple[str, ...], **kw) -> DataFrame:
    """parse(ops) (history.queue_mops_spark.sends / .reads, which read the completions of
    ok operations only) reading the completions of operations with these
    `outcomes` too: each parsed as if ok, then given its outcome back."""

    from pyspark.sql import DataFrame as SparkFrame  # loads pyspark: only when needed
    from pyspark.sql import functions as F  # loads pyspark: only when needed
    other = ~F.coalesce(F.col("type").isin(*outcomes), F.lit(False))
    parts = [parse(ops.filter(other), **kw)]
    for outcome in outcomes:
        as_ok = ops.filter(F.col("type") == outcome).withColumn("type", F.lit("ok"))
        parts.append(parse(as_ok, **kw).withColumn("type", F.lit(outcome)))
    return reduce(SparkFrame.unionByName, parts)


def records(ops: DataFrame) -> DataFrame:
    """Sends and poll results of `ops` as micro-op records (the columns of
    checkers/queue/frame.COLUMNS; which rows: its docstring). The Parquet
    companion stores these. (checkers/queue/local.records_frame builds the
    same rows in pandas.)"""
    from checkers.history import queue_mops_spark as queue_mops  # loads pyspark: only when needed
    from pyspark.sql import functions as F  # loads pyspark: only when needed

    idempotent = F.coalesce(F.col("idempotent"), F.lit(False)) if "idempotent" in ops.columns else F.lit(False)
    flags = (F.when(F.col("single_key"), F.lit(SINGLE_KEY_WRITER)).otherwise(F.lit(0))
             + F.when(F.col("_idempotent"), F.lit(IDEMPOTENT)).otherwise(F.lit(0))).cast("long")
    sent = _also_as_ok(queue_mops.sends, ops.withColumn("_idempotent", idempotent), ("info",),
                       extra=("_idempotent",))
    sends = _rows(sent, SEND, F.col("mop_pos").cast("long") * (1 << 31), flags)
    polls = _rows(_also_as_ok(queue_mops.reads, ops, ("fail", "info")), POLL,
                  F.col("mop_pos").cast("long") * (1 << 31) + F.col("poll_pos").cast("long"), F.lit(0).cast("long"))
    return _proven(sends, polls).unionByName(polls)


def _proven(sends: DataFrame, polls: DataFrame) -> DataFrame:
    """`sends` with PROVEN on every send of an info op that an ok poll
    returned one of the values of (on any key). Info sends are few: they
    are broadcast, so the polls are not shuffled for this."""
    from pyspark.sql import functions as F  # loads pyspark: only when needed
    info = sends.filter(F.col("otype") == INFO).select("key", "value", "op")
    read = polls.filter(F.col("otype") == OK).select("key", "value")
    proven = read.join(F.broadcast(info), ["key", "value"]).select("op").distinct()
    marked = sends.join(F.broadcast(proven.withColumn("_proven", F.lit(PROVEN).cast("long"))), "op", "left")
    return marked.withColumn("flags", F.col("flags") + F.coalesce("_proven", F.lit(0).cast("long"))).select(*COLUMNS)


def bucketed(micro: DataFrame, ops: DataFrame, buckets: int, assigns: DataFrame | None = None,
             rebalances: DataFrame | None = None) -> DataFrame:
    """`micro` records with `bucket`, plus every assign/subscribe of `ops`
    copied into each bucket (RESET) and each key it lists in that key's
    bucket (HOLD). `assigns`: the assign/subscribe operations with their
    values, when `ops` has none (default: `ops`). `rebalances`: the
    poll/txn operations with their values and `rebalance_log`, for the
    START rows of the keys their logs name (None: there are none)."""
    from pyspark.sql import functions as F  # loads pyspark: only when needed

    keyed = micro.select(*COLUMNS).withColumn("bucket", F.pmod(F.xxhash64("key"), F.lit(buckets)))
    copies = reset_records(ops).crossJoin(
        ops.sparkSession.range(buckets).select(F.col("id").cast("long").alias("bucket")))
    held = hold_records(ops if assigns is None else assigns)
    if rebalances is not None and "rebalance_log" in rebalances.columns:
        held = held.unionByName(start_records(rebalances))
    return keyed.unionByName(copies).unionByName(held.withColumn("bucket", F.pmod(F.xxhash64("key"), F.lit(buckets))))


def reset_records(ops: DataFrame) -> DataFrame:
    """A RESET record (COLUMNS) for every assign/subscribe of `ops`: `records`
    leaves them out, since each bucket needs its own copy."""
    from checkers.history import queue_mops_spark as queue_mops  # loads pyspark: only when needed
    from pyspark.sql import functions as F  # loads pyspark: only when needed

    resets = (queue_mops.resets(ops)
              .select(F.lit(None).alias("key"), F.lit(None).alias("offset"), F.lit(None).alias("value"), "op_id",
                      "process", "type", "f", F.lit(None).alias("invoke_time"), F.lit(None).alias("complete_time"),
                      F.lit(None).alias("complete_index")))
    return _rows(resets, RESET, F.lit(0).cast("long"), F.lit(0).cast("long"))


def hold_records(ops: DataFrame) -> DataFrame:
    """A HOLD record (COLUMNS) for every key an assign/subscribe of `ops`
    lists, its recorded start as the offset: in its key's bucket."""
    from checkers.history import queue_mops_spark as queue_mops  # loads pyspark: only when needed
    from pyspark.sql import functions as F  # loads pyspark: only when needed

    held = queue_mops.holds(ops).select("key", F.col("start").alias("offset"), F.lit(None).alias("value"),
                                        "op_id", "process", "type", "f", "invoke_time", "complete_time",
                                        "complete_index")
    return _rows(held, HOLD, F.lit(0).cast("long"), F.lit(0).cast("long"))


def start_records(ops: DataFrame) -> DataFrame:
    """A START record (COLUMNS) for every key a completed poll/txn of `ops`
    names in its `rebalance_log`, with the start where it is evidence (else
    null): in its key's bucket."""
    from checkers.history import queue_mops_spark as queue_mops  # loads pyspark: only when needed
    from pyspark.sql import functions as F  # loads pyspark: only when needed

    started = queue_mops.rebalance_starts(ops).select(
        "key", F.col("start").alias("offset"), F.lit(None).alias("value"), "op_id", "process", "type", "f",
        "invoke_time", "complete_time", "complete_index")
    return _rows(started, START, F.lit(0).cast("long"), F.lit(0).cast("long"))


def _frame(kind: str, **columns) -> pd.DataFrame:
    return pd.DataFrame({"rec": kind, **columns})


def _long_part(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """A part's long column as int64 values and a missing mask (exact: no
    float64 on the way, which concatenating parts would go through)."""
    if column.dtype == np.int64:
        return column.to_numpy(), np.zeros(len(column), dtype=bool)
    exact = pd.array(column.to_numpy(dtype=object), dtype="Int64")
    return exact.to_numpy(dtype=np.int64, na_value=0), exact.isna()


def _output(parts: list[pd.DataFrame]) -> pd.DataFrame:
    """The parts' rows in OUT_COLUMNS: Int64 for the long columns, objects
    (None where missing) for the others; a part lacks the columns it leaves null."""
    parts = [p for p in parts if not p.empty]
    n = sum(len(p) for p in parts)
    out = {}
    for c in OUT_COLUMNS:
        long = c in LONG_COLUMNS
        values = np.zeros(n, dtype=np.int64) if long else np.full(n, None, dtype=object)
        missing = np.ones(n, dtype=bool)
        at = 0
        for p in parts:
            if c in p.columns:
                if long:
                    values[at:at + len(p)], missing[at:at + len(p)] = _long_part(p[c])
                else:
                    part = p[c].to_numpy(dtype=object)
                    values[at:at + len(p)] = np.where(pd.isna(part), None, part)
            at += len(p)
        out[c] = pd.arrays.IntegerArray(values, missing) if long else values
    return pd.DataFrame(out)


def analyze_bucket(bucket: pd.DataFrame, limit: int, end_time: int, shrink: bool) -> pd.DataFrame:
    """Everything the queue checker finds in one bucket of keys. With pandas'
    copy-on-write: the analyses derive many frames (assign, reset_index,
    renames) and never write through one into another, so the copies pandas
    makes by default are waste (a third of the time on a 2M-record bucket)."""
    with pd.option_context("mode.copy_on_write", True):
        return _analyze_bucket(bucket, limit, end_time, shrink)


def _analyze_bucket(bucket: pd.DataFrame, limit: int, end_time: int, shrink: bool) -> pd.DataFrame:
    if list(bucket.columns) != list(COLUMNS):
        bucket = bucket[list(COLUMNS)]
    found = Found(limit)
    proven = proven_sends(bucket)
    obs = queue_versions.observations(bucket, proven)
    queue_versions.inconsistent_offsets(obs, found)
    dups = queue_versions.duplicates(obs, found)
    polls = queue_writes.ok_polls(bucket, queue_writes.READ_COLUMNS)
    # one matching of sends to reads for the unseen anomaly and its series
    sends_read = queue_writes.first_reads(bucket[proven], polls)
    lost = queue_writes.lost_and_unseen(bucket, sends_read, polls, obs, found)
    queue_writes.aborted_reads(bucket, found)
    queue_writes.precommitted_reads(bucket, found)
    queue_order.poll_order(obs, bucket, found)
    queue_order.send_order(obs, bucket, proven, found)
    edges = queue_edges.edges(bucket, obs, shrink)
    series = queue_series.key_series(sends_read, end_time)
    kinds = bucket["kind"]
    sends = bucket.loc[kinds == SEND, ["key", "otype", "ctime", "flags"]]
    stats = {"sends": len(sends), "polled_values": int((kinds == POLL).sum()), "keys": int(obs["key"].nunique())}
    landed = sends.loc[sends["otype"] != FAIL, "ctime"]
    last_ack = int(landed.max()) if len(landed) and landed.max() != NULL else None
    return _output([
        _frame("count", type=list(found.counts), count=list(found.counts.values())),
        _frame("anomaly", type=[e[0] for e in found.examples], sort=[e[1] for e in found.examples],
               sort2=[e[2] for e in found.examples], example=[e[3] for e in found.examples]),
        edges.assign(rec="edge"),
        _frame("lost", key=lost["key"].to_numpy(), value=lost["value"].to_numpy(),
               sort=lost["itime"].to_numpy(), sort2=lost["ctime"].to_numpy()),
        _frame("idem_dup", **idempotent_only(dups, sends)),
        _frame("unseen", key=[s[0] for s in series], count=[s[1] for s in series],
               sort=[s[2][-1] for s in series], example=[json.dumps(s[2]) for s in series]),
        _frame("stat", type=list(stats), count=list(stats.values())),
        _frame("max", type=["last_ack"] * (last_ack is not None), count=[last_ack] * (last_ack is not None)),
        *queue_txn_reads.bucket_rows(bucket),
    ])


def idempotent_only(dups: pd.DataFrame, sends: pd.DataFrame) -> dict:
    """key/value columns of the duplicates on keys whose every send came
    from an idempotent producer: what idempotence exists to prevent."""
    idempotent = (sends["flags"] & IDEMPOTENT) != 0
    all_idempotent = idempotent.groupby(sends["key"]).all()
    keys = all_idempotent.index[all_idempotent.to_numpy()]
    picked = dups[dups["key"].isin(keys)]
    return {"key": picked["key"].to_numpy(), "value": picked["value"].to_numpy()}


def run(spark: SparkSession, ops: DataFrame, op_count: int, limit: int, end_time: int,
        shrink: bool, micro: DataFrame | None = None, assigns: DataFrame | None = None,
        rebalances: DataFrame | None = None) -> DataFrame:
    """The bucket pass over `ops` (history.spark_read.pair_operations rows) and their
    micro-op `records` (computed from `ops` when not given): OUT_SCHEMA rows.
    `assigns`, `rebalances`: as for `bucketed`."""
    buckets = bucket_count(op_count)
    rows = bucketed(records(ops) if micro is None else micro, ops, buckets, assigns, rebalances)

    def analyze(frame: pd.DataFrame) -> pd.DataFrame:
        return analyze_bucket(frame, limit, end_time, shrink)

    if op_count > OPS_PER_BUCKET:
        # a task per bucket, not spark.sql.shuffle.partitions (2 per core) of
        # many buckets each: a few keys may hold most records, and with a few
        # big tasks one core idles while the other ends the last
        rows = rows.repartition(buckets, "bucket")
    return rows.groupBy("bucket").applyInPandas(analyze, schema=OUT_SCHEMA)
