"""The queue checker: Jepsen's Kafka analysis over Spark DataFrames.

    check_queue(spark, ops, allow=(), forbid=()) -> results dict

`ops` comes from history_io.pair_operations. The per-key work (offset maps,
dense orders, per-process order, the dependency graph) runs as DataFrame
operations; the driver receives only counts, at most `limit` examples per
anomaly type, the bucketed unseen series and the shrunk dependency graph.
"""
from __future__ import annotations

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from checkers import queue_cycles, queue_mops, queue_order, queue_versions, queue_writes
from checkers.anomalies import DEFAULT_EXAMPLES, collect_anomalies, union_all
from checkers.queue_explain import EXPLAIN
from checkers.queue_series import unseen_series
from checkers.validity import Evidence, verdict

QUEUE_OPS = ("send", "poll", "txn", "assign", "subscribe", "crash")


def _persisted(df: DataFrame, keep: list[DataFrame]) -> DataFrame:
    df = df.persist(StorageLevel.MEMORY_AND_DISK)
    keep.append(df)
    return df


def op_stats(ops: DataFrame) -> dict:
    """Operation counts by f and by outcome, and the time span."""
    rows = ops.groupBy("f", "type").agg(F.count(F.lit(1)).alias("n"),
                                         F.max(F.coalesce("complete_time", "invoke_time")).alias("end")).collect()
    by_f: dict[str, dict[str, int]] = {}
    for row in rows:
        by_f.setdefault(row["f"], {})[row["type"]] = row["n"]
    by_type: dict[str, int] = {}
    for counts in by_f.values():
        for kind, n in counts.items():
            by_type[kind] = by_type.get(kind, 0) + n
    end = max((row["end"] or 0 for row in rows), default=0)
    return {"ops": sum(by_type.values()), "by_type": by_type, "by_f": by_f, "end_time": end}


def _final_reads(sends: DataFrame, ops: DataFrame) -> bool:
    """Did an ok poll start after every send was acknowledged?"""
    last_ack = sends.filter(F.col("type") != "fail").agg(F.max("complete_time")).first()[0]
    if last_ack is None:
        return True
    polls = ops.filter((F.col("type") == "ok") & F.col("f").isin("poll", "txn")
                       & (F.col("invoke_time") > last_ack) & F.col("complete_value").contains('"poll"'))
    return bool(polls.limit(1).count())


def check_queue(spark: SparkSession, ops: DataFrame, allow=(), forbid=(),
                limit: int = DEFAULT_EXAMPLES, cycles: bool = True, realtime: bool = True) -> dict:
    """Results (shared/history-format.md) for the queue operations in `ops`.
    `cycles` off skips G0/G1c; `realtime` off leaves out process/realtime
    edges (so no -process/-realtime variants)."""
    keep: list[DataFrame] = []
    try:
        ops = _persisted(ops.filter(F.col("f").isin(*QUEUE_OPS)), keep)
        stats = op_stats(ops)
        sends = _persisted(queue_mops.sends(ops), keep)
        reads = _persisted(queue_mops.reads(ops), keep)
        resets = queue_mops.resets(ops)
        obs = _persisted(queue_versions.observations(sends, reads), keep)
        lost, unseen = queue_writes.lost_and_unseen(sends, reads)
        rows = union_all([
            queue_versions.inconsistent_offsets(obs),
            queue_versions.duplicates(obs),
            lost, unseen,
            queue_writes.aborted_reads(sends, reads),
            queue_writes.precommitted_reads(sends, reads),
            queue_order.poll_order(obs, resets),
            queue_order.send_order(obs),
        ])
        anomalies = collect_anomalies(rows, limit, EXPLAIN)
        cycle_anomalies, cycle_stats = ({}, {})
        if cycles:
            cycle_anomalies, cycle_stats = queue_cycles.find_cycles_queue(spark, obs, sends, reads, ops,
                                                                          limit, realtime)
        anomalies.update(cycle_anomalies)
        evidence = Evidence(
            used_subscribe=bool(resets.filter(F.col("f") == "subscribe").limit(1).count()),
            any_ok=stats["by_type"].get("ok", 0) > 0,
            final_reads=_final_reads(sends, ops),
            wr_only_g1c=cycle_stats.get("wr_only", {}),
        )
        valid, bad = verdict(list(anomalies), evidence, allow, forbid)
        stats.update({
            "sends": sends.count(), "polled_values": reads.count(),
            "keys": obs.select("key").distinct().count(),
            "used_subscribe": evidence.used_subscribe, "final_reads": evidence.final_reads,
            "cycles": cycle_stats,
        })
        return {
            "valid": valid,
            "anomaly_types": sorted(anomalies),
            "bad_anomaly_types": bad,
            "anomalies": {k: anomalies[k] for k in sorted(anomalies)},
            "stats": stats,
            "series": {"unseen": unseen_series(sends, reads, stats["end_time"])},
        }
    finally:
        for df in keep:
            df.unpersist()
