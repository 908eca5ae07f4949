"""What each key's log holds: offset -> value, as seen through acknowledged
sends and through polls, and the anomalies in that mapping.

`observations` is the one table the other queue detectors build on: every
(key, offset, value) someone saw, with `idx`, the offset's position in the
key's *dense* order (the offsets actually known to hold values, so gaps left
by transaction markers or aborted batches do not count as skips).
"""
from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from checkers.anomalies import anomaly_rows, first_ops, op_struct
from checkers.queue_mops import OP_FIELDS

OBS_COLUMNS = ("op_id", *OP_FIELDS, "key", "offset", "value", "mop_pos", "poll_pos", "kind")


def observations(sends: DataFrame, reads: DataFrame) -> DataFrame:
    """Sends with a known offset (not failed) and poll results, each with
    `kind` ("send"/"poll") and `idx` (dense rank of the offset in its key)."""
    sent = (sends.filter(F.col("offset").isNotNull() & (F.col("type") != "fail"))
            .withColumn("poll_pos", F.lit(None).cast("int"))
            .withColumn("kind", F.lit("send")))
    polled = reads.withColumn("kind", F.lit("poll"))
    both = sent.select(*OBS_COLUMNS).unionByName(polled.select(*OBS_COLUMNS))
    return both.withColumn("idx", F.dense_rank().over(Window.partitionBy("key").orderBy("offset")))


def _seen_by(obs: DataFrame, groups: DataFrame, on: list[str]) -> DataFrame:
    """The first few ops that saw each group of `groups` (joined on `on`)."""
    op = op_struct(offset=F.col("offset"), value=F.col("value"))
    return (obs.join(groups.select(*on), on)
            .groupBy(*on).agg(first_ops(F.collect_list(op)).alias("ops")))


def inconsistent_offsets(obs: DataFrame) -> DataFrame:
    """One offset of a key holding two or more different values."""
    distinct = obs.select("key", "offset", "value").distinct()
    bad = (distinct.groupBy("key", "offset")
           .agg(F.array_sort(F.collect_list("value")).alias("values"))
           .filter(F.size("values") > 1))
    found = bad.join(_seen_by(obs, bad, ["key", "offset"]), ["key", "offset"])
    return anomaly_rows("inconsistent-offsets", found, F.col("key"), F.col("offset"),
                        key=F.col("key"), offsets=F.array("offset"), values=F.col("values"), ops=F.col("ops"))


def duplicates(obs: DataFrame) -> DataFrame:
    """One value appearing at two or more offsets of a key."""
    distinct = obs.select("key", "offset", "value").distinct()
    bad = (distinct.groupBy("key", "value")
           .agg(F.array_sort(F.collect_list("offset")).alias("offsets"))
           .filter(F.size("offsets") > 1))
    found = bad.join(_seen_by(obs, bad, ["key", "value"]), ["key", "value"])
    return anomaly_rows("duplicate", found, F.col("key"), F.col("offsets").getItem(0),
                        key=F.col("key"), offsets=F.col("offsets"), values=F.array("value"), ops=F.col("ops"))
