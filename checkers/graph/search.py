"""The one cycle search, for both workloads.

`cycle_anomalies` (list-append) searches the way Elle does (elle.txn/cycles).
The graph's strongly connected components are computed once, over every
edge kind present. Inside each component the anomaly types are tried from
the weakest model's to the strongest's (G0, G1c, G-single, G-nonadjacent,
G2-item, then the -process and -realtime variants); a type found makes every
type it implies redundant for that component (finding G0 there says all a
G1c would), so each component reports at most one cycle per type, and only
the types nothing weaker explains. Counts therefore compare with Elle's.

`cycles_per_spec` (queue) searches every spec of a list in the strongly
connected components of that spec's own subgraph, at most one cycle each,
none making another redundant.

Each type is a `Spec`: which edge kinds the cycle may use, which it must
use, which its first edge may have, and its rule on rw (anti-dependency) edges:

- "none":        no rw edge (G0, G1c);
- "one":         exactly one (G-single);
- "nonadjacent": two or more, no two consecutive (G-nonadjacent);
- "adjacent":    two or more, two of them consecutive (G2-item).

The search tries each edge of a component as the cycle's first and closes
it with a breadth-first search over (vertex, kinds still needed, rw count,
whether the last edge was rw, whether two rw were adjacent): the shortest
closing path that satisfies the spec. Non-simple closings are rejected, as
in Elle's search, so a type may be missed when only a longer simple cycle
shows it; every reported cycle is exactly of its type.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from checkers.graph.cycles import Cycle, Step, classify, strongly_connected  # noqa: F401 (classify re-exported)
from checkers.graph.scc import scc_labels

DATA = frozenset({"ww", "wr", "rw"})
_KIND_ORDER = {"ww": 0, "wr": 1, "rw": 2, "process": 3, "realtime": 4}


@dataclass(frozen=True)
class Spec:
    name: str
    kinds: frozenset[str]          # edge kinds the cycle may use
    need: frozenset[str]           # kinds it must use at least once
    rw: str                        # none | one | nonadjacent | adjacent
    # kinds its first edge may have; None: an rw edge where it has one, else
    # a kind it needs (any of its kinds if it needs none)
    first: frozenset[str] | None = None

    def firsts(self, usable: Sequence[Step]) -> list[Step]:
        if self.first is not None:
            return [s for s in usable if s.kind in self.first]
        if self.rw != "none":
            return [s for s in usable if s.kind == "rw"]
        return [s for s in usable if s.kind in (self.need or self.kinds)]


BASE = (("G0", frozenset({"ww"}), frozenset(), "none"),
        ("G1c", frozenset({"ww", "wr"}), frozenset({"wr"}), "none"),
        ("G-single", DATA, frozenset(), "one"),
        ("G-nonadjacent", DATA, frozenset(), "nonadjacent"),
        ("G2-item", DATA, frozenset(), "adjacent"))
BASE_NAMES = tuple(b[0] for b in BASE)
VARIANTS = ("", "-process", "-realtime")


def _specs() -> dict[str, Spec]:
    out = {}
    for suffix in VARIANTS:
        order = frozenset({suffix[1:]}) if suffix else frozenset()
        for name, kinds, need, rw in BASE:
            out[name + suffix] = Spec(name + suffix, kinds | order, need | order, rw)
    return out


SPECS = _specs()


def depth(name: str) -> int:
    """Elle's search order: a type's distance from G0 in the implication
    graph (each base step and each variant step is one)."""
    base = name.removesuffix("-process").removesuffix("-realtime")
    suffix = name[len(base):]
    return BASE_NAMES.index(base) + VARIANTS.index(suffix)


# Elle's implication between cycle types runs within two families: G0 is a
# G1c, and G-single a G-nonadjacent, a G2-item; G1c does not imply G-single.
FAMILIES = (("G0", "G1c"), ("G-single", "G-nonadjacent", "G2-item"))


def implied(name: str) -> set[str]:
    """Every type a cycle of type `name` makes redundant (itself included):
    the later types of its family, and the -process then -realtime variants
    of each."""
    base = name.removesuffix("-process").removesuffix("-realtime")
    suffix = VARIANTS.index(name[len(base):])
    family = next(f for f in FAMILIES if base in f)
    return {b + v for b in family[family.index(base):] for v in VARIANTS[suffix:]}


SEARCH_ORDER = tuple(sorted(SPECS, key=lambda n: (depth(n), n)))


def _tier(suffix: str, order: frozenset[str]) -> list[Spec]:
    """The four base types with `order` edges allowed and, when there is a
    suffix, needed: each cycle starts on the edge that makes it its type (the
    order edge of a variant, else wr for G1c, rw for G-single and G2-item).
    A -realtime cycle may use process edges too."""
    ww, wr, rw = frozenset({"ww"}) | order, frozenset({"ww", "wr"}) | order, DATA | order
    needed = frozenset({suffix[1:]}) if suffix else frozenset()
    start = lambda kind: needed or frozenset({kind})  # noqa: E731
    return [Spec("G0" + suffix, ww, frozenset(), "none", start("ww")),
            Spec("G1c" + suffix, wr, frozenset({"wr"}) if suffix else frozenset(), "none", start("wr")),
            Spec("G-single" + suffix, rw, needed, "one", frozenset({"rw"})),
            Spec("G2-item" + suffix, rw, needed, "adjacent", frozenset({"rw"}))]


#: For cycles_per_spec, strongest first: data edges only, then with process
#: order, then realtime.
TIERED_SPECS: tuple[Spec, ...] = tuple(
    _tier("", frozenset()) + _tier("-process", frozenset({"process"}))
    + _tier("-realtime", frozenset({"process", "realtime"})))


def _rw_ok(spec: Spec, count: int, adjacent: bool) -> bool:
    return {"none": count == 0, "one": count == 1, "nonadjacent": count >= 2 and not adjacent,
            "adjacent": count >= 2 and adjacent}[spec.rw]


class _Adjacency(NamedTuple):
    """The usable steps of one search over integer vertices, so that search
    states are small tuples of ints (kinds still needed as a bit mask)."""

    index: dict[int, int]              # vertex -> its position
    out: list[list[tuple]]             # per position: (dst position, kind's bit, is rw, step), in usable's order
    bit: dict[str, int]                # each needed kind's bit
    full: int                          # every needed kind


def _adjacency(spec: Spec, usable: Sequence[Step], weakest_first: bool = False) -> _Adjacency:
    """`weakest_first`: each vertex's out-steps by kind (ww first), then by
    step, so closing paths prefer ww; else in `usable`'s order."""
    bit = {kind: 1 << i for i, kind in enumerate(sorted(spec.need))}
    index = {v: i for i, v in enumerate(dict.fromkeys(v for s in usable for v in (s.src, s.dst)))}
    out: list[list[tuple]] = [[] for _ in index]
    for s in (sorted(usable, key=lambda s: (_KIND_ORDER[s.kind], s)) if weakest_first else usable):
        out[index[s.src]].append((index[s.dst], bit.get(s.kind, 0), s.kind == "rw", s))
    return _Adjacency(index, out, bit, (1 << len(bit)) - 1)


