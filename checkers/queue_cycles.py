"""G0 / G1c (and -process / -realtime) for the queue: the dependency graph
between committed operations, built and shrunk in Spark (ww/wr edges:
checkers/queue_edges.py, per key bucket; process/realtime edges:
checkers/order_edges.py; then checkers/graph_shrink.py), searched and
explained on the driver (checkers/cycles.py).

Kafka has no write locks, so ww edges are not real dependencies: a G1c cycle
that needs a ww edge is allowed, one made of wr edges only is bad. To tell
them apart the search runs twice: once over all edges (what is reported) and
once without ww edges (the wr-only cycles, which the verdict uses).
"""
from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from checkers.anomalies import op_struct
from checkers.cycles import DEFAULT_SPECS, Cycle, QueuePhrasing, explain_cycle, find_cycles
from checkers.graph_shrink import conform_edges, shrink
from checkers.order_edges import process_edges, realtime_edges

G1C_SPECS = tuple(s for s in DEFAULT_SPECS if s.name.startswith("G1c"))
QUEUE_SPECS = tuple(s for s in DEFAULT_SPECS if s.name.startswith(("G0", "G1c")))


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


COLLECT_LIMIT = 40_000


def find_cycles_in(spark: SparkSession, edges: DataFrame, ops: DataFrame, limit: int,
                   collect_limit: int = COLLECT_LIMIT, max_rounds: int = 12) -> tuple[dict[str, dict], dict]:
    """Shrink `edges`, search G0/G1c cycles; ({type: {count, examples}}, stats).
    G1c examples list wr-only cycles first; stats["wr_only"] counts them."""
    graph = shrink(edges, collect_limit=collect_limit, max_rounds=max_rounds)
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


def find_cycles_queue(spark: SparkSession, edges: DataFrame, ops: DataFrame, limit: int,
                      realtime: bool = False) -> tuple[dict[str, dict], dict]:
    """G0/G1c over the ww+wr `edges` of checkers/queue_edges.py; with
    `realtime`, also process and realtime edges (-process/-realtime variants).
    Off by default: order edges link every operation to its successors in
    time, so the graph cannot be trimmed and its search costs far more than
    the rest of the check (see docs/checkers.md). Without them the buckets
    have already dropped pure polls and contracted single-key chains, so
    what is left goes straight to the strongly-connected-components step
    (no trim/contract rounds)."""
    edges = conform_edges(edges)
    if realtime:
        return find_cycles_in(spark, edges.unionByName(order_edges(ops)), ops, limit)
    return find_cycles_in(spark, edges, ops, limit, max_rounds=0)
