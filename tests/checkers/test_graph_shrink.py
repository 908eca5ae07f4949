"""checkers/graph/shrink_spark.py and checkers/graph/order_spark.py on real Spark: the
shrinking never loses a cycle (tricky cases included), and realtime edges are
exactly the transitive reduction of the realtime order."""

import random

import networkx as nx
import pytest

from checkers.graph.cycles import Step
from checkers.graph.search import cycles_per_spec
from checkers.graph.shrink_spark import EDGE_SCHEMA, drop_read_only, shrink
from checkers.graph.order_spark import process_edges, realtime_edges

pytestmark = pytest.mark.spark


def edges_df(spark, steps):
    rows = [(s.src, s.dst, s.kind, s.key, s.value, s.offset, s.prev) for s in steps]
    return spark.createDataFrame(rows, EDGE_SCHEMA)


def S(src, dst, kind, key=None, value=None):
    return Step(src, dst, kind, key, value)


def cycle_types(steps):
    return sorted(c.anomaly for c in cycles_per_spec(steps))


def test_read_only_rule_refuses_rw_and_order_edges(spark):
    df = edges_df(spark, [S(1, 2, "ww")])
    ops = spark.createDataFrame([(2,)], "id long")
    for kinds in ({"ww", "rw"}, {"ww", "realtime"}, {"wr", "process"}):
        with pytest.raises(ValueError, match="unsound"):
            drop_read_only(df, ops, kinds)
    assert drop_read_only(df, ops, {"ww", "wr"}).count() == 0


# A G-single through a read-only op 2 (it only has an rw out-edge) via a long
# ww path 3 -> 4 -> 5 -> 1 that contraction folds into one edge, plus an
# acyclic ww tail hanging off it.
READ_ONLY_IN_G_SINGLE = [S(1, 2, "wr", "a", "1"), S(2, 3, "rw", "b", "9"), S(3, 4, "ww", "b", "10"),
                         S(4, 5, "ww", "b", "11"), S(5, 1, "ww", "b", "12")]
TAIL = [S(5, 100, "realtime")] + [S(i, i + 1, "ww", "k", str(i)) for i in range(100, 130)]
# 1 -rw-> 2 -realtime-> 3 -realtime-> 4 -wr-> 1: the cycle needs the realtime path
REALTIME_PATH = [S(1, 2, "rw", "x", "7"), S(2, 3, "realtime"), S(3, 4, "realtime"),
                 S(4, 1, "wr", "y", "3")]
REALTIME_NOISE = [S(9, 3, "realtime"), S(4, 8, "ww", "y", "4")]


def random_steps(rng, n_ops, n_edges):
    kinds = ["ww", "wr", "rw", "process", "realtime"]
    return sorted({S(rng.randrange(n_ops), rng.randrange(n_ops), rng.choice(kinds), "k",
                     str(rng.randrange(3))) for _ in range(n_edges)})


def graphs():
    rng = random.Random(7)
    return ([READ_ONLY_IN_G_SINGLE + TAIL, REALTIME_PATH + REALTIME_NOISE]
            + [random_steps(rng, rng.randint(3, 12), rng.randint(2, 24)) for _ in range(40)])


