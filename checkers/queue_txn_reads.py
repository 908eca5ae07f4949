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

Pure pandas over the queue's micro-op records (checkers/queue_frame
COLUMNS), per consumer process, so both engines run the same code:
in-process over the whole frame, on Spark per process (queue_spark).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from checkers.queue_frame import FS, NULL, OK, POLL, RESET, SEND

NAME = "partial-txn-read"
F_TXN = FS.index("txn")
PART_COLUMNS = ("txn", "key", "value", "offset")
FOUND_COLUMNS = ("process", "epoch", "txn", "seen_key", "seen_value", "seen_op", "seen_index", "key", "value",
                 "offset", "low", "high")


def txn_parts(records: pd.DataFrame) -> pd.DataFrame:
    """The sends of committed (ok) transactions that wrote two or more keys,
    with known offsets: (txn, key, value, offset)."""
    sends = records[(records["kind"] == SEND) & (records["otype"] == OK) & (records["fcode"] == F_TXN)
                    & (records["offset"] != NULL)]
    keys = sends.groupby("op")["key"].nunique()
    multi = sends[sends["op"].isin(keys[keys >= 2].index)]
    return multi.rename(columns={"op": "txn"})[list(PART_COLUMNS)].reset_index(drop=True)


def consumer_rows(records: pd.DataFrame) -> pd.DataFrame:
    """What the finder needs of each process: its ok polls and its ok
    assign/subscribe calls (the epoch boundaries)."""
    keep = (records["otype"] == OK) & records["kind"].isin([POLL, RESET])
    return records.loc[keep, ["process", "op", "pos", "kind", "key", "offset", "value", "cindex"]]


def find(rows: pd.DataFrame, parts: pd.DataFrame) -> pd.DataFrame:
    """One row per (consumer process, transaction, missing part): the
    consumer read `seen_*` of the transaction and read partition `key` from
    below to above `offset` without `value`. `rows`: consumer_rows of any
    set of processes; `parts`: txn_parts of the whole history."""
    if rows.empty or parts.empty:
        return _empty()
    reads = _reads_with_epochs(rows)
    ranges = _past_reads(reads)
    # from here on only the reads of transactions' sends matter (what was seen,
    # and what was got): a process's polls can be millions, those a fraction
    part_reads = reads.merge(parts, on=["key", "value"], suffixes=("", "_sent"))
    del reads
    seen = (part_reads.sort_values(["process", "epoch", "op"], kind="stable")
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


def _reads_with_epochs(rows: pd.DataFrame) -> pd.DataFrame:
    """The polls, in (process, op, pos) order, each with its epoch: how many
    assign/subscribe calls of its process came before it."""
    rows = rows.sort_values(["process", "op", "pos"], kind="stable")
    epoch = (rows["kind"] == RESET).groupby(rows["process"]).cumsum().to_numpy()
    is_poll = (rows["kind"] == POLL).to_numpy()
    reads = rows.loc[is_poll, ["process", "op", "cindex", "key", "offset", "value"]]
    reads.insert(1, "epoch", epoch[is_poll])
    return reads


def _past_reads(reads: pd.DataFrame) -> pd.DataFrame:
    """Per (process, epoch, key): the lowest and highest offsets read."""
    return reads.groupby(["process", "epoch", "key"])["offset"].agg(low="min", high="max").reset_index()


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
