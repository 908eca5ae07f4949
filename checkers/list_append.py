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

import time

from pyspark.sql import DataFrame, SparkSession, Window, functions as F
from pyspark.sql.types import (ArrayType, IntegerType, StringType, StructField, StructType)

from checkers import consistency
from checkers import list_append_graph as g
from checkers.anomalies import (DEFAULT_EXAMPLES, anomaly_rows, collect_anomalies, op_struct,
                                union_all)
from checkers.cycles import ListAppendPhrasing, explain_cycle, find_cycles
from checkers.graph_shrink import shrink
from checkers.list_append_explain import EXPLAIN
from checkers.list_append_txn import ANOMALY_FIELDS, analyze_txn
from checkers.order_edges import process_edges, realtime_edges

_TXN_RESULT = StructType([
    StructField("anomalies", ArrayType(StructType(
        [StructField(n, IntegerType() if n == "pos" else StringType()) for n in ANOMALY_FIELDS]))),
    StructField("versions", ArrayType(StructType(
        [StructField("key", StringType()), StructField("version", StringType())]))),
])
_analyze = F.udf(lambda mops: analyze_txn([tuple(m) for m in mops]), _TXN_RESULT)


def _with_op(df: DataFrame, id_col: str, info: DataFrame, name: str) -> DataFrame:
    return df.join(info.select(F.col("id").alias(id_col), F.col("op").alias(name)), id_col, "left")


def _txn_anomalies(txn: DataFrame, info: DataFrame) -> tuple[DataFrame, DataFrame]:
    """(internal/future-read/duplicate-elements rows, lost-update rows)."""
    plain = F.transform("mops", lambda m: F.struct(m["f"], m["key"], m["value"], m["read"]))
    analyzed = txn.where("type = 'ok'").select("id", "op", _analyze(plain).alias("r"))
    own = analyzed.select("id", "op", F.explode("r.anomalies").alias("a"))
    own_rows = own.select(F.col("a.type").alias("type"), F.col("id").cast("long").alias("sort"),
                          F.col("a.pos").cast("long").alias("sort2"),
                          F.to_json(F.struct("op", "a.key", "a.pos", "a.expected", "a.read"))
                          .alias("example"))
    seen = analyzed.select("id", "op", F.explode("r.versions").alias("v")).select(
        "id", "op", "v.key", "v.version")
    lost = (seen.groupBy("key", "version")
            .agg(F.count("*").alias("n"), F.sort_array(F.collect_list("op")).alias("ops"))
            .where("n > 1"))
    lost_rows = anomaly_rows("lost-update", lost, F.col("ops")[0]["index"], F.lit(0),
                             key=F.col("key"), ops=F.col("ops"),
                             version=F.from_json("version", ArrayType(StringType())))
    return own_rows, lost_rows


def _incompatible(read: DataFrame, version: DataFrame, info: DataFrame) -> DataFrame:
    """One row per key: its first read (by op, micro-op) that is not a
    prefix of the longest."""
    clash = (read.join(version.where("NOT compatible"), "key")
             .where(F.slice("order", 1, F.size("read")) != F.col("read")))
    first = Window.partitionBy("key").orderBy("reader", "pos")
    clash = _with_op(clash.withColumn("_n", F.row_number().over(first)).where("_n = 1"),
                     "reader", info, "op")
    return anomaly_rows("incompatible-order", clash, F.col("reader"), F.col("pos"),
                        key=F.col("key"), longest=F.col("order"), read=F.col("read"),
                        op=F.col("op"))


def _read_of_writer(kind: str, df: DataFrame, writers: DataFrame, info: DataFrame,
                    condition: str) -> DataFrame:
    """Rows for reads whose `element` comes from a writer meeting `condition`
    (columns of the writer carry the suffix _w)."""
    joined = g.writer_of(df, F.col("element"), "_w", writers).where(condition)
    joined = _with_op(_with_op(joined, "reader", info, "op"), "writer_w", info, "writer_op")
    return anomaly_rows(kind, joined, F.col("reader"), F.col("pos"), key=F.col("key"),
                        element=F.col("element"), read=F.col("read"), op=F.col("op"),
                        writer=F.col("writer_op"))


def _aborted_reads(read: DataFrame, writers: DataFrame, info: DataFrame) -> DataFrame:
    """G1a: one row per element of a committed read appended by a failed txn."""
    elements = read.select("reader", "pos", "key", "read", F.explode("read").alias("element"))
    return _read_of_writer("G1a", elements, writers, info, "wtype_w = 'fail'")


