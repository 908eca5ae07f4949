"""Unseen sends over time, for a plot: per key, how many acknowledged sends
had not yet been returned by any poll, bucketed to at most MAX_BUCKETS times.

A send counts from its acknowledgement until the first poll that returned it
completed (or for ever, when none did). Computed as +1/-1 events summed per
(key, bucket) in Spark; only the top keys' bucket counts reach the driver.
"""
from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

MAX_BUCKETS = 200
TOP_KEYS = 20


def bucket_width(end_time: int, buckets: int = MAX_BUCKETS) -> int:
    return max(1, -(-(end_time + 1) // buckets))


def unseen_series(sends: DataFrame, reads: DataFrame, end_time: int) -> dict:
    """{"times": [ns at the end of each bucket], "keys": {"<key>": [counts]}}."""
    width = bucket_width(end_time)
    buckets = -(-(end_time + 1) // width)
    first_read = reads.groupBy("key", "value").agg(F.min("complete_time").alias("read_time"))
    acked = (sends.filter(F.col("type") == "ok").select("key", "value", F.col("complete_time").alias("ack_time"))
             .join(first_read, ["key", "value"], "left")
             .filter(F.col("read_time").isNull() | (F.col("read_time") > F.col("ack_time"))))
    bucket = lambda t: F.floor(F.col(t) / width).cast("int")  # noqa: E731
    events = (acked.select("key", bucket("ack_time").alias("bucket"), F.lit(1).alias("delta"))
              .unionByName(acked.filter(F.col("read_time").isNotNull())
                           .select("key", bucket("read_time").alias("bucket"), F.lit(-1).alias("delta"))))
    per_bucket = events.groupBy("key", "bucket").agg(F.sum("delta").alias("delta"))
    running = per_bucket.withColumn(
        "count", F.sum("delta").over(Window.partitionBy("key").orderBy("bucket")
                                     .rowsBetween(Window.unboundedPreceding, Window.currentRow)))
    top = (running.groupBy("key").agg(F.max("count").alias("peak"))
           .filter(F.col("peak") > 0).orderBy(F.desc("peak"), "key").limit(TOP_KEYS))
    rows = running.join(top.select("key"), "key").select("key", "bucket", "count").collect()
    series: dict[str, list[int]] = {}
    changes: dict[str, dict[int, int]] = {}
    for row in rows:
        changes.setdefault(str(row["key"]), {})[row["bucket"]] = row["count"]
    for key, at in changes.items():
        counts, current = [], 0
        for b in range(buckets):
            current = at.get(b, current)
            counts.append(current)
        series[key] = counts
    return {"times": [(b + 1) * width for b in range(buckets)], "keys": series}
