"""checkers/graph_shrink.py and checkers/order_edges.py on real Spark: the
shrinking never loses a cycle (tricky cases included), and realtime edges are
exactly the transitive reduction of the realtime order."""

import random

import networkx as nx
import pytest

from checkers.cycles import Step, find_cycles
from checkers.graph_shrink import EDGE_SCHEMA, drop_read_only, shrink
from checkers.order_edges import process_edges, realtime_edges

pytestmark = pytest.mark.spark


def edges_df(spark, steps):
    rows = [(s.src, s.dst, s.kind, s.key, s.value, s.offset, s.prev) for s in steps]
    return spark.createDataFrame(rows, EDGE_SCHEMA)


def S(src, dst, kind, key=None, value=None):
    return Step(src, dst, kind, key, value)


def cycle_types(steps):
    return sorted(c.anomaly for c in find_cycles(steps))


def test_chain_trimmed_and_cycle_kept_with_every_step(spark):
    chain = [S(i, i + 1, "ww", "k", str(i)) for i in range(100, 130)]   # acyclic tail
    # a G-single through a read-only op 2 (it only has an rw out-edge) via a
    # long ww path 3 -> 4 -> 5 -> 1 that contraction folds into one edge
    cycle = [S(1, 2, "wr", "a", "1"), S(2, 3, "rw", "b", "9"), S(3, 4, "ww", "b", "10"),
             S(4, 5, "ww", "b", "11"), S(5, 1, "ww", "b", "12")]
    shrunk = shrink(edges_df(spark, chain + cycle + [S(5, 100, "realtime")]),
                    collect_limit=10, shrink_until=0, max_rounds=3)
    assert sorted(shrunk.steps) == sorted(cycle)
    assert cycle_types(shrunk.steps) == ["G-single"]
    assert not shrunk.truncated


def test_realtime_only_path_is_kept(spark):
    # 1 -rw-> 2 -realtime-> 3 -realtime-> 4 -wr-> 1: the cycle needs realtime
    steps = [S(1, 2, "rw", "x", "7"), S(2, 3, "realtime"), S(3, 4, "realtime"),
             S(4, 1, "wr", "y", "3"), S(9, 3, "realtime"), S(4, 8, "ww", "y", "4")]
    shrunk = shrink(edges_df(spark, steps), shrink_until=0, max_rounds=3)
    assert shrunk.stats["rounds"] and "after_scc" not in shrunk.stats  # trimming alone
    assert sorted(shrunk.steps) == sorted(steps[:4])
    assert cycle_types(shrunk.steps) == ["G-single-realtime"]


def test_read_only_rule_refuses_rw_and_order_edges(spark):
    df = edges_df(spark, [S(1, 2, "ww")])
    ops = spark.createDataFrame([(2,)], "id long")
    for kinds in ({"ww", "rw"}, {"ww", "realtime"}, {"wr", "process"}):
        with pytest.raises(ValueError, match="unsound"):
            drop_read_only(df, ops, kinds)
    assert drop_read_only(df, ops, {"ww", "wr"}).count() == 0


def random_steps(rng, n_ops, n_edges):
    kinds = ["ww", "wr", "rw", "process", "realtime"]
    return sorted({S(rng.randrange(n_ops), rng.randrange(n_ops), rng.choice(kinds), "k",
                     str(rng.randrange(3))) for _ in range(n_edges)})


