"""Order anomalies of one process on one key, in the key's dense offset order
(`idx` from checkers/queue/versions.observations), for one bucket.

Between two consecutive reads of a key by one process, the next read should
start right after where the last one ended: delta = idx(first of next) -
idx(last of previous) is 1. delta > 1 skipped offsets (poll-skip), delta < 1
went back (nonmonotonic-poll). Consecutive reads inside one operation give the
int- variants. Every poll with results is checked, an aborted or
indefinite one too, but only an ok poll moves the process's position (an
aborted transaction's consumer rewinds).

Assigns, as Jepsen's checker takes them: an assign or subscribe (not a
failed one) keeps the process's position on every key it lists (HOLD rows)
and forgets it on every other key, which starts afresh (`with_epochs`).
Where the assign's completion recorded the offset it started a key at
(`starts`, docs/history-format.md), that start is the position the key's
next poll is checked against: it must begin at the start, or at the first
offset known to exist after it; else assign-skip / assign-rewind, naming
the assign and the poll. Histories without recorded starts (Jepsen's) get
Jepsen's rule alone.

Rebalances, with subscribe: an "assigned" entry of a poll/txn's
`rebalance_log` that recorded a key's start is a start too (START rows),
placed at that op before its own records, since the callback ran inside
its poll before the poll returned. Checked the same way, it reports
rebalance-skip / rebalance-rewind, naming the op that logged the rebalance
and the poll. A start counts only where it is evidence
(queue_records.evidence_logs), and only until the process's next log that
names the key (revoked, or assigned again with no start that is evidence):
the partition moved, so a later poll is no longer its first one from that
start. Where no start stands the key keeps Jepsen's rule.

Sends: within one operation offsets rise by one (else int-send-skip /
int-nonmonotonic-send); across operations they rise (else
nonmonotonic-send), with the same epochs as polls (Jepsen forgets a
process's last send to a key an assign drops). A send whose offset is
unknown is placed where a poll saw its value.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from checkers.history.queue_records import FAIL, FS, HOLD, NULL, OK, POLL, RESET, SEND, START
from checkers.queue.frame import Found, at_lowest_offset, op_struct, previous, run_starts, sort_rows
from checkers.queue.writes import OP_COLUMNS


@dataclass(frozen=True)
class OrderNames:
    skip: str | None           # across ops, delta > 1
    nonmonotonic: str          # across ops, delta < 1
    int_skip: str
    int_nonmonotonic: str


POLL_NAMES = OrderNames("poll-skip", "nonmonotonic-poll", "int-poll-skip", "int-nonmonotonic-poll")
START_NAMES = OrderNames("assign-skip", "assign-rewind", "", "")   # no within-op variants
REBALANCE_NAMES = OrderNames("rebalance-skip", "rebalance-rewind", "", "")
_ASSIGNS = (FS.index("assign"), FS.index("subscribe"))
SEND_NAMES = OrderNames(None, "nonmonotonic-send", "int-send-skip", "int-nonmonotonic-send")


def _classify(skip: str | None, back: str, steps: pd.DataFrame, found: Found, example) -> None:
    if skip:
        found.add(skip, steps[steps["delta"] > 1], "key", "offset", example)
    found.add(back, steps[steps["delta"] < 1], "key", "offset", example)


def _pair(r, ops: list[dict]) -> dict:
    return {"key": int(r["key"]), "offsets": [int(r["prev_offset"]), int(r["offset"])],
            "values": [int(r["prev_value"]), int(r["value"])], "ops": ops, "delta": int(r["delta"])}


def in_op_order(rows: pd.DataFrame) -> pd.DataFrame:
    """`rows` by operation, key and position in the operation: the order
    within_ops and per_op take."""
    return sort_rows(rows, ["op", "key", "pos"])


def within_ops(ordered: pd.DataFrame, names: OrderNames, found: Found) -> None:
    """Consecutive rows of one op and key (`ordered`: in_op_order)."""
    has, prev = previous(ordered, ["op", "key"], ["idx", "offset", "value"])
    steps = ordered[has].assign(delta=ordered["idx"].to_numpy()[has] - prev["idx"][has],
                                prev_offset=prev["offset"][has], prev_value=prev["value"][has])
    _classify(names.int_skip, names.int_nonmonotonic, steps, found, lambda r: _pair(r, [op_struct(r)]))


def per_op(ordered: pd.DataFrame) -> pd.DataFrame:
    """One row per (op, key): where the op's reads/sends of the key began
    (idx, offset, value) and ended (last_idx, last_offset, last_value).
    `ordered`: in_op_order, so each (op, key) is one run of rows."""
    starts = run_starts([ordered["op"].to_numpy(), ordered["key"].to_numpy()])
    ends = np.append(starts[1:], True) if len(starts) else starts
    first, last = ordered[starts], ordered[ends]
    summary = first[["key"] + OP_COLUMNS + ["idx", "offset", "value"]].reset_index(drop=True)
    for c in ("idx", "offset", "value"):
        summary["last_" + c] = last[c].to_numpy()
    return summary


def _count_before(rows: pd.DataFrame, marks: pd.DataFrame, by: list[str]) -> np.ndarray:
    """For each of `rows` (any order): how many of `marks` (distinct by
    `by` and op) have the same `by` and an earlier op."""
    if marks.empty:
        return np.zeros(len(rows), dtype=np.int64)
    marks = marks[by + ["op"]].drop_duplicates().sort_values("op")
    marks = marks.assign(_n=marks.groupby(by).cumcount() + 1)
    tagged = pd.merge_asof(rows[by + ["op"]].reset_index().sort_values("op"), marks, on="op", by=by,
                           allow_exact_matches=False, direction="backward")
    return tagged.sort_values("index")["_n"].fillna(0).astype("int64").to_numpy()


def with_epochs(summary: pd.DataFrame, bucket: pd.DataFrame) -> pd.DataFrame:
    """Number each op-key row with its epoch: the count of assign/subscribe
    ops its process ran before it that did not list its key (Jepsen's
    select-keys): reads and sends compare only within one epoch. A failed
    assign/subscribe certainly did not happen, so it changes nothing (an
    indefinite one may have happened, so it does)."""
    done = bucket[bucket["otype"] != FAIL]
    resets, holds = done[done["kind"] == RESET], done[done["kind"] == HOLD]
    if resets.empty:
        return summary.assign(epoch=np.int64(0))
    summary = summary.reset_index(drop=True)
    return summary.assign(epoch=_count_before(summary, resets, ["process"])
                          - _count_before(summary, holds, ["process", "key"]))


def starts(bucket: pd.DataFrame, obs: pd.DataFrame) -> pd.DataFrame:
    """Op-key rows for the starts ok assigns and rebalances recorded (HOLD
    and START rows): a baseline as if the process had read up to the offset
    before the start (`last_idx`: how many offsets known on the key lie
    below it), so the key's next poll must begin at the first known offset
    at or after the start; `moved`: the op from which it no longer stands
    (_moved_at)."""
    kind = bucket["kind"]
    rows = bucket[kind.isin([HOLD, START]) & (bucket["otype"] == OK) & (bucket["offset"] != NULL)]
    if rows.empty:
        return rows.assign(last_idx=np.int64(0), moved=NULL)
    known = obs[["key", "offset", "idx"]].drop_duplicates(["key", "offset"]).sort_values("offset")
    rows = rows.reset_index(drop=True)
    below = pd.merge_asof(rows[["key", "offset"]].reset_index().sort_values("offset"), known, on="offset",
                          by="key", allow_exact_matches=False, direction="backward").sort_values("index")
    return rows.assign(last_idx=below["idx"].fillna(0).astype("int64").to_numpy(),
                       moved=_moved_at(rows, bucket))


def _moved_at(rows: pd.DataFrame, bucket: pd.DataFrame) -> np.ndarray:
    """For each of `rows`: the op of its process's next rebalance log (any
    START row, whatever its outcome or start) that names its key, after its
    own op; NULL where none does. Its start stands only before that op."""
    moves = bucket.loc[bucket["kind"] == START, ["process", "key", "op"]].drop_duplicates()
    if moves.empty:
        return np.full(len(rows), NULL, dtype=np.int64)
    nxt = pd.merge_asof(rows[["process", "key", "op"]].reset_index(drop=True).reset_index().sort_values("op"),
                        moves.assign(moved=moves["op"]).sort_values("op"), on="op", by=["process", "key"],
                        allow_exact_matches=False, direction="forward").sort_values("index")
    return nxt["moved"].fillna(NULL).astype("int64").to_numpy()


def across_ops(summary: pd.DataFrame, names: OrderNames, found: Found, ok_baselines: bool = False,
               start_rows: pd.DataFrame | None = None) -> None:
    """Each op-key row against the last earlier row of its process, key and
    epoch that can serve as a baseline: any row, or with `ok_baselines`
    only rows of ok operations (as Jepsen checks polls: an aborted or
    indefinite poll is itself checked against where the process stood, but
    consumed nothing, so the next poll is checked against the same place).
    `start_rows` (`starts`, with epochs and `moved`): baselines only, checked by none;
    a row checked against one is an assign-skip / assign-rewind, or, for a
    rebalance's start, a rebalance-skip / rebalance-rewind. A start sorts
    before its op's own rows: a rebalance started the key inside that op's
    poll, before the poll returned. A start with `moved` (an op, not NULL)
    no longer stands from that op on: rows after it are not checked
    against it."""
    summary = summary.assign(is_start=False, moved=NULL)
    if start_rows is not None and len(start_rows):
        summary = pd.concat([summary, start_rows.assign(
            is_start=True, idx=NULL, offset=NULL, value=NULL, last_offset=start_rows["offset"],
            last_value=NULL)[list(summary.columns)]], ignore_index=True)
    summary = summary.assign(_after=(~summary["is_start"]).astype("int64"))
    ordered = sort_rows(summary, ["process", "key", "epoch", "op", "_after"]).reset_index(drop=True)
    n = len(ordered)
    if n < 2:
        return
    usable = (ordered["otype"] == OK).to_numpy() if ok_baselines else np.ones(n, dtype=bool)
    group = [ordered[c] for c in ("process", "key", "epoch")]
    upto = pd.Series(np.where(usable, np.arange(n), -1)).groupby(group).cummax()
    base = upto.groupby(group).shift(1).fillna(-1).astype("int64").to_numpy()   # strictly before
    has = (base >= 0) & ~ordered["is_start"].to_numpy()
    at = base[has]
    prev = {c: ordered[c].to_numpy()[at]
            for c in ["last_idx", "last_offset", "last_value", "is_start", "moved"] + OP_COLUMNS}
    stands = (prev["moved"] == NULL) | (ordered["op"].to_numpy()[has] < prev["moved"])
    has[has], at = stands, at[stands]
    prev = {c: v[stands] for c, v in prev.items()}
    steps = ordered[has].assign(delta=ordered["idx"].to_numpy()[has] - prev["last_idx"],
                                prev_offset=prev["last_offset"], prev_value=prev["last_value"],
                                **{"p_" + c: prev[c] for c in OP_COLUMNS})
    from_start = prev["is_start"].astype(bool)
    by_assign = np.isin(prev["fcode"], _ASSIGNS)
    _classify(names.skip, names.nonmonotonic, steps[~from_start], found,
              lambda r: _pair(r, [op_struct(r, "p_"), op_struct(r)]))
    _classify(START_NAMES.skip, START_NAMES.nonmonotonic, steps[from_start & by_assign], found, _from_start)
    _classify(REBALANCE_NAMES.skip, REBALANCE_NAMES.nonmonotonic, steps[from_start & ~by_assign], found, _from_start)


def _from_start(r) -> dict:
    """An assign-skip / assign-rewind (rebalance-): the assign (the op that
    logged the rebalance) that started the key, and the poll that began
    elsewhere."""
    return {"key": int(r["key"]), "start": int(r["prev_offset"]), "offsets": [int(r["offset"])],
            "values": [int(r["value"])], "ops": [op_struct(r, "p_"), op_struct(r)], "delta": int(r["delta"])}


def poll_order(obs: pd.DataFrame, bucket: pd.DataFrame, found: Found) -> None:
    polls = in_op_order(obs[obs["kind"] == POLL])
    within_ops(polls, POLL_NAMES, found)
    across_ops(with_epochs(per_op(polls), bucket), POLL_NAMES, found, ok_baselines=True,
               start_rows=with_epochs(starts(bucket, obs), bucket))


def placed_sends(obs: pd.DataFrame, bucket: pd.DataFrame, proven: pd.Series) -> pd.DataFrame:
    """Sends that landed, each at its acknowledged offset, or, when that is
    unknown (an info send proven by a poll, an ok completion without one), at
    the lowest offset a poll returned its value (as Jepsen places a send by
    where its value sits in the log). `proven`: queue.frame.proven_sends."""
    sends = obs[obs["kind"] == SEND]
    unplaced = bucket[(bucket["kind"] == SEND) & (bucket["offset"] == NULL) & proven]
    if unplaced.empty:
        return sends
    polled = at_lowest_offset(obs.loc[obs["kind"] == POLL, ["key", "value", "offset", "idx"]], ["key", "value"])
    placed = unplaced.drop(columns=["offset"]).merge(polled, on=["key", "value"])
    return pd.concat([sends, placed[sends.columns]], ignore_index=True) if len(placed) else sends


def send_order(obs: pd.DataFrame, bucket: pd.DataFrame, proven: pd.Series, found: Found) -> None:
    sends = in_op_order(placed_sends(obs, bucket, proven))
    within_ops(sends, SEND_NAMES, found)
    across_ops(with_epochs(per_op(sends), bucket), SEND_NAMES, found)
