"""Anomalies about what happened to sends: lost-write, unseen, G1a
(aborted read) and precommitted-read.

Values are unique across the history, so a send and the polls that returned
it are joined on (key, value).
"""
from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from checkers.anomalies import anomaly_rows, op_struct
from checkers.queue_mops import OP_FIELDS


def _prefixed(df: DataFrame, prefix: str, keep: tuple[str, ...] = ("key", "value")) -> DataFrame:
    return df.select(*keep, *[F.col(c).alias(prefix + c) for c in df.columns if c not in keep])


def read_values(reads: DataFrame) -> DataFrame:
    """(key, value) of everything any poll returned, once each."""
    return reads.select("key", "value").distinct()


def unread_acknowledged(sends: DataFrame, reads: DataFrame) -> DataFrame:
    """ok sends that no poll ever returned. (An info send that someone read
    counts as acknowledged too, but it was read, so it is never here.)"""
    return sends.filter(F.col("type") == "ok").join(read_values(reads), ["key", "value"], "left_anti")


def lost_and_unseen(sends: DataFrame, reads: DataFrame) -> tuple[DataFrame, DataFrame]:
    """lost-write: an unread acknowledged send at or below the highest offset
    read on its key. unseen: the other unread acknowledged sends (beyond the
    last read offset, or of unknown offset): not lost yet, never seen."""
    highest = reads.groupBy("key").agg(F.max("offset").alias("max_read_offset"))
    unread = unread_acknowledged(sends, reads).join(highest, "key", "left")
    lost_here = F.col("offset").isNotNull() & (F.col("offset") <= F.col("max_read_offset"))
    fields = dict(key=F.col("key"), offsets=F.array_compact(F.array("offset")), values=F.array("value"),
                  ops=F.array(op_struct(offset=F.col("offset"), value=F.col("value"))),
                  max_read_offset=F.col("max_read_offset"))
    lost = anomaly_rows("lost-write", unread.filter(lost_here), F.col("key"), F.col("offset"), **fields)
    unseen = anomaly_rows("unseen", unread.filter(~F.coalesce(lost_here, F.lit(False))),
                          F.col("key"), F.col("complete_index"), **fields)
    return lost, unseen


def _reads_of_sends(sends: DataFrame, reads: DataFrame) -> DataFrame:
    """Each (reading op, key, value) once, joined to the send of that value;
    columns w_* for the writer and r_* for the reader."""
    readers = reads.groupBy("op_id", *OP_FIELDS, "key", "value").agg(F.min("offset").alias("offset"))
    return _prefixed(sends, "w_").join(_prefixed(readers, "r_"), ["key", "value"])


def _writer_reader_rows(kind: str, pairs: DataFrame) -> DataFrame:
    return anomaly_rows(kind, pairs, F.col("key"), F.col("r_complete_index"),
                        key=F.col("key"), offsets=F.array("r_offset"), values=F.array("value"),
                        ops=F.array(op_struct("w_", role=F.lit("send")), op_struct("r_", role=F.lit("poll"))))


def aborted_reads(sends: DataFrame, reads: DataFrame) -> DataFrame:
    """G1a: a poll returned a value whose send failed."""
    pairs = _reads_of_sends(sends.filter(F.col("type") == "fail"), reads)
    return _writer_reader_rows("G1a", pairs)


def precommitted_reads(sends: DataFrame, reads: DataFrame) -> DataFrame:
    """precommitted-read: a transaction polled its own send before it committed."""
    pairs = _reads_of_sends(sends, reads).filter(F.col("w_op_id") == F.col("r_op_id"))
    return _writer_reader_rows("precommitted-read", pairs)

