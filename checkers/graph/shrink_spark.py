"""Shrink a dependency graph in Spark until only the part that can hold a
cycle is left, then bring that part to the driver as `cycles.Step`s.

The edges DataFrame has one row per dependency (see EDGE_SCHEMA; build it
with `conform_edges`): `src` must precede `dst`, `kind` is ww/wr/rw/process/
realtime, and key/value/offset/prev explain why. Nothing proportional to the
history is collected: rounds (one degree aggregation each) of

1. trimming: drop every edge touching a vertex with no incoming or no outgoing
   edge (such a vertex lies on no cycle);
2. contraction: a vertex with exactly one in-edge and one out-edge is replaced
   by one edge that carries the concatenated path (explanations keep every
   step); vertices contracted in one round are never adjacent (random coins);

(with max_rounds=0 the rounds are skipped: callers that shrank the graph
themselves, like the queue's buckets, go straight to the next step) then, if
the graph is still above `collect_limit`, the strongly connected
components are computed by scipy's compiled routine inside ONE executor task
(`applyInPandas`, integer arrays only) and only edges inside a non-trivial
component are kept. Why none of this can lose a cycle: docs/checkers-cycles.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from pyspark.sql import Column, DataFrame, functions as F
from pyspark.sql.types import LongType, StringType, StructField, StructType

from checkers.graph.cycles import Step, components

EXPLANATION_FIELDS = (("key", StringType()), ("value", StringType()),
                      ("offset", LongType()), ("prev", StringType()))
EDGE_SCHEMA = StructType(
    [StructField("src", LongType(), False), StructField("dst", LongType(), False),
     StructField("kind", StringType(), False)]
    + [StructField(name, typ, True) for name, typ in EXPLANATION_FIELDS])
STEP_COLUMNS = [f.name for f in EDGE_SCHEMA.fields]
EDGE_KINDS = frozenset({"ww", "wr", "rw", "process", "realtime"})
READ_ONLY_SAFE_KINDS = frozenset({"ww", "wr"})
MIN_ROUND_GAIN = 0.1


def conform_edges(df: DataFrame) -> DataFrame:
    """`df` with exactly EDGE_SCHEMA's columns (missing explanation columns
    become null, types are cast), so edges of any origin can be unioned."""
    missing = {"src", "dst", "kind"} - set(df.columns)
    if missing:
        raise ValueError(f"edges DataFrame lacks column(s) {sorted(missing)}; "
                         f"it has {df.columns}")
    return df.select([
        (F.col(f.name) if f.name in df.columns else F.lit(None)).cast(f.dataType).alias(f.name)
        for f in EDGE_SCHEMA.fields])


def drop_read_only(edges: DataFrame, read_only_ops: DataFrame, kinds: set[str]) -> DataFrame:
    """Drop edges touching operations that wrote nothing (column `id`).

    Valid ONLY for graphs of ww and wr edges: there a read-only operation has
    no outgoing edge, so it closes no cycle. Once rw (the reader precedes the
    next writer), process or realtime edges exist, a reader can sit inside a
    cycle (e.g. G-single), so this refuses unless `kinds`, the edge kinds the
    caller built, are only ww/wr. (Degree trimming in `shrink` needs no such
    promise: it is sound for every kind.)
    """
    if not set(kinds) <= READ_ONLY_SAFE_KINDS:
        raise ValueError(f"drop_read_only is unsound with {sorted(set(kinds) - READ_ONLY_SAFE_KINDS)} "
                         "edges: a read-only operation can close a cycle through them")
    ids = read_only_ops.select(F.col("id").alias("v"))
    return (edges.join(ids.withColumnRenamed("v", "src"), "src", "left_anti")
                 .join(ids.withColumnRenamed("v", "dst"), "dst", "left_anti"))


@dataclass
class ShrunkGraph:
    """The part of the graph that can hold a cycle, as original steps."""

    steps: list[Step]
    truncated: bool = False
    stats: dict = field(default_factory=dict)


def _step_struct() -> Column:
    return F.struct(*[F.col(c) for c in STEP_COLUMNS])


def _as_paths(edges: DataFrame) -> DataFrame:
    """One row per (src, dst, kind) with the smallest explanation, as a path."""
    conformed = conform_edges(edges)
    return (conformed.groupBy("src", "dst", "kind")
            .agg(F.min(_step_struct()).alias("step"))
            .select("src", "dst", F.array("step").alias("path")))


def _checkpoint(df: DataFrame) -> tuple[DataFrame, int]:
    """Materialise (cutting the lineage that grows each round) and count."""
    df = df.localCheckpoint(eager=True)
    return df, df.count()


def _degrees(paths: DataFrame, round_no: int) -> DataFrame:
    """Per vertex: alive (has an in-edge and an out-edge) and candidate for
    contraction (exactly one of each, no self-loop, heads on this round's
    coin). One aggregation."""
    ends = paths.select(F.col("src").alias("v"), F.lit(1).alias("o"), F.lit(0).alias("i"),
                        (F.col("src") == F.col("dst")).cast("int").alias("loop")).unionByName(
        paths.select(F.col("dst").alias("v"), F.lit(0).alias("o"), F.lit(1).alias("i"),
                     F.lit(0).alias("loop")))
    deg = ends.groupBy("v").agg(F.sum("o").alias("dout"), F.sum("i").alias("din"),
                                F.max("loop").alias("loop"))
    heads = F.pmod(F.xxhash64("v", F.lit(round_no)), F.lit(2)) == 0
    return deg.select("v", ((F.col("din") > 0) & (F.col("dout") > 0)).alias("alive"),
                      ((F.col("din") == 1) & (F.col("dout") == 1) & (F.col("loop") == 0) & heads)
                      .alias("cand"))


def _round(paths: DataFrame, round_no: int) -> DataFrame:
    """Trim and contract at once, both judged on this round's degrees.

    Trim: drop edges touching a vertex with no in-edge or no out-edge.
    Contract: a candidate v whose (unique) predecessor is not a candidate is
    *chosen*: u -p1-> v -p2-> w becomes u -(p1 ++ p2)-> w. Chosen vertices
    are never adjacent, and contraction leaves the degrees of u and w as they
    were, so the alive flags still hold for the contracted graph.
    """
    deg = _degrees(paths, round_no)
    side = lambda p: deg.select(F.col("v").alias(p), F.col("alive").alias(p + "_alive"),  # noqa: E731
                                F.col("cand").alias(p + "_cand"))
    edges = paths.join(side("src"), "src").join(side("dst"), "dst")
    into_chosen = edges.where("dst_cand AND NOT src_cand")   # the in-edge of each chosen v
    chosen = into_chosen.select(F.col("dst").alias("src"), F.lit(True).alias("from_chosen"))
    edges = edges.join(chosen, "src", "left").withColumn(
        "from_chosen", F.coalesce("from_chosen", F.lit(False)))
    kept = edges.where("src_alive AND dst_alive AND NOT from_chosen "
                       "AND NOT (dst_cand AND NOT src_cand)").select("src", "dst", "path")
    first = into_chosen.where("src_alive").select(F.col("src").alias("u"), F.col("dst").alias("v"),
                                                  F.col("path").alias("p1"))
    second = edges.where("from_chosen AND dst_alive").select(
        F.col("src").alias("v"), F.col("dst").alias("w"), F.col("path").alias("p2"))
    merged = first.join(second, "v").select(F.col("u").alias("src"), F.col("w").alias("dst"),
                                            F.concat("p1", "p2").alias("path"))
    return kept.unionByName(merged)


def _cyclic_vertices(pairs: pd.DataFrame) -> pd.DataFrame:
    """Executor side: vertices of non-trivial SCCs, with their component."""
    comps = components(pairs["src"].to_numpy(np.int64), pairs["dst"].to_numpy(np.int64))
    return pd.DataFrame({"v": comps.vertices[comps.cyclic], "comp": comps.labels[comps.cyclic].astype(np.int64)})


# Up to this many cyclic vertices (most histories have few) the edges are
# filtered against them broadcast, with no shuffle of the edges.
BROADCAST_VERTICES = 1_000_000


def _keep_inside_sccs(edges: DataFrame) -> DataFrame:
    """The edges inside a non-trivial strongly connected component. The
    components are computed once (materialised: both joins read them)."""
    comps, cyclic = _checkpoint(edges.select("src", "dst").withColumn("g", F.lit(0)).groupBy("g")
                                .applyInPandas(lambda pdf: _cyclic_vertices(pdf), schema="v long, comp long"))
    side = (lambda df: F.broadcast(df)) if cyclic <= BROADCAST_VERTICES else (lambda df: df)  # noqa: E731
    return (edges.join(side(comps.select(F.col("v").alias("src"), F.col("comp").alias("c1"))), "src")
                 .join(side(comps.select(F.col("v").alias("dst"), F.col("comp").alias("c2"))), "dst")
                 .where("c1 = c2").select(*edges.columns))


def shrink(edges: DataFrame, collect_limit: int = 200_000, shrink_until: int | None = None,
           max_rounds: int = 12, scc: bool | None = None, seed: int = 0) -> ShrunkGraph:
    """The steps of every edge that may lie on a cycle (all of them, unless
    the cyclic part alone exceeds `collect_limit` edges: then a subset, and
    `truncated` is set; cycles found in a subset are still real cycles).

    Trim/contract rounds stop when a round removes under 10%, after `max_rounds`, or once
    at most `shrink_until` (default collect_limit/4) edges remain. The SCC step
    runs when more than `collect_limit` edges remain (scc=None), always
    (scc=True) or never (scc=False)."""
    shrink_until = collect_limit // 4 if shrink_until is None else shrink_until
    if max_rounds == 0 and scc is not False:
        # no rounds: only the SCC step, which needs src/dst alone, so it runs
        # before the (then small) grouping into paths
        count = edges.count()
        stats = {"edges": count, "rounds": []}
        if scc or count > collect_limit:
            edges = _keep_inside_sccs(conform_edges(edges)).localCheckpoint(eager=True)
        paths, count = _checkpoint(_as_paths(edges))
        stats["after_scc"] = count
        return _collected(paths, count, collect_limit, stats)
    paths, count = _checkpoint(_as_paths(edges))
    stats = {"edges": count, "rounds": []}
    for round_no in range(max_rounds):
        if count <= shrink_until:
            break
        # One materialisation per round: trim, then contract what is left.
        paths, after = _checkpoint(_round(paths, seed + round_no))
        stats["rounds"].append(after)
        # Long realtime/process chains barely shrink per round (high degree,
        # nothing to contract): once a round gains under 10%, let the SCC
        # step do the rest in one pass.
        slow, count = after > count * (1 - MIN_ROUND_GAIN), after
        if slow:
            break
    if scc or (scc is None and count > collect_limit):
        paths, count = _checkpoint(_keep_inside_sccs(paths))
        stats["after_scc"] = count
    return _collected(paths, count, collect_limit, stats)


def _collected(paths: DataFrame, count: int, collect_limit: int, stats: dict) -> ShrunkGraph:
    truncated = count > collect_limit
    if truncated:
        paths = paths.limit(collect_limit)
    rows = paths.select(F.explode("path").alias("s")).select("s.*").collect()
    steps = [Step(**row.asDict()) for row in rows]
    stats["steps_collected"] = len(steps)
    return ShrunkGraph(steps=steps, truncated=truncated, stats=stats)
