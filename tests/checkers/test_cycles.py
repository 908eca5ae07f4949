"""checkers/graph/cycles.py and search.py: classification, search and wording on small graphs,
checked against brute-force enumeration of simple cycles (networkx)."""

import itertools
import random

import networkx as nx
import pytest

from checkers.graph.cycles import Cycle, ListAppendPhrasing, QueuePhrasing, Step, classify, explain_cycle, strongly_connected
from checkers.graph.search import cycles_per_spec


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
    found = cycles_per_spec(steps)
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
    assert names(cycles_per_spec(steps)) == ["G-single-realtime", "G1c-process"]


def test_strongest_cycle_reported_first_and_no_weaker_duplicate():
    # ww cycle 1<->2 plus an rw chord: G0 found; G2-item only if a >=2 rw cycle exists.
    steps = [S(1, 2, "ww"), S(2, 1, "ww"), S(1, 2, "rw")]
    found = cycles_per_spec(steps)
    assert names(found) == ["G-single", "G0"]   # rw 1->2 closed by ww 2->1


def test_clean_graph_reports_nothing():
    steps = [S(1, 2, "ww"), S(2, 3, "wr"), S(1, 3, "rw"), S(3, 4, "realtime"),
             S(1, 4, "process")]
    assert cycles_per_spec(steps) == []
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
    found = cycles_per_spec(steps)
    for cycle in found:
        assert_is_cycle(cycle, steps)
    truth = brute_force_types(steps)
    assert {c.anomaly for c in found} <= truth
    assert {t for t in truth if t in COMPLETE} <= {c.anomaly for c in found}


