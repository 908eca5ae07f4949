"""List-append, per key: Elle's version orders, the anomalies of one key, and
the ww / wr / rw dependency edges of one key.

Pure Python over `KeyMop`s, so the same function runs in-process (small
histories) and inside Spark's executors, one bucket of keys at a time
(checkers/list_append/spark.py). Everything here is a property of one key.

Definitions follow Elle's list-append analysis (elle.list-append):

- The version order of a key is the longest value any ok or info txn read
  of it; every other non-empty read must be a prefix of the next longer one
  (else `incompatible-order`; of two disagreeing reads of one length, the
  one first read later). A key appended exactly once and never read
  non-empty has the order [v]: the initial state [] came before that append.
- ww: the writer of the element before an append (in the order; an append
  never read comes after the last element read) -> the appender.
- wr: the writer of a read's last element -> the reader.
- rw: every txn that read the state just before an append -> the appender.
  Reading [] (or null) is reading the initial state, which precedes the
  key's first append: that is an rw edge too.
Failed txns are never vertices of the graph; `fail`/`info` txns' reads say
nothing (their reads carry no result).
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import NamedTuple


INIT = object()   # the initial (empty) state of a key, before its first append


class KeyMop(NamedTuple):
    """One micro-op on one key: `op` is the txn's id (history index of its
    completion), `otype` ok/info/fail, `pos` its place in the txn, `f`
    "append" (`value`: the element) or "r" (`value`: the list read, None when
    unknown), `last`: for an append, whether it is the txn's last to the key.
    A named tuple: one per micro-op, cheaper to build than a dataclass."""

    key: object
    op: int
    otype: str
    pos: int
    f: str
    value: object
    last: bool = True


@dataclass
class Finding:
    """An anomaly found on a key: `sort` orders examples (op id, pos)."""

    type: str
    sort: tuple
    example: dict


def _single_append(mops: list[KeyMop], with_failed: bool) -> list | None:
    appends = [m.value for m in mops if m.f == "append" and (with_failed or m.otype != "fail")]
    return [appends[0]] if len(appends) == 1 else None


def observed_states(mops: list[KeyMop], with_failed: bool = False,
                    read_states: list[list] | None = None) -> list[list]:
    """Distinct non-empty states read by ok txns, shortest first; a key with
    a single append (of a txn that did not fail, or of any txn
    `with_failed`) has state [v]. States of one length (reads that disagree:
    incompatible-order) go in the order of their first reader's op id, so
    the longest one, the version order, never depends on the order the
    mops came in (Spark's rows come in no fixed order). `read_states`:
    _read_states(mops), when the caller has it already."""
    single = _single_append(mops, with_failed)
    if single is not None:
        return [single]
    return read_states if read_states is not None else _read_states(mops)


def _read_states(mops: list[KeyMop]) -> list[list]:
    """observed_states from the reads alone (no single append)."""
    first_reader: dict[tuple, int] = {}
    for _, op, otype, _, f, value, _ in mops:
        if f == "r" and otype == "ok" and value:
            state = tuple(value)
            if op < first_reader.get(state, op + 1):
                first_reader[state] = op
    return [list(s) for s in sorted(first_reader, key=lambda s: (len(s), first_reader[s]))]


def version_order(states: list[list]) -> list:
    """The longest state, duplicates dropped (they are reported elsewhere)."""
    return list(dict.fromkeys(states[-1])) if states else []


def _is_prefix(a: list, b: list) -> bool:
    return len(a) <= len(b) and b[:len(a)] == a


def incompatible_order(key, states: list[list]) -> Finding | None:
    for a, b in zip(states, states[1:]):
        if not _is_prefix(a, b):
            return Finding("incompatible-order", (0, 0), {"key": key, "values": [a, b]})
    return None


def duplicate_elements(mops: list[KeyMop]) -> Iterator[Finding]:
    for m in mops:
        if m.f == "r" and m.otype == "ok" and m.value and not _distinct(m.value):
            dups = {e: n for e, n in Counter(map(_hashable, m.value)).items() if n > 1}
            if dups:
                yield Finding("duplicate-elements", (m.op, m.pos),
                              {"key": m.key, "op": m.op, "pos": m.pos, "read": m.value,
                               "duplicates": [[e, n] for e, n in dups.items()]})


def _hashable(x):
    return tuple(x) if isinstance(x, list) else x


def _distinct(read: list) -> bool:
    """Cheap exit for the usual read, whose elements are distinct scalars; an
    unhashable element (a list) leaves it to the Counter."""
    try:
        return len(set(read)) == len(read)
    except TypeError:
        return False


def aborted_reads(mops: list[KeyMop]) -> Iterator[Finding]:
    """G1a: an ok read containing an element that a failed txn appended."""
    failed = {m.value: m.op for m in mops if m.f == "append" and m.otype == "fail"}
    if not failed:
        return
    for m in mops:
        if m.f == "r" and m.otype == "ok" and m.value and not failed.keys().isdisjoint(m.value):
            for e in m.value:
                if e in failed:
                    yield Finding("G1a", (m.op, m.pos), {"key": m.key, "op": m.op, "pos": m.pos,
                                                         "read": m.value, "element": e,
                                                         "writer": failed[e]})


def intermediate_reads(mops: list[KeyMop]) -> Iterator[Finding]:
    """G1b: an ok read ending in an element its writer (another txn) later
    followed with another append to the same key."""
    intermediate = {m.value: m.op for m in mops if m.f == "append" and not m.last}
    if not intermediate:
        return
    for m in mops:
        if m.f == "r" and m.otype == "ok" and m.value:
            writer = intermediate.get(m.value[-1])
            if writer is not None and writer != m.op:
                yield Finding("G1b", (m.op, m.pos), {"key": m.key, "op": m.op, "pos": m.pos,
                                                     "read": m.value, "element": m.value[-1],
                                                     "writer": writer})


def dirty_updates(key, mops: list[KeyMop], read_states: list[list] | None = None) -> Iterator[Finding]:
    """A failed txn's element followed, in the key's version order (failed
    txns' appends counted), by a committed txn's element. `read_states`:
    _read_states(mops), when the caller has it already."""
    if not any(m.otype == "fail" and m.f == "append" for m in mops):
        return                   # no failed append, nothing to follow one
    order = version_order(observed_states(mops, with_failed=True, read_states=read_states))
    writers = {m.value: m for m in mops if m.f == "append"}
    prev_type, values, aborted = "ok", [], None
    for v in order:
        w = writers.get(v)
        if w is None:
            continue
        values = values + [v]
        if prev_type == "fail" and w.otype == "ok":
            yield Finding("dirty-update", (w.op, w.pos),
                          {"key": key, "values": values, "aborted_op": aborted, "op": w.op})
        if w.otype == "info":
            continue             # can't say; keep the range going
        if w.otype == "fail" and prev_type == "fail":
            continue             # cover the range from the first aborted one
        prev_type, values, aborted = w.otype, [v], w.op if w.otype == "fail" else None


def lost_updates(key, mops: list[KeyMop]) -> Iterator[Finding]:
    """Two or more ok txns read the same state of the key (their first read
    of it) and then appended to it."""
    first_read: dict[int, object] = {}
    wrote: set[int] = set()
    by_state: dict[tuple, list[int]] = {}
    for m in sorted((m for m in mops if m.otype == "ok"), key=lambda m: (m.op, m.pos)):
        if m.f == "r" and m.op not in first_read:
            first_read[m.op] = tuple(m.value or ())
        elif m.f == "append" and m.op not in wrote and m.op in first_read:
            wrote.add(m.op)     # its first append after reading (Elle's rule)
            by_state.setdefault(first_read[m.op], []).append(m.op)
    for state, ops in by_state.items():
        if len(ops) > 1:
            yield Finding("lost-update", (ops[0], 0), {"key": key, "value": list(state), "ops": ops})


def edges(key, mops: list[KeyMop], order: list) -> list[tuple]:
    """ww, wr and rw edges of the key, between ok/info txns, mop by mop, as
    plain tuples of Step's fields (equal to the Step they describe): most
    edges lie on no cycle, and a tuple costs a fraction of a Step to build."""
    index = {v: i for i, v in enumerate(order)}
    writer: dict = {}
    readers: dict[object, list[int]] = {}
    # fields unpacked, not looked up by name: this loops over every micro-op
    for _, op, otype, _, f, value, _ in mops:
        if f == "append":
            if otype != "fail":
                writer[value] = op
        elif f == "r" and otype == "ok":
            readers.setdefault(value[-1] if value else INIT, []).append(op)
    last_seen = order[-1] if order else INIT
    out: list[tuple] = []
    for _, op, otype, _, f, value, _ in mops:
        if otype == "fail":
            continue
        if f == "r":
            if otype == "ok" and value:
                w = writer.get(value[-1])
                if w is not None and w != op:
                    out.append((w, op, "wr", key, value[-1], None, None))
            continue
        i = index.get(value)
        prev = last_seen if i is None else (order[i - 1] if i > 0 else INIT)
        if prev is not INIT:
            w = writer.get(prev)
            if w is not None and w != op:
                out.append((w, op, "ww", key, value, None, prev))
        rw_prev = None if prev is INIT else prev
        out.extend((r, op, "rw", key, value, None, rw_prev) for r in readers.get(prev, ()) if r != op)
    return out


def analyze_key(key, mops: list[KeyMop]) -> tuple[list[Finding], list[tuple]]:
    """Every per-key anomaly and the key's edges. As in Elle, a key whose
    reads disagree (incompatible-order) still takes its longest read as the
    version order for edges: the cycles it then shows are reported too.
    Edges are Step-shaped tuples (see `edges`).

    The finders that look only at appends and at ok reads of something are
    given just those (in the same order: the same findings), and the states
    read are computed once for the version order and dirty updates alike."""
    appends = [m for m in mops if m[4] == "append"]
    reads = [m for m in mops if m[4] == "r" and m[2] == "ok" and m[5]]
    read_states = _read_states(reads)
    states = observed_states(appends, read_states=read_states)
    findings: list[Finding] = []
    clash = incompatible_order(key, states)
    if clash is not None:
        clash.example["ops"] = _readers_of(reads, clash.example["values"])
        clash.sort = (min(clash.example["ops"]), 0)
        findings.append(clash)
    both = appends + reads
    for finder in (duplicate_elements(reads), aborted_reads(both), intermediate_reads(both),
                   dirty_updates(key, both, read_states), lost_updates(key, mops)):
        findings.extend(finder)
    return findings, edges(key, mops, version_order(states))


def _readers_of(mops: list[KeyMop], values: list[list]) -> list[int]:
    """The first ok txn that read each of `values`."""
    out = []
    for v in values:
        out.append(min(m.op for m in mops if m.f == "r" and m.otype == "ok" and m.value == v))
    return out


def group_by_key(mops: Iterable[KeyMop]) -> dict[object, list[KeyMop]]:
    # runs once per micro-op: a plain lookup, no list built per call as setdefault would
    out: dict[object, list[KeyMop]] = {}
    for m in mops:
        group = out.get(m[0])
        if group is None:
            out[m[0]] = [m]
        else:
            group.append(m)
    return out
