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


def _conflicts(obs: DataFrame, one: str, many: str) -> DataFrame:
    """Groups of (key, `one`) observed with two or more distinct `many`
    (sorted in column `many`s), with the first ops that saw them."""
    distinct = obs.select("key", "offset", "value").distinct()
    bad = (distinct.groupBy("key", one)
           .agg(F.array_sort(F.collect_list(many)).alias(many + "s"))
           .filter(F.size(many + "s") > 1))
    return bad.join(_seen_by(obs, bad, ["key", one]), ["key", one])


def inconsistent_offsets(obs: DataFrame) -> DataFrame:
    """One offset of a key holding two or more different values."""
    found = _conflicts(obs, "offset", "value")
    return anomaly_rows("inconsistent-offsets", found, F.col("key"), F.col("offset"),
                        key=F.col("key"), offsets=F.array("offset"), values=F.col("values"), ops=F.col("ops"))


def duplicates(obs: DataFrame) -> DataFrame:
    """One value appearing at two or more offsets of a key."""
    found = _conflicts(obs, "value", "offset")
    return anomaly_rows("duplicate", found, F.col("key"), F.col("offsets").getItem(0),
                        key=F.col("key"), offsets=F.col("offsets"), values=F.array("value"), ops=F.col("ops"))