def _close(spec: Spec, first: Step, adj: _Adjacency, limit: int | None = None) -> list[Step] | None:
    """Shortest path from first.dst back to first.src making first+path a
    cycle of `spec` (see the module docstring). With `limit`, only paths of
    at most that many steps are looked for: states are met in the same
    order, so such a path is the one found without the limit."""
    first_rw = first.kind == "rw"
    at_most_one = spec.rw in ("none", "one")
    no_two = spec.rw == "nonadjacent"
    cap = 1 if at_most_one else 2
    # adjacency only matters when two or more rw edges may be used: keep it
    # out of the state otherwise (fewer states, same answers)
    track = not at_most_one
    target, out = adj.index[first.src], adj.out
    start = (adj.index[first.dst], adj.full & ~adj.bit.get(first.kind, 0), int(first_rw), first_rw and track,
             False)
    parent: dict[tuple, tuple | None] = {start: None}
    queue = deque([(start, 0)])
    goal = None
    if first.src == first.dst and _goal(spec, start, first_rw):
        goal = start
    while queue and goal is None:
        state, length = queue.popleft()
        if limit is not None and length >= limit:
            continue        # its successors' paths would be too long
        vertex, missing, rws, last_rw, adjacent = state
        for dst, bit, is_rw, step in out[vertex]:
            if is_rw and (at_most_one and rws >= cap or no_two and last_rw):
                continue
            count = rws + is_rw
            nxt = (dst, missing & ~bit, cap if count > cap else count, is_rw and track,
                   adjacent or (is_rw and last_rw))
            if nxt in parent:
                continue
            parent[nxt] = (state, step)
            if dst == target and _goal(spec, nxt, first_rw):
                goal = nxt
                break
            queue.append((nxt, length + 1))
    if goal is None:
        return None
    path, state = [], goal
    while parent[state] is not None:
        state, step = parent[state]
        path.append(step)
    path.reverse()
    visited = [first.src] + [s.src for s in path]
    return path if len(set(visited)) == len(visited) else None


