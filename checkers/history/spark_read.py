"""Reading a history (docs/history-format.md) into Spark, entirely in Spark.

`load_history` gives one row per event with a fixed schema:

    index long, time long, type string, process string ("0", "1", ..., "nemesis"),
    f string, value string (the raw JSON text), error_name string, error_message string

plus `_file`, `_pos` and `_path` (the input file, a position that grows in
file order, and the path read, for error messages). `value` stays raw JSON text: each workload parses
it with from_json into its own typed schema (see checkers/history/queue_mops_spark.py).

`pair_operations` turns invoke/completion pairs into one row per operation.

Bad input raises HistoryError naming the file and line; finding the lines
costs extra Spark jobs, so they run only once something is known to be wrong,
and only the first few offending rows ever reach the driver.
"""
from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from checkers.history.errors import MAX_REPORTED, TYPES, HistoryError, Problem, malformed_json  # noqa: F401 (re-exported)
from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

REQUIRED = ("index", "time", "type", "process", "f")
CORRUPT = "_corrupt"

RAW_SCHEMA = T.StructType([
    T.StructField("index", T.LongType()),
    T.StructField("time", T.LongType()),
    T.StructField("type", T.StringType()),
    # StringType keeps any JSON token as its text: 3 -> "3", "nemesis" -> "nemesis"
    T.StructField("process", T.StringType()),
    T.StructField("f", T.StringType()),
    T.StructField("value", T.StringType()),
    T.StructField("error", T.StringType()),
    # optional, on invokes of send/txn: {"idempotent": bool, "transactional": bool}
    T.StructField("producer", T.StringType()),
    # optional, on completions of queue assigns: {"<key>": start offset}
    T.StructField("starts", T.StringType()),
    # optional, on completions of queue polls/txns: [["assigned"/"revoked", [keys], starts?], ...]
    T.StructField("rebalance_log", T.StringType()),
    T.StructField(CORRUPT, T.StringType()),
])
PRODUCER_SCHEMA = T.StructType([
    T.StructField("idempotent", T.BooleanType()),
    T.StructField("transactional", T.BooleanType()),
])

HISTORY_COLUMNS = ("index", "time", "type", "process", "f", "value", "error_name", "error_message")


# ---------------------------------------------------------------- reading

def _is_parquet(path: str) -> bool:
    p = Path(path)
    if p.suffix == ".parquet":
        return True
    return p.is_dir() and any(c.suffix == ".parquet" for c in p.iterdir())


