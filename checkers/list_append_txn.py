"""What one list-append transaction says about itself, without the others.

Standard library only: `analyze_txn` runs inside Spark's Python workers
(a plain UDF, row-local, no shuffle).

A transaction is a list of micro-ops `(f, key, value, read)`: f is "append"
(value: the element) or "r" (read: the list, None if unknown). Within one
transaction, on each key:

- internal: a read disagrees with what the transaction already knows: after
  an earlier read R and appends A since, it must read exactly R ++ A; with no
  earlier read it must end with A;
- future-read: a read shows an element the transaction appends only later;
- duplicate-elements: a read holds some element twice;
- and, for lost-update, the version (the list) read just before the
  transaction's first append to that key.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

ANOMALY_FIELDS = ("type", "pos", "key", "expected", "read")


def _dump(xs: Sequence[str] | None) -> str | None:
    return None if xs is None else json.dumps(list(xs))


def _internal(pos, key, read, known, appended) -> dict | None:
    if known is not None:
        expected = list(known) + appended
        if list(read) != expected:
            return {"type": "internal", "pos": pos, "key": key,
                    "expected": _dump(expected), "read": _dump(read)}
    elif appended and list(read[-len(appended):]) != appended:
        return {"type": "internal", "pos": pos, "key": key,
                "expected": _dump(["..."] + appended), "read": _dump(read)}
    return None


def analyze_txn(mops: Sequence) -> dict:
    """{"anomalies": [ANOMALY_FIELDS dicts], "versions": [{"key", "version"}]}
    where versions are the lists read right before the first append to a key."""
    anomalies: list[dict] = []
    versions: list[dict] = []
    later_appends: dict[str, dict[str, int]] = {}
    for pos, (f, key, value, _read) in enumerate(mops):
        if f == "append":
            later_appends.setdefault(key, {}).setdefault(value, pos)
    known: dict[str, list[str]] = {}
    appended: dict[str, list[str]] = {}
    for pos, (f, key, value, read) in enumerate(mops):
        if f == "append":
            if key not in appended and key in known:
                versions.append({"key": key, "version": _dump(known[key])})
            appended.setdefault(key, []).append(value)
            continue
        if read is None:
            continue
        mine = appended.get(key, [])
        problem = _internal(pos, key, read, known.get(key), mine)
        if problem:
            anomalies.append(problem)
        future = [e for e in read if later_appends.get(key, {}).get(e, -1) > pos]
        if future:
            anomalies.append({"type": "future-read", "pos": pos, "key": key,
                              "expected": None, "read": _dump(future)})
        if len(set(read)) != len(read):
            dupes = sorted({e for e in read if list(read).count(e) > 1})
            anomalies.append({"type": "duplicate-elements", "pos": pos, "key": key,
                              "expected": None, "read": _dump(dupes)})
        known[key] = list(read)
        if key in appended:
            appended[key] = []
    return {"anomalies": anomalies, "versions": versions}