def _goal(spec: Spec, state: tuple, first_rw: bool) -> bool:
    _, missing, rws, last_rw, adjacent = state
    wraps = last_rw and first_rw and rws >= 2
    if spec.rw == "nonadjacent" and wraps:
        return False
    return not missing and _rw_ok(spec, rws, adjacent or wraps)


def _closable(spec: Spec, adj: _Adjacency, firsts: list[Step]) -> list[Step]:
    """The firsts a closing path exists for, when the spec allows at most one
    rw edge: then the search state is just (vertex, kinds still needed), and
    whether the goal is reachable is decided for every first at once, by the
    transitive closure of that state graph. Firsts it rules out are exactly
    those whose search would fail, so results are unchanged; a failing
    search explores the whole component and dominated large histories."""
    if spec.rw not in ("none", "one") or not firsts:
        return firsts
    layers = adj.full + 1
    closing = [(u, v, b) for u, steps in enumerate(adj.out) for v, b, is_rw, _ in steps if not is_rw]
    src = [u * layers + m for u, _, _ in closing for m in range(layers)]
    dst = [v * layers + (m & ~b) for _, v, b in closing for m in range(layers)]
    reach = _reachability(len(adj.index) * layers, src, dst)
    keep = []
    for f in firsts:
        start = adj.index[f.dst] * layers + (adj.full & ~adj.bit.get(f.kind, 0))
        if reach(start, adj.index[f.src] * layers):
            keep.append(f)
    return keep


def _reachability(n: int, src: list[int], dst: list[int]):
    """reach(a, b): is b reachable from a (or a itself) in the graph of n
    vertices and edges src[i] -> dst[i]. Strongly connected components
    (checkers/graph/scc.py), then one bit set per component, unioned in
    topological order."""
    count, label = scc_labels(n, src, dst)
    successors: list[set[int]] = [set() for _ in range(count)]
    indegree = [0] * count
    for a, b in {(label[a], label[b]) for a, b in zip(src, dst)}:
        if a != b:
            successors[a].add(b)
            indegree[b] += 1
    order = [c for c in range(count) if indegree[c] == 0]
    for c in order:  # Kahn's algorithm: grows while it is walked
        for d in successors[c]:
            indegree[d] -= 1
            if indegree[d] == 0:
                order.append(d)
    bits = [0] * count
    for c in reversed(order):
        acc = 1 << c
        for d in successors[c]:
            acc |= bits[d]
        bits[c] = acc
    return lambda a, b: bool(bits[label[a]] >> label[b] & 1)


def _explained(cycle: list[Step], preferred: dict[tuple[int, int], Step]) -> list[Step]:
    """Each step as Elle explains the pair: by its strongest relation
    (ww, then wr, then rw, then process, then realtime), whichever edge the
    search walked."""
    return [preferred.get((s.src, s.dst), s) for s in cycle]


def _preferred(component: list[Step]) -> dict[tuple[int, int], Step]:
    best: dict[tuple[int, int], Step] = {}
    for s in component:
        pair = (s.src, s.dst)
        if pair not in best or _KIND_ORDER[s.kind] < _KIND_ORDER[best[pair].kind]:
            best[pair] = s
    return best


def _order(s: Step) -> tuple:
    """strongly_connected's order of the steps within a component."""
    return s.src, s.dst, s.kind, str(s.key), str(s.value)


