"""partial-txn-read: a consumer saw part of a committed transaction and read
past the rest without seeing it.

A committed transaction T sent va to partition (key) A and vb to B, at
offsets known from its completion. A consumer process P, between two of its
assign/subscribe calls (an "epoch": its positions only move forward then),
polled va, and on B it read at offsets both below and above T's offset ob
without ever returning vb. Under read_committed T's sends become visible
together, at its commit; once P has read B past ob, vb was visible and P's
position went over it. So P saw T only in part: the fractured read Jepsen
suspected in Kafka (its "G1b-like" partial transaction visibility) and never
confirmed. Reading past ob from below is required so that a consumer which
started B beyond ob (a seek, a reset) is never blamed.

Pure pandas over the queue's micro-op records (checkers/queue/frame
COLUMNS), so both engines run the same code in two steps: in the bucket
pass, `bucket_rows` gives each bucket of keys' committed transaction sends
and `summarize`s its ok polls (the reads of those sends, and each (process,
epoch, key)'s range of offsets read); on the driver, `from_bucket_rows`
keeps the transactions that wrote two or more keys and `match`es.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

from checkers.history.queue_records import FS, NULL, OK, POLL, RESET, SEND, rows_of_same_record

NAME = "partial-txn-read"
F_TXN = FS.index("txn")
PART_COLUMNS = ("txn", "key", "value", "offset")
FOUND_COLUMNS = ("process", "epoch", "txn", "seen_key", "seen_value", "seen_op", "seen_index", "key", "value",
                 "offset", "low", "high")


def committed_sends(records: pd.DataFrame) -> pd.DataFrame:
    """The sends of committed (ok) transactions with known offsets: (txn,
    key, value, offset)."""
    sends = records[(records["kind"] == SEND) & (records["otype"] == OK) & (records["fcode"] == F_TXN)
                    & (records["offset"] != NULL)]
    return sends.rename(columns={"op": "txn"})[list(PART_COLUMNS)].reset_index(drop=True)


def multi_key(sends: pd.DataFrame) -> pd.DataFrame:
    """The committed_sends of transactions that wrote two or more keys."""
    keys = sends.groupby("txn")["key"].nunique()
    return sends[sends["txn"].isin(keys[keys >= 2].index)].reset_index(drop=True)


# The bucket pass (queue.bucket.analyze_bucket) gathers what the finder needs
# of each bucket of keys, in its output rows (queue.bucket.OUT_SCHEMA): a key's
# sends and polls, and every process's resets, are all in its bucket. By rec,
# this finder's column -> the output column that carries it:
BUCKET_ROWS = {
    "txn_send": {"txn": "src", "key": "key", "value": "value", "offset": "offset"},   # committed_sends
    "txn_read": {"txn": "src", "process": "dst", "epoch": "prev", "op": "sort", "pos": "sort2",
                 "cindex": "count", "key": "key", "value": "value"},                 # Summary.reads
    "txn_range": {"process": "dst", "epoch": "prev", "key": "key", "low": "sort", "high": "sort2"},  # .ranges
}


def bucket_rows(bucket: pd.DataFrame) -> list[pd.DataFrame]:
    """What the finder needs of one bucket of keys (queue_frame COLUMNS), as
    the bucket pass's rows: its committed transactions' sends, and the
    summary of its ok polls with those sends for parts (whether a
    transaction wrote other keys is known only once every bucket is in)."""
    kind, otype = bucket["kind"].to_numpy(), bucket["otype"].to_numpy()
    sends = committed_sends(bucket)
    resets = bucket.loc[(kind == RESET) & (otype == OK), ["process", "op"]]
    polls = bucket.loc[(kind == POLL) & (otype == OK), ["process", "op", "pos", "cindex", "key", "value", "offset"]]
    summary = summarize(polls, resets, sends)
    return [_as_rows("txn_send", sends), _as_rows("txn_read", summary.reads),
            _as_rows("txn_range", summary.ranges)]


def _as_rows(rec: str, frame: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame({"rec": rec, **{out: frame[c].to_numpy(np.int64) for c, out in BUCKET_ROWS[rec].items()}})


def from_bucket_rows(rows: pd.DataFrame, limit: int) -> dict[str, dict]:
    """`anomaly` of the bucket pass's rows (any of them: the finder's are
    picked by rec), for results()."""
    parts = multi_key(_from_rows(rows, "txn_send"))
    if parts.empty:
        return {}
    return anomaly(match(Summary(_from_rows(rows, "txn_read"), _from_rows(rows, "txn_range")), parts), limit)


def _from_rows(rows: pd.DataFrame, rec: str) -> pd.DataFrame:
    mine = rows[rows["rec"] == rec]
    return pd.DataFrame({c: mine[out].to_numpy(np.int64) for c, out in BUCKET_ROWS[rec].items()})


class Summary(NamedTuple):
    """What `match` needs of a slice of the ok polls."""

    reads: pd.DataFrame     # the polls of transactions' sends: process, epoch, op, pos, cindex, key, value, txn
    ranges: pd.DataFrame    # per (process, epoch, key): the lowest and highest offsets read (low, high)


def summarize(polls: pd.DataFrame, resets: pd.DataFrame, parts: pd.DataFrame) -> Summary:
    """The Summary of any slice of the ok polls (process, op, pos, cindex,
    key, value, offset), with `parts` the transactions' sends. A poll's
    epoch is how many assign/subscribe calls of its process came before it
    (`resets`: their process and op, every one of the history), so slices
    need no order and no grouping: summaries of the slices of a history,
    each part concatenated, summarize the whole of it (`match` merges the
    ranges again)."""
    polls = polls.assign(epoch=_epochs(polls, resets))
    ranges = (polls.groupby(["process", "epoch", "key"], sort=False)["offset"]
              .agg(low="min", high="max").reset_index())
    reads = _reads_of_parts(polls[["process", "epoch", "op", "pos", "cindex", "key", "value"]], parts)
    return Summary(reads, ranges)


def _reads_of_parts(polls: pd.DataFrame, parts: pd.DataFrame) -> pd.DataFrame:
    """The polls of a transaction's send (same key and value), with its
    `txn`, in the polls' order: an inner merge on (key, value)."""
    at = rows_of_same_record(parts, polls)
    if at is None:
        return polls.merge(parts[["txn", "key", "value"]], on=["key", "value"])
    hit = at >= 0
    return polls[hit].assign(txn=parts["txn"].to_numpy()[at[hit]])


