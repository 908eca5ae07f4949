"""Partition shapes are pure: check the grouping each one produces."""
import random

import pytest

from nemesis import shapes
from nemesis.partition import rules_for

NODES3 = ["n1", "n2", "n3"]
NODES5 = ["n1", "n2", "n3", "n4", "n5"]


def components(partition: shapes.Partition) -> list[frozenset[str]]:
    """The groups of nodes that all see each other (for component-style shapes)."""
    return sorted({frozenset(partition.sees(n)) for n in partition.grudge}, key=len)


def assert_symmetric(partition: shapes.Partition) -> None:
    for node, cut in partition.grudge.items():
        for other in cut:
            assert node in partition.grudge[other], f"{node} cuts {other} but not back"


@pytest.mark.parametrize("seed", range(5))
def test_one_isolates_exactly_one_node(seed):
    p = shapes.one(NODES5, random.Random(seed))
    assert [len(c) for c in components(p)] == [1, 4]
    assert_symmetric(p)


@pytest.mark.parametrize("seed", range(5))
def test_majority_splits_majority_from_rest(seed):
    p = shapes.majority(NODES5, random.Random(seed))
    assert [len(c) for c in components(p)] == [2, 3]
    assert p.anchor in max(components(p), key=len)


def test_minority_third_and_halves_sizes():
    nodes9 = [f"n{i}" for i in range(1, 10)]
    assert [len(c) for c in components(shapes.minority_third(nodes9, random.Random(1)))] == [3, 6]
    assert [len(c) for c in components(shapes.minority_third(NODES3, random.Random(1)))] == [1, 2]
    assert [len(c) for c in components(shapes.halves(NODES5, random.Random(1)))] == [2, 3]
    assert [len(c) for c in components(shapes.halves(["a", "b", "c", "d"],
                                                      random.Random(1)))] == [2, 2]


@pytest.mark.parametrize("nodes", [NODES3, NODES5])
def test_bridge_joins_two_halves_through_one_node(nodes):
    p = shapes.bridge(nodes, random.Random(3))
    bridges = [n for n in nodes if p.sees(n) == sorted(nodes)]
    assert len(bridges) == 1
    others = [n for n in nodes if n not in bridges]
    halves = {frozenset(p.sees(n)) - set(bridges) for n in others}
    assert len(halves) == 2 and sum(len(h) for h in halves) == len(others)
    assert_symmetric(p)


@pytest.mark.parametrize("n", [4, 5, 7])
def test_majorities_ring_every_node_sees_a_distinct_majority(n):
    nodes = [f"n{i}" for i in range(1, n + 1)]
    p = shapes.majorities_ring(nodes, random.Random(7))
    views = [frozenset(p.sees(node)) for node in nodes]
    assert all(len(v) >= shapes.majority_size(n) for v in views)
    assert len(set(views)) == n
    assert_symmetric(p)


def test_majorities_ring_on_three_nodes_cuts_one_link():
    p = shapes.majorities_ring(NODES3, random.Random(0))
    assert sum(len(cut) for cut in p.grudge.values()) == 2
    assert all(len(p.sees(n)) >= 2 for n in NODES3)


def test_shapes_are_reproducible_and_round_trip():
    for name, shape in shapes.SHAPES.items():
        a, b = shape(NODES5, random.Random(11)), shape(NODES5, random.Random(11))
        assert a == b, name
        assert shapes.Partition.from_value(a.to_value()) == a


def test_rules_drop_peers_and_keep_clients_unless_asked():
    p = shapes.Partition("one", shapes.complete_grudge([["n1"], ["n2", "n3"]]), "n2")
    hosts = {"n1": "10.0.0.1", "n2": "10.0.0.2", "n3": "10.0.0.3"}
    assert rules_for("n1", p, hosts, 22, False) == ["-s 10.0.0.2 -j DROP",
                                                    "-s 10.0.0.3 -j DROP"]
    assert rules_for("n2", p, hosts, 22, False) == ["-s 10.0.0.1 -j DROP"]
    assert p.clients_cut_from() == ["n1"]
    with_clients = rules_for("n1", p, hosts, 22, True)
    assert with_clients[-3:] == ["-i lo -j RETURN", "-p tcp --dport 22 -j RETURN", "-j DROP"]
    assert rules_for("n2", p, hosts, 22, True) == ["-s 10.0.0.1 -j DROP"]