class _Cyclic:
    """The steps of one strongly connected component (`steps`, in any order)
    that lie inside a cycle of a given set of edge kinds, as
    strongly_connected orders them: one pass per set of kinds present, shared
    by every spec whose kinds select the same steps. When a spec may use
    every step, that is the whole component (it is strongly connected), in
    order: no pass at all."""

    def __init__(self, steps: list[Step]) -> None:
        self.steps = steps
        self.present = frozenset(s.kind for s in steps)
        self.known: dict[frozenset[str], list[Step]] = {}

    def usable(self, kinds: frozenset[str]) -> list[Step]:
        chosen = self.present & kinds
        if chosen not in self.known:
            usable = [s for s in self.steps if s.kind in chosen]
            if chosen == self.present:
                self.known[chosen] = sorted(usable, key=_order)
            else:
                self.known[chosen] = [s for part in strongly_connected(usable) for s in part]
        return self.known[chosen]


def _search(spec: Spec, component: _Cyclic, max_tries: int,
            preferred: dict[tuple[int, int], Step] | None = None, refine: int | None = None,
            weakest_first: bool = False) -> Cycle | None:
    """The shortest cycle of `spec` found from at most `max_tries` first
    edges; once one is found, `refine` more firsts are tried (None: all).
    With `preferred`, each step is explained by the strongest relation between
    its two operations (Elle's way) before the cycle is classified;
    `weakest_first`: see _adjacency."""
    if not spec.need <= component.present & spec.kinds:
        return None
    if spec.rw != "none" and "rw" not in component.present & spec.kinds:
        return None
    # only edges inside a cycle of the spec's own edge kinds can start one
    usable = component.usable(spec.kinds)
    adj = _adjacency(spec, usable, weakest_first)
    firsts = _closable(spec, adj, spec.firsts(usable))[:max_tries]
    best: list[Step] | None = None
    last_try = len(firsts)
    for i, first in enumerate(firsts):
        if i > last_try:
            break
        # once a cycle is found, only a shorter one can replace it
        path = _close(spec, first, adj, None if best is None else len(best) - 2)
        if path is None:
            continue
        cycle = _explained([first, *path], preferred) if preferred is not None else [first, *path]
        if classify(cycle) != spec.name:
            continue
        if best is None and refine is not None:
            last_try = i + refine
        if best is None or len(cycle) < len(best):
            best = cycle
        if len(best) <= 2:
            break
    return None if best is None else Cycle(spec.name, tuple(best))


# Once a cycle is found, this many more first edges are tried for a shorter
# one (easier to read); Elle keeps the first it finds.
REFINE_TRIES = 30



def cycle_anomalies(steps: Iterable[Step], wanted: Iterable[str] = SEARCH_ORDER,
                    max_tries: int = 300) -> list[Cycle]:
    """Cycles, at most one per type and strongly connected component of the
    whole graph, skipping types a cycle found there already implies."""
    wanted = [n for n in SEARCH_ORDER if n in set(wanted)]
    found: list[Cycle] = []
    for component in strongly_connected(list(dict.fromkeys(steps))):
        component.sort(key=lambda s: _KIND_ORDER[s.kind])
        redundant: set[str] = set()
        preferred = _preferred(component)
        cyclic = _Cyclic(component)
        for name in wanted:
            if name in redundant:
                continue
            cycle = _search(SPECS[name], cyclic, max_tries, preferred, REFINE_TRIES)
            if cycle is not None:
                found.append(cycle)
                redundant |= implied(name)
    return found


def cycles_per_spec(steps: Iterable[Step], specs: Sequence[Spec] = TIERED_SPECS,
                    max_tries: int = 200) -> list[Cycle]:
    """At most one cycle per spec and per strongly connected component of that
    spec's own subgraph, every spec searched (no type makes another
    redundant): the queue's way, which reports G0 and G1c side by side.
    Steps are explained as walked, and closing paths prefer ww (simpler to
    read)."""
    steps = sorted(set(steps))
    found: list[Cycle] = []
    for spec in specs:
        for component in strongly_connected([s for s in steps if s.kind in spec.kinds]):
            cycle = _search(spec, _Cyclic(component), max_tries, weakest_first=True)
            if cycle is not None:
                found.append(cycle)
    return found
