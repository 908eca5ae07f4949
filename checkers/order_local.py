"""Process and realtime order edges in-process (checkers/order_edges.py does
the same in Spark), as Elle builds them:

- process: each ok operation -> the next ok operation of its process;
- realtime: a transitive reduction of "A completed (ok) before B was
  invoked": walking the history, every invoke is linked from the buffer of
  ok completions seen so far, and an ok completion replaces in the buffer
  the completions already linked to it. An operation that never completed
  counts as info (the contract): it gets edges in, none out.

`ops` are (id, process, type, invoke_index, complete_index) tuples.
"""
from __future__ import annotations

from collections.abc import Iterable

from checkers.cycles import Step


def process_edges(ops: Iterable[tuple]) -> list[Step]:
    last: dict[int, int] = {}
    edges = []
    for op_id, process, otype, invoke_index, _ in sorted(ops, key=lambda o: o[3]):
        if otype != "ok":
            continue
        if process in last:
            edges.append(Step(last[process], op_id, "process", key=str(process)))
        last[process] = op_id
    return edges


def realtime_edges(ops: Iterable[tuple]) -> list[Step]:
    events = []
    for op_id, _, otype, invoke_index, complete_index in ops:
        if otype == "fail":
            continue
        events.append((invoke_index, "invoke", op_id))
        if otype == "ok":
            events.append((complete_index, "ok", op_id))
    buffer: dict[int, str] = {}          # ok op id -> its completion index, as the edges say it
    linked: dict[int, list[int]] = {}
    edges = []
    for index, kind, op_id in sorted(events):
        if kind == "invoke":
            linked[op_id] = list(buffer)
            began = str(index)
            edges.extend(Step(a, op_id, "realtime", None, began, None, done) for a, done in buffer.items())
        else:
            for a in linked.get(op_id, ()):
                buffer.pop(a, None)
            buffer[op_id] = str(index)
    return edges
