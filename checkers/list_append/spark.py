"""The list-append checker on Spark: the same per-transaction and per-key
functions as in-process (checkers/list_append/checker.py), run in executors, and the
same `assemble()` on the driver, so both engines give identical results.

1. One pass over the txn operations (mapInPandas): each txn's own findings
   (la_txn) and its micro-ops, tagged with a bucket = hash(key) mod B.
2. One shuffle by bucket (applyInPandas): every key of the bucket through
   list_append.keys.analyze_key, giving findings and ww/wr/rw edges.
3. Driver: exact counts and the first examples per type; the order edges
   (from five integers per operation); the strongly connected components
   of the whole graph from (src, dst) pairs alone (scipy); then only the
   data edges inside a component are fetched with their explanations.
"""
from __future__ import annotations

import json
import math
import os

import numpy as np
import pandas as pd
from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from checkers.graph.cycles import Step, components
from checkers.graph.order_local import OrderEdges
from checkers.list_append.checker import Txn, assemble, key_mops, order_edges, txn_mops
from checkers.list_append.keys import Finding, KeyMop, analyze_key, group_by_key
from checkers.list_append.txn import txn_findings
from checkers.verdict import consistency
from checkers.verdict.taxonomy import DEFAULT_EXAMPLES

OPS_PER_BUCKET = 100_000
OUT_SCHEMA = ("rec string, type string, sort1 long, sort2 long, example string, bucket long, "
              "src long, dst long, kind string, key string, value string, prev string")
OUT_COLUMNS = [c.split()[0] for c in OUT_SCHEMA.split(", ")]
MOP_SCHEMA = "bucket long, key string, op long, otype string, pos long, f string, value string, last boolean"


def _bucket(key, buckets: int) -> int:
    return hash(json.dumps(key)) % buckets if not isinstance(key, int) else key % buckets


def _txn(row) -> Txn:
    done = row.complete_index if not pd.isna(row.complete_index) else None
    value = json.loads(row.complete_value if row.type == "ok" else row.invoke_value or "null")
    mops = txn_mops(row.type, value)
    return Txn(int(done if done is not None else row.invoke_index), int(row.process), row.type,
               int(row.invoke_index), None if done is None else int(done), 0, mops)


LONG_COLUMNS = [c.split()[0] for c in OUT_SCHEMA.split(", ") if c.endswith("long")]


def _rows(rec: str, **columns) -> pd.DataFrame:
    """OUT_SCHEMA rows with Arrow-friendly types (nullable longs, str/None)."""
    out = pd.DataFrame({"rec": rec, **columns}).reindex(columns=OUT_COLUMNS)
    for c in OUT_COLUMNS:
        out[c] = out[c].astype("Int64") if c in LONG_COLUMNS else out[c].astype(object).where(out[c].notna(), None)
    return out


def _finding_rows(found: list[Finding]) -> pd.DataFrame:
    return _rows("finding", type=[f.type for f in found], sort1=[f.sort[0] if f.sort else 0 for f in found],
                 sort2=[f.sort[1] if f.sort else 0 for f in found],
                 example=[json.dumps(f.example) for f in found])


def _mops_frame(buckets: int):
    def run(frames):
        for frame in frames:
            rows = []
            for row in frame.itertuples(index=False):
                for m in key_mops(_txn(row)):
                    rows.append((_bucket(m.key, buckets), json.dumps(m.key), m.op, m.otype, m.pos, m.f,
                                 json.dumps(m.value), m.last))
            yield pd.DataFrame(rows, columns=["bucket", "key", "op", "otype", "pos", "f", "value", "last"])
    return run


def _txn_findings_frame(frames):
    for frame in frames:
        found = []
        for row in frame.itertuples(index=False):
            if row.type == "ok":
                t = _txn(row)
                found.extend(txn_findings(t.id, t.mops))
        yield _finding_rows(found)


def _analyze_bucket(frame: pd.DataFrame) -> pd.DataFrame:
    mops = [KeyMop(json.loads(k), int(op), otype, int(pos), f, json.loads(v), bool(last))
            for k, op, otype, pos, f, v, last in frame[["key", "op", "otype", "pos", "f", "value", "last"]]
            .itertuples(index=False)]
    found, edges = [], []
    for key, key_mops_ in group_by_key(mops).items():
        f, e = analyze_key(key, key_mops_)
        found.extend(f)
        edges.extend(e)
    src, dst, kind, key, value, _, prev = zip(*edges) if edges else ((),) * len(Step._fields)
    edge_rows = _rows("edge", src=list(src), dst=list(dst), kind=list(kind), key=[json.dumps(k) for k in key],
                      value=[json.dumps(v) for v in value], prev=[json.dumps(p) for p in prev])
    return pd.concat([_finding_rows(found), edge_rows], ignore_index=True)


