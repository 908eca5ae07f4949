"""Process and realtime order edges in-process (checkers/graph/order_spark.py does
the same in Spark), as Elle builds them:

- process: each ok operation -> the next ok operation of its process;
- realtime: a transitive reduction of "A completed (ok) before B was
  invoked": walking the history, every invoke is linked from the buffer of
  ok completions seen so far, and an ok completion replaces in the buffer
  the completions already linked to it. An operation that never completed
  counts as info (the contract): it gets edges in, none out.

`ops` are (id, process, type, invoke_index, complete_index) tuples.

A history of n operations has about 2n realtime edges and few of them lie
on a cycle, so the edges are kept as two integer columns (`OrderEdges`) and
a `Step`, with its explanation, is made only for the edges a caller keeps.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import repeat

from checkers.graph.cycles import Step


@dataclass
class OrderEdges:
    """Edges src[i] -> dst[i]; `explain(src, dst)` makes the Step of one."""

    src: list[int] = field(default_factory=list)
    dst: list[int] = field(default_factory=list)
    explain: Callable[[int, int], Step] | None = None

    def __len__(self) -> int:
        return len(self.src)

    def steps(self, which: Iterable[int] | None = None) -> list[Step]:
        """The Steps of the edges at positions `which` (default: all)."""
        positions = range(len(self.src)) if which is None else which
        return [self.explain(self.src[i], self.dst[i]) for i in positions]


def process_order(ops: Iterable[tuple]) -> OrderEdges:
    last: dict[int, int] = {}
    process_of: dict[int, int] = {}
    out = OrderEdges(explain=lambda a, b: Step(a, b, "process", key=str(process_of[b])))
    for op_id, process, otype, invoke_index, _ in sorted(ops, key=lambda o: o[3]):
        if otype != "ok":
            continue
        if process in last:
            out.src.append(last[process])
            out.dst.append(op_id)
            process_of[op_id] = process
        last[process] = op_id
    return out


def realtime_order(ops: Iterable[tuple]) -> OrderEdges:
    events = []
    began: dict[int, int] = {}       # op id -> its invoke index, as the edges say it
    done: dict[int, int] = {}        # ok op id -> its completion index
    for op_id, _, otype, invoke_index, complete_index in ops:
        if otype == "fail":
            continue
        events.append((invoke_index, "invoke", op_id))
        began[op_id] = invoke_index
        if otype == "ok":
            events.append((complete_index, "ok", op_id))
            done[op_id] = complete_index
    out = OrderEdges(explain=lambda a, b: Step(a, b, "realtime", None, str(began[b]), None, str(done[a])))
    buffer: dict[int, None] = {}     # ok op ids, in the order they completed
    linked: dict[int, Sequence[int]] = {}
    for _, kind, op_id in sorted(events):
        if kind == "invoke":
            linked[op_id] = tuple(buffer)
            out.src.extend(linked[op_id])
            out.dst.extend(repeat(op_id, len(buffer)))
        else:
            for a in linked.get(op_id, ()):
                buffer.pop(a, None)
            buffer[op_id] = None
    return out


def process_edges(ops: Iterable[tuple]) -> list[Step]:
    return process_order(ops).steps()


def realtime_edges(ops: Iterable[tuple]) -> list[Step]:
    return realtime_order(ops).steps()
