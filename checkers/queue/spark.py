"""The queue checker on Spark: its gathering, assembled by checkers/queue/assemble.py.

One shuffle by key bucket (checkers/queue/bucket.run) runs every per-key
analysis in executors; its output rows stay in Spark (persisted while the
check runs) and only counts, at most `limit` examples per anomaly type, the
TOP_KEYS unseen series and the part of the dependency graph that can hold a
cycle (checkers/queue/cycles.py) reach the driver.
"""
from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager

import pandas as pd
import pyarrow as pa
from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from checkers.queue import assemble as queue
from checkers.queue import bucket as queue_bucket
from checkers.queue import cycles as queue_cycles
from checkers.queue import producer_errors
from checkers.queue import series as queue_series
from checkers.queue import txn_reads as queue_txn_reads
from checkers.queue.assemble import QUEUE_OPS, stats_from_counts
from checkers.queue.local import LocalPass
from checkers.verdict.taxonomy import DEFAULT_EXAMPLES


def op_stats(ops: DataFrame) -> dict:
    """Operation counts by f and by outcome, and the time span."""
    rows = ops.groupBy("f", "type").agg(
        F.count(F.lit(1)).alias("n"), F.max(F.coalesce("complete_time", "invoke_time")).alias("end")).collect()
    return stats_from_counts([(row["f"], row["type"], row["n"], row["end"]) for row in rows])


# Up to this many queue operations the pass's rows and the operations are collected
# once and gathered on the driver: gathering in Spark costs about 20 jobs of fixed
# cost (7 of the 11 s of a tiny history's check with realtime and producer checks,
# idle), worth it only once the rows are too many to collect.
DRIVER_GATHER_MAX_OPS = 100_000


# The pass's rows that are few whatever the history's size (counts, examples,
# stats, per-key series) or only as many as its anomalies (lost, idem_dup).
FEW_RECS = ("count", "anomaly", "stat", "max", "unseen", "lost", "idem_dup")


def few_rows(passed: DataFrame) -> DataFrame:
    """`passed`'s FEW_RECS rows in one partition, kept. The pass has a
    partition per bucket (51 at 10^7 operations), most of them edges, and
    each of the half-dozen small queries over them paid for a task per
    partition (about 0.5 s each at 10^7). The shuffle's map side runs over
    the pass's own partitions, so the pass still runs one task per bucket."""
    return passed.filter(F.col("rec").isin(*FEW_RECS)).repartition(1).persist(StorageLevel.MEMORY_AND_DISK)


class SparkPass:
    """queue.Gathered from the bucket pass's rows (`passed`, in Spark; `few`:
    few_rows(passed))."""

    def __init__(self, spark: SparkSession, values: DataFrame, ops: DataFrame, passed: DataFrame,
                 few: DataFrame, op_stats: dict, limit: int, realtime: bool) -> None:
        self.spark, self.values, self.ops, self.passed, self.few = spark, values, ops, passed, few
        self.op_stats, self.limit, self.realtime = op_stats, limit, realtime
        self._txn_reads: Future | None = None

    def _rec(self, kind: str) -> DataFrame:
        return (self.few if kind in FEW_RECS else self.passed).filter(F.col("rec") == kind)

    def anomaly_rows(self) -> tuple[dict[str, int], list[tuple[str, str]]]:
        """The overall first `limit` examples per type are picked in Spark, so
        the driver gets at most `limit` per type however many buckets there are."""
        counts = self._rec("count").groupBy("type").agg(F.sum("count").alias("n")).collect()
        rank = F.row_number().over(Window.partitionBy("type").orderBy("sort", "sort2", "example"))
        firsts = (self._rec("anomaly").select("type", "example", rank.alias("rank"))
                  .filter(F.col("rank") <= self.limit).orderBy("type", "rank").collect())
        return {r["type"]: r["n"] for r in counts}, [(r["type"], r["example"]) for r in firsts]

    def bucket_stats(self) -> dict[str, int]:
        rows = (self.few.filter(F.col("rec").isin("stat", "max")).groupBy("rec", "type")
                .agg(F.sum("count").alias("total"), F.max("count").alias("top")).collect())
        return {row["type"]: row["total"] if row["rec"] == "stat" else row["top"] for row in rows}

    def series_candidates(self) -> list[tuple[int, int, list[int]]]:
        # queue.series.rank in Spark (`sort`: the last count; false sorts first)
        first = (self._rec("unseen").orderBy(F.col("sort") == 0, F.desc("count"), "key")
                 .limit(queue_series.TOP_KEYS).collect())
        return queue_series.top([(row["key"], row["count"], json.loads(row["example"])) for row in first])

    def cycles(self) -> tuple[dict[str, dict], dict]:
        # the cycle search has single-task stages (the SCC step): the
        # partial-read gather starts now and runs on the idle core beside it
        self._txn_reads_started()
        return queue_cycles.find_cycles_queue(self.spark, self._rec("edge"), self.ops, self.limit, self.realtime)

    def used_subscribe(self) -> bool:
        return "subscribe" in self.op_stats["by_f"]

    def polled_after(self, time: int) -> bool:
        polls = self.values.filter((F.col("type") == "ok") & F.col("f").isin("poll", "txn")
                                   & (F.col("invoke_time") > time) & F.col("complete_value").contains('"poll"'))
        return bool(polls.limit(1).count())

    def txn_reads(self) -> dict[str, dict]:
        return self._txn_reads_started().result()

    def _txn_reads_started(self) -> Future:
        if self._txn_reads is None:
            pool = ThreadPoolExecutor(1)
            self._txn_reads = pool.submit(self._gather_txn_reads)
            pool.shutdown(wait=False)       # its thread ends with the task
        return self._txn_reads

    def _gather_txn_reads(self) -> dict[str, dict]:
        """queue_txn_reads from the bucket pass's rows that carry it (only
        transactional histories have any)."""
        if not self.op_stats["by_f"].get("txn", {}).get("ok"):
            return {}       # no committed transaction: spare the Spark job
        rows = self.passed.filter(F.col("rec").isin(*queue_txn_reads.BUCKET_ROWS))
        return queue_txn_reads.from_bucket_rows(frame(rows), self.limit)

    def producer(self, checks: producer_errors.ProducerChecks) -> dict:
        lost = self._rec("lost").select("key", "value", F.col("sort").alias("start"), F.col("sort2").alias("end"))
        dups = self._rec("idem_dup").select("key", "value")
        return producer_errors.analyze(self.values, checks, lost, dups)


