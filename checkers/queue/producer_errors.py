"""Producer errors and what they say about the log (Spark or in-process).

Three results:

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
pass (checkers/queue/bucket.py); this module relates them to producer
errors. Two ways to gather, one way to report (`producer_results`):
`analyze` in Spark (the bucket pass's rows stay there; sends are parsed
again only for the (few) operations that ended with
OUT_OF_ORDER_SEQUENCE_NUMBER), `analyze_local` on pandas frames (the
in-process engine, checkers/queue/local.py, which hands over its send
records).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pandas as pd

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

PRODUCER_OPS = ("send", "txn")
OUT_OF_ORDER = "OUT_OF_ORDER_SEQUENCE_NUMBER"
# the broker's OUT_OF_ORDER_SEQUENCE_NUMBER as each client names it in the history's
# `error` (docs/history-format.md, "Error names"): Kafka's name (librdkafka, franz-go,
# Sarama, kafkajs), then the exception classes of the Java client, kafka-python and aiokafka
OUT_OF_ORDER_NAMES = frozenset({OUT_OF_ORDER, "OutOfOrderSequenceException", "OutOfOrderSequenceNumberError",
                                "OutOfOrderSequenceNumber"})
SPURIOUS_OOS = "spurious-out-of-order-sequence"
IDEMPOTENT_DUPLICATE = "idempotent-duplicate"
OOS_WINDOW_S = 10.0
MAX_EXAMPLES = 8
NO_END = 2 ** 62        # the end of an operation that never completed


@dataclass(frozen=True)
class ProducerChecks:
    """Settings of the producer checks."""

    window_s: float = OOS_WINDOW_S
    max_examples: int = MAX_EXAMPLES


# ---------------------------------------------------------------- results (both engines)

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


def producer_results(checks: ProducerChecks, errors: dict[str, int], oos: tuple | None,
                     dup_count: int, first_dups: list) -> dict:
    """{"stats": {"producer_errors": ..., "out_of_order_sequence": ...}, "anomalies": {...}}
    from what an engine gathered: `errors` (error_counts), `oos` = (total,
    spurious count, the first max_examples spurious rows by completion
    index) when some operation ended with OUT_OF_ORDER_SEQUENCE_NUMBER, and
    the idempotent duplicates (count, first max_examples rows by key, value).
    Rows are mappings with out_of_order_without_loss's / (key, value) fields."""
    stats = {"producer_errors": errors,
             "out_of_order_sequence": {"total": 0, "with_lost_write": 0, "spurious": 0,
                                       "window_s": checks.window_s}}
    anomalies = {}
    if oos is not None:
        total, spurious, first = oos
        stats["out_of_order_sequence"].update(total=total, with_lost_write=total - spurious, spurious=spurious)
        if spurious:
            anomalies[SPURIOUS_OOS] = {"count": spurious, "examples": [_oos_example(r) for r in first]}
    if first_dups:
        anomalies[IDEMPOTENT_DUPLICATE] = {"count": dup_count,
                                           "examples": [_duplicate_example(r) for r in first_dups]}
    return {"stats": stats, "anomalies": anomalies}


# ---------------------------------------------------------------- Spark

def producer_sends(ops: DataFrame) -> DataFrame:
    """history.queue_mops_spark.sends (one row per send micro-op of a send/txn operation) with
    the operation's error name. An operation with no completion ends at
    +infinity (`end_time`)."""
    from checkers.history import queue_mops_spark as queue_mops  # loads pyspark: only when needed
    from pyspark.sql import functions as F  # loads pyspark: only when needed

    return (queue_mops.sends(ops, extra=("error_name", "error_message"))
            .withColumn("end_time", F.coalesce("complete_time", F.lit(NO_END).cast("long"))))


def error_counts(ops: DataFrame) -> dict[str, int]:
    """{error name: number of send/txn operations it ended}, most frequent first."""
    from pyspark.sql import functions as F  # loads pyspark: only when needed
    rows = (ops.filter(F.col("f").isin(*PRODUCER_OPS) & F.col("error_name").isNotNull())
               .groupBy("error_name").count()
               .orderBy(F.desc("count"), "error_name").collect())
    return {r["error_name"]: r["count"] for r in rows}


def out_of_order_without_loss(ops: DataFrame, lost_writes: DataFrame,
                              window_s: float = OOS_WINDOW_S) -> DataFrame:
    """Operations that ended with OUT_OF_ORDER_SEQUENCE_NUMBER (by any client's name), one row each,
    with `near_lost` = how many lost writes on their keys fall in the window.
    `lost_writes`: (key, value, start, end) of the queue checker's lost writes."""
    from pyspark.sql import functions as F  # loads pyspark: only when needed
    window_ns = int(window_s * 1e9)
    oos = producer_sends(ops.filter(F.col("error_name").isin(*OUT_OF_ORDER_NAMES)))
    lost = lost_writes.select(F.col("key").alias("lost_key"), F.col("start").alias("lost_start"),
                              F.coalesce("end", F.lit(NO_END).cast("long")).alias("lost_end"))
    near = ((F.col("key") == F.col("lost_key"))
            & (F.col("lost_end") >= F.col("invoke_time") - window_ns)
            & (F.col("lost_start") <= F.col("end_time") + window_ns))
    return (oos.join(lost, near, "left")
               .groupBy("process", "f", "type", "invoke_index", "invoke_time", "complete_index",
                        "complete_time", "error_message")
               .agg(F.sort_array(F.collect_set("key")).alias("keys"),
                    F.count("lost_key").alias("near_lost")))


