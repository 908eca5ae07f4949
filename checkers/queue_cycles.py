"""G0 / G1c (and -process / -realtime) for the queue: the dependency graph
between committed operations, built in Spark, shrunk in Spark
(checkers/graph_shrink.py), searched and explained on the driver
(checkers/cycles.py).

Edges between operations (vertex = invoke index):
- ww: each key's version order is its dense offset order; the writer of one
  value precedes the writer of the next value (values with a known writer).
- wr: the writer of a value precedes every operation that polled it.
- process / realtime: checkers/order_edges.py, over non-failed operations.

Kafka has no write locks, so ww edges are not real dependencies: a G1c cycle
that needs a ww edge is allowed, one made of wr edges only is bad. To tell
them apart the search runs twice: once over all edges (what is reported) and
once without ww edges (the wr-only cycles, which the verdict uses).
"""
from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from checkers.anomalies import op_struct
from checkers.cycles import DEFAULT_SPECS, Cycle, QueuePhrasing, explain_cycle, find_cycles
from checkers.graph_shrink import conform_edges, shrink
from checkers.order_edges import process_edges, realtime_edges

G1C_SPECS = tuple(s for s in DEFAULT_SPECS if s.name.startswith("G1c"))
QUEUE_SPECS = tuple(s for s in DEFAULT_SPECS if s.name.startswith(("G0", "G1c")))


def writers(sends: DataFrame) -> DataFrame:
    """(key, value) -> the op that sent it; failed sends wrote nothing."""
    return sends.filter(F.col("type") != "fail").select("key", "value", F.col("op_id").alias("writer"))


def ww_edges(obs: DataFrame, sends: DataFrame) -> DataFrame:
    """Consecutive written values in each key's offset order."""
    order = (obs.groupBy("key", "offset").agg(F.min("value").alias("value"))
             .join(writers(sends), ["key", "value"]))
    w = Window.partitionBy("key").orderBy("offset")
    steps = order.select("key", "offset", "value", "writer",
                         F.lag("writer").over(w).alias("src"), F.lag("value").over(w).alias("prev"))
    return conform_edges(steps.filter(F.col("src").isNotNull() & (F.col("src") != F.col("writer")))
                         .select("src", F.col("writer").alias("dst"), F.lit("ww").alias("kind"),
                                 F.col("key").cast("string").alias("key"),
                                 F.col("value").cast("string").alias("value"), "offset",
                                 F.col("prev").cast("string").alias("prev")))


def wr_edges(reads: DataFrame, sends: DataFrame) -> DataFrame:
    """The writer of each polled value precedes the op that polled it."""
    polled = reads.groupBy("op_id", "key", "value").agg(F.min("offset").alias("offset"))
    pairs = polled.join(writers(sends), ["key", "value"]).filter(F.col("writer") != F.col("op_id"))
    return conform_edges(pairs.select(F.col("writer").alias("src"), F.col("op_id").alias("dst"),
                                      F.lit("wr").alias("kind"), F.col("key").cast("string").alias("key"),
                                      F.col("value").cast("string").alias("value"), "offset"))


def order_edges(ops: DataFrame) -> DataFrame:
    """Process and realtime edges between non-failed data operations; only
    ok operations have a known completion for real-time order."""
    ordered = (ops.filter(F.col("f").isin("send", "poll", "txn") & (F.col("type") != "fail"))
               .select(F.col("invoke_index").alias("id"), "process", "invoke_index",
                       F.when(F.col("type") == "ok", F.col("complete_index")).alias("complete_index")))
    return process_edges(ordered).unionByName(realtime_edges(ordered))


def _op_details(spark: SparkSession, ops: DataFrame, cycles: list[Cycle]) -> dict[int, dict]:
    ids = sorted({op for c in cycles for op in c.ops})
    if not ids:
        return {}
    wanted = spark.createDataFrame([(i,) for i in ids], "invoke_index long")
    rows = ops.join(wanted, "invoke_index").select("invoke_index", op_struct().alias("op")).collect()
    return {r["invoke_index"]: r["op"].asDict() for r in rows}


def _example(cycle: Cycle, details: dict[int, dict]) -> dict:
    """The cycle explained, in the common example shape (key, offsets,
    values, ops) plus the step-by-step `cycle` and `steps`."""
    explained = explain_cycle(cycle, details, QueuePhrasing())
    keys = [int(k) for k in explained["keys"]]
    return {"key": keys[0] if len(keys) == 1 else keys,
            "offsets": [s.offset for s in cycle.steps if s.kind in ("ww", "wr")],
            "values": [int(s.value) for s in cycle.steps if s.kind in ("ww", "wr")],
            "ops": [row["op"] for row in explained["cycle"]],
            **explained}


def _by_type(cycles: list[Cycle]) -> dict[str, list[Cycle]]:
    found: dict[str, list[Cycle]] = {}
    for cycle in cycles:
        found.setdefault(cycle.anomaly, []).append(cycle)
    return found


def find_cycles_in(spark: SparkSession, edges: DataFrame, ops: DataFrame, limit: int,
                   collect_limit: int = 200_000) -> tuple[dict[str, dict], dict]:
    """Shrink `edges`, search G0/G1c cycles; ({type: {count, examples}}, stats).
    G1c examples list wr-only cycles first; stats["wr_only"] counts them."""
    graph = shrink(edges, collect_limit=collect_limit)
    every = _by_type(find_cycles(graph.steps, QUEUE_SPECS))
    wr_only = _by_type(find_cycles([s for s in graph.steps if s.kind != "ww"], G1C_SPECS))
    for kind, pure in wr_only.items():
        every[kind] = pure + [c for c in every.get(kind, []) if c.uses_ww]
    details = _op_details(spark, ops, [c for cs in every.values() for c in cs[:limit]])
    found = {kind: {"count": len(cs), "examples": [_example(c, details) for c in cs[:limit]]}
             for kind, cs in every.items()}
    stats = {"graph": graph.stats, "graph_truncated": graph.truncated,
             "wr_only": {kind: len(cs) for kind, cs in wr_only.items()}}
    return found, stats


def find_cycles_queue(spark: SparkSession, obs: DataFrame, sends: DataFrame, reads: DataFrame,
                      ops: DataFrame, limit: int, realtime: bool = True) -> tuple[dict[str, dict], dict]:
    edges = ww_edges(obs, sends).unionByName(wr_edges(reads, sends))
    if realtime:
        edges = edges.unionByName(order_edges(ops))
    return find_cycles_in(spark, edges, ops, limit)
