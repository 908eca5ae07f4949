"""Process and realtime order edges between operations, in Spark.

Input: one row per operation with an id, its process, the history index of
its invoke and of its completion (null when it never completed: an `info` or
unfinished operation precedes nothing in real time). Column names are
parameters so each checker can pass its own frame.

Realtime is the transitive reduction of "A completed before B was invoked"
(Elle's approach): an edge A -> B only when no C fits entirely between them,
i.e. A is on B's *frontier*. History indices order events totally, so no ties:

    M(B) = max{ invoke(C) : complete(C) < invoke(B) }
    A -> B  iff  M(B) < complete(A) < invoke(B)

The ops completing in that window overlap pairwise, so there are at most as
many of them as ops running at once: the edge count is O(n * concurrency),
never O(n^2). Both M(B) and "how many completions precede index i" are prefix
scans, done per bucket of indices plus a tiny carry table per bucket, so no
window ever moves the whole history into one partition.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window, functions as F

from checkers.graph.shrink_spark import conform_edges

BUCKET = 1 << 16


def process_edges(ops: DataFrame, id_col: str = "id", process_col: str = "process",
                  invoke_col: str = "invoke_index") -> DataFrame:
    """Each op -> the next op invoked by the same process. key = process."""
    by_process = Window.partitionBy(process_col).orderBy(invoke_col)
    nxt = ops.select(F.col(id_col).alias("src"), F.col(process_col).alias("p"),
                     F.lead(id_col).over(by_process).alias("dst"))
    return conform_edges(nxt.where(F.col("dst").isNotNull()).select(
        "src", "dst", F.lit("process").alias("kind"), F.col("p").cast("string").alias("key")))


def _exclusive_prefix(events: DataFrame, value: str, how: str, out: str) -> DataFrame:
    """Add `out` = sum/max of `value` over events with a smaller `idx`."""
    agg = {"sum": F.sum, "max": F.max}[how]
    bucketed = events.withColumn("_b", F.floor(F.col("idx") / BUCKET))
    local = Window.partitionBy("_b").orderBy("idx").rowsBetween(Window.unboundedPreceding, -1)
    carry_window = Window.orderBy("_b").rowsBetween(Window.unboundedPreceding, -1)
    carries = (bucketed.groupBy("_b").agg(agg(value).alias("_t"))   # one row per bucket
               .withColumn("_carry", agg("_t").over(carry_window)).select("_b", "_carry"))
    scanned = bucketed.withColumn("_local", agg(value).over(local)).join(
        F.broadcast(carries), "_b")
    if how == "sum":
        total = F.coalesce("_local", F.lit(0)) + F.coalesce("_carry", F.lit(0))
    else:
        total = F.greatest("_local", "_carry")
    return scanned.withColumn(out, total).drop("_b", "_local", "_carry")


def realtime_edges(ops: DataFrame, id_col: str = "id", invoke_col: str = "invoke_index",
                   complete_col: str = "complete_index") -> DataFrame:
    """Frontier realtime edges (see the module docstring). key = null,
    prev = completion index of src, value = invoke index of dst."""
    completes = ops.where(F.col(complete_col).isNotNull()).select(
        F.col(complete_col).alias("idx"), F.col(id_col).alias("op"),
        F.lit(1).alias("is_complete"), F.col(invoke_col).alias("inv"))
    invokes = ops.select(F.col(invoke_col).alias("idx"), F.col(id_col).alias("op"),
                         F.lit(0).alias("is_complete"), F.lit(None).cast("long").alias("inv"))
    events = _exclusive_prefix(completes.unionByName(invokes), "is_complete", "sum", "ncomp")
    events = _exclusive_prefix(events, "inv", "max", "m").localCheckpoint(eager=True)
    ranked = events.where("is_complete = 1").select(
        F.col("ncomp").alias("rank"), F.col("op").alias("src"), F.col("idx").alias("done"))
    at_m = events.where("is_complete = 0").select(F.col("idx").alias("m"),
                                                 F.col("ncomp").alias("lo"))
    windows = (events.where("is_complete = 0 AND m IS NOT NULL")
               .select(F.col("op").alias("dst"), F.col("idx").alias("began"), "m",
                       (F.col("ncomp") - 1).alias("hi"))
               .join(at_m, "m").where("lo <= hi"))
    frontier = windows.select("dst", "began", F.explode(F.sequence("lo", "hi")).alias("rank"))
    edges = frontier.join(ranked, "rank").select(
        "src", "dst", F.lit("realtime").alias("kind"),
        F.col("began").cast("string").alias("value"), F.col("done").cast("string").alias("prev"))
    return conform_edges(edges)
