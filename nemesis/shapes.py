"""Partition shapes: pure functions from the DB nodes (and a seeded rng) to a grudge.

A *grudge* maps each node to the nodes it refuses traffic from (Jepsen's term).
Kafka talks TCP, so a link is cut as soon as either end drops the other: the
effective topology is undirected, and every shape here builds symmetric grudges.

`anchor` is the node whose side the clients stay on when `--partition-clients`
also cuts the control node off: the clients can reach the anchor and everything
the anchor sees, and nothing else.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable, Sequence

Grudge = dict[str, list[str]]


@dataclass(frozen=True)
class Partition:
    shape: str
    grudge: Grudge
    anchor: str

    def sees(self, node: str) -> list[str]:
        """The nodes `node` can still talk to (itself included)."""
        cut = set(self.grudge.get(node, ()))
        return sorted(n for n in self.grudge if n not in cut)

    def clients_cut_from(self) -> list[str]:
        """The nodes the control node loses when clients are partitioned too."""
        reachable = set(self.sees(self.anchor))
        return sorted(n for n in self.grudge if n not in reachable)

    def to_value(self) -> dict:
        return {"shape": self.shape, "grudge": {n: list(self.grudge[n]) for n in sorted(self.grudge)},
                "anchor": self.anchor}

    @classmethod
    def from_value(cls, value: dict) -> "Partition":
        return cls(value["shape"], {n: list(v) for n, v in value["grudge"].items()},
                   value["anchor"])


def majority_size(n: int) -> int:
    return n // 2 + 1


def complete_grudge(components: Sequence[Sequence[str]]) -> Grudge:
    """Every node drops every node outside its own component."""
    everyone = [n for c in components for n in c]
    grudge: Grudge = {}
    for component in components:
        inside = set(component)
        for node in component:
            grudge[node] = sorted(n for n in everyone if n not in inside)
    return grudge


def _components_partition(shape: str, components: list[list[str]]) -> Partition:
    largest = max(components, key=len)
    return Partition(shape, complete_grudge(components), largest[0])


def _shuffled(nodes: Sequence[str], rng: random.Random) -> list[str]:
    order = sorted(nodes)
    rng.shuffle(order)
    return order


def one(nodes: Sequence[str], rng: random.Random) -> Partition:
    """One node alone, the rest together."""
    order = _shuffled(nodes, rng)
    return _components_partition("one", [order[:1], order[1:]])


def majority(nodes: Sequence[str], rng: random.Random) -> Partition:
    """A random majority against the rest."""
    order = _shuffled(nodes, rng)
    m = majority_size(len(order))
    return _components_partition("majority", [order[:m], order[m:]])


def minority_third(nodes: Sequence[str], rng: random.Random) -> Partition:
    """About a third of the nodes (at least one) against the rest."""
    order = _shuffled(nodes, rng)
    k = max(1, len(order) // 3)
    return _components_partition("minority-third", [order[:k], order[k:]])


def halves(nodes: Sequence[str], rng: random.Random) -> Partition:
    """Random halves (the smaller first when the count is odd)."""
    order = _shuffled(nodes, rng)
    k = len(order) // 2
    return _components_partition("halves", [order[:k], order[k:]])


def bridge(nodes: Sequence[str], rng: random.Random) -> Partition:
    """Two halves that cannot talk to each other, joined by one node that sees both."""
    order = _shuffled(nodes, rng)
    middle = len(order) // 2
    left, link, right = order[:middle], order[middle], order[middle + 1:]
    grudge: Grudge = {link: []}
    for node in left:
        grudge[node] = sorted(right)
    for node in right:
        grudge[node] = sorted(left)
    return Partition("bridge", grudge, (left or [link])[0])


def majorities_ring(nodes: Sequence[str], rng: random.Random) -> Partition:
    """Nodes on a shuffled ring; each sees its ring neighbours out to the distance that
    makes a majority, so every node sees a majority but (from 4 nodes on) no two see the
    same one. With 3 nodes distinct majorities are impossible under symmetric cuts: one
    link is cut, which leaves every node a majority."""
    ring = _shuffled(nodes, rng)
    n = len(ring)
    reach = max(1, majority_size(n) // 2)
    grudge: Grudge = {}
    for i, node in enumerate(ring):
        grudge[node] = sorted(other for j, other in enumerate(ring)
                              if min((i - j) % n, (j - i) % n) > reach)
    if n >= 2 and all(not cut for cut in grudge.values()):
        first, last = ring[0], ring[-1]
        grudge[first], grudge[last] = [last], [first]
    return Partition("majorities-ring", grudge, ring[0])


SHAPES: dict[str, Callable[[Sequence[str], random.Random], Partition]] = {
    "one": one,
    "majority": majority,
    "majorities-ring": majorities_ring,
    "minority-third": minority_third,
    "bridge": bridge,
    "halves": halves,
}
