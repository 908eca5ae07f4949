"""One bucket of queue micro-operations as a pandas frame, and the helpers
the per-bucket analyses share (checkers/queue/bucket.py runs them).

The rows are the queue's micro-op records, whose columns and codes are
declared with the history (checkers/history/queue_records.py).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd

from checkers.history.queue_records import FS, INFO, NULL, OK, POLL, PROVEN, SEND, TYPES, proven_ops

OPS_PER_EXAMPLE = 10


def proven_sends(bucket: pd.DataFrame) -> pd.Series:
    """Over `bucket`'s rows: True for a send that certainly happened: an ok
    send, or a send of an info op that is proven (an ok poll returned one of
    its values: the PROVEN flag, set across keys, or seen in this bucket).
    Jepsen's must-have-committed?."""
    kind, otype = bucket["kind"].to_numpy(), bucket["otype"].to_numpy()
    sends = kind == SEND
    info = sends & (otype == INFO)
    proven = info & ((bucket["flags"].to_numpy() & PROVEN) != 0)
    if info.any():
        read_ops = proven_ops(bucket.loc[info, ["key", "value", "op"]],
                              bucket.loc[(kind == POLL) & (otype == OK), ["key", "value"]])
        proven |= info & bucket["op"].isin(read_ops).to_numpy()
    return pd.Series(sends & ((otype == OK) | proven), index=bucket.index)


def sort_rows(frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """`frame` sorted by its int64 `columns`, stably: sort_values(kind="stable")
    without pandas' per-column factorizing (np.lexsort is 3-4x faster)."""
    order = np.lexsort([frame[c].to_numpy() for c in reversed(columns)])
    return frame.take(order)


def at_lowest_offset(rows: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Each distinct `by` once: the row with the lowest offset (first seen on ties)."""
    return rows.sort_values("offset", kind="stable").drop_duplicates(by)


def nullable(x) -> int | None:
    x = int(x)
    return None if x == NULL else x


def op_struct(row, prefix: str = "", **extra) -> dict:
    """An operation as an example shows it (checkers/queue/ops_spark.op_struct):
    the event that reported its outcome; None fields are left out."""
    get = lambda name: row[prefix + name]  # noqa: E731
    cindex, ctime = nullable(get("cindex")), nullable(get("ctime"))
    op = {"index": cindex if cindex is not None else int(get("op")),
          "process": int(get("process")),
          "time": ctime if ctime is not None else int(get("itime")),
          "f": FS[int(get("fcode"))], "type": TYPES[int(get("otype"))]}
    op.update({k: v for k, v in extra.items() if v is not None})
    return op


def _op_key(op: dict) -> tuple:
    return tuple((0, v) if isinstance(v, (int, float)) else (1, str(v)) for v in op.values())


def first_ops(ops: list[dict], n: int = OPS_PER_EXAMPLE) -> list[dict]:
    """The first n distinct ops, by history index (then the other fields)."""
    distinct = {json.dumps(op, sort_keys=False): op for op in ops}
    return sorted(distinct.values(), key=_op_key)[:n]


def run_starts(arrays: list[np.ndarray]) -> np.ndarray:
    """For arrays sorted together: a mask of rows that start a run, i.e. the
    first row and every row differing from the one before in any array."""
    n = len(arrays[0])
    starts = np.ones(n, dtype=bool)
    if n > 1:
        same = np.ones(n - 1, dtype=bool)
        for values in arrays:
            same &= values[1:] == values[:-1]
        starts[1:] = ~same
    return starts


def previous(frame: pd.DataFrame, group: list[str], columns: list[str]) -> tuple[np.ndarray, dict]:
    """For a frame sorted by `group` (then its order): a mask of rows that
    have a previous row in their group, and those previous values."""
    n = len(frame)
    has = ~run_starts([frame[g].to_numpy() for g in group])
    prev = {}
    for c in columns:
        values = frame[c].to_numpy()
        shifted = np.empty_like(values)
        if n:
            shifted[0] = values[0]
            shifted[1:] = values[:-1]
        prev[c] = shifted
    return has, prev


@dataclass
class Found:
    """Anomalies of one bucket: exact counts, and for each type only the
    first `limit` examples by (sort, sort2, example JSON), as the Spark-wide
    merge keeps them."""

    limit: int
    counts: dict[str, int] = field(default_factory=dict)
    examples: list[tuple[str, int, int, str]] = field(default_factory=list)

    def add(self, kind: str, rows: pd.DataFrame, sort: str, sort2: str,
            example: Callable[[object], dict]) -> None:
        if rows.empty:
            return
        self.counts[kind] = self.counts.get(kind, 0) + len(rows)
        ranked = rows.assign(_s=rows[sort].astype("int64"), _s2=rows[sort2].astype("int64"))
        cut = sort_rows(ranked, ["_s", "_s2"]).head(self.limit)
        # rows tied with the last kept one may sort before it by their JSON
        last = cut.iloc[-1]
        ties = ranked[(ranked["_s"] == last["_s"]) & (ranked["_s2"] == last["_s2"])]
        candidates = pd.concat([cut, ties]) if len(ties) > 1 else cut
        candidates = candidates[~candidates.index.duplicated()]
        made = [(int(r["_s"]), int(r["_s2"]), json.dumps(example(r)))
                for _, r in candidates.iterrows()]
        made.sort()
        self.examples += [(kind, s, s2, text) for s, s2, text in made[:self.limit]]
