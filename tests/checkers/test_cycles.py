"""checkers/cycles.py: classification, search and wording on small graphs,
checked against brute-force enumeration of simple cycles (networkx)."""

import itertools
import random

import networkx as nx
import pytest

from checkers.cycles import (Cycle, ListAppendPhrasing, QueuePhrasing, Step, classify,
                             explain_cycle, find_cycles, strongly_connected)


def S(src, dst, kind, key="k", value=None, offset=None, prev=None):
    return Step(src, dst, kind, key, value, offset, prev)


def names(cycles):
    return sorted(c.anomaly for c in cycles)


def assert_is_cycle(cycle: Cycle, steps):
    assert set(cycle.steps) <= set(steps)
    for a, b in zip(cycle.steps, cycle.steps[1:] + cycle.steps[:1]):
        assert a.dst == b.src
    assert classify(cycle.steps) == cycle.anomaly


@pytest.mark.parametrize("kinds, expected", [
    (["ww", "ww"], "G0"),
    (["ww", "wr"], "G1c"),
    (["wr", "wr"], "G1c"),
    (["rw", "wr"], "G-single"),
    (["rw", "rw", "ww"], "G2-item"),
    (["ww", "process"], "G0-process"),
    (["rw", "realtime", "process"], "G-single-realtime"),
    (["wr", "rw", "rw", "process"], "G2-item-process"),
])
def test_classify(kinds, expected):
    n = len(kinds)
    assert classify([S(i, (i + 1) % n, k) for i, k in enumerate(kinds)]) == expected


def test_each_base_anomaly_found_exactly():
    steps = [S(1, 2, "ww"), S(2, 1, "ww"),                  # G0 on ops 1, 2
             S(3, 4, "wr"), S(4, 3, "ww"),                  # G1c on 3, 4
             S(5, 6, "rw"), S(6, 5, "wr"),                  # G-single on 5, 6
             S(7, 8, "rw"), S(8, 7, "rw"),                  # G2-item on 7, 8
             S(9, 10, "ww"), S(10, 11, "wr")]               # acyclic
    found = find_cycles(steps)
    assert names(found) == ["G-single", "G0", "G1c", "G2-item"]
    by_name = {c.anomaly: c for c in found}
    assert set(by_name["G0"].ops) == {1, 2}
    assert set(by_name["G1c"].ops) == {3, 4}
    assert set(by_name["G-single"].ops) == {5, 6}
    assert set(by_name["G2-item"].ops) == {7, 8}
    assert by_name["G1c"].uses_ww and not by_name["G-single"].uses_ww


def test_order_variants_need_the_order_edge():
    steps = [S(1, 2, "wr"), S(2, 1, "process", key="3"),     # G1c-process
             S(3, 4, "rw"), S(4, 3, "realtime", prev="7", value="9")]  # G-single-realtime
    assert names(find_cycles(steps)) == ["G-single-realtime", "G1c-process"]


def test_strongest_cycle_reported_first_and_no_weaker_duplicate():
    # ww cycle 1<->2 plus an rw chord: G0 found; G2-item only if a >=2 rw cycle exists.
    steps = [S(1, 2, "ww"), S(2, 1, "ww"), S(1, 2, "rw")]
    found = find_cycles(steps)
    assert names(found) == ["G-single", "G0"]   # rw 1->2 closed by ww 2->1


def test_clean_graph_reports_nothing():
    steps = [S(1, 2, "ww"), S(2, 3, "wr"), S(1, 3, "rw"), S(3, 4, "realtime"),
             S(1, 4, "process")]
    assert find_cycles(steps) == []
    assert strongly_connected(steps) == []


def test_self_loop_is_a_component():
    assert strongly_connected([S(1, 1, "rw"), S(1, 2, "ww")]) == [[S(1, 1, "rw")]]


def brute_force_types(steps):
    """Every classification of every simple cycle (all parallel-edge choices)."""
    graph = nx.DiGraph()
    graph.add_edges_from((s.src, s.dst) for s in steps)
    between = {}
    for s in steps:
        between.setdefault((s.src, s.dst), []).append(s)
    types = set()
    for cycle in nx.simple_cycles(graph):
        pairs = list(zip(cycle, cycle[1:] + cycle[:1]))
        for choice in itertools.product(*(between[p] for p in pairs)):
            types.add(classify(choice))
    return types


COMPLETE = {"G0", "G1c", "G-single"}   # the search is complete for these


@pytest.mark.parametrize("seed", range(40))
def test_random_graphs_against_brute_force(seed):
    rng = random.Random(seed)
    n = rng.randint(2, 6)
    steps = sorted({S(rng.randrange(n), rng.randrange(n), rng.choice(["ww", "wr", "rw",
                                                                     "process", "realtime"]))
                    for _ in range(rng.randint(1, 10))})
    found = find_cycles(steps)
    for cycle in found:
        assert_is_cycle(cycle, steps)
    truth = brute_force_types(steps)
    assert {c.anomaly for c in found} <= truth
    assert {t for t in truth if t in COMPLETE} <= {c.anomaly for c in found}


def test_explanation_list_append_wording():
    cycle = find_cycles([S(10, 20, "wr", key="3", value="5"),
                         S(20, 10, "ww", key="4", value="8", prev="7")])[0]
    ops = {10: {"index": 10, "process": 0, "time": 100, "f": "txn", "type": "ok"},
           20: {"index": 20, "process": 1, "time": 200, "f": "txn", "type": "ok"}}
    text = explain_cycle(cycle, ops, ListAppendPhrasing())
    assert text["type"] == "G1c" and text["keys"] == ["3", "4"]
    assert [row["op"]["index"] for row in text["cycle"]] == [10, 20]
    assert text["steps"] == ["T1 < T2 because T2 read T1's append of 5 to key 3",
                             "T2 < T1 because T1 appended 8 after T2 appended 7 to key 4"]
    assert text["explanation"].endswith(": a contradiction.")


def test_explanation_queue_wording():
    cycle = find_cycles([S(1, 2, "wr", key="18", value="59", offset=162),
                         S(2, 1, "wr", key="19", value="45", offset=119)])[0]
    text = explain_cycle(cycle, {}, QueuePhrasing())
    assert text["explanation"] == (
        "T1 < T2 because T2 polled T1's send of 59 to key 18 at offset 162; "
        "T2 < T1 because T1 polled T2's send of 45 to key 19 at offset 119: a contradiction.")
    assert text["uses_ww"] is False