def shrink_batch(spark, batch, **kwargs):
    """Shrink many graphs in one Spark run (vertex ids offset per graph) and
    give back each graph's collected steps."""
    tagged = [Step(s.src + 1000 * g, s.dst + 1000 * g, s.kind, s.key, s.value)
              for g, steps in enumerate(batch) for s in steps]
    shrunk = shrink(edges_df(spark, tagged), shrink_until=0, **kwargs)
    per_graph: list[list[Step]] = [[] for _ in batch]
    for s in shrunk.steps:
        per_graph[s.src // 1000].append(Step(s.src % 1000, s.dst % 1000, s.kind, s.key, s.value))
    return shrunk, per_graph


def on_cycle(steps):
    graph = nx.MultiDiGraph([(s.src, s.dst) for s in steps])
    comps = [c for c in nx.strongly_connected_components(graph)]
    return {(s.src, s.dst, s.kind) for s in steps
            if any(s.src in c and s.dst in c and (len(c) > 1 or s.src == s.dst) for c in comps)}


def triples(steps):
    return {(s.src, s.dst, s.kind) for s in steps}


def test_shrink_keeps_exactly_the_cyclic_edges(spark):
    """Rounds + SCC step: exactly the edges on some cycle come back (one per
    (src, dst, kind)), with every step of contracted paths, and the cycle
    search gives the same answer as on the full graph."""
    batch = graphs()
    shrunk, per_graph = shrink_batch(spark, batch, max_rounds=2, scc=True)
    assert shrunk.stats["rounds"][0] < shrunk.stats["edges"] and not shrunk.truncated
    for steps, got in zip(batch, per_graph):
        assert triples(got) == on_cycle(steps)
        assert [c.anomaly for c in cycles_per_spec(got)] == [c.anomaly for c in cycles_per_spec(steps)]
    assert sorted(per_graph[0]) == sorted(READ_ONLY_IN_G_SINGLE)
    assert cycle_types(per_graph[0]) == ["G-single"]
    assert sorted(per_graph[1]) == sorted(REALTIME_PATH)
    assert cycle_types(per_graph[1]) == ["G-single-realtime"]


def test_scc_step_keeps_the_same_edges_when_its_components_are_not_broadcast(spark, monkeypatch):
    """Above BROADCAST_VERTICES cyclic vertices the SCC step's two joins
    shuffle the edges instead: the same edges come back."""
    import checkers.graph.shrink_spark as graph_shrink
    batch = graphs()
    _, broadcast = shrink_batch(spark, batch, max_rounds=0, scc=True)
    monkeypatch.setattr(graph_shrink, "BROADCAST_VERTICES", 0)
    _, shuffled = shrink_batch(spark, batch, max_rounds=0, scc=True)
    for steps, a, b in zip(batch, broadcast, shuffled):
        assert triples(a) == triples(b) == on_cycle(steps)


def test_rounds_alone_lose_no_cycle(spark):
    """Trim/contract rounds without the SCC step: what comes back holds every
    cyclic edge, the cycle search agrees, and the rounds did remove edges."""
    batch = graphs()
    shrunk, per_graph = shrink_batch(spark, batch, max_rounds=2, scc=False)
    assert "after_scc" not in shrunk.stats
    assert shrunk.stats["steps_collected"] < sum(len(triples(g)) for g in batch)
    for steps, got in zip(batch, per_graph):
        assert triples(got) >= on_cycle(steps)
        assert [c.anomaly for c in cycles_per_spec(got)] == [c.anomaly for c in cycles_per_spec(steps)]
    assert triples(per_graph[1]) == triples(REALTIME_PATH)     # noise trimmed


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
    busy, ops, index = {}, [], 0
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


def reference_process(ops):
    by_process = {}
    for o in sorted(ops, key=lambda o: o[2]):
        by_process.setdefault(o[1], []).append(o[0])
    return {(a, b, str(p)) for p, ids in by_process.items() for a, b in zip(ids, ids[1:])}


# ids, processes, invoke and completion indices; op 3 never completes
HAND_MADE = [(0, 0, 0, 1), (1, 1, 2, 5), (2, 0, 3, 4), (3, 2, 6, None)]


def test_order_edges_match_brute_force(spark):
    """Random histories (index-disjoint, later ones realtime-after earlier
    ones, so compared as one history) plus a hand-made one, in one run."""
    rng = random.Random(3)
    histories = [random_history_ops(rng, rng.randint(1, 30), rng.randint(1, 5)) for _ in range(12)]
    histories.append(HAND_MADE)
    rows = [(o[0] + 100 * h, o[1] + 100 * h, o[2] + 1000 * h,
             None if o[3] is None else o[3] + 1000 * h)
            for h, ops in enumerate(histories) for o in ops]
    frame = ops_df(spark, rows)
    realtime = {(r.src, r.dst): r for r in realtime_edges(frame).collect()}
    assert set(realtime) == reference_realtime(rows)
    assert {(r.src, r.dst, r.key) for r in process_edges(frame).collect()} == reference_process(rows)
    hand = 100 * 12
    assert {(a - hand, b - hand) for a, b in realtime if a >= hand} == {(0, 1), (0, 2), (1, 3),
                                                                        (2, 3)}
    edge = realtime[(hand + 2, hand + 3)]
    assert (edge.kind, edge.prev, edge.value) == ("realtime", str(1000 * 12 + 4), str(1000 * 12 + 6))
