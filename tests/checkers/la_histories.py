"""Hand-made list-append histories: txns laid out concurrently or one after
another, scenarios chained so that each starts after the previous ended
(realtime edges between scenarios then only point forward: no cycle spans two
scenarios).

Keys are ints, as the history contract requires (docs/history-format.md);
tests give them readable names with a `Keys` namespace (see `keys()`).
Values need only be unique per key."""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace


@dataclass(frozen=True)
class Txn:
    process: int
    mops: tuple            # (("append", k, v) | ("r", k, [..] | None), ...)
    type: str = "ok"       # ok | fail | info


def T(process: int, *mops, type: str = "ok") -> Txn:
    return Txn(process, tuple(mops), type)


def _key(key) -> int:
    if not isinstance(key, int) or isinstance(key, bool):
        raise TypeError(f"list-append keys are ints, not {key!r}: name them with keys()")
    return key


def a(key: int, value):
    return ("append", _key(key), value)


def r(key: int, values):
    return ("r", _key(key), values)


def keys(*names: str, start: int = 1) -> SimpleNamespace:
    """Readable names for int keys: keys("x", "y").y == 2."""
    ids = {name: i for i, name in enumerate(names, start=start)}
    if len(ids) != len(names):
        raise ValueError("key names must be distinct")
    return SimpleNamespace(**ids)


def _invoke(t: Txn) -> dict:
    value = [[f, k, None if f == "r" else v] for f, k, v in t.mops]
    return {"type": "invoke", "process": t.process, "f": "txn", "value": value}


def _complete(t: Txn) -> dict | None:
    if t.type == "info":
        return None          # never completes: counts as info
    value = [list(m) for m in t.mops] if t.type == "ok" else _invoke(t)["value"]
    event = {"type": t.type, "process": t.process, "f": "txn", "value": value}
    if t.type == "fail":
        event["error"] = ["TXN_ABORTED", "aborted"]
    return event


def concurrent(*txns: Txn) -> list[dict]:
    """All invoked, then all completed (no realtime order among them)."""
    done = [c for c in map(_complete, txns) if c is not None]
    return [_invoke(t) for t in txns] + done


def sequential(*txns: Txn) -> list[dict]:
    """Each completes before the next is invoked."""
    return [e for t in txns for e in concurrent(t)]


def history(*blocks: list[dict]) -> list[dict]:
    """Blocks one after another, indices and times filled in. Info txns
    (no completion) would keep their process busy, so use fresh processes."""
    events = [e for block in blocks for e in block]
    return [{"index": i, "time": (i + 1) * 1000, **e} for i, e in enumerate(events)]