def _findings(rows: DataFrame, limit: int) -> tuple[list[Finding], dict[str, int]]:
    found = rows.where("rec = 'finding'")
    counts = {r["type"]: r["n"] for r in found.groupBy("type").agg(F.count("*").alias("n")).collect()}
    rank = F.row_number().over(Window.partitionBy("type").orderBy("sort1", "sort2", "example"))
    firsts = found.select("type", "sort1", "sort2", "example", rank.alias("r")).where(F.col("r") <= limit)
    return ([Finding(r["type"], (r["sort1"], r["sort2"]), json.loads(r["example"])) for r in firsts.collect()],
            counts)


def _cyclic_steps(edges: DataFrame, order: OrderEdges) -> tuple[list[Step], int]:
    """The data edges inside a strongly connected component of the whole
    graph (order edges included), with their explanations, and those order
    edges; and the size of the whole graph."""
    pairs = edges.select("src", "dst").toPandas()
    return _inside_components(edges, pairs, order), len(pairs) + len(order)


def _inside_components(edges: DataFrame, pairs: pd.DataFrame, order: OrderEdges) -> list[Step]:
    src = np.concatenate([pairs["src"].to_numpy(np.int64), np.array(order.src, np.int64)])
    dst = np.concatenate([pairs["dst"].to_numpy(np.int64), np.array(order.dst, np.int64)])
    if len(src) == 0:
        return []
    comps = components(src, dst)
    inside = comps.inside()
    cyclic = pd.DataFrame({"v": comps.vertices, "comp": comps.labels})
    cyclic = cyclic[cyclic["v"].isin(np.concatenate([src[inside], dst[inside]]))]
    if cyclic.empty:
        return []
    comp = edges.sparkSession.createDataFrame(cyclic)
    kept = (edges.join(F.broadcast(comp.toDF("src", "c1")), "src")
            .join(F.broadcast(comp.toDF("dst", "c2")), "dst").where("c1 = c2"))
    steps = [Step(r["src"], r["dst"], r["kind"], json.loads(r["key"]), json.loads(r["value"]),
                  prev=json.loads(r["prev"])) for r in kept.collect()]
    label = dict(zip(cyclic["v"], cyclic["comp"]))
    return steps + order.steps(i for i, (a, b) in enumerate(zip(order.src, order.dst))
                               if a in label and label.get(a) == label.get(b))


def check_list_append_spark(spark: SparkSession, ops: DataFrame, consistency_model: str,
                            allow=(), forbid=(), examples: int = DEFAULT_EXAMPLES) -> dict:
    model = consistency.check_model(consistency_model)
    txn_ops = ops.where(F.col("f") == "txn").select(
        "process", "type", "invoke_index", "invoke_time", "complete_index", "complete_time",
        "invoke_value", "complete_value").persist(StorageLevel.MEMORY_AND_DISK)
    try:
        meta = txn_ops.select("process", "type", "invoke_index", "invoke_time", "complete_index",
                              "complete_time").toPandas()
        buckets = max(2 * (os.cpu_count() or 2), math.ceil(len(meta) / OPS_PER_BUCKET))
        mops = txn_ops.mapInPandas(_mops_frame(buckets), MOP_SCHEMA)
        per_key = mops.groupBy("bucket").applyInPandas(_analyze_bucket, OUT_SCHEMA)
        rows = per_key.unionByName(txn_ops.mapInPandas(_txn_findings_frame, OUT_SCHEMA))
        rows = rows.persist(StorageLevel.MEMORY_AND_DISK)
        found, counts = _findings(rows, examples)
        txns = _meta_txns(meta)
        steps, graph_edges = _cyclic_steps(rows.where("rec = 'edge'"), order_edges(txns, model))
        rows.unpersist()
    finally:
        txn_ops.unpersist()
    info = {t.id: t.info for t in txns}
    op_counts: dict[str, int] = {}
    for t in txns:
        op_counts[t.type] = op_counts.get(t.type, 0) + 1
    return assemble(found, steps, info.get, op_counts, model, allow, forbid, examples, exact_counts=counts,
                    graph_edges=graph_edges)


def _meta_txns(meta: pd.DataFrame) -> list[Txn]:
    out = []
    for r in meta.itertuples(index=False):
        done = None if pd.isna(r.complete_index) else int(r.complete_index)
        time = r.invoke_time if pd.isna(r.complete_time) else r.complete_time
        out.append(Txn(done if done is not None else int(r.invoke_index), int(r.process), r.type,
                       int(r.invoke_index), done, int(time), ()))
    return out