def test_random_graphs_lose_no_cycle(spark):
    """Many random graphs in one Spark job batch (tagged by a graph offset):
    the shrunk graph must hold exactly the edges on some cycle, and the cycle
    search must give the same answer as on the full graph."""
    rng = random.Random(7)
    graphs = [random_steps(rng, rng.randint(3, 12), rng.randint(2, 24)) for _ in range(40)]
    tagged = [Step(s.src + 1000 * g, s.dst + 1000 * g, s.kind, s.key, s.value)
              for g, steps in enumerate(graphs) for s in steps]
    shrunk = shrink(edges_df(spark, tagged), shrink_until=0, max_rounds=2, scc=True)
    per_graph: dict[int, list[Step]] = {}
    for s in shrunk.steps:
        per_graph.setdefault(s.src // 1000, []).append(
            Step(s.src % 1000, s.dst % 1000, s.kind, s.key, s.value))
    for g, steps in enumerate(graphs):
        graph = nx.MultiDiGraph([(s.src, s.dst) for s in steps])
        on_cycle = {s for s in steps
                    if any(s.src in c and s.dst in c for c in nx.strongly_connected_components(graph)
                           if len(c) > 1 or s.src == s.dst)}
        got = per_graph.get(g, [])
        # deduplication keeps one step per (src, dst, kind); every one is on a cycle
        assert {(s.src, s.dst, s.kind) for s in got} == {(s.src, s.dst, s.kind) for s in on_cycle}
        assert [c.anomaly for c in find_cycles(got)] == [c.anomaly for c in find_cycles(steps)]


def test_scc_fallback_in_executor(spark):
    steps = [S(1, 2, "ww"), S(2, 1, "wr"), S(3, 4, "ww"), S(4, 5, "ww"), S(5, 3, "rw"),
             S(5, 6, "ww"), S(6, 7, "ww"), S(7, 6, "realtime"), S(2, 3, "ww")]
    shrunk = shrink(edges_df(spark, steps), collect_limit=1, max_rounds=0)
    # max_rounds=0: no trimming, the SCC step alone drops 2 -> 3 and 5 -> 6
    assert shrunk.stats["after_scc"] == 7
    assert shrunk.truncated            # 7 cyclic edges > limit 1: a subset comes back
    assert len(shrunk.steps) == 1


def ops_df(spark, ops):
    return spark.createDataFrame(ops, "id long, process long, invoke_index long, complete_index long")


def reference_realtime(ops):
    """Brute force: A -> B iff A completed before B began and no C fits between."""
    done = [o for o in ops if o[3] is not None]
    before = {(a[0], b[0]) for a in done for b in ops if a[3] < b[2]}
    by_id = {o[0]: o for o in ops}
    return {(a, b) for a, b in before
            if not any((a, c) in before and (c, b) in before for c in by_id)}


def random_history_ops(rng, n, processes):
    """(id, process, invoke, complete) with one op at a time per process."""
    events, busy, ops, index = [], {}, [], 0
    pending = list(range(n))
    while pending or busy:
        free = [p for p in range(processes) if p not in busy]
        if pending and free and (not busy or rng.random() < 0.5):
            p = rng.choice(free)
            busy[p] = (pending.pop(0), index)
        else:
            p = rng.choice(sorted(busy))
            op, began = busy.pop(p)
            ops.append((op, p, began, None if rng.random() < 0.1 else index))
        index += 1
    return ops


def test_realtime_edges_are_the_transitive_reduction(spark):
    rng = random.Random(3)
    histories = [random_history_ops(rng, rng.randint(1, 30), rng.randint(1, 5)) for _ in range(12)]
    rows = [(o[0] + 100 * h, o[1] + 100 * h, o[2] + 1000 * h, None if o[3] is None else o[3] + 1000 * h)
            for h, ops in enumerate(histories) for ops_ in [ops] for o in ops_]
    got = {(r.src, r.dst) for r in realtime_edges(ops_df(spark, rows)).collect()}
    # histories are index-disjoint but later ones are realtime-after earlier
    # ones, so compare on the union as one history
    assert got == reference_realtime(rows)


def test_realtime_edge_explanation_and_process_edges(spark):
    ops = [(0, 0, 0, 1), (1, 1, 2, 5), (2, 0, 3, 4), (3, 2, 6, None)]
    rt = {(r.src, r.dst): r for r in realtime_edges(ops_df(spark, ops)).collect()}
    assert set(rt) == {(0, 1), (0, 2), (1, 3), (2, 3)}
    assert (rt[(2, 3)].prev, rt[(2, 3)].value) == ("4", "6")
    pe = {(r.src, r.dst, r.key) for r in process_edges(ops_df(spark, ops)).collect()}
    assert pe == {(0, 2, "0")}