def _read_json_lines(spark: SparkSession, path: str) -> DataFrame:
    """Read as text first, so `_pos` numbers every physical line: blank
    lines (skipped here, allowed by the contract's readers) still count for
    the line numbers in error messages."""
    lines = spark.read.text(path).select(
        F.col("value").alias("_text"), F.input_file_name().alias("_file"),
        F.monotonically_increasing_id().alias("_pos"), F.lit(path).alias("_path"))
    options = {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": CORRUPT}
    return (lines.where(F.trim("_text") != "")
            .select(F.from_json("_text", RAW_SCHEMA, options).alias("_e"), "_file", "_pos", "_path")
            .select("_e.*", "_file", "_pos", "_path"))


def _read_parquet(spark: SparkSession, path: str) -> DataFrame:
    df = spark.read.parquet(path)
    columns = []
    for column in RAW_SCHEMA.fields:
        if column.name == CORRUPT:
            columns.append(F.lit(None).cast("string").alias(CORRUPT))
        elif column.name in ("producer", "starts", "rebalance_log") and column.name in df.columns and not isinstance(
                df.schema[column.name].dataType, T.StringType):
            columns.append(F.to_json(F.col(column.name)).alias(column.name))
        elif column.name in df.columns:
            columns.append(F.col(column.name).cast(column.dataType).alias(column.name))
        else:
            columns.append(F.lit(None).cast(column.dataType).alias(column.name))
    return df.select(*columns)


def array_item(array: Column, i: int) -> Column:
    """array[i], or null past its end. Spark's ANSI mode makes `getItem` raise
    there, and it may evaluate a projection before the filter that would have
    excluded the row (failed and indefinite txns carry a bare ["poll"])."""
    return F.get(array, F.lit(i))


def _error_parts(error: Column) -> tuple[Column, Column]:
    """`error` is `[name, message]` (or, leniently, a bare string)."""
    parts = F.from_json(error, T.ArrayType(T.StringType()))
    name = F.when(parts.isNotNull(), array_item(parts, 0)).otherwise(error)
    return name, array_item(parts, 1)


def read_raw(spark: SparkSession, path: str) -> DataFrame:
    """The file as rows of RAW_SCHEMA plus `_file` and `_pos`, unvalidated."""
    path = str(path)
    if not Path(path).exists() and "://" not in path:
        raise HistoryError([Problem(path, None, "no such file")])
    if not _is_parquet(path):
        return _read_json_lines(spark, path)
    return (_read_parquet(spark, path).withColumn("_file", F.input_file_name())
            .withColumn("_pos", F.monotonically_increasing_id())
            .withColumn("_path", F.lit(None).cast("string")))


@dataclass(frozen=True)
class ValueCheck:
    """A workload's check of each event's `value`: `problem` is null when the
    value is fine, else what is wrong. It may read the columns of `parsed`,
    computed once per row before it: an expression such as from_json that
    several conditions share would otherwise run again for each of them (the
    queue's check parsed every value five times)."""

    problem: Column
    parsed: dict[str, Column] = field(default_factory=dict)


def _problem_column(value_problem: Column | None = None) -> Column:
    """A description of what is wrong with each row, null when nothing is.
    `value_problem`: the workload's check of `value` (null when fine)."""
    checks = [(F.col(CORRUPT).isNotNull(), F.lit("malformed JSON or a field of the wrong type"))]
    checks += [(F.col(name).isNull(), F.lit(f"missing field '{name}'")) for name in REQUIRED]
    checks += [
        (~F.col("type").isin(*TYPES), F.concat(F.lit("type must be one of invoke/ok/fail/info, not "),
                                                F.to_json(F.array(F.col("type"))))),
        (~(F.col("process").rlike(r"^[0-9]+$") | (F.col("process") == "nemesis")),
         F.concat(F.lit("process must be an int >= 0 or \"nemesis\", not "), F.col("process"))),
        (F.col("index") < 0, F.lit("index must be >= 0")),
    ]
    expr = value_problem if value_problem is not None else F.lit(None).cast("string")
    for condition, message in reversed(checks):
        expr = F.when(condition, message).otherwise(expr)
    return expr


def _with_problems(raw: DataFrame, value_check: ValueCheck | None) -> DataFrame:
    """`raw` with `_problem` (_problem_column); the value check's parsed
    columns exist only while `_problem` is computed."""
    if value_check is None:
        return raw.withColumn("_problem", _problem_column())
    parsed = raw.withColumns(value_check.parsed)
    checked = parsed.withColumn("_problem", _problem_column(value_check.problem))
    return checked.drop(*value_check.parsed)


def _checked(spark: SparkSession, path: str | Path, validate: bool, value_check: ValueCheck | None,
             storage: StorageLevel | None) -> DataFrame:
    """The raw rows, validated (HistoryError on bad ones), persisted at
    `storage` when given (then the validation already fills the cache)."""
    raw = read_raw(spark, str(path))
    if validate:
        raw = _with_problems(raw, value_check)
    if storage is not None:
        raw = raw.persist(storage)
    if validate:
        bad = raw.filter(F.col("_problem").isNotNull())
        if bad.select("_pos").limit(1).count():
            raw.unpersist()
            raise_with_lines(spark, raw, bad, "_problem")
    return raw


def _events(raw: DataFrame) -> DataFrame:
    name, message = _error_parts(F.col("error"))
    return raw.select("index", "time", "type", "process", "f", "value",
                      name.alias("error_name"), message.alias("error_message"), "producer",
                      "starts", "rebalance_log", "_file", "_pos", "_path")


def load_history(spark: SparkSession, path: str | Path, validate: bool = True,
                 value_check: ValueCheck | None = None) -> DataFrame:
    """The history at `path` (JSON Lines, or Parquet file/directory) as a
    DataFrame of HISTORY_COLUMNS (+ `producer`, `starts`, `rebalance_log`, `_file`, `_pos`, `_path`).
    Raises HistoryError on bad rows when `validate`; `value_check` adds the
    workload's own check of `value` (e.g. checkers/history/queue_mops_spark.value_check)."""
    return _events(_checked(spark, path, validate, value_check, None))


@contextmanager
def cached_history(spark: SparkSession, path: str | Path, value_check: ValueCheck | None = None,
                   validate: bool = True) -> Iterator[DataFrame]:
    """load_history, with the parsed file kept (memory, then disk) for the
    validation and every use inside the `with` block: parsed once."""
    raw = _checked(spark, path, validate, value_check, StorageLevel.MEMORY_AND_DISK)
    try:
        yield _events(raw)
    finally:
        raw.unpersist()


# ---------------------------------------------------------------- line numbers

def _line_numbers(spark: SparkSession, df: DataFrame, rows: list) -> dict[int, int]:
    """Map `_pos` of `rows` to 1-based line numbers in their file.

    `_pos` is (partition id << 33) + row number within the partition; the
    partitions of one file are its consecutive splits, so a row's line is the
    number of rows in the file's earlier partitions plus its row number + 1.
    JSON Lines are counted from the file read again as text, blank lines
    included (the same splits as the first read, which was text too).
    """
    path = rows[0].asDict().get("_path") if rows else None
    lines = (spark.read.text(path).select(F.input_file_name().alias("_file"),
                                          F.monotonically_increasing_id().alias("_pos"))
             if path is not None else df)
    counts = (lines.select("_file", F.shiftright(F.col("_pos"), 33).alias("part"))
                   .groupBy("_file", "part").count().collect())
    before: dict[tuple[str, int], int] = {}
    running: dict[str, int] = {}
    for row in sorted(counts, key=lambda r: (r["_file"], r["part"])):
        before[(row["_file"], row["part"])] = running.get(row["_file"], 0)
        running[row["_file"]] = running.get(row["_file"], 0) + row["count"]
    result = {}
    for row in rows:
        part, within = row["_pos"] >> 33, row["_pos"] & ((1 << 33) - 1)
        result[row["_pos"]] = before.get((row["_file"], part), 0) + within + 1
    return result


def _explain_bad_line(text: str | None, fallback: str) -> str:
    """For a corrupt row, say precisely what is wrong (only a handful reach here)."""
    if text is None:
        return fallback
    try:
        event = json.loads(text)
    except json.JSONDecodeError as e:
        return malformed_json(e, text)
    if not isinstance(event, dict):
        return f"an event must be a JSON object, not {type(event).__name__}"
    for name in ("index", "time"):
        if name in event and not isinstance(event[name], int):
            return f"field '{name}' must be an integer, not {json.dumps(event[name])[:60]}"
    if "type" in event and not isinstance(event["type"], str):
        return f"field 'type' must be a string, not {json.dumps(event['type'])[:60]}"
    return fallback


def _file_name(uri: str) -> str:
    return uri[len("file://"):] if uri.startswith("file://") else uri


def raise_with_lines(spark: SparkSession, all_rows: DataFrame, bad: DataFrame, problem_col: str) -> None:
    """Raise HistoryError for the first few rows of `bad` (ordered by file
    position), with their line numbers and an exact count."""
    cols = ["_file", "_pos", "_path", problem_col] + ([CORRUPT] if CORRUPT in bad.columns else [])
    first = bad.select(*cols).orderBy("_pos").limit(MAX_REPORTED).collect()
    count = bad.count()
    lines = _line_numbers(spark, all_rows, first)
    problems = []
    for row in first:
        what = row[problem_col]
        if CORRUPT in row and row[CORRUPT] is not None:
            what = _explain_bad_line(row[CORRUPT], what)
        problems.append(Problem(_file_name(row["_file"]), lines[row["_pos"]], what))
    raise HistoryError(problems, count)


# ---------------------------------------------------------------- pairing



def pair_operations(df: DataFrame, validate: bool = True) -> DataFrame:
    """One row per client operation: its invoke joined to the next event of
    the same process. An invoke with no completion is `info` (its completion
    columns null). Nemesis events are left out.

    Columns: process long, f, invoke_index, invoke_time, complete_index,
    complete_time, type (ok/fail/info), invoke_value, complete_value (raw
    JSON), error_name, error_message, and the invoke's producer flags
    idempotent, transactional (null without a `producer` field), and the
    completion's `starts` and `rebalance_log` (raw JSON, null without one).

    With `validate`, raises HistoryError for a completion without an invoke,
    an invoke while the process's previous one is pending, a completion whose
    f differs from its invoke's, and an index not greater than the previous
    index of the same process (checked along the same per-process ordering).
    """
    clients = df.filter(F.col("process") != "nemesis")
    w = Window.partitionBy("process").orderBy("index")
    seq = clients.select(
        "*",
        F.lag("type").over(w).alias("prev_type"),
        F.lag("index").over(w).alias("prev_index"),
        F.lag("_pos").over(w).alias("prev_pos"),
        F.lag("f").over(w).alias("prev_f"),
        F.lead("type").over(w).alias("next_type"),
        F.lead("index").over(w).alias("next_index"),
        F.lead("time").over(w).alias("next_time"),
        F.lead("value").over(w).alias("next_value"),
        F.lead("error_name").over(w).alias("next_error_name"),
        F.lead("error_message").over(w).alias("next_error_message"),
        F.lead("starts").over(w).alias("next_starts"),
        F.lead("rebalance_log").over(w).alias("next_rebalance_log"),
    )
    if validate:
        _check_sequence(df, seq)
    invokes = seq.filter(F.col("type") == "invoke")
    completed = F.col("next_type").isNotNull() & (F.col("next_type") != "invoke")
    return invokes.select(
        F.col("process").cast("long").alias("process"),
        "f",
        F.col("index").alias("invoke_index"),
        F.col("time").alias("invoke_time"),
        F.when(completed, F.col("next_index")).alias("complete_index"),
        F.when(completed, F.col("next_time")).alias("complete_time"),
        F.when(completed, F.col("next_type")).otherwise(F.lit("info")).alias("type"),
        F.col("value").alias("invoke_value"),
        F.when(completed, F.col("next_value")).alias("complete_value"),
        F.when(completed, F.col("next_error_name")).alias("error_name"),
        F.when(completed, F.col("next_error_message")).alias("error_message"),
        F.from_json("producer", PRODUCER_SCHEMA).getField("idempotent").alias("idempotent"),
        F.from_json("producer", PRODUCER_SCHEMA).getField("transactional").alias("transactional"),
        F.when(completed, F.col("next_starts")).alias("starts"),
        F.when(completed, F.col("next_rebalance_log")).alias("rebalance_log"),
    )


def _check_sequence(all_rows: DataFrame, seq: DataFrame) -> None:
    is_invoke = F.col("type") == "invoke"
    prev_invoke = F.col("prev_type") == "invoke"
    problem = (
        F.when(F.col("prev_index").isNotNull() & (F.col("index") <= F.col("prev_index")),
               F.concat(F.lit("index "), F.col("index").cast("string"),
                        F.lit(" is not greater than the previous index "),
                        F.col("prev_index").cast("string"), F.lit(" of process "), F.col("process")))
        .when(F.col("prev_pos").isNotNull() & (F.col("_pos") < F.col("prev_pos")),
              F.concat(F.lit("index "), F.col("index").cast("string"),
                       F.lit(" comes before index "), F.col("prev_index").cast("string"),
                       F.lit(" of process "), F.col("process"), F.lit(" in the file: indexes must increase")))
        .when(~is_invoke & ~F.coalesce(prev_invoke, F.lit(False)),
              F.concat(F.lit("completion ("), F.col("type"), F.lit(") of process "), F.col("process"),
                       F.lit(" without a pending invoke")))
        .when(is_invoke & F.coalesce(prev_invoke, F.lit(False)),
              F.concat(F.lit("process "), F.col("process"), F.lit(" invokes again while its invoke at index "),
                       F.col("prev_index").cast("string"), F.lit(" is still pending")))
        .when(~is_invoke & (F.col("f") != F.col("prev_f")),
              F.concat(F.lit("completion f '"), F.col("f"), F.lit("' differs from its invoke's f '"),
                       F.col("prev_f"), F.lit("'")))
    )
    checked = seq.withColumn("_problem", problem)
    bad = checked.filter(F.col("_problem").isNotNull())
    if bad.select("_pos").limit(1).count():
        raise_with_lines(all_rows.sparkSession, all_rows, bad, "_problem")
