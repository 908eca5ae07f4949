"""List-append in Spark: micro-ops, version orders, and ww/wr/rw edges.

Frames (all Spark, nothing collected here):

- `txns(ops)`: one row per txn operation (ok, info, fail) with its micro-ops
  parsed: `mops array<struct<f, key, value, read array<string>>>`. Keys and
  elements are kept as their JSON text ("3"), so any JSON scalar works.
- `appends`: (writer, wtype, key, value, last): every append and whether it
  is the writer's last append to that key.
- `reads`: (reader, pos, key, read) for reads of ok txns.
- `versions`: per key the longest read (the version order) and whether every
  read of the key is a prefix of it (`compatible`).
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window, functions as F
from pyspark.sql.types import ArrayType, StringType

from checkers.graph_shrink import conform_edges
from checkers.history_io import HistoryError, Problem

MOP_JSON = ArrayType(ArrayType(StringType()))
LIST_JSON = ArrayType(StringType())



class BadMicroOp(HistoryError):
    """A txn whose value is not a list of ["append", k, v] / ["r", k, list]
    (a HistoryError, so callers treat it as bad input)."""


def txns(ops: DataFrame) -> DataFrame:
    """Txn ops with id (history index of the completion, else of the invoke),
    their micro-ops parsed (completion value when ok, invoke value else)."""
    value = F.when(F.col("type") == "ok", F.col("complete_value")).otherwise(F.col("invoke_value"))
    raw = F.from_json(value, MOP_JSON)
    mop = lambda m: F.struct(  # noqa: E731
        m[0].alias("f"), m[1].alias("key"),
        F.when(m[0] == "append", m[2]).alias("value"),
        F.when(m[0] == "r", F.from_json(m[2], LIST_JSON)).alias("read"),
        (F.size(m) != 3).alias("_short"))
    return (ops.where(F.col("f") == "txn")
            .select(F.coalesce("complete_index", "invoke_index").alias("id"), "process", "type", "invoke_index", "invoke_time",
                    "complete_index", "complete_time", "f", value.alias("_raw"),
                    F.transform(raw, mop).alias("mops")))


def raise_bad_mops(txn: DataFrame) -> None:
    """Raise BadMicroOp naming the first few offending ops (one small job)."""
    bad_mop = F.exists("mops", lambda m: ~m["f"].isin("append", "r") | m["key"].isNull()
                       | m["_short"] | ((m["f"] == "r") & m["read"].isNull()
                                        & (F.col("type") == "ok")))
    bad = txn.where(F.col("mops").isNull() & F.col("_raw").isNotNull() | bad_mop)
    rows = bad.orderBy("invoke_index").select("invoke_index", "process", "_raw").limit(3).collect()
    if rows:
        what = ('txn value must be a list of ["append", key, value] / ["r", key, null|list], '
                "not {}")
        raise BadMicroOp([Problem(f"history index {r.invoke_index} (process {r.process})", None,
                                  what.format(r._raw[:120])) for r in rows], bad.count())


def exploded(txn: DataFrame) -> DataFrame:
    return txn.select("id", "type", F.posexplode("mops").alias("pos", "m")).select(
        "id", "type", "pos", "m.f", "m.key", "m.value", "m.read")


def appends(mops: DataFrame) -> DataFrame:
    """Every append, with whether it is its writer's last append to the key."""
    by_writer_key = Window.partitionBy("id", "key")
    a = mops.where("f = 'append'")
    return a.select(F.col("id").alias("writer"), F.col("type").alias("wtype"), "key", "value",
                    (F.col("pos") == F.max("pos").over(by_writer_key)).alias("last"))


def reads(mops: DataFrame) -> DataFrame:
    return mops.where("f = 'r' AND type = 'ok' AND read IS NOT NULL").select(
        F.col("id").alias("reader"), "pos", "key", "read")


def versions(read: DataFrame) -> DataFrame:
    """(key, order, compatible): the longest read, and whether all reads of
    the key are prefixes of it."""
    longest = read.groupBy("key").agg(F.max_by("read", F.size("read")).alias("order"))
    prefix = F.slice("order", 1, F.size("read")) == F.col("read")
    return (read.join(longest, "key").groupBy("key", "order")
            .agg(F.min(prefix.cast("int")).cast("boolean").alias("compatible")))


def writer_of(df: DataFrame, value: Column, suffix: str, writers: DataFrame) -> DataFrame:
    """Join each row's `value` to its append (columns renamed with suffix)."""
    w = writers.select(*[F.col(c).alias(c + suffix) for c in writers.columns])
    return df.join(w, (value == F.col("value" + suffix)) & (F.col("key") == F.col("key" + suffix)),
                   "left")


def elements(version: DataFrame, writers: DataFrame) -> DataFrame:
    """(key, i, value, writer, wtype) along each compatible version order."""
    el = version.where("compatible").select("key", F.posexplode("order").alias("i", "value"))
    return writer_of(el, F.col("value"), "_w", writers).select(
        "key", "i", "value", F.col("writer_w").alias("writer"), F.col("wtype_w").alias("wtype"))


def _edges(df: DataFrame, kind: str) -> DataFrame:
    return conform_edges(df.withColumn("kind", F.lit(kind)))


def ww_edges(element: DataFrame) -> DataFrame:
    """writer of order[i] -> writer of order[i+1] (both committed or info)."""
    a, b = element.alias("a"), element.alias("b")
    pairs = a.join(b, (F.col("a.key") == F.col("b.key")) & (F.col("b.i") == F.col("a.i") + 1))
    return _edges(pairs.where("a.wtype != 'fail' AND b.wtype != 'fail' AND a.writer != b.writer")
                  .select(F.col("a.writer").alias("src"), F.col("b.writer").alias("dst"),
                          F.col("a.key").alias("key"), F.col("b.value").alias("value"),
                          F.col("a.value").alias("prev")), "ww")


def wr_edges(read: DataFrame, writers: DataFrame) -> DataFrame:
    """writer of a read's last element -> the reader."""
    last = read.where(F.size("read") > 0).withColumn("last_value", F.try_element_at("read", F.lit(-1)))
    joined = writer_of(last, F.col("last_value"), "_w", writers)
    return _edges(joined.where("wtype_w != 'fail' AND writer_w != reader").select(
        F.col("writer_w").alias("src"), F.col("reader").alias("dst"), "key",
        F.col("last_value").alias("value")), "wr")


def rw_edges(read: DataFrame, element: DataFrame) -> DataFrame:
    """reader -> writer of the element right after what it read."""
    nxt = read.select("reader", "key", F.size("read").alias("i"),
                      F.try_element_at("read", F.lit(-1)).alias("prev"))
    joined = nxt.join(element, ["key", "i"])
    return _edges(joined.where("wtype != 'fail' AND writer != reader").select(
        F.col("reader").alias("src"), F.col("writer").alias("dst"), "key", "value", "prev"), "rw")
