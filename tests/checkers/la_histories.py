"""Hand-made list-append histories: txns laid out concurrently or one after
another, scenarios chained so that each starts after the previous ended
(realtime edges between scenarios then only point forward: no cycle spans two
scenarios)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Txn:
    process: int
    mops: tuple            # (("append", k, v) | ("r", k, [..] | None), ...)
    type: str = "ok"       # ok | fail | info


def T(process: int, *mops, type: str = "ok") -> Txn:
    return Txn(process, tuple(mops), type)


def a(key, value):
    return ("append", key, value)


def r(key, values):
    return ("r", key, values)


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
