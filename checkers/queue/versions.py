"""What each key's log holds: offset -> value, as seen through acknowledged
sends and through polls, and the anomalies in that mapping (one bucket,
checkers/queue/frame.py).

`observations` is the table the other queue detectors build on: every
(key, offset, value) someone saw, with `idx`, the offset's position in the
key's *dense* order (the offsets actually known to hold values, so gaps left
by transaction markers or aborted batches do not count as skips).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from checkers.history.queue_records import NULL, POLL
from checkers.queue.frame import Found, first_ops, op_struct, run_starts


def observations(bucket: pd.DataFrame, proven: pd.Series) -> pd.DataFrame:
    """Sends with a known offset that certainly landed (ok, or info and
    proven: queue.frame.proven_sends) and the results of every poll, the
    polls of failed and info operations included (Jepsen's version orders
    take all polls: a poller always sees what the log holds, whether or not
    its own transaction commits), with `idx` (dense rank of the offset in
    its key). `proven`: queue.frame.proven_sends(bucket)."""
    kind = bucket["kind"]
    seen = (proven & (bucket["offset"] != NULL)) | (kind == POLL)
    obs = bucket[seen]
    return obs.assign(idx=obs.groupby("key")["offset"].rank(method="dense").astype("int64"))


def _seen_by(obs: pd.DataFrame, key: int, column: str, value: int) -> list[dict]:
    rows = obs[(obs["key"] == key) & (obs[column] == value)]
    return first_ops([op_struct(r, offset=int(r["offset"]), value=int(r["value"])) for _, r in rows.iterrows()])


def _distinct_in_conflict(obs: pd.DataFrame, one: str, many: str) -> pd.DataFrame:
    """The distinct (key, `one`, `many`) rows of groups (key, `one`) with two
    or more distinct `many`, sorted by all three (one lexsort: most groups
    have one `many`, and then nothing is left to group)."""
    columns = [obs[c].to_numpy() for c in ("key", one, many)]
    order = np.lexsort(columns[::-1])
    key, first, second = (c[order] for c in columns)
    group_start = run_starts([key, first])
    distinct = run_starts([key, first, second])
    group = np.cumsum(group_start) - 1
    in_conflict = np.zeros(len(order), dtype=bool)
    in_conflict[group[distinct & ~group_start]] = True
    bad = in_conflict[group] & distinct
    return pd.DataFrame({"key": key[bad], one: first[bad], many: second[bad]})


def _conflicts(obs: pd.DataFrame, one: str, many: str) -> pd.DataFrame:
    """Groups of (key, `one`) observed with two or more distinct `many`,
    one row each, with the sorted list in column `many + "s"`."""
    bad = _distinct_in_conflict(obs, one, many)
    by = bad.groupby(["key", one], sort=True)[many]
    return by.agg(list).rename(many + "s").to_frame().assign(**{"first_" + many: by.min()}).reset_index()


def inconsistent_offsets(obs: pd.DataFrame, found: Found) -> None:
    """One offset of a key holding two or more different values."""
    rows = _conflicts(obs, "offset", "value")
    found.add("inconsistent-offsets", rows, "key", "offset", lambda r: {
        "key": int(r["key"]), "offsets": [int(r["offset"])], "values": [int(v) for v in r["values"]],
        "ops": _seen_by(obs, r["key"], "offset", r["offset"])})


def duplicates(obs: pd.DataFrame, found: Found) -> pd.DataFrame:
    """One value appearing at two or more offsets of a key. Returns the
    duplicated (key, value) pairs."""
    rows = _conflicts(obs, "value", "offset")
    found.add("duplicate", rows, "key", "first_offset", lambda r: {
        "key": int(r["key"]), "offsets": [int(o) for o in r["offsets"]], "values": [int(r["value"])],
        "ops": _seen_by(obs, r["key"], "value", r["value"])})
    return rows[["key", "value"]]