def analyze(ops: DataFrame, checks: ProducerChecks, lost: DataFrame, idempotent_dups: DataFrame) -> dict:
    """The producer part of a queue history's results, in Spark.
    `ops`: history.spark_read.pair_operations rows; `lost`: (key, value, start, end)
    of the queue checker's lost writes; `idempotent_dups`: (key, value) of
    its duplicates on keys that only idempotent producers wrote."""
    from pyspark.sql import functions as F  # loads pyspark: only when needed
    errors = error_counts(ops)
    oos_found = None
    if OUT_OF_ORDER_NAMES & errors.keys():
        oos = out_of_order_without_loss(ops, lost, checks.window_s).persist()
        try:
            spurious = oos.filter(F.col("near_lost") == 0).orderBy("complete_index")
            oos_found = (oos.count(), spurious.count(), spurious.limit(checks.max_examples).collect())
        finally:
            oos.unpersist()
    dups = idempotent_dups.orderBy("key", "value").limit(checks.max_examples).collect()
    return producer_results(checks, errors, oos_found, idempotent_dups.count() if dups else 0, dups)


# ---------------------------------------------------------------- in-process

def _none(x):
    return None if x is None or x is pd.NA or (isinstance(x, float) and x != x) else x


def analyze_local(ops: pd.DataFrame, sends: pd.DataFrame, checks: ProducerChecks, lost: pd.DataFrame,
                  idempotent_dups: pd.DataFrame, null_key: int | None = None) -> dict:
    """`analyze` on pandas frames: `ops` (history.read.ParsedHistory.ops
    columns), `sends` their send micro-op records (op, key: queue_frame
    columns; `null_key` marks a key that was not an integer), `lost`
    (key, value, start, end) and `idempotent_dups` (key, value) as the
    bucket pass found them."""
    producing = ops[ops["f"].isin(PRODUCER_OPS) & ops["error_name"].notna()]
    counted = producing["error_name"].value_counts()
    errors = {name: int(n) for name, n in sorted(counted.items(), key=lambda kv: (-kv[1], kv[0]))}
    oos_found = None
    if OUT_OF_ORDER_NAMES & errors.keys():
        erring = producing[producing["error_name"].isin(OUT_OF_ORDER_NAMES)]
        rows = _out_of_order_rows(erring, sends, lost, checks.window_s, null_key)
        spurious = sorted((r for r in rows if r["near_lost"] == 0),
                          key=lambda r: (r["complete_index"] is not None, r["complete_index"] or 0))
        oos_found = (len(rows), len(spurious), spurious[:checks.max_examples])
    dups = idempotent_dups.sort_values(["key", "value"])
    first = [{"key": int(k), "value": int(v)} for k, v in
             zip(dups["key"][:checks.max_examples], dups["value"][:checks.max_examples])]
    return producer_results(checks, errors, oos_found, len(dups), first)


def _out_of_order_rows(erring: pd.DataFrame, sends: pd.DataFrame, lost: pd.DataFrame, window_s: float,
                       null_key: int | None) -> list[dict]:
    """out_of_order_without_loss's rows, for the operations in `erring`."""
    window_ns = int(window_s * 1e9)
    mops = sends.loc[sends["op"].isin(erring["invoke_index"]), ["op", "key"]]
    keyed = mops[mops["key"] != null_key] if null_key is not None else mops
    lost_writes = pd.DataFrame({"key": lost["key"].to_numpy("int64"), "start": lost["start"].to_numpy("int64"),
                                "end": [NO_END if _none(e) is None else int(e) for e in lost["end"]]})
    times = pd.DataFrame({"op": erring["invoke_index"].to_numpy("int64"),
                          "invoked": erring["invoke_time"].to_numpy("int64"),
                          "ended": [NO_END if _none(t) is None else int(t) for t in erring["complete_time"]]})
    near = keyed.merge(lost_writes, on="key").merge(times, on="op")
    hit = (near["end"] >= near["invoked"] - window_ns) & (near["start"] <= near["ended"] + window_ns)
    near_lost = near.loc[hit, "op"].value_counts()
    keys = keyed.groupby("op")["key"].agg(lambda k: sorted({int(x) for x in k}))
    rows = []
    for r in erring[erring["invoke_index"].isin(mops["op"])].itertuples(index=False):
        op = int(r.invoke_index)
        rows.append({"process": int(r.process), "f": r.f, "type": r.type, "invoke_index": op,
                     "invoke_time": int(r.invoke_time), "complete_index": _int_or_none(r.complete_index),
                     "complete_time": _int_or_none(r.complete_time), "error_message": _none(r.error_message),
                     "keys": keys.get(op, []), "near_lost": int(near_lost.get(op, 0))})
    return rows


def _int_or_none(x) -> int | None:
    x = _none(x)
    return None if x is None else int(x)
