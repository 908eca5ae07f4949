"""An operation as the queue's Spark examples show it (checkers/queue/cycles.py
asks for the operations its cycles name)."""
from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F


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
