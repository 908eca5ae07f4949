"""Anomalies about what happened to sends (one bucket,
checkers/queue_frame.py): lost-write, unseen, G1a (aborted read) and
precommitted-read.

Values are unique across the history, so a send and the polls that returned
it are matched on (key, value).
"""
from __future__ import annotations

import pandas as pd

from checkers.queue_frame import FAIL, NULL, OK, POLL, SEND, Found, nullable, op_struct

OP_COLUMNS = ["op", "process", "otype", "fcode", "itime", "ctime", "cindex"]


def unread_acknowledged(sends: pd.DataFrame, polls: pd.DataFrame) -> pd.DataFrame:
    """ok sends that no poll ever returned. (An info send that someone read
    counts as acknowledged too, but it was read, so it is never here.)"""
    acked = sends[sends["otype"] == OK]
    read = polls[["key", "value"]].drop_duplicates()
    marked = acked.merge(read, on=["key", "value"], how="left", indicator=True)
    return marked[marked["_merge"] == "left_only"].drop(columns="_merge")


def lost_and_unseen(bucket: pd.DataFrame, found: Found) -> pd.DataFrame:
    """unseen: every acknowledged send that no poll returned by the end of the
    history (as Jepsen's kafka checker counts it: its final "unseen" map).
    lost-write: those of them at or below the highest offset read on their
    key, which a reader must have passed over; an unseen send above it (or of
    unknown offset) may only not have been read yet. A lost write is thus
    reported under both types. Returns the lost writes (key, value, itime,
    ctime)."""
    sends, polls = bucket[bucket["kind"] == SEND], bucket[bucket["kind"] == POLL]
    unread = unread_acknowledged(sends, polls)
    highest = polls.groupby("key")["offset"].max()
    unread["max_read"] = unread["key"].map(highest).fillna(NULL).astype("int64")
    known = (unread["offset"] != NULL) & (unread["max_read"] != NULL)
    lost = known & (unread["offset"] <= unread["max_read"])

    def example(r) -> dict:
        offset = nullable(r["offset"])
        e = {"key": int(r["key"]), "offsets": [] if offset is None else [offset], "values": [int(r["value"])],
             "ops": [op_struct(r, offset=offset, value=int(r["value"]))]}
        if nullable(r["max_read"]) is not None:
            e["max_read_offset"] = int(r["max_read"])
        return e

    found.add("lost-write", unread[lost], "key", "offset", example)
    found.add("unseen", unread, "key", "cindex", example)
    return unread.loc[lost, ["key", "value", "itime", "ctime"]]


def readers(polls: pd.DataFrame) -> pd.DataFrame:
    """Each (reading op, key, value) once, at the lowest offset it was read."""
    return polls.sort_values("offset", kind="stable").drop_duplicates(["op", "key", "value"])


def _reads_of(writes: pd.DataFrame, polls: pd.DataFrame) -> pd.DataFrame:
    """Reads joined to the sends of their values: w_* writer, r_* reader."""
    w = writes[["key", "value"] + OP_COLUMNS].rename(columns={c: "w_" + c for c in OP_COLUMNS})
    r = readers(polls)[["key", "value", "offset"] + OP_COLUMNS].rename(
        columns={c: "r_" + c for c in OP_COLUMNS + ["offset"]})
    return w.merge(r, on=["key", "value"])


def _writer_reader(kind: str, pairs: pd.DataFrame, found: Found) -> None:
    found.add(kind, pairs, "key", "r_cindex", lambda r: {
        "key": int(r["key"]), "offsets": [int(r["r_offset"])], "values": [int(r["value"])],
        "ops": [op_struct(r, "w_", role="send"), op_struct(r, "r_", role="poll")]})


def aborted_reads(bucket: pd.DataFrame, found: Found) -> None:
    """G1a: a poll returned a value whose send failed."""
    sends, polls = bucket[bucket["kind"] == SEND], bucket[bucket["kind"] == POLL]
    _writer_reader("G1a", _reads_of(sends[sends["otype"] == FAIL], polls), found)


def precommitted_reads(bucket: pd.DataFrame, found: Found) -> None:
    """precommitted-read: a transaction polled its own send before it committed."""
    sends, polls = bucket[bucket["kind"] == SEND], bucket[bucket["kind"] == POLL]
    pairs = _reads_of(sends, polls[polls["op"].isin(sends["op"].unique())])
    _writer_reader("precommitted-read", pairs[pairs["w_op"] == pairs["r_op"]], found)
