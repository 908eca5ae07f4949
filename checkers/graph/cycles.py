"""A small dependency graph, Elle style: its steps, its strongly connected
components, how a cycle is classified, and how it is explained.

Pure driver-side functions. Input: the steps of the (already shrunk, see
checkers/graph/shrink_spark.py) dependency graph, one `Step` per original edge
between two operations. The search (checkers/graph/search.py) returns
`Cycle`s, each classified the Elle way, and `explain_cycle()` turns one into
data plus plain-words text.

Edge kinds: "ww" (write-write), "wr" (write-read), "rw" (anti-dependency),
"process" (same process, one after the other) and "realtime" (one completed
before the other was invoked).

Classification of a cycle by the edges it uses (Adya / Elle):

- G0: only ww edges;                 G1c: ww + wr, at least one wr;
- G-single: exactly one rw edge;     G2-item: two or more, two in a row;
- G-nonadjacent: two or more rw edges, none in a row;
- suffix "-realtime" if the cycle needs a realtime edge, else "-process" if
  it needs a process edge (e.g. "G-single-realtime").

The search itself, one for both workloads, is checkers/graph/search.py.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from checkers.graph.scc import Components, components, scc_labels  # noqa: F401 (components re-exported)

EDGE_KINDS = ("ww", "wr", "rw", "process", "realtime")
DATA_KINDS = frozenset({"ww", "wr", "rw"})
ORDER_KINDS = frozenset({"process", "realtime"})


class Step(NamedTuple):
    """One edge of the dependency graph: `src` must precede `dst`. A named
    tuple, not a dataclass: big histories make 10^5-10^6 of them, and a
    frozen dataclass costs several times more to build (equality, hash and
    order are the same: field by field).

    `key`, `value`, `offset` and `prev` explain why (the phrasing decides how
    to say it): e.g. for wr, `dst` read `src`'s write of `value` to `key`
    (at `offset`); for ww, `src` wrote `prev` and `dst` wrote `value` next.
    """

    src: int
    dst: int
    kind: str
    key: str | None = None
    value: str | None = None
    offset: int | None = None
    prev: str | None = None


@dataclass(frozen=True)
class Cycle:
    """A cycle of steps, `steps[i].dst == steps[i+1].src`, closing at the end."""

    anomaly: str
    steps: tuple[Step, ...]

    @property
    def ops(self) -> list[int]:
        return [s.src for s in self.steps]

    @property
    def uses_ww(self) -> bool:
        """True if some edge is ww (the queue checker allows G1c cycles that
        need a ww edge and forbids pure-wr ones)."""
        return any(s.kind == "ww" for s in self.steps)

    @property
    def keys(self) -> list[str]:
        return sorted({s.key for s in self.steps if s.key is not None and s.kind in DATA_KINDS})


def classify(steps: Sequence[Step]) -> str:
    """Elle's name for a cycle: by its rw edges (and whether two are
    consecutive, wrapping around), else wr, else G0; suffixed -realtime if it
    uses a realtime edge, else -process if it uses a process edge."""
    kinds = [s.kind for s in steps]
    rw = kinds.count("rw")
    if rw >= 2:
        adjacent = any(a == b == "rw" for a, b in zip(kinds, kinds[1:] + kinds[:1]))
        base = "G2-item" if adjacent else "G-nonadjacent"
    elif rw == 1:
        base = "G-single"
    elif "wr" in kinds:
        base = "G1c"
    else:
        base = "G0"
    if "realtime" in kinds:
        return base + "-realtime"
    if "process" in kinds:
        return base + "-process"
    return base


def strongly_connected(steps: Sequence[Step]) -> list[list[Step]]:
    """The steps inside each non-trivial strongly connected component (two or
    more vertices, or a self-loop), each sorted, components in a stable order."""
    if not steps:
        return []
    ids: dict[int, int] = {}
    src = [ids.setdefault(s.src, len(ids)) for s in steps]
    dst = [ids.setdefault(s.dst, len(ids)) for s in steps]
    label = scc_labels(len(ids), src, dst)[1]
    groups: dict[int, list[Step]] = {}
    for step, a, b in zip(steps, src, dst):
        if a == b or label[a] == label[b]:
            groups.setdefault(label[a], []).append(step)
    order = lambda s: (s.src, s.dst, s.kind, str(s.key), str(s.value))  # noqa: E731 (fast, no dataclass compares)
    return [sorted(g, key=order) for _, g in sorted(groups.items(), key=lambda kv: min(map(order, kv[1])))]


# ---------------------------------------------------------------- wording

@dataclass(frozen=True)
class Phrasing:
    """How each edge kind is said in words: one format string per kind,
    completing the sentence "a < b because ...". Fields: {a} {b} (names of
    step.src and step.dst: T1, T2, ...), {key} {value} {prev} {offset}, {at}
    (" at offset N" or nothing) and {last} (" (its last element was X)" or
    nothing). Subclass (or `dataclasses.replace`) to change some kinds."""

    ww: str = "{b} overwrote {a}'s write of {prev} to key {key} with {value}"
    wr: str = "{b} observed {a}'s write of {value} to key {key}"
    rw: str = "{a} observed key {key} without {b}'s write of {value}{last}"
    process: str = "process {key} executed {a} before {b}"
    realtime: str = "{a} completed{done} before {b} was invoked{began}"

    def because(self, s: Step, a: str, b: str) -> str:
        return getattr(self, s.kind).format(
            a=a, b=b, key=s.key, value=s.value, prev=s.prev, offset=s.offset,
            at="" if s.offset is None else f" at offset {s.offset}",
            last="" if s.prev is None else f" (its last element was {s.prev})",
            done="" if s.prev is None else f" (history index {s.prev})",
            began="" if s.value is None else f" (index {s.value})")


@dataclass(frozen=True)
class ListAppendPhrasing(Phrasing):
    ww: str = "{b} appended {value} after {a} appended {prev} to key {key}"
    wr: str = "{b} read {a}'s append of {value} to key {key}"
    rw: str = "{a} read key {key} without {b}'s append of {value}{last}"


@dataclass(frozen=True)
class QueuePhrasing(Phrasing):
    ww: str = "{b}'s send of {value} to key {key} came right after {a}'s send of {prev}{at}"
    wr: str = "{b} polled {a}'s send of {value} to key {key}{at}"
    rw: str = "{a} polled key {key} up to before {b}'s send of {value}{at}"


@dataclass
class _Names:
    """T1, T2, ... in cycle order."""

    ops: list[int]
    names: dict[int, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for op in self.ops:
            self.names.setdefault(op, f"T{len(self.names) + 1}")


def explain_cycle(cycle: Cycle, ops: Mapping[int, Mapping],
                  phrasing: Phrasing = Phrasing()) -> dict:
    """The cycle as data plus words. `ops[i]` describes operation i (index,
    process, time, f, type, ...); missing ones are described by index only."""
    names = _Names(cycle.ops).names
    rows, sentences = [], []
    for s in cycle.steps:
        a, b = names[s.src], names[s.dst]
        why = phrasing.because(s, a, b)
        op = dict(ops.get(s.src, {"index": s.src}))
        rows.append({"op": op, "name": a, "edge": s.kind, "to": s.dst, "why": why,
                     "key": s.key, "value": s.value, "offset": s.offset})
        sentences.append(f"{a} < {b} because {why}")
    return {"type": cycle.anomaly, "cycle": rows, "steps": sentences,
            "explanation": "; ".join(sentences) + ": a contradiction.",
            "keys": cycle.keys, "uses_ww": cycle.uses_ww}
