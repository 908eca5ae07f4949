"""Unseen sends over time, for a plot: per key, how many acknowledged sends
had not yet been returned by any poll, bucketed to at most MAX_BUCKETS times.

A send counts from its acknowledgement until the first ok poll that returned
it completed (or for ever, when none did). Each bucket of keys computes its
keys' series (`key_series`) and offers its TOP_KEYS highest; the driver keeps
the overall TOP_KEYS (`merge_series`).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from checkers.history.queue_records import OK, POLL, SEND

MAX_BUCKETS = 200
TOP_KEYS = 20


def bucket_width(end_time: int, buckets: int = MAX_BUCKETS) -> int:
    return max(1, -(-(end_time + 1) // buckets))


def buckets_for(end_time: int) -> int:
    return -(-(end_time + 1) // bucket_width(end_time))


def key_series(bucket: pd.DataFrame, end_time: int) -> list[tuple[int, int, list[int]]]:
    """[(key, peak, counts per time bucket)] for this bucket's TOP_KEYS keys
    with the highest peak (peak > 0), highest first."""
    width, n = bucket_width(end_time), buckets_for(end_time)
    kind, ok = bucket["kind"], bucket["otype"] == OK
    polls = bucket.loc[(kind == POLL) & ok, ["key", "value", "ctime"]]
    first_read = polls.groupby(["key", "value"], as_index=False)["ctime"].min().rename(columns={"ctime": "read"})
    acked = bucket.loc[(kind == SEND) & ok, ["key", "value", "ctime"]].merge(first_read, on=["key", "value"],
                                                                             how="left")
    acked = acked[acked["read"].isna() | (acked["read"] > acked["ctime"])]
    if acked.empty:
        return []
    keys, key_pos = np.unique(acked["key"].to_numpy(), return_inverse=True)
    deltas = np.zeros((len(keys), n + 1), dtype=np.int64)
    ack_bucket = np.clip(acked["ctime"].to_numpy() // width, 0, n)
    np.add.at(deltas, (key_pos, ack_bucket), 1)
    read = acked["read"].notna().to_numpy()
    read_bucket = np.clip(acked["read"].to_numpy()[read].astype(np.int64) // width, 0, n)
    np.add.at(deltas, (key_pos[read], read_bucket), -1)
    counts = np.cumsum(deltas, axis=1)[:, :n]
    peaks = counts.max(axis=1) if n else np.zeros(len(keys), dtype=np.int64)
    order = sorted((i for i in range(len(keys)) if peaks[i] > 0), key=lambda i: (-peaks[i], keys[i]))[:TOP_KEYS]
    return [(int(keys[i]), int(peaks[i]), counts[i].tolist()) for i in order]


def merge_series(candidates: list[tuple[int, int, list[int]]], end_time: int) -> dict:
    """{"times": [ns at the end of each bucket], "keys": {"<key>": [counts]}}."""
    width, n = bucket_width(end_time), buckets_for(end_time)
    top = sorted(candidates, key=lambda c: (-c[1], c[0]))[:TOP_KEYS]
    return {"times": [(b + 1) * width for b in range(n)], "keys": {str(k): counts for k, _, counts in top}}
