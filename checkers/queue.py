"""The queue checker: Jepsen's Kafka analysis on Spark.

    check_queue(spark, ops, allow=(), forbid=()) -> results dict

`ops` comes from history_io.pair_operations (or the companion, history_parquet.load).
One shuffle by key bucket runs every per-key analysis (checkers/
queue_bucket.py); the driver receives only counts, at most `limit` examples
per anomaly type, the TOP_KEYS unseen series and the part of the dependency
graph that can hold a cycle (checkers/queue_cycles.py).
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from checkers import queue_bucket, queue_cycles
from checkers.anomalies import DEFAULT_EXAMPLES
from checkers.queue_explain import EXPLAIN
from checkers.queue_series import TOP_KEYS, merge_series
from checkers.validity import Evidence, verdict

if TYPE_CHECKING:
    from checkers.producer_errors import ProducerChecks

QUEUE_OPS = ("send", "poll", "txn", "assign", "subscribe", "crash")


def op_stats(ops: DataFrame) -> dict:
    """Operation counts by f and by outcome, and the time span."""
    rows = ops.groupBy("f", "type").agg(
        F.count(F.lit(1)).alias("n"), F.max(F.coalesce("complete_time", "invoke_time")).alias("end")).collect()
    by_f: dict[str, dict[str, int]] = {}
    for row in rows:
        by_f.setdefault(row["f"], {})[row["type"]] = row["n"]
    by_type: dict[str, int] = {}
    for counts in by_f.values():
        for kind, n in counts.items():
            by_type[kind] = by_type.get(kind, 0) + n
    end = max((row["end"] or 0 for row in rows), default=0)
    return {"ops": sum(by_type.values()), "by_type": by_type, "by_f": by_f, "end_time": end}


def _final_reads(ops: DataFrame, last_ack: int | None) -> bool:
    """Did an ok poll start after every send was acknowledged?"""
    if last_ack is None:
        return True
    polls = ops.filter((F.col("type") == "ok") & F.col("f").isin("poll", "txn")
                       & (F.col("invoke_time") > last_ack) & F.col("complete_value").contains('"poll"'))
    return bool(polls.limit(1).count())


def _anomalies(passed: DataFrame, limit: int) -> dict[str, dict]:
    """{type: {"count", "examples"}} from the buckets' counts and examples:
    the overall first `limit` examples per type are picked in Spark, so the
    driver gets at most `limit` per type however many buckets there are."""
    counts = passed.filter(F.col("rec") == "count").groupBy("type").agg(F.sum("count").alias("n")).collect()
    found = {row["type"]: {"count": row["n"], "examples": []} for row in counts}
    rank = F.row_number().over(Window.partitionBy("type").orderBy("sort", "sort2", "example"))
    firsts = (passed.filter(F.col("rec") == "anomaly").select("type", "example", rank.alias("rank"))
              .filter(F.col("rank") <= limit).orderBy("type", "rank").collect())
    for row in firsts:
        example = json.loads(row["example"])
        if row["type"] in EXPLAIN:
            example["explanation"] = EXPLAIN[row["type"]](example)
        found[row["type"]]["examples"].append(example)
    return found


def _bucket_stats(passed: DataFrame) -> dict[str, int]:
    """Stats the buckets counted ("stat": summed) or found ("max": maximised)."""
    rows = (passed.filter(F.col("rec").isin("stat", "max")).groupBy("rec", "type")
            .agg(F.sum("count").alias("total"), F.max("count").alias("top")).collect())
    return {row["type"]: row["total"] if row["rec"] == "stat" else row["top"] for row in rows}


def _unseen_series(passed: DataFrame, end_time: int) -> dict:
    top = (passed.filter(F.col("rec") == "unseen").orderBy(F.desc("count"), "key")
           .limit(TOP_KEYS).collect())
    return merge_series([(row["key"], row["count"], json.loads(row["example"])) for row in top], end_time)


def check_queue(spark: SparkSession, ops: DataFrame, allow=(), forbid=(),
                limit: int = DEFAULT_EXAMPLES, cycles: bool = True, realtime: bool = False,
                producer: "ProducerChecks | None" = None, micro: DataFrame | None = None) -> dict:
    """Results (shared/history-format.md) for the queue operations in `ops`.
    `cycles` off skips G0/G1c; `realtime` adds process/realtime edges (the
    -process/-realtime variants; costly on big histories, off by default).
    With `producer` (checkers/producer_errors.ProducerChecks), the producer
    checks are added too. `micro`: the micro-op records of `ops` when the
    Parquet companion has them (checkers/history_parquet.py)."""
    values = ops.filter(F.col("f").isin(*QUEUE_OPS))
    parsed_here = micro is None
    if parsed_here:   # from JSON: parse once, keep it
        values = values.persist(StorageLevel.MEMORY_AND_DISK)
        micro = queue_bucket.records(values)
    # from the companion, re-reading a column is cheap: keep only the narrow part
    ops = values.select(*[c for c in values.columns if c not in ("invoke_value", "complete_value")])
    ops = ops.persist(StorageLevel.MEMORY_AND_DISK)
    passed = None
    try:
        stats = op_stats(ops)
        passed = queue_bucket.run(spark, ops, stats["ops"], limit, stats["end_time"], shrink=not realtime,
                                  micro=micro)
        passed = passed.persist(StorageLevel.MEMORY_AND_DISK)
        anomalies = _anomalies(passed, limit)
        bucket_stats = _bucket_stats(passed)
        cycle_anomalies, cycle_stats = ({}, {})
        if cycles:
            cycle_anomalies, cycle_stats = queue_cycles.find_cycles_queue(
                spark, passed.filter(F.col("rec") == "edge"), ops, limit, realtime)
        anomalies.update(cycle_anomalies)
        used_subscribe = bool(ops.filter(F.col("f") == "subscribe").limit(1).count())
        evidence = Evidence(used_subscribe=used_subscribe, any_ok=stats["by_type"].get("ok", 0) > 0,
                            final_reads=_final_reads(values, bucket_stats.get("last_ack")),
                            wr_only_g1c=cycle_stats.get("wr_only", {}))
        valid, bad = verdict(list(anomalies), evidence, allow, forbid)
        stats.update({"sends": bucket_stats.get("sends", 0), "polled_values": bucket_stats.get("polled_values", 0),
                      "keys": bucket_stats.get("keys", 0), "used_subscribe": used_subscribe,
                      "final_reads": evidence.final_reads, "cycles": cycle_stats})
        results = {
            "valid": valid,
            "anomaly_types": sorted(anomalies),
            "bad_anomaly_types": bad,
            "anomalies": {k: anomalies[k] for k in sorted(anomalies)},
            "stats": stats,
            "series": {"unseen": _unseen_series(passed, stats["end_time"])},
        }
        if producer is not None:
            from checkers import producer_errors
            lost = passed.filter(F.col("rec") == "lost").select(
                "key", "value", F.col("sort").alias("start"), F.col("sort2").alias("end"))
            dups = passed.filter(F.col("rec") == "idem_dup").select("key", "value")
            found = producer_errors.analyze(values, producer, lost, dups)
            producer_errors.merge_into(results, found, allow, forbid)
        return results
    finally:
        if passed is not None:
            passed.unpersist()
        ops.unpersist()
        if parsed_here:
            values.unpersist()
