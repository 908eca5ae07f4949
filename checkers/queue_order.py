"""Order anomalies of one process on one key, in the key's dense offset order
(`idx` from checkers/queue_versions.observations).

Between two consecutive reads of a key by one process, the next read should
start right after where the last one ended: delta = idx(first of next) -
idx(last of previous) is 1. delta > 1 skipped offsets (poll-skip), delta < 1
went back (nonmonotonic-poll). Consecutive reads inside one operation give the
int- variants. An assign or subscribe between two operations resets the
expectation. Sends: within one operation offsets rise by one (else
int-send-skip / int-nonmonotonic-send); across operations they rise
(else nonmonotonic-send).
"""
from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from checkers.anomalies import anomaly_rows, op_struct, union_all
from checkers.queue_mops import OP_FIELDS


def _position() -> Column:
    return F.struct("idx", "offset", "value")


@dataclass(frozen=True)
class OrderNames:
    skip: str | None           # across ops, delta > 1
    nonmonotonic: str          # across ops, delta < 1
    int_skip: str
    int_nonmonotonic: str


POLL_NAMES = OrderNames("poll-skip", "nonmonotonic-poll", "int-poll-skip", "int-nonmonotonic-poll")
SEND_NAMES = OrderNames(None, "nonmonotonic-send", "int-send-skip", "int-nonmonotonic-send")


def _pair_rows(kind: str, df: DataFrame, prev: str, this: str, ops: Column) -> DataFrame:
    """An order anomaly between position structs `prev` and `this`."""
    return anomaly_rows(
        kind, df, F.col("key"), F.col(this).getField("offset"),
        key=F.col("key"),
        offsets=F.array(F.col(prev).getField("offset"), F.col(this).getField("offset")),
        values=F.array(F.col(prev).getField("value"), F.col(this).getField("value")),
        ops=ops, delta=F.col("delta"))


def _classify(kind_if_skip: str | None, kind_if_back: str, df: DataFrame, prev: str, this: str,
              ops: Column) -> list[DataFrame]:
    found = []
    if kind_if_skip:
        found.append(_pair_rows(kind_if_skip, df.filter(F.col("delta") > 1), prev, this, ops))
    found.append(_pair_rows(kind_if_back, df.filter(F.col("delta") < 1), prev, this, ops))
    return found


def _order() -> Column:
    return F.col("mop_pos").cast("long") * (1 << 31) + F.coalesce(F.col("poll_pos"), F.lit(0))


def within_ops(rows: DataFrame, names: OrderNames) -> list[DataFrame]:
    w = Window.partitionBy("op_id", "key").orderBy(_order())
    steps = (rows.select("*", _position().alias("this"), F.lag(_position()).over(w).alias("prev"))
             .filter(F.col("prev").isNotNull())
             .withColumn("delta", F.col("this.idx") - F.col("prev.idx")))
    return _classify(names.int_skip, names.int_nonmonotonic, steps, "prev", "this", F.array(op_struct()))


def per_op(rows: DataFrame) -> DataFrame:
    """One row per (op, key): where the op's reads/sends of the key began and ended."""
    return (rows.groupBy("op_id", "key", *OP_FIELDS)
            .agg(F.min_by(_position(), _order()).alias("first"),
                 F.max_by(_position(), _order()).alias("last")))


def with_epochs(summary: DataFrame, resets: DataFrame) -> DataFrame:
    """Number each op-key row with the count of assign/subscribe ops its
    process ran before it: reads compare only within one epoch."""
    marks = resets.select("op_id", "process", F.lit(1).alias("reset"))
    rows = summary.withColumn("reset", F.lit(0))
    both = rows.unionByName(marks, allowMissingColumns=True)
    w = (Window.partitionBy("process").orderBy("op_id", "reset")
         .rowsBetween(Window.unboundedPreceding, Window.currentRow))
    return both.withColumn("epoch", F.sum("reset").over(w)).filter(F.col("reset") == 0).drop("reset")


def across_ops(summary: DataFrame, names: OrderNames) -> list[DataFrame]:
    w = Window.partitionBy("process", "key").orderBy("op_id")
    this_op = op_struct()
    steps = (summary.select("*", this_op.alias("this_op"),
                            F.lag("last").over(w).alias("prev_last"),
                            F.lag(this_op).over(w).alias("prev_op"),
                            F.lag("epoch").over(w).alias("prev_epoch"))
             .filter(F.col("prev_last").isNotNull() & (F.col("prev_epoch") == F.col("epoch")))
             .withColumn("delta", F.col("first.idx") - F.col("prev_last.idx")))
    return _classify(names.skip, names.nonmonotonic, steps, "prev_last", "first",
                     F.array("prev_op", "this_op"))


def poll_order(obs: DataFrame, resets: DataFrame) -> DataFrame:
    polls = obs.filter(F.col("kind") == "poll")
    summary = with_epochs(per_op(polls), resets)
    return union_all(within_ops(polls, POLL_NAMES) + across_ops(summary, POLL_NAMES))


def send_order(obs: DataFrame) -> DataFrame:
    sends = obs.filter(F.col("kind") == "send")
    summary = per_op(sends).withColumn("epoch", F.lit(0))
    return union_all(within_ops(sends, SEND_NAMES) + across_ops(summary, SEND_NAMES))
