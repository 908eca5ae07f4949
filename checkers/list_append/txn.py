"""List-append, within one transaction (Elle's internal and future-read).

- internal: a read disagrees with what the transaction already knows of the
  key: after a read R and appends A since, it must read exactly R ++ A;
  with appends A and no earlier read, it must end with A;
- future-read: a read shows an element the transaction appends only later.

At most one of each per transaction, as in Elle. Pure Python: it runs
in-process and in Spark's executors alike.
"""
from __future__ import annotations

from collections.abc import Sequence

from checkers.list_append.keys import Finding

UNKNOWN_PREFIX = "..."


def _internal(op: int, mops: Sequence[tuple]) -> Finding | None:
    state: dict = {}
    for pos, (f, key, value) in enumerate(mops):
        if f == "append":
            state[key] = state.get(key, [UNKNOWN_PREFIX]) + [value]
            continue
        read = value or []
        expected = state.get(key)
        if expected is not None:
            if expected[:1] == [UNKNOWN_PREFIX]:
                tail = expected[1:]
                bad = len(read) < len(tail) or read[len(read) - len(tail):] != tail
            else:
                bad = expected != read
            if bad:
                return Finding("internal", (op, pos), {"key": key, "op": op, "pos": pos,
                                                       "read": read, "expected": expected})
        state[key] = list(read)
    return None


def _future_read(op: int, mops: Sequence[tuple]) -> Finding | None:
    seen: dict = {}
    for pos, (f, key, value) in enumerate(mops):
        if f == "r":
            for e in value or []:
                seen.setdefault((key, _hashable(e)), pos)
        elif (key, _hashable(value)) in seen:
            read_at = seen[(key, _hashable(value))]
            return Finding("future-read", (op, read_at), {"key": key, "op": op, "pos": read_at,
                                                          "element": value})
    return None


def _hashable(x):
    return tuple(x) if isinstance(x, list) else x


def txn_findings(op: int, mops: Sequence[tuple]) -> list[Finding]:
    """The within-transaction anomalies of one ok transaction."""
    if len({m[1] for m in mops}) == len(mops):
        return []   # both need two micro-ops on one key: most txns have none
    return [f for f in (_internal(op, mops), _future_read(op, mops)) if f is not None]
