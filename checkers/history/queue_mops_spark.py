"""Queue micro-operations: the sends and poll results inside each operation.

Parses the raw JSON `invoke_value`/`complete_value` of paired operations
(checkers/history/spark_read.pair_operations) with from_json only, no Python UDFs:
a micro-op is read as array<string>, whose string elements keep nested JSON
as text (`[41,17]`, `{"3": [[40,16]]}`), parsed again with typed schemas.

    sends: op_id, process, f, type, key, value, offset (null if unknown), mop_pos,
           invoke_index, invoke_time, complete_index, complete_time, single_key
           (the op is a `send` whose sends all go to one key)
    reads: one row per (offset, value) returned by a poll of an ok operation,
           the same op columns plus key, offset, value, mop_pos, poll_pos
"""
from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from checkers.history.queue_records import TYPES
from checkers.history.spark_read import ValueCheck
from checkers.history.spark_read import array_item as _item

QUEUE_FS = ("send", "poll", "txn")
MOPS = T.ArrayType(T.ArrayType(T.StringType()))
POLL_RESULT = T.MapType(T.StringType(), T.ArrayType(T.ArrayType(T.LongType())))
SEND_RESULT = T.ArrayType(T.LongType())

OP_FIELDS = ("process", "f", "type", "invoke_index", "invoke_time", "complete_index", "complete_time")


def _op_columns() -> list[Column]:
    return [F.col("invoke_index").alias("op_id")] + [F.col(c) for c in OP_FIELDS]


def _long(text: Column) -> Column:
    """A JSON integer kept as text -> long (null when it is not one)."""
    return text.cast("long")


def sends(ops: DataFrame, extra: tuple[str, ...] = ()) -> DataFrame:
    """Every send micro-op of send/txn operations, whatever their outcome.
    Key and value come from the invoke, the offset from an ok completion.
    `extra` op columns are passed through."""
    parsed = (ops.filter(F.col("f").isin("send", "txn"))
              .select(*_op_columns(), *extra, F.from_json("complete_value", MOPS).alias("_done"),
                      F.from_json("invoke_value", MOPS).alias("_mops")))
    keys = F.array_distinct(F.transform(F.filter("_mops", lambda m: _item(m, 0) == "send"),
                                        lambda m: _item(m, 1)))
    exploded = (parsed.select(*_op_columns(), *extra, "_done",
                              ((F.col("f") == "send") & (F.size(keys) == 1)).alias("single_key"),
                              F.posexplode("_mops").alias("mop_pos", "_mop"))
                .filter(_item(F.col("_mop"), 0) == "send"))
    done = F.get("_done", F.col("mop_pos"))  # null when out of range
    result = F.from_json(_item(done, 2), SEND_RESULT)
    return exploded.select(
        "op_id", *OP_FIELDS, *extra, "mop_pos", "single_key",
        _long(_item(F.col("_mop"), 1)).alias("key"),
        _long(_item(F.col("_mop"), 2)).alias("value"),
        F.when((F.col("type") == "ok") & (_item(done, 0) == "send"), _item(result, 0)).alias("offset"),
    )


def reads(ops: DataFrame) -> DataFrame:
    """Every (key, offset, value) returned by a poll micro-op of an ok
    poll/txn operation, in the order the poll returned them (`poll_pos`)."""
    polls = (ops.filter((F.col("type") == "ok") & F.col("f").isin("poll", "txn"))
             .select(*_op_columns(), F.posexplode(F.from_json("complete_value", MOPS)).alias("mop_pos", "_mop"))
             .filter(_item(F.col("_mop"), 0) == "poll"))
    by_key = polls.select("op_id", *OP_FIELDS, "mop_pos",
                          F.explode(F.from_json(_item(F.col("_mop"), 1), POLL_RESULT)).alias("_key", "_pairs"))
    pairs = by_key.select("op_id", *OP_FIELDS, "mop_pos", _long(F.col("_key")).alias("key"),
                          F.posexplode("_pairs").alias("poll_pos", "_pair"))
    return pairs.select("op_id", *OP_FIELDS, "mop_pos", "key",
                        _item(F.col("_pair"), 0).alias("offset"),
                        _item(F.col("_pair"), 1).alias("value"), "poll_pos")


def resets(ops: DataFrame) -> DataFrame:
    """assign/subscribe operations (op_id, process, f): they reset a
    process's expected poll position."""
    return ops.filter(F.col("f").isin("assign", "subscribe")).select(*_op_columns())


def holds(ops: DataFrame) -> DataFrame:
    """One row per distinct key each assign/subscribe lists (its completion's
    value, else its invoke's): op columns, key (long), start (the offset its
    completion's `starts` recorded for the key, else null)."""
    listed = F.coalesce(F.from_json("complete_value", KEYS), F.from_json("invoke_value", KEYS))
    starts = F.from_json("starts", STARTS) if "starts" in ops.columns else F.lit(None).cast(STARTS)
    exploded = (ops.filter(F.col("f").isin("assign", "subscribe"))
                .select(*_op_columns(), starts.alias("_starts"), F.explode(listed).alias("_key"))
                .select(*_op_columns(), "_starts", _long(F.col("_key")).alias("key"))
                .filter(F.col("key").isNotNull())
                .dropDuplicates(["op_id", "key"]))
    return exploded.select(*_op_columns(), "key",
                           F.try_element_at("_starts", F.col("key").cast("string")).alias("start"))


