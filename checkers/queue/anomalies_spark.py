"""Anomalies as data: every detector yields rows of one common shape, so all
types are counted and sampled in a single Spark job.

An anomaly row is (type string, sort long, sort2 long, example string), where
`example` is the JSON of {"key", "offsets", "values", "ops", ...type-specific}
and each op is {"index", "process", "time", "f", "type", ...}. Only `limit`
examples per type and the exact count per type reach the driver.
"""
from __future__ import annotations

import json
from functools import reduce
from typing import Callable, Iterable

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

DEFAULT_EXAMPLES = 20
OPS_PER_EXAMPLE = 10
ROW_COLUMNS = ("type", "sort", "sort2", "example")


def op_struct(prefix: str = "", **extra: Column) -> Column:
    """An operation as an example shows it: the event that reported its
    outcome (the completion, or the invoke when there is none)."""
    c = lambda name: F.col(prefix + name)  # noqa: E731
    return F.struct(
        F.coalesce(c("complete_index"), c("invoke_index")).alias("index"),
        c("process").alias("process"),
        F.coalesce(c("complete_time"), c("invoke_time")).alias("time"),
        c("f").alias("f"),
        c("type").alias("type"),
        *[col.alias(name) for name, col in extra.items()],
    )


def first_ops(ops: Column, n: int = OPS_PER_EXAMPLE) -> Column:
    """The first n distinct ops of a collected list, by history index."""
    return F.slice(F.array_sort(F.array_distinct(ops)), 1, n)


def anomaly_rows(kind: str, df: DataFrame, sort: Column, sort2: Column, **fields: Column) -> DataFrame:
    """Rows of one anomaly type: `fields` become the example's JSON fields."""
    example = F.to_json(F.struct(*[col.alias(name) for name, col in fields.items()]))
    return df.select(F.lit(kind).alias("type"), sort.cast("long").alias("sort"),
                     sort2.cast("long").alias("sort2"), example.alias("example"))


def union_all(frames: Iterable[DataFrame]) -> DataFrame:
    return reduce(DataFrame.unionByName, frames)


Explainer = Callable[[dict], str]


def collect_anomalies(rows: DataFrame, limit: int = DEFAULT_EXAMPLES,
                      explain: dict[str, Explainer] | None = None) -> dict[str, dict]:
    """{type: {"count": exact, "examples": first `limit` by (sort, sort2)}},
    each example given a plain-words "explanation" by `explain[type]`."""
    by_type = Window.partitionBy("type")
    ranked = rows.select(
        "type", "example",
        F.count(F.lit(1)).over(by_type).alias("count"),
        F.row_number().over(by_type.orderBy("sort", "sort2", "example")).alias("rank"),
    ).filter(F.col("rank") <= max(limit, 1))
    found: dict[str, dict] = {}
    for row in ranked.orderBy("type", "rank").collect():
        entry = found.setdefault(row["type"], {"count": row["count"], "examples": []})
        if row["rank"] <= limit:
            example = json.loads(row["example"])
            if explain and row["type"] in explain:
                example["explanation"] = explain[row["type"]](example)
            entry["examples"].append(example)
    return found