def frame(df: DataFrame) -> pd.DataFrame:
    """A (small) DataFrame on the driver, integers kept exact: through Arrow, with
    nullable integer columns as Int64 (plain toPandas makes them float64)."""
    return df.toArrow().to_pandas(types_mapper={pa.int64(): pd.Int64Dtype()}.get)


def driver_pass(values: DataFrame, passed: DataFrame, stats: dict, limit: int, realtime: bool) -> LocalPass:
    """queue.Gathered for a small history: the bucket pass's rows and the operations
    collected once, gathered on the driver as the in-process engine gathers."""
    return LocalPass(frame(values), limit, realtime, passed=frame(passed), stats=stats)


@contextmanager
def spark_pass(spark: SparkSession, ops: DataFrame, limit: int, realtime: bool,
               micro: DataFrame | None = None, driver_gather_max_ops: int = DRIVER_GATHER_MAX_OPS,
               op_counts: list[tuple] | None = None) -> Iterator[queue.Gathered]:
    """The bucket pass over the queue operations of `ops`, kept (memory,
    then disk) for the `with` block. `micro`: their micro-op records when
    the Parquet companion has them (else parsed here, once); `op_counts`:
    its counts of operations (stats_from_counts), else counted here. Up to
    `driver_gather_max_ops` operations its rows are gathered on the driver
    (driver_pass), above in Spark (SparkPass)."""
    values = ops.filter(F.col("f").isin(*QUEUE_OPS))
    parsed_here = micro is None
    if parsed_here:   # from JSON: parse once, keep it
        values = values.persist(StorageLevel.MEMORY_AND_DISK)
        micro = queue_bucket.records(values)
    # from the companion, re-reading a column is cheap: keep only the narrow part,
    # and only when it must be counted (a scan of every operation)
    narrow = values.select(*[c for c in values.columns if c not in ("invoke_value", "complete_value")])
    if op_counts is None:
        narrow = narrow.persist(StorageLevel.MEMORY_AND_DISK)
    passed = few = None
    try:
        stats = op_stats(narrow) if op_counts is None else \
            stats_from_counts([c for c in op_counts if c[0] in QUEUE_OPS])
        # only a subscription rebalances: other histories skip the START rows' window over every poll
        rebalances = values.filter(F.col("f").isin("poll", "txn")) if "subscribe" in stats["by_f"] else None
        passed = queue_bucket.run(spark, narrow, stats["ops"], limit, stats["end_time"], shrink=not realtime,
                                  micro=micro, assigns=values.filter(F.col("f").isin("assign", "subscribe")),
                                  rebalances=rebalances)
        if stats["ops"] <= driver_gather_max_ops:
            yield driver_pass(values, passed, stats, limit, realtime)
            return
        passed = passed.persist(StorageLevel.MEMORY_AND_DISK)
        few = few_rows(passed)
        yield SparkPass(spark, values, narrow, passed, few, stats, limit, realtime)
    finally:
        for kept in (few, passed):
            if kept is not None:
                kept.unpersist()
        narrow.unpersist()
        if parsed_here:
            values.unpersist()


def check_queue_spark(spark: SparkSession, ops: DataFrame, allow=(), forbid=(),
                      limit: int = DEFAULT_EXAMPLES, cycles: bool = True, realtime: bool = False,
                      producer: producer_errors.ProducerChecks | None = None, micro: DataFrame | None = None,
                      driver_gather_max_ops: int | None = None, op_counts: list[tuple] | None = None) -> dict:
    """Results (docs/history-format.md) for the queue operations in `ops`,
    on Spark. `cycles` off skips G0/G1c; `realtime` adds process/realtime
    edges (the -process/-realtime variants; costly on big histories, off by
    default). With `producer` (checkers/queue/producer_errors.ProducerChecks), the
    producer checks are added too. `micro`: the micro-op records of `ops`
    when the Parquet companion has them (checkers/history/spark_load.py), and
    `op_counts` its counts of operations (stats_from_counts).
    `driver_gather_max_ops`: see DRIVER_GATHER_MAX_OPS (0: always
    gather in Spark)."""
    up_to = DRIVER_GATHER_MAX_OPS if driver_gather_max_ops is None else driver_gather_max_ops
    with spark_pass(spark, ops, limit, realtime, micro, up_to, op_counts) as gathered:
        return queue.results(gathered, allow, forbid, cycles, producer)
