"""Unseen sends over time, for a plot: per key, how many acknowledged sends
had not yet been returned by any ok poll, bucketed to at most MAX_BUCKETS
times.

A send counts from its acknowledgement until the first ok poll that returned
it completed (or for ever, when none did). Which poll returned which send is
queue.writes.first_reads, the matching the `unseen` anomaly counts from: each
key's last count (the end of the history) is its number of `unseen`
anomalies. Each bucket of keys computes its keys' series (`key_series`) and
offers its TOP_KEYS first by `rank`; the driver keeps the overall TOP_KEYS
(`merge_series`).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from checkers.history.queue_records import NULL, OK

MAX_BUCKETS = 200
TOP_KEYS = 20

Candidate = tuple[int, int, list[int]]      # (key, peak, counts per time bucket)


def bucket_width(end_time: int, buckets: int = MAX_BUCKETS) -> int:
    return max(1, -(-(end_time + 1) // buckets))


def buckets_for(end_time: int) -> int:
    return -(-(end_time + 1) // bucket_width(end_time))


def rank(key: int, peak: int, last: int) -> tuple:
    """The order in which keys get one of the TOP_KEYS places: keys still
    unseen at the end first (each is an `unseen` anomaly the plot must
    show), then the highest peaks."""
    return last == 0, -peak, key


def top(candidates: list[Candidate]) -> list[Candidate]:
    """The TOP_KEYS first `candidates` by `rank`."""
    return sorted(candidates, key=lambda c: rank(c[0], c[1], c[2][-1]))[:TOP_KEYS]


def key_series(sends: pd.DataFrame, end_time: int) -> list[Candidate]:
    """[(key, peak, counts per time bucket)] for this bucket's TOP_KEYS keys
    by `rank` (peak > 0). `sends`: queue.writes.first_reads (key, otype,
    ctime, read)."""
    width, n = bucket_width(end_time), buckets_for(end_time)
    acked = sends[sends["otype"] == OK]
    ack, read = acked["ctime"].to_numpy(), acked["read"].to_numpy()
    # a send read before its acknowledgement came back was never unseen while acknowledged
    counted = (read == NULL) | (read > ack)
    if n <= 0 or not counted.any():
        return []
    keys, key_pos = np.unique(acked["key"].to_numpy()[counted], return_inverse=True)
    ack, read = ack[counted], read[counted]
    deltas = np.zeros((len(keys), n + 1), dtype=np.int64)
    np.add.at(deltas, (key_pos, np.clip(ack // width, 0, n)), 1)
    was_read = read != NULL
    np.add.at(deltas, (key_pos[was_read], np.clip(read[was_read] // width, 0, n)), -1)
    counts = np.cumsum(deltas, axis=1)[:, :n]
    peaks = counts.max(axis=1)
    return top([(int(keys[i]), int(peaks[i]), counts[i].tolist()) for i in range(len(keys)) if peaks[i] > 0])


def merge_series(candidates: list[Candidate], end_time: int) -> dict:
    """{"times": [ns at the end of each bucket], "keys": {"<key>": [counts]}}:
    the overall TOP_KEYS of the buckets' candidates, by `rank`."""
    width, n = bucket_width(end_time), buckets_for(end_time)
    return {"times": [(b + 1) * width for b in range(n)],
            "keys": {str(k): counts for k, _, counts in top(candidates)}}
