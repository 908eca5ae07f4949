"""The list-append checker on Spark: Spark reads, validates and pairs the
history (checkers/history_io.py, or the Parquet companion); the analysis is
the in-process one (checkers/list_append.py) on the driver, so both engines
give identical results by construction.

Not yet done: running the per-key step in executors by buckets of keys, as
the queue checker does. Until then the driver holds every transaction
(about 1 KB per operation in Python objects).
"""
from __future__ import annotations

import json

from pyspark.sql import DataFrame, SparkSession, functions as F

from checkers.list_append import check_list_append

COLUMNS = ("process", "f", "invoke_index", "invoke_time", "complete_index", "complete_time", "type",
           "invoke_value", "complete_value")


def check_list_append_spark(spark: SparkSession, ops: DataFrame, consistency_model: str,
                            allow=(), forbid=()) -> dict:
    frame = ops.where(F.col("f") == "txn").select(*COLUMNS).toPandas()
    for column in ("invoke_value", "complete_value"):
        frame[column] = [json.loads(v) if isinstance(v, str) else None for v in frame[column]]
    for column in ("complete_index", "complete_time"):
        frame[column] = frame[column].astype("Int64")
    return check_list_append(frame.sort_values("invoke_index", ignore_index=True), consistency_model,
                             allow, forbid)