def _intermediate_reads(read: DataFrame, writers: DataFrame, info: DataFrame) -> DataFrame:
    """G1b: a read ending in an element its (other, committed) writer later
    followed with another append to the same key."""
    last = read.where(F.size("read") > 0).withColumn(
        "element", F.try_element_at("read", F.lit(-1)))
    return _read_of_writer("G1b", last, writers, info,
                           "NOT last_w AND wtype_w != 'fail' AND writer_w != reader")


def _dirty_updates(element: DataFrame, info: DataFrame) -> DataFrame:
    """A failed txn's element followed, in a version order, by a committed one."""
    a, b = element.alias("a"), element.alias("b")
    dirty = (a.join(b, (F.col("a.key") == F.col("b.key")) & (F.col("b.i") == F.col("a.i") + 1))
             .where("a.wtype = 'fail' AND b.wtype != 'fail'")
             .select(F.col("a.key").alias("key"), F.col("a.value").alias("aborted"),
                     F.col("b.value").alias("value"), F.col("a.writer").alias("aw"),
                     F.col("b.writer").alias("bw")))
    dirty = _with_op(_with_op(dirty, "aw", info, "aborted_op"), "bw", info, "op")
    return anomaly_rows("dirty-update", dirty, F.col("bw"), F.col("aw"), key=F.col("key"),
                        aborted=F.col("aborted"), value=F.col("value"),
                        aborted_op=F.col("aborted_op"), op=F.col("op"))


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
    # degree rounds barely shrink these graphs (rw/wr fan-out): straight to the SCC step
    graph = shrink(edges, collect_limit=collect_limit, max_rounds=0)
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
                      consistency_model: str = "strict-serializable", allow=(), forbid=(),
                      examples: int = DEFAULT_EXAMPLES, collect_limit: int = 200_000) -> dict:
    """Results fragment: valid, anomaly_types, bad_anomaly_types, anomalies
    {type: {count, examples}}, not, also_not, stats. The model decides which
    anomaly types are bad; `allow` / `forbid` move types out of / into that
    set."""
    model = consistency.check_model(consistency_model)
    clock = _Phases()
    txn = _materialise(g.txns(ops_df))
    g.raise_bad_mops(txn)
    txn = _materialise(txn.withColumn("op", op_struct()).drop("_raw"))
    info = txn.select("id", "op")
    counts = {r["type"]: r["count"] for r in txn.groupBy("type").count().collect()}
    clock.done("parse")
    # Each of these feeds several anomaly finders and edge builders:
    # materialised once rather than recomputed (with its shuffles) per use.
    mops = _materialise(g.exploded(txn))
    writers, read = _materialise(g.appends(mops)), _materialise(g.reads(mops))
    version = _materialise(g.versions(read))
    element = _materialise(g.elements(version, writers))
    clock.done("versions")
    own, lost = _txn_anomalies(txn, info)
    rows = [own, lost, _incompatible(read, version, info), _aborted_reads(read, writers, info),
            _intermediate_reads(read, writers, info), _dirty_updates(element, info)]
    anomalies = collect_anomalies(union_all(rows), examples, EXPLAIN)
    clock.done("anomalies")
    cycles, graph_stats = _cycle_anomalies(spark, _graph_edges(txn, read, writers, element, model),
                                           info, examples, collect_limit)
    anomalies.update(cycles)
    clock.done("cycles")
    return _results(anomalies, model, allow, forbid, counts, {**graph_stats, "seconds": clock.times})


def _materialise(df: DataFrame) -> DataFrame:
    return df.localCheckpoint(eager=True)


class _Phases:
    """Wall-clock seconds per phase, for stats (where does the time go)."""

    def __init__(self) -> None:
        self.times: dict[str, float] = {}
        self._last = time.monotonic()

    def done(self, phase: str) -> None:
        now = time.monotonic()
        self.times[phase] = round(now - self._last, 3)
        self._last = now


def verdict(anomaly_types, model: str, allow=(), forbid=(), any_ok: bool = True
            ) -> tuple[bool | str, list[str]]:
    """(valid, bad anomaly types): bad = forbidden by the model or `forbid`,
    unless in `allow`; "unknown" when nothing bad but nothing committed."""
    forbidden = (consistency.proscribed(model) | set(forbid)) - set(allow)
    bad = sorted(set(anomaly_types) & forbidden)
    if bad:
        return False, bad
    return (True if any_ok else "unknown"), bad


def _results(anomalies: dict[str, dict], model: str, allow, forbid, counts: dict,
             graph_stats: dict) -> dict:
    types = sorted(anomalies)
    valid, bad = verdict(types, model, allow, forbid, any_ok=bool(counts.get("ok")))
    not_, also_not = consistency.violated(types)
    return {"valid": valid, "anomaly_types": types, "bad_anomaly_types": bad,
            "anomalies": anomalies, "not": not_, "also_not": also_not,
            "consistency_model": model,
            "stats": {"ops": counts, **graph_stats}}
