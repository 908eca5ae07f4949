"""Producer errors and what they say about the log (Spark).

Three results, all computed in Spark so they scale with the history:

* `stats.producer_errors`: how often each error name ended a `send`/`txn`
  operation (OUT_OF_ORDER_SEQUENCE_NUMBER, UNKNOWN_PRODUCER_ID, ...).
* `spurious-out-of-order-sequence`: an operation that ended with
  OUT_OF_ORDER_SEQUENCE_NUMBER, although the checker found no lost write on any
  of its keys near it. The broker returns that error when it has a gap in a
  producer's sequence, i.e. when it lost acknowledged data; if nothing was lost
  the error is a false alarm (e.g. producer state forgotten, KIP-360).
  "Near" is OOS_WINDOW_S: a lost write on the same key whose own send
  (invoke..completion) overlaps [invoke - window, completion + window] of the
  erroring operation.
* `idempotent-duplicate`: a duplicate on a key that only idempotent producers
  ever wrote, which idempotence exists to prevent. Which sends were idempotent
  comes from the optional `producer` field on invokes:
  `"producer": {"idempotent": true, "transactional": false}`; a send without it
  counts as not idempotent, so such a key is never reported.

Lost writes and idempotent duplicates come from the queue checker's bucket
pass (checkers/queue_bucket.py) as DataFrames; this module relates them to
producer errors, and parses sends again only for the (few) operations that
ended with OUT_OF_ORDER_SEQUENCE_NUMBER.
"""
from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from checkers import queue_mops

PRODUCER_OPS = ("send", "txn")
OUT_OF_ORDER = "OUT_OF_ORDER_SEQUENCE_NUMBER"
SPURIOUS_OOS = "spurious-out-of-order-sequence"
IDEMPOTENT_DUPLICATE = "idempotent-duplicate"
OOS_WINDOW_S = 10.0
ALLOWED_BY_DEFAULT = (SPURIOUS_OOS,)
MAX_EXAMPLES = 8

def producer_sends(ops: DataFrame) -> DataFrame:
    """queue_mops.sends (one row per send micro-op of a send/txn operation) with
    the operation's error name. An operation with no completion ends at
    +infinity (`end_time`)."""
    return (queue_mops.sends(ops, extra=("error_name", "error_message"))
            .withColumn("end_time", F.coalesce("complete_time", F.lit(2 ** 62).cast("long"))))


# ---------------------------------------------------------------- results

def error_counts(ops: DataFrame) -> dict[str, int]:
    """{error name: number of send/txn operations it ended}, most frequent first."""
    rows = (ops.filter(F.col("f").isin(*PRODUCER_OPS) & F.col("error_name").isNotNull())
               .groupBy("error_name").count()
               .orderBy(F.desc("count"), "error_name").collect())
    return {r["error_name"]: r["count"] for r in rows}


def out_of_order_without_loss(ops: DataFrame, lost_writes: DataFrame,
                              window_s: float = OOS_WINDOW_S) -> DataFrame:
    """Operations that ended with OUT_OF_ORDER_SEQUENCE_NUMBER, one row each,
    with `near_lost` = how many lost writes on their keys fall in the window.
    `lost_writes`: (key, value, start, end) of the queue checker's lost writes."""
    window_ns = int(window_s * 1e9)
    oos = producer_sends(ops.filter(F.col("error_name") == OUT_OF_ORDER))
    lost = lost_writes.select(F.col("key").alias("lost_key"), F.col("start").alias("lost_start"),
                              F.coalesce("end", F.lit(2 ** 62).cast("long")).alias("lost_end"))
    near = ((F.col("key") == F.col("lost_key"))
            & (F.col("lost_end") >= F.col("invoke_time") - window_ns)
            & (F.col("lost_start") <= F.col("end_time") + window_ns))
    return (oos.join(lost, near, "left")
               .groupBy("process", "f", "type", "invoke_index", "invoke_time", "complete_index",
                        "complete_time", "error_message")
               .agg(F.sort_array(F.collect_set("key")).alias("keys"),
                    F.count("lost_key").alias("near_lost")))


