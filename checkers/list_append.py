"""The list-append checker: Elle's analysis, in Spark.

`check_list_append(spark, ops_df, consistency_model)` takes operations as
`history_io.pair_operations` gives them and returns the results fragment
(shared/history-format.md) plus Elle's `not` / `also_not`.

Per key the version order is the longest read; every read must be a prefix
of it (else incompatible-order, and the key gives no ww/rw edges). Edges: ww
(consecutive elements of the order), wr (a read's last element), rw (a read
to the element after it), plus process and realtime orders as the model
needs. Non-cycle anomalies are rows of one union, counted and sampled in one
job; the graph goes through graph_shrink and the cycles are searched and
explained on the driver (checkers/cycles.py).
"""

from __future__ import annotations

import json

from pyspark.sql import Column, DataFrame, SparkSession, Window, functions as F
from pyspark.sql.types import (ArrayType, IntegerType, StringType, StructField, StructType)

from checkers import consistency
from checkers import list_append_graph as g
from checkers.cycles import ListAppendPhrasing, explain_cycle, find_cycles
from checkers.graph_shrink import shrink
from checkers.list_append_txn import ANOMALY_FIELDS, analyze_txn
from checkers.order_edges import process_edges, realtime_edges

DEFAULT_EXAMPLES = 20

_TXN_RESULT = StructType([
    StructField("anomalies", ArrayType(StructType(
        [StructField(n, IntegerType() if n == "pos" else StringType()) for n in ANOMALY_FIELDS]))),
    StructField("versions", ArrayType(StructType(
        [StructField("key", StringType()), StructField("version", StringType())]))),
])
_analyze = F.udf(lambda mops: analyze_txn([tuple(m) for m in mops]), _TXN_RESULT)


def _op(prefix: str = "") -> Column:
    """An operation as examples show it."""
    c = lambda n: F.col(prefix + n)  # noqa: E731
    return F.struct(c("id").alias("index"), c("process").alias("process"),
                    F.coalesce(c("complete_time"), c("invoke_time")).alias("time"),
                    c("f").alias("f"), c("type").alias("type"))


def _rows(kind: str, df: DataFrame, sort: Column, **fields: Column) -> DataFrame:
    return df.select(F.lit(kind).alias("type"), sort.cast("long").alias("sort"),
                     F.to_json(F.struct(*[v.alias(k) for k, v in fields.items()])).alias("example"))


def _with_op(df: DataFrame, id_col: str, info: DataFrame, name: str) -> DataFrame:
    return df.join(info.select(F.col("id").alias(id_col), F.col("op").alias(name)), id_col, "left")


def _txn_anomalies(txn: DataFrame, info: DataFrame) -> tuple[DataFrame, DataFrame]:
    """(internal/future-read/duplicate-elements rows, lost-update rows)."""
    plain = F.transform("mops", lambda m: F.struct(m["f"], m["key"], m["value"], m["read"]))
    analyzed = txn.where("type = 'ok'").select("id", "op", _analyze(plain).alias("r"))
    own = analyzed.select("id", "op", F.explode("r.anomalies").alias("a"))
    own_rows = own.select(F.col("a.type").alias("t"), "id", "op", "a.*").select(
        F.col("t").alias("type"), F.col("id").cast("long").alias("sort"),
        F.to_json(F.struct("op", "key", "pos", "expected", "read")).alias("example"))
    seen = analyzed.select("id", "op", F.explode("r.versions").alias("v")).select(
        "id", "op", "v.key", "v.version")
    lost = (seen.groupBy("key", "version")
            .agg(F.count("*").alias("n"), F.sort_array(F.collect_list("op")).alias("ops"))
            .where("n > 1"))
    lost_rows = _rows("lost-update", lost, F.col("ops")[0]["index"], key=F.col("key"),
                      version=F.from_json("version", ArrayType(StringType())), ops=F.col("ops"))
    return own_rows, lost_rows


def _read_anomalies(read: DataFrame, writers: DataFrame, version: DataFrame,
                    element: DataFrame, info: DataFrame) -> list[DataFrame]:
    """incompatible-order, G1a, G1b, dirty-update rows."""
    reader = lambda df: _with_op(df, "reader", info, "op")  # noqa: E731
    clash = (read.join(version.where("NOT compatible"), "key")
             .where(F.slice("order", 1, F.size("read")) != F.col("read")))
    first_clash = Window.partitionBy("key").orderBy("reader", "pos")
    clash = reader(clash.withColumn("_n", F.row_number().over(first_clash)).where("_n = 1"))
    incompatible = _rows("incompatible-order", clash, F.col("reader"), key=F.col("key"),
                         longest=F.col("order"), read=F.col("read"), op=F.col("op"))

    elements_read = read.select("reader", "pos", "key", "read",
                                F.explode("read").alias("element"))
    aborted = g._writer_of(elements_read, F.col("element"), "_w", writers).where("wtype_w = 'fail'")
    aborted = _with_op(reader(aborted), "writer_w", info, "writer_op")
    g1a = _rows("G1a", aborted, F.col("reader"), key=F.col("key"), element=F.col("element"),
                read=F.col("read"), op=F.col("op"), writer=F.col("writer_op"))

    last = read.where(F.size("read") > 0).withColumn(
        "element", F.try_element_at("read", F.lit(-1)))
    middle = g._writer_of(last, F.col("element"), "_w", writers).where(
        "NOT last_w AND wtype_w != 'fail' AND writer_w != reader")
    middle = _with_op(reader(middle), "writer_w", info, "writer_op")
    g1b = _rows("G1b", middle, F.col("reader"), key=F.col("key"), element=F.col("element"),
                read=F.col("read"), op=F.col("op"), writer=F.col("writer_op"))

    a, b = element.alias("a"), element.alias("b")
    dirty = a.join(b, (F.col("a.key") == F.col("b.key")) & (F.col("b.i") == F.col("a.i") + 1)) \
        .where("a.wtype = 'fail' AND b.wtype != 'fail'") \
        .select(F.col("a.key").alias("key"), F.col("a.value").alias("aborted"),
                F.col("b.value").alias("value"), F.col("a.writer").alias("aw"),
                F.col("b.writer").alias("bw"))
    dirty = _with_op(_with_op(dirty, "aw", info, "aborted_op"), "bw", info, "op")
    dirty_rows = _rows("dirty-update", dirty, F.col("bw"), key=F.col("key"),
                       aborted=F.col("aborted"), value=F.col("value"),
                       aborted_op=F.col("aborted_op"), op=F.col("op"))
    return [incompatible, g1a, g1b, dirty_rows]


