"""G0 / G1c (and -process / -realtime) for the queue: the dependency graph
between committed operations (ww/wr edges: checkers/queue/edges.py, per key
bucket; process/realtime edges), cut down to the part that can hold a
cycle, searched (checkers/graph/search.cycles_per_spec) and explained (checkers/graph/cycles.py) on the driver.

Two ways to gather the graph, one search:
- Spark (`find_cycles_queue`): edges stay in Spark, are shrunk there
  (checkers/graph/shrink_spark.py, order edges: checkers/graph/order_spark.py) and only
  the cyclic part is collected;
- in-process (`find_cycles_local`): the same edges as a pandas frame, the
  same grouping into one step per (src, dst, kind), the stats Spark
  reports, and only the steps inside strongly connected components handed
  to the search (order edges: checkers/graph/order_local.py, fed so that they
  are Spark's).
Both end in `search()`, which finds, classifies and explains the cycles.

Kafka has no write locks, so ww edges are not real dependencies: a G1c cycle
that needs a ww edge is allowed, one made of wr edges only is bad. To tell
them apart the search runs twice: once over all edges (what is reported) and
once without ww edges (the wr-only cycles, which the verdict uses).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from checkers.graph.cycles import Cycle, QueuePhrasing, Step, components, explain_cycle
from checkers.graph.scc import SCIPY_MIN_EDGES, inside_cycles
from checkers.graph.order_local import process_edges as local_process_edges
from checkers.graph.order_local import realtime_edges as local_realtime_edges
from checkers.graph.search import TIERED_SPECS, cycles_per_spec

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

G1C_SPECS = tuple(s for s in TIERED_SPECS if s.name.startswith("G1c"))
QUEUE_SPECS = tuple(s for s in TIERED_SPECS if s.name.startswith(("G0", "G1c")))
DATA_FS = ("send", "poll", "txn")
COLLECT_LIMIT = 40_000
ORDER_ROUNDS = 12        # graph_shrink rounds when order edges are in (they defeat the buckets' shrinking)
EDGE_FIELDS = ("src", "dst", "kind", "key", "value", "offset", "prev")

OpDetails = Callable[[list[int]], dict[int, dict]]


# ---------------------------------------------------------------- the search (both engines)

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


def search(steps: list[Step], truncated: bool, graph_stats: dict, limit: int,
           op_details: OpDetails) -> tuple[dict[str, dict], dict]:
    """G0/G1c cycles among `steps` (the graph's part that can hold one):
    ({type: {count, examples}}, stats). G1c examples list wr-only cycles
    first; stats["wr_only"] counts them. `op_details(ids)` describes the
    operations the examples show ({id: op}, anomalies.op_struct's fields)."""
    every = _by_type(cycles_per_spec(steps, QUEUE_SPECS))
    wr_only = _by_type(cycles_per_spec([s for s in steps if s.kind != "ww"], G1C_SPECS))
    for kind, pure in wr_only.items():
        every[kind] = pure + [c for c in every.get(kind, []) if c.uses_ww]
    shown = [c for cs in every.values() for c in cs[:limit]]
    ids = sorted({op for c in shown for op in c.ops})
    details = op_details(ids) if ids else {}
    found = {kind: {"count": len(cs), "examples": [_example(c, details) for c in cs[:limit]]}
             for kind, cs in every.items()}
    stats = {"graph": graph_stats, "graph_truncated": truncated,
             "wr_only": {kind: len(cs) for kind, cs in wr_only.items()}}
    return found, stats


# ---------------------------------------------------------------- Spark

def order_edges(ops: DataFrame) -> DataFrame:
    """Process and realtime edges between non-failed data operations; only
    ok operations have a known completion for real-time order."""
    from pyspark.sql import functions as F  # loads pyspark: only when needed

    from checkers.graph.order_spark import process_edges, realtime_edges  # loads pyspark: only when needed
    ordered = (ops.filter(F.col("f").isin(*DATA_FS) & (F.col("type") != "fail"))
               .select(F.col("invoke_index").alias("id"), "process", "invoke_index",
                       F.when(F.col("type") == "ok", F.col("complete_index")).alias("complete_index")))
    return process_edges(ordered).unionByName(realtime_edges(ordered))


def _spark_op_details(ops: DataFrame) -> OpDetails:
    def details(ids: list[int]) -> dict[int, dict]:
        from pyspark.sql import functions as F  # loads pyspark: only when needed

        from checkers.queue.ops_spark import op_struct  # loads pyspark: only when needed

        # a filter, not a join: no shuffle of the operations, and Parquet skips
        # the row groups outside the ids' range (ops are in invoke order)
        rows = (ops.filter(F.col("invoke_index").isin(ids)).select("invoke_index", op_struct().alias("op"))
                .collect())
        return {r["invoke_index"]: r["op"].asDict() for r in rows}
    return details


def find_cycles_in(spark: SparkSession, edges: DataFrame, ops: DataFrame, limit: int,
                   collect_limit: int = COLLECT_LIMIT, max_rounds: int = ORDER_ROUNDS
                   ) -> tuple[dict[str, dict], dict]:
    """Shrink `edges` in Spark, then `search`."""
    from checkers.graph.shrink_spark import shrink  # loads pyspark: only when needed
    graph = shrink(edges, collect_limit=collect_limit, max_rounds=max_rounds)
    return search(graph.steps, graph.truncated, graph.stats, limit, _spark_op_details(ops))


def find_cycles_queue(spark: SparkSession, edges: DataFrame, ops: DataFrame, limit: int,
                      realtime: bool = False) -> tuple[dict[str, dict], dict]:
    """G0/G1c over the ww+wr `edges` of checkers/queue/edges.py; with
    `realtime`, also process and realtime edges (-process/-realtime variants).
    Off by default: order edges link every operation to its successors in
    time, so the graph cannot be trimmed and its search costs far more than
    the rest of the check (see docs/checkers.md). Without them the buckets
    have already dropped pure polls and contracted single-key chains, so
    what is left goes straight to the strongly-connected-components step
    (no trim/contract rounds)."""
    from checkers.graph.shrink_spark import conform_edges  # loads pyspark: only when needed
    edges = conform_edges(edges)
    if realtime:
        return find_cycles_in(spark, edges.unionByName(order_edges(ops)), ops, limit)
    return find_cycles_in(spark, edges, ops, limit, max_rounds=0)


# ---------------------------------------------------------------- in-process

def _nullable_ints(series: pd.Series) -> list:
    return [None if pd.isna(x) else int(x) for x in series]


def order_steps(ops: pd.DataFrame) -> list[Step]:
    """`order_edges` in-process, with checkers/graph/order_local.py: process edges
    link every non-failed data operation to its process's next one (so each
    is passed as "ok" there, which links ok operations only); realtime edges
    go into every non-failed one, a never-completed one included, and come
    out of ok ones only (as order_local does too)."""
    data = ops[ops["f"].isin(DATA_FS) & (ops["type"] != "fail")]
    ids = [int(i) for i in data["invoke_index"]]
    processes = [int(p) for p in data["process"]]
    types = list(data["type"])
    completes = _nullable_ints(data["complete_index"])
    steps = local_process_edges([(i, p, "ok", i, None) for i, p in zip(ids, processes)])
    steps += local_realtime_edges([(i, p, t, i, c if t == "ok" else None)
                                   for i, p, t, c in zip(ids, processes, types, completes)])
    return steps


def _in_sccs(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Edges inside a non-trivial strongly connected component (or self-loops),
    as graph_shrink's SCC step keeps them."""
    if not len(src):
        return np.zeros(0, dtype=bool)
    if len(src) > SCIPY_MIN_EDGES:
        return components(src, dst).inside()
    return np.array(inside_cycles(src.tolist(), dst.tolist()), dtype=bool)  # small: no scipy


def _text(series: pd.Series) -> list:
    """Explanation columns as graph.shrink_spark.EDGE_SCHEMA types them: text."""
    return [None if x is None or x is pd.NA or (isinstance(x, float) and x != x) else str(x) for x in series]


def edge_frame(bucket_edges: pd.DataFrame, order: list[Step] = ()) -> pd.DataFrame:
    """Bucket edges (queue.bucket.OUT_SCHEMA "edge" rows) and order steps in
    one frame of graph.shrink_spark.EDGE_SCHEMA's types (conform_edges)."""
    frame = pd.DataFrame({"src": bucket_edges["src"].to_numpy("int64"), "dst": bucket_edges["dst"].to_numpy("int64"),
                          "kind": list(bucket_edges["kind"]), "key": _text(bucket_edges["key"]),
                          "value": _text(bucket_edges["value"]),
                          "offset": pd.array(bucket_edges["offset"], dtype="Int64"),
                          "prev": _text(bucket_edges["prev"])})
    if not len(order):
        return frame
    steps = pd.DataFrame([(s.src, s.dst, s.kind, s.key, s.value, s.offset, s.prev) for s in order],
                         columns=list(EDGE_FIELDS))
    steps["offset"] = pd.array(steps["offset"], dtype="Int64")
    return pd.concat([frame, steps.astype({"src": "int64", "dst": "int64"})], ignore_index=True)


def _paths(edges: pd.DataFrame) -> pd.DataFrame:
    """One edge per (src, dst, kind), with the smallest explanation (nulls
    first): what graph.shrink_spark._as_paths keeps."""
    ordered = edges.sort_values(list(EDGE_FIELDS), na_position="first", kind="stable")
    return ordered.drop_duplicates(["src", "dst", "kind"], keep="first")


def _cut(edges: pd.DataFrame) -> pd.DataFrame:
    return edges[_in_sccs(edges["src"].to_numpy("int64"), edges["dst"].to_numpy("int64"))]


def local_graph(bucket_edges: pd.DataFrame, order: list[Step] | None = None, collect_limit: int = COLLECT_LIMIT
                ) -> tuple[list[Step], bool, dict]:
    """graph.shrink_spark.shrink in-process over the buckets' "edge" rows and,
    for the -process/-realtime variants, the `order` steps (edge_frame):
    (steps, truncated, stats), the stats as Spark reports them. Without
    order edges (max_rounds=0 there) Spark cuts
    the raw edges to their strongly connected components above
    `collect_limit`, then keeps one edge per (src, dst, kind) (`_paths`) and
    collects them all (here the cut comes before the explanations become text,
    which for the 5.2 M edges of 10^7 operations was most of the step). With
    order edges it groups first, and
    above collect_limit / 4 edges runs trim/contract rounds (random, which
    only drop or merge edges on no cycle) before its SCC step: here the SCC
    cut does that at once, so there the stats differ ("rounds" stays empty).
    The steps passed on are always only those inside strongly connected
    components: all that search.cycles_per_spec looks at (it searches each
    component of each kind-subgraph, and those lie inside the whole graph's
    components), so the cycles are the same."""
    stats: dict = {"edges": len(bucket_edges), "rounds": []}
    if order is not None:
        edges = _paths(edge_frame(bucket_edges, order))
        stats["edges"] = len(edges)
        cut = _cut(edges)
        collected = len(edges)
        if len(edges) > collect_limit // 4:
            stats["after_scc"] = collected = len(cut)
    else:
        if len(bucket_edges) > collect_limit:
            bucket_edges = _cut(bucket_edges)
        edges = _paths(edge_frame(bucket_edges))
        stats["after_scc"] = collected = len(edges)
        cut = _cut(edges)
    truncated = len(cut) > collect_limit
    if truncated:
        cut = cut.head(collect_limit)
    steps = [Step(int(src), int(dst), kind, key, value, None if pd.isna(offset) else int(offset), prev)
             for src, dst, kind, key, value, offset, prev in zip(*(cut[c] for c in EDGE_FIELDS))]
    stats["steps_collected"] = min(collected, collect_limit)
    return steps, truncated, stats


def local_op_details(ops: pd.DataFrame) -> OpDetails:
    """anomalies.op_struct for operations of a pandas `ops` frame."""
    def details(ids: list[int]) -> dict[int, dict]:
        rows = ops[ops["invoke_index"].isin(ids)]
        out = {}
        for inv, process, f, type_, cindex, ctime, itime in zip(
                rows["invoke_index"], rows["process"], rows["f"], rows["type"], _nullable_ints(rows["complete_index"]),
                _nullable_ints(rows["complete_time"]), rows["invoke_time"]):
            out[int(inv)] = {"index": cindex if cindex is not None else int(inv), "process": int(process),
                             "time": ctime if ctime is not None else int(itime), "f": f, "type": type_}
        return out
    return details


def find_cycles_local(bucket_edges: pd.DataFrame, ops: pd.DataFrame, limit: int,
                      realtime: bool = False) -> tuple[dict[str, dict], dict]:
    """find_cycles_queue in-process: `bucket_edges` are the buckets' "edge"
    rows (shrunk unless `realtime`), `ops` the operations."""
    return find_cycles_with(bucket_edges, limit, local_op_details(ops), order_steps(ops) if realtime else None)


def find_cycles_with(bucket_edges: pd.DataFrame, limit: int, details: OpDetails,
                     order: list[Step] | None = None) -> tuple[dict[str, dict], dict]:
    """find_cycles_local with the operations' `details` given, and `order`:
    their process and realtime steps (order_steps) for the -process/-realtime
    variants, None without them."""
    return search(*local_graph(bucket_edges, order), limit, details)