def _oos_example(row) -> dict:
    keys = list(row["keys"])
    return {"keys": keys, "op": row["complete_index"], "time_s": round(row["complete_time"] / 1e9, 3),
            "error": row["error_message"],
            "ops": [{"index": row["complete_index"], "process": row["process"], "time": row["complete_time"],
                     "f": row["f"], "type": row["type"], "invoke_index": row["invoke_index"]}],
            "explanation": (f"process {row['process']}'s {row['f']} (op {row['complete_index']}, "
                            f"{row['complete_time'] / 1e9:.3f} s) ended with {OUT_OF_ORDER}, but no write to "
                            f"key{'s' if len(keys) > 1 else ''} {', '.join(map(str, keys))} was lost near it")}


def _duplicate_example(row) -> dict:
    return {"key": row["key"], "value": row["value"], "values": [row["value"]],
            "explanation": (f"value {row['value']} appears more than once in key {row['key']}, which only "
                            f"idempotent producers wrote")}


@dataclass(frozen=True)
class ProducerChecks:
    """Settings of the producer checks."""

    window_s: float = OOS_WINDOW_S
    max_examples: int = MAX_EXAMPLES


def analyze(ops: DataFrame, checks: ProducerChecks, lost: DataFrame, idempotent_dups: DataFrame) -> dict:
    """The producer part of a queue history's results:
    {"stats": {"producer_errors": ..., "out_of_order_sequence": ...}, "anomalies": {...}}.
    `ops`: history_io.pair_operations rows; `lost`: (key, value, start, end)
    of the queue checker's lost writes; `idempotent_dups`: (key, value) of
    its duplicates on keys that only idempotent producers wrote."""
    window_s = checks.window_s
    stats = {"producer_errors": error_counts(ops),
             "out_of_order_sequence": {"total": 0, "with_lost_write": 0, "spurious": 0, "window_s": window_s}}
    anomalies = {}
    if stats["producer_errors"].get(OUT_OF_ORDER):
        oos = out_of_order_without_loss(ops, lost, window_s).persist()
        try:
            spurious = oos.filter(F.col("near_lost") == 0).orderBy("complete_index")
            oos_total, spurious_total = oos.count(), spurious.count()
            stats["out_of_order_sequence"].update(total=oos_total, with_lost_write=oos_total - spurious_total,
                                                  spurious=spurious_total)
            if spurious_total:
                anomalies[SPURIOUS_OOS] = {"count": spurious_total, "examples": [
                    _oos_example(r) for r in spurious.limit(checks.max_examples).collect()]}
        finally:
            oos.unpersist()
    dups = idempotent_dups.orderBy("key", "value").limit(checks.max_examples).collect()
    if dups:
        anomalies[IDEMPOTENT_DUPLICATE] = {"count": idempotent_dups.count(),
                                           "examples": [_duplicate_example(r) for r in dups]}
    return {"stats": stats, "anomalies": anomalies}


def merge_into(results: dict, producer: dict, allow=(), forbid=()) -> dict:
    """Adds analyze()'s stats and anomalies to a queue checker's results.
    idempotent-duplicate is bad (it is a duplicate); spurious-out-of-order-sequence
    is reported but allowed (no data was harmed) unless forbidden."""
    results.setdefault("stats", {}).update(producer["stats"])
    results.setdefault("anomalies", {}).update(producer["anomalies"])
    results["anomaly_types"] = sorted(results["anomalies"])
    allowed = (set(ALLOWED_BY_DEFAULT) | set(allow)) - set(forbid)
    new_bad = [t for t in producer["anomalies"] if t not in allowed]
    results["bad_anomaly_types"] = sorted(set(results.get("bad_anomaly_types", [])) | set(new_bad))
    if new_bad:
        results["valid"] = False
    return results
