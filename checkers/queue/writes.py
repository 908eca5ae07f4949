"""Anomalies about what happened to sends (one bucket,
checkers/queue/frame.py): lost-write, unseen, G1a (aborted read) and
precommitted-read.

Values are unique across the history, so a send and the polls that returned
it are matched on (key, value).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from checkers.history.queue_records import FAIL, NULL, OK, POLL, SEND, rows_of_same_record
from checkers.queue.frame import Found, at_lowest_offset, nullable, op_struct, sort_rows

OP_COLUMNS = ["op", "process", "otype", "fcode", "itime", "ctime", "cindex"]
READ_COLUMNS = ["key", "value", "offset", "ctime"]    # what first_reads and lost_and_unseen read of the ok polls


def ok_polls(bucket: pd.DataFrame, columns: list[str] | None = None) -> pd.DataFrame:
    """The reads: poll results of ok operations (only `columns`, when given:
    copying every column of a million rows costs). (Polls of failed and info
    operations show what the log held, queue.versions.observations, but
    nobody is known to have consumed them.)"""
    reads = (bucket["kind"] == POLL) & (bucket["otype"] == OK)
    return bucket[reads] if columns is None else bucket.loc[reads, columns]


def first_reads(sends: pd.DataFrame, polls: pd.DataFrame) -> pd.DataFrame:
    """`sends` with `read`: the completion time of the first poll of `polls`
    (ok_polls, READ_COLUMNS) that returned the send's value on its key, NULL
    when none did. The one matching of sends to reads: `unseen`,
    `lost-write` and the unseen series (queue.series.key_series) all count
    from it, so the plot cannot disagree with the verdict."""
    at = rows_of_same_record(sends, polls)
    if at is None:      # values repeat (not a valid history): by (key, value)
        first = polls.groupby(["key", "value"])["ctime"].min().astype("Int64")
        read = first.reindex(pd.MultiIndex.from_frame(sends[["key", "value"]])).to_numpy("int64", na_value=NULL)
        return sends.assign(read=read)
    hit, never = at >= 0, np.iinfo(np.int64).max
    read = np.full(len(sends), never, dtype=np.int64)
    np.minimum.at(read, at[hit], polls["ctime"].to_numpy()[hit])
    return sends.assign(read=np.where(read == never, NULL, read))


def lost_and_unseen(bucket: pd.DataFrame, sends: pd.DataFrame, polls: pd.DataFrame, obs: pd.DataFrame,
                    found: Found) -> pd.DataFrame:
    """unseen: every ok send that no ok poll returned by the end of the
    history (as Jepsen's kafka checker counts it: its final "unseen" map).
    lost-write: every send that certainly landed (ok, or info and proven:
    queue.frame.proven_sends) at or below the highest offset an ok poll read
    on its key, and that no ok poll returned: a reader must have passed over
    it. An unseen send above that offset (or of unknown offset) may only not
    have been read yet. An ok lost write is reported under both types.
    Returns the lost writes (key, value, itime, ctime). `sends`: first_reads
    of the bucket's proven sends (queue.frame.proven_sends) and `polls`, its
    ok_polls (READ_COLUMNS); `obs`: queue.versions.observations.

    Each example also places the write as Jepsen's checker does: the value's
    first offset in the log (`first_offset`: the lowest offset any send or
    poll, failed and info polls included, saw it at), and the read that
    bounds it (`max_read_op`, the first ok poll to read the key's highest
    offset, and `max_read_first_offset`, where the value it read there first
    appears)."""
    landed = sends[sends["read"] == NULL]
    top = _top_reads(bucket, polls)
    landed["max_read"] = landed["key"].map(top["offset"]).fillna(NULL).astype("int64")
    known = (landed["offset"] != NULL) & (landed["max_read"] != NULL)
    lost = known & (landed["offset"] <= landed["max_read"])
    unseen = landed["otype"] == OK
    first_at = _first_offsets(obs, pd.concat([landed[["key", "value"]], top[["key", "value"]]]))

    def example(r) -> dict:
        key, value, offset = int(r["key"]), int(r["value"]), nullable(r["offset"])
        e = {"key": key, "offsets": [] if offset is None else [offset], "values": [value],
             "ops": [op_struct(r, offset=offset, value=value)]}
        if key in top.index:
            reader = top.loc[key]
            e["max_read_offset"] = int(reader["offset"])
            e["max_read_op"] = op_struct(reader, offset=int(reader["offset"]), value=int(reader["value"]))
            e["max_read_first_offset"] = first_at.get((key, int(reader["value"])), int(reader["offset"]))
        if (key, value) in first_at:
            e["first_offset"] = first_at[(key, value)]
        return e

    found.add("lost-write", landed[lost], "key", "offset", example)
    found.add("unseen", landed[unseen], "key", "cindex", example)
    return landed.loc[lost, ["key", "value", "itime", "ctime"]]


def _top_reads(bucket: pd.DataFrame, polls: pd.DataFrame) -> pd.DataFrame:
    """Per key (the index), the ok poll row of `bucket` that read the key's
    highest offset (the first such in history order). `polls`: ok_polls."""
    highest = polls.groupby("key")["offset"].max()
    at_top = polls.index[polls["offset"].to_numpy() == polls["key"].map(highest).to_numpy()]
    rows = sort_rows(bucket.loc[at_top], ["key", "cindex"])
    return rows.drop_duplicates("key").set_index("key", drop=False)


def _first_offsets(obs: pd.DataFrame, wanted: pd.DataFrame) -> dict[tuple[int, int], int]:
    """(key, value) -> the lowest offset `obs` places that value at, for the
    pairs in `wanted` only (few: a grouping of every observation would cost
    more than the rest of the analysis on large buckets)."""
    rows = obs[obs["value"].isin(wanted["value"]) & (obs["offset"] != NULL)]
    if rows.empty:
        return {}
    lowest = rows.groupby(["key", "value"])["offset"].min()
    return {(int(k), int(v)): int(o) for (k, v), o in lowest.items()}


def readers(polls: pd.DataFrame) -> pd.DataFrame:
    """Each (reading op, key, value) once, at the lowest offset it was read."""
    return at_lowest_offset(polls, ["op", "key", "value"])


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
    """G1a: an ok poll returned a value whose send failed."""
    sends = bucket[bucket["kind"] == SEND]
    failed = sends[sends["otype"] == FAIL]
    polls = ok_polls(bucket)
    # failed sends are few: only the polls of their values can join them
    _writer_reader("G1a", _reads_of(failed, polls[polls["value"].isin(failed["value"])]), found)


def precommitted_reads(bucket: pd.DataFrame, found: Found) -> None:
    """precommitted-read: a transaction polled its own send before it
    committed (whatever its outcome: as in Jepsen, an aborted transaction
    must not see its own sends either)."""
    sends, polls = bucket[bucket["kind"] == SEND], bucket[bucket["kind"] == POLL]
    pairs = _reads_of(sends, polls[polls["op"].isin(sends["op"].unique())])
    _writer_reader("precommitted-read", pairs[pairs["w_op"] == pairs["r_op"]], found)