def collect_rows(rows: DataFrame, limit: int) -> dict[str, dict]:
    """{type: {count, examples}} in one job: exact counts, first `limit`."""
    by_type = Window.partitionBy("type")
    ranked = rows.select("type", "example", F.count(F.lit(1)).over(by_type).alias("count"),
                         F.row_number().over(by_type.orderBy("sort", "example")).alias("rank"))
    found: dict[str, dict] = {}
    for row in ranked.where(F.col("rank") <= max(limit, 1)).orderBy("type", "rank").collect():
        entry = found.setdefault(row["type"], {"count": row["count"], "examples": []})
        if row["rank"] <= limit:
            entry["examples"].append(json.loads(row["example"]))
    return found


def _graph_edges(txn: DataFrame, read: DataFrame, writers: DataFrame, element: DataFrame,
                 model: str) -> DataFrame:
    edges = (g.ww_edges(element).unionByName(g.wr_edges(read, writers))
             .unionByName(g.rw_edges(read, element)))
    ordered = txn.where("type != 'fail'")
    needs = consistency.proscribed(model)
    if needs & {"G0-process", "G1c-process", "G-single-process", "G2-item-process"}:
        edges = edges.unionByName(process_edges(ordered))
    if needs & {"G0-realtime", "G1c-realtime", "G-single-realtime", "G2-item-realtime"}:
        edges = edges.unionByName(realtime_edges(ordered.withColumn(
            "complete_index", F.when(F.col("type") == "ok", F.col("complete_index")))))
    return edges


def _cycle_anomalies(spark: SparkSession, edges: DataFrame, info: DataFrame, limit: int,
                     collect_limit: int) -> tuple[dict[str, dict], dict]:
    graph = shrink(edges, collect_limit=collect_limit)
    cycles = find_cycles(graph.steps)
    ids = sorted({op for c in cycles for op in c.ops})
    ops = {}
    if ids:
        wanted = spark.createDataFrame([(i,) for i in ids], "id long")
        ops = {r["id"]: r["op"].asDict() for r in info.join(wanted, "id").collect()}
    found: dict[str, dict] = {}
    for cycle in cycles:
        entry = found.setdefault(cycle.anomaly, {"count": 0, "examples": []})
        entry["count"] += 1
        if len(entry["examples"]) < limit:
            entry["examples"].append(explain_cycle(cycle, ops, ListAppendPhrasing()))
    stats = {"graph": graph.stats, "graph_truncated": graph.truncated}
    return found, stats


def check_list_append(spark: SparkSession, ops_df: DataFrame,
                      consistency_model: str = "strict-serializable",
                      examples: int = DEFAULT_EXAMPLES, collect_limit: int = 200_000) -> dict:
    """Results fragment: valid, anomaly_types, bad_anomaly_types, anomalies
    {type: {count, examples}}, not, also_not, stats."""
    model = consistency.check_model(consistency_model)
    txn = g.txns(ops_df).localCheckpoint(eager=True)
    g.raise_bad_mops(txn)
    txn = txn.withColumn("op", _op())
    info = txn.select("id", "op")
    mops = g.exploded(txn).localCheckpoint(eager=True)
    writers, read = g.appends(mops), g.reads(mops)
    version = g.versions(read).localCheckpoint(eager=True)
    element = g.elements(version, writers)
    own, lost = _txn_anomalies(txn, info)
    rows = [own, lost] + _read_anomalies(read, writers, version, element, info)
    anomalies = collect_rows(_union(rows), examples)
    cycles, graph_stats = _cycle_anomalies(spark, _graph_edges(txn, read, writers, element, model),
                                           info, examples, collect_limit)
    anomalies.update(cycles)
    counts = {r["type"]: r["count"] for r in txn.groupBy("type").count().collect()}
    return _results(anomalies, model, counts, graph_stats)


def _union(frames: list[DataFrame]) -> DataFrame:
    out = frames[0]
    for frame in frames[1:]:
        out = out.unionByName(frame)
    return out


def _results(anomalies: dict[str, dict], model: str, counts: dict, graph_stats: dict) -> dict:
    types = sorted(anomalies)
    bad = sorted(set(types) & consistency.proscribed(model))
    not_, also_not = consistency.violated(types)
    if bad:
        valid: bool | str = False
    elif not counts.get("ok"):
        valid = "unknown"          # nothing committed: nothing to judge
    else:
        valid = True
    return {"valid": valid, "anomaly_types": types, "bad_anomaly_types": bad,
            "anomalies": anomalies, "not": not_, "also_not": also_not,
            "consistency_model": model,
            "stats": {"ops": counts, **graph_stats}}