def rebalance_starts(ops: DataFrame) -> DataFrame:
    """One row per key a completed poll/txn's `rebalance_log` names (queue_records
    .evidence_logs and .rebalance_starts, in pandas): op columns, key (long),
    start. The start is the one the key's last entry recorded, where it is
    evidence for the op's own polls (an ok op with one poll micro-op whose
    process's previous poll/txn, if any, was ok; the entry an "assigned" one
    naming it), else null: the key was moved, and an earlier start no longer
    stands."""
    from pyspark.sql import Window  # the only window here: imported where used

    polling = ops.filter(F.col("f").isin("poll", "txn"))
    previous = F.lag(F.coalesce(F.col("type"), F.lit(""))).over(
        Window.partitionBy("process").orderBy("invoke_index"))
    one_poll = F.size(F.filter(F.from_json("invoke_value", MOPS), lambda m: _item(m, 0) == "poll")) == 1
    evidence = ((F.col("type") == "ok") & F.coalesce(F.col("_previous") == "ok", F.lit(True))
                & F.coalesce(one_poll, F.lit(False)))
    logged = (polling.select(*_op_columns(), "rebalance_log", "invoke_value", previous.alias("_previous"))
              .filter(F.col("type").isin(*TYPES) & F.col("rebalance_log").isNotNull())
              .withColumn("_evidence", evidence))
    entries = logged.select(*_op_columns(), "_evidence",
                            F.posexplode(F.from_json("rebalance_log", MOPS)).alias("_at", "_entry"))
    keyed = (entries.select(*_op_columns(), "_evidence", "_at", "_entry",
                            F.explode(F.from_json(_item(F.col("_entry"), 1), KEYS)).alias("_key"))
             .withColumn("key", _long(F.col("_key"))))
    started = F.when(F.col("_evidence") & (_item(F.col("_entry"), 0) == "assigned"), F.try_element_at(
        F.from_json(_item(F.col("_entry"), 2), STARTS), F.col("key").cast("string")))
    return (keyed.filter(F.col("key").isNotNull())
            .groupBy("op_id", *OP_FIELDS, "key").agg(F.max_by(started, F.col("_at")).alias("start")))

KEYS = T.ArrayType(T.StringType())
STARTS = T.MapType(T.StringType(), T.LongType())
INT = r"^-?[0-9]+$"
SEND_RESULT_TEXT = r"^\[\s*(null|-?[0-9]+)\s*,\s*-?[0-9]+\s*\]$"


PARSED = "_mops"


def value_check() -> ValueCheck:
    """For a raw history event (history.spark_read.load_history columns): what is
    wrong with its queue micro-ops, or null. Run with the row checks, so a
    bad micro-op is reported by file and line instead of becoming a null.
    The micro-ops are parsed once, into PARSED, for all the conditions."""
    mops = F.col(PARSED)
    named = lambda name: (lambda m: _item(m, 0) == name)  # noqa: E731
    unknown = F.exists(mops, lambda m: ~_item(m, 0).isin("send", "poll"))
    bad_send_invoke = F.exists(F.filter(mops, named("send")), lambda m: (F.size(m) != 3)
                               | ~F.coalesce(_item(m, 1).rlike(INT) & _item(m, 2).rlike(INT), F.lit(False)))
    bad_send_done = F.exists(F.filter(mops, named("send")), lambda m: (F.size(m) != 3)
                             | ~F.coalesce(_item(m, 2).rlike(SEND_RESULT_TEXT), F.lit(False)))
    results = lambda m: F.from_json(_item(m, 1), POLL_RESULT)  # noqa: E731
    bad_poll_done = F.exists(F.filter(mops, named("poll")), lambda m: (
        results(m).isNull()
        | F.exists(F.map_keys(results(m)), lambda k: ~k.rlike(INT))
        | F.exists(F.map_values(results(m)), lambda pairs: F.exists(
            pairs, lambda p: (F.size(p) != 2) | _item(p, 0).isNull() | _item(p, 1).isNull()))))
    queue_f = F.col("f").isin(*QUEUE_FS) & F.col("value").isNotNull()
    invoke, ok = F.col("type") == "invoke", F.col("type") == "ok"
    problem = (F.when(~queue_f, F.lit(None))
               .when(mops.isNull(), F.lit("value must be a list of micro-ops, e.g. [[\"send\", 3, 17]]"))
               .when(unknown, F.lit("unknown micro-op: queue micro-ops are [\"send\", ...] and [\"poll\", ...]"))
               .when(invoke & bad_send_invoke,
                     F.lit("a send micro-op must be [\"send\", key, value] with integers"))
               .when(ok & bad_send_done,
                     F.lit("a completed send micro-op must be [\"send\", key, [offset or null, value]]"))
               .when(ok & bad_poll_done,
                     F.lit("a poll result must be [\"poll\", {\"<int key>\": [[offset, value], ...]}]")))
    return ValueCheck(problem, {PARSED: F.from_json("value", MOPS)})