def _epochs(polls: pd.DataFrame, resets: pd.DataFrame) -> np.ndarray:
    """Per poll: the number of its process's resets with a lower op (a
    reset and a poll are never the same operation)."""
    epoch = np.zeros(len(polls), dtype=np.int64)
    if resets.empty or polls.empty:
        return epoch
    process, op = polls["process"].to_numpy(), polls["op"].to_numpy()
    for p, ops in resets.groupby("process")["op"]:
        mine = process == p
        epoch[mine] = np.searchsorted(np.sort(ops.to_numpy()), op[mine])
    return epoch


def match(summary: Summary, parts: pd.DataFrame) -> pd.DataFrame:
    """One row per (consumer process, transaction, missing part): the
    consumer read `seen_*` of the transaction and read partition `key` from
    below to above `offset` without `value`. `summary`: of every ok poll;
    `parts`: the sends of the transactions that wrote two or more keys."""
    part_reads = summary.reads
    if part_reads.empty or parts.empty:
        return _empty()
    ranges = (summary.ranges.groupby(["process", "epoch", "key"])
              .agg(low=("low", "min"), high=("high", "max")).reset_index())
    seen = (part_reads.sort_values(["process", "epoch", "op", "pos"], kind="stable")
            .drop_duplicates(["process", "epoch", "txn"]))
    seen = seen.rename(columns={"key": "seen_key", "value": "seen_value", "op": "seen_op",
                                "cindex": "seen_index"})[["process", "epoch", "txn", "seen_key", "seen_value",
                                                          "seen_op", "seen_index"]]
    expected = seen.merge(parts, on="txn")
    got = part_reads[["process", "epoch", "key", "value"]].drop_duplicates().assign(got=True)
    missing = expected.merge(got, on=["process", "epoch", "key", "value"], how="left")
    missing = missing[missing["got"].isna()].drop(columns="got")
    past = missing.merge(ranges, on=["process", "epoch", "key"])
    past = past[(past["low"] < past["offset"]) & (past["high"] > past["offset"])]
    past = past.sort_values(["txn", "process", "key"], kind="stable").reset_index(drop=True)
    return past[list(FOUND_COLUMNS)].astype(np.int64)


def _empty() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=np.int64) for c in FOUND_COLUMNS})


def anomaly(found: pd.DataFrame, limit: int) -> dict[str, dict]:
    """{NAME: {count, examples}} for results(), or {} when nothing was found."""
    if found.empty:
        return {}
    examples = [_example(row) for row in found.head(limit).itertuples(index=False)]
    return {NAME: {"count": len(found), "examples": examples}}


def _example(row) -> dict:
    seen_at = int(row.seen_index) if int(row.seen_index) != NULL else int(row.seen_op)
    return {"txn": int(row.txn), "process": int(row.process),
            "seen": {"key": int(row.seen_key), "value": int(row.seen_value), "poll": seen_at},
            "missing": {"key": int(row.key), "value": int(row.value), "offset": int(row.offset)},
            "read_offsets": [int(row.low), int(row.high)],
            "explanation": (f"process {int(row.process)} polled value {int(row.seen_value)} of the committed "
                            f"transaction at index {int(row.txn)} (key {int(row.seen_key)}), and read key "
                            f"{int(row.key)} from offset {int(row.low)} to {int(row.high)}, past that "
                            f"transaction's value {int(row.value)} at offset {int(row.offset)}, without ever "
                            "returning it: it saw the transaction only in part.")}