def test_explanation_list_append_wording():
    cycle = cycles_per_spec([S(10, 20, "wr", key="3", value="5"),
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
    cycle = cycles_per_spec([S(1, 2, "wr", key="18", value="59", offset=162),
                         S(2, 1, "wr", key="19", value="45", offset=119)])[0]
    text = explain_cycle(cycle, {}, QueuePhrasing())
    assert text["explanation"] == (
        "T1 < T2 because T2 polled T1's send of 59 to key 18 at offset 162; "
        "T2 < T1 because T1 polled T2's send of 45 to key 19 at offset 119: a contradiction.")
    assert text["uses_ww"] is False


# ------------------------------------------------ checkers/graph/search (list-append)

from checkers.graph import search as cycle_search  # noqa: E402


def search_names(steps, wanted=cycle_search.SEARCH_ORDER):
    return sorted(c.anomaly for c in cycle_search.cycle_anomalies(steps, wanted))


@pytest.mark.parametrize("kinds, expected", [
    (["ww", "ww"], "G0"),
    (["ww", "wr"], "G1c"),
    (["rw", "wr"], "G-single"),
    (["rw", "rw"], "G2-item"),
    (["rw", "rw", "ww"], "G2-item"),
    (["rw", "wr", "rw", "wr"], "G-nonadjacent"),
    (["wr", "rw", "ww", "rw"], "G-nonadjacent"),
    (["rw", "wr", "rw"], "G2-item"),             # the last rw and the first are adjacent (wrap)
    (["rw", "ww", "wr", "rw"], "G2-item"),       # likewise, with more between
    (["ww", "rw", "wr", "rw"], "G-nonadjacent"),  # ww between the last rw and the first
    (["rw", "wr", "rw", "rw", "ww"], "G2-item"),  # two of three rw in a row
    (["rw", "wr", "rw", "realtime"], "G-nonadjacent-realtime"),
    (["rw", "process", "rw", "wr"], "G-nonadjacent-process"),
    (["rw", "realtime", "rw", "process"], "G-nonadjacent-realtime"),
    (["rw", "rw", "process"], "G2-item-process"),
    (["ww", "process"], "G0-process"),
])
def test_search_classify(kinds, expected):
    n = len(kinds)
    assert cycle_search.classify([S(i, (i + 1) % n, k) for i, k in enumerate(kinds)]) == expected


def test_nonadjacent_cycle_found_and_g2_item_not_reported_beside_it():
    steps = [S(1, 2, "rw"), S(2, 3, "wr"), S(3, 4, "rw"), S(4, 1, "wr")]
    (cycle,) = cycle_search.cycle_anomalies(steps)
    assert cycle.anomaly == "G-nonadjacent" and set(cycle.ops) == {1, 2, 3, 4}
    assert_search_cycle(cycle, steps)


def test_wrap_around_makes_it_g2_item():
    steps = [S(1, 2, "rw"), S(2, 3, "wr"), S(3, 1, "rw")]
    assert search_names(steps) == ["G2-item"]


def test_nonadjacent_search_avoids_the_adjacent_closing():
    # 1 -rw-> 2 closes two ways: rw 2->1 (G2-item) or wr 2->3 -rw-> 4 -wr-> 1
    steps = [S(1, 2, "rw"), S(2, 1, "rw"), S(2, 3, "wr"), S(3, 4, "rw"), S(4, 1, "wr")]
    found = {c.anomaly: c for c in cycle_search.cycle_anomalies(steps)}
    assert set(found) == {"G-nonadjacent"}      # G2-item is implied by it: not reported
    assert set(found["G-nonadjacent"].ops) == {1, 2, 3, 4}


def assert_search_cycle(cycle, steps):
    assert set(cycle.steps) <= set(steps)
    for a, b in zip(cycle.steps, cycle.steps[1:] + cycle.steps[:1]):
        assert a.dst == b.src
    assert len(set(cycle.ops)) == len(cycle.ops)                   # simple
    assert cycle_search.classify(cycle.steps) == cycle.anomaly


def test_one_cycle_per_component_and_type():
    steps = [S(1, 2, "ww"), S(2, 1, "ww"), S(2, 3, "ww"), S(3, 2, "ww"),   # one SCC, two G0s
             S(5, 6, "ww"), S(6, 5, "ww")]                                 # another SCC
    found = cycle_search.cycle_anomalies(steps)
    assert [c.anomaly for c in found] == ["G0", "G0"]
    assert [set(c.ops) <= {1, 2, 3} for c in found] == [True, False]


@pytest.mark.parametrize("steps, expected", [
    # G0 there says all a G1c would: the G1c (1 -wr-> 2 -ww-> 1) is not reported
    ([S(1, 2, "ww"), S(2, 1, "ww"), S(1, 2, "wr")], ["G0"]),
    # a G-single implies G-nonadjacent and G2-item (1 -rw-> 2 -rw-> 1 is one)
    ([S(1, 2, "rw"), S(2, 1, "wr"), S(2, 1, "rw")], ["G-single"]),
    # and its -realtime variant (1 -rw-> 2 -realtime-> 1)
    ([S(1, 2, "rw"), S(2, 1, "wr"), S(2, 1, "realtime")], ["G-single"]),
    # G0 implies G0-realtime
    ([S(1, 2, "ww"), S(2, 1, "ww"), S(2, 1, "realtime")], ["G0"]),
    # G0-process implies G0-realtime and G1c-process
    ([S(1, 2, "ww"), S(2, 1, "process"), S(2, 1, "realtime"), S(1, 2, "wr")], ["G0-process"]),
    # nothing weaker explains these: each is reported
    ([S(1, 2, "ww"), S(2, 1, "wr")], ["G1c"]),
    ([S(1, 2, "rw"), S(2, 1, "realtime")], ["G-single-realtime"]),
    # a G-single and a G0-realtime in one component: both (G-single does not imply it)
    ([S(1, 2, "rw"), S(2, 1, "wr"), S(2, 3, "ww"), S(3, 2, "realtime")], ["G-single", "G0-realtime"]),
])
def test_implied_types_skipped(steps, expected):
    assert search_names(steps) == sorted(expected)


def test_wanted_limits_the_types():
    steps = [S(1, 2, "rw"), S(2, 1, "realtime"), S(3, 4, "ww"), S(4, 3, "ww")]
    base = [n for n in cycle_search.SEARCH_ORDER if not n.endswith(("-process", "-realtime"))]
    assert search_names(steps, base) == ["G0"]
    assert search_names(steps) == ["G-single-realtime", "G0"]


def test_search_order_weakest_model_first():
    order = cycle_search.SEARCH_ORDER
    assert order.index("G0") < order.index("G1c") < order.index("G-single") \
        < order.index("G-nonadjacent") < order.index("G2-item")
    assert order.index("G0") < order.index("G0-process") < order.index("G0-realtime")
    assert cycle_search.implied("G-single") >= {"G-nonadjacent", "G2-item", "G-single-realtime",
                                                "G2-item-process"}
    assert "G0" not in cycle_search.implied("G1c")
    assert "G-single" not in cycle_search.implied("G-single-process")


# Elle (consistency_model.clj, anomaly-severity-graph): "G0 doesn't imply
# G-Single": implication runs within G0/G1c and within G-single/G-nonadjacent/
# G2-item, so a component with a G0 (or G1c) and an rw cycle reports both.
@pytest.mark.parametrize("steps, expected", [
    ([S(1, 2, "ww"), S(2, 1, "ww"), S(2, 3, "rw"), S(3, 2, "wr")], ["G-single", "G0"]),
    ([S(1, 2, "wr"), S(2, 1, "wr"), S(2, 3, "rw"), S(3, 2, "realtime")], ["G-single-realtime", "G1c"]),
    ([S(1, 2, "ww"), S(2, 1, "ww"), S(2, 3, "rw"), S(3, 2, "rw")], ["G0", "G2-item"]),
])
def test_g0_g1c_do_not_hide_rw_cycles_in_their_component(steps, expected):
    assert search_names(steps) == sorted(expected)


@pytest.mark.parametrize("steps, expected", [
    # pair 1->2 is both ww and rw: Elle explains it as ww, so this is a G1c, not a G-single
    ([S(1, 2, "rw"), S(1, 2, "ww"), S(2, 1, "wr")], ["G1c"]),
    # rw beats realtime: a G-single, not a G1c-realtime
    ([S(1, 2, "rw"), S(1, 2, "realtime"), S(2, 1, "wr")], ["G-single"]),
])
def test_each_pair_explained_by_its_strongest_relation(steps, expected):
    found = cycle_search.cycle_anomalies(steps)
    assert sorted(c.anomaly for c in found) == expected
    for cycle in found:
        assert_search_cycle(cycle, steps)


STRENGTH = ("ww", "wr", "rw", "process", "realtime")


def brute_force_by_component(steps):
    """{frozenset(vertices of an SCC): every classification (cycle_search) of
    every simple cycle in it}, each pair of ops by its strongest relation
    (as Elle explains a cycle)."""
    graph = nx.DiGraph()
    graph.add_edges_from((s.src, s.dst) for s in steps)
    strongest = {}
    for s in steps:
        best = strongest.get((s.src, s.dst))
        if best is None or STRENGTH.index(s.kind) < STRENGTH.index(best.kind):
            strongest[(s.src, s.dst)] = s
    out = {}
    for component in nx.strongly_connected_components(graph):
        types = {cycle_search.classify([strongest[p] for p in zip(cycle, cycle[1:] + cycle[:1])])
                 for cycle in nx.simple_cycles(graph.subgraph(component))}
        if types:
            out[frozenset(component)] = types
    return out


SEARCH_COMPLETE = {"G0", "G1c", "G-single"}   # the search is complete for these


@pytest.mark.parametrize("seed", range(60))
def test_search_random_graphs_against_brute_force(seed):
    rng = random.Random(seed)
    n = rng.randint(2, 6)
    steps = sorted({S(rng.randrange(n), rng.randrange(n), rng.choice(["ww", "wr", "rw",
                                                                     "process", "realtime"]))
                    for _ in range(rng.randint(1, 12))})
    truth = brute_force_by_component(steps)
    found = cycle_search.cycle_anomalies(steps)
    reported: dict[frozenset, list[str]] = {}
    for cycle in found:
        assert_search_cycle(cycle, steps)
        (component,) = [c for c in truth if set(cycle.ops) <= c]
        assert cycle.anomaly in truth[component]                  # sound
        reported.setdefault(component, []).append(cycle.anomaly)
    for component, types in truth.items():
        mine = reported.get(component, [])
        assert len(mine) == len(set(mine))                        # one per type and SCC
        for a_type in mine:                                       # none implied by another
            assert not any(a_type in cycle_search.implied(b) for b in mine if b != a_type)
        for a_type in types & SEARCH_COMPLETE:                    # complete, up to implication
            assert a_type in mine or any(a_type in cycle_search.implied(b) for b in mine)
