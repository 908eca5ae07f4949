"""The queue's micro-op records: one row per send, per polled (offset, value)
and per assign/subscribe, the shape every queue analysis reads and the Parquet
companion keeps (queue-mops/). Built here from paired operations; Spark builds
the same rows in checkers/queue/bucket.records.

Columns, all int64 so Arrow hands them over without copies or
float conversions (a missing value is NULL):

    key, offset, value    the record (offset NULL: a send with no known offset)
    op                    the operation's invoke index (its id)
    process               the operation's process
    kind                  SEND, POLL, RESET (an assign/subscribe, copied
                          into every bucket: it resets its process's
                          positions), HOLD (one per key an assign/subscribe
                          lists: the process keeps its position on that key,
                          as Jepsen's checker does; `offset` is the start the
                          assign recorded for it in `starts`, else NULL) or
                          START (one per key a completed poll/txn's
                          `rebalance_log` names, `offset`: the start the key's
                          last entry recorded where it is evidence, else NULL:
                          the key moved, so no earlier start stands;
                          evidence_logs, rebalance_starts)
    otype, fcode          the operation's outcome and f, as codes
    pos                   order inside the operation: mop_pos << 31 | poll_pos
    itime, ctime, cindex  invoke time, completion time and index (NULL: none)
    flags                 SINGLE_KEY_WRITER: a `send` op whose sends all go to
                          one key (so all its dependencies live in this bucket);
                          IDEMPOTENT: sent by an idempotent producer;
                          PROVEN: a send of an indefinite (info) op some of
                          whose sent values an ok poll returned, on any key
                          (so it happened; set where all keys are seen)

Which rows the record builders give (queue.bucket.records, queue_local):
a SEND row for every send micro-op whatever its outcome, its offset from an
ok or info completion (NULL for a fail, or when unknown); a POLL row for
every (offset, value) a poll micro-op of any completed operation returned
(an aborted or indefinite op's polls still show what the log held, as in
Jepsen's version orders). The analyses decide what counts: polls of ok
operations are the reads (lost-write, unseen, G1a, the order baselines); an
info send's offset counts only when the op is proven (`proven_sends`).
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterable

import numpy as np
import pandas as pd

NULL = np.iinfo(np.int64).min
SEND, POLL, RESET, HOLD, START = 0, 1, 2, 3, 4
OK, FAIL, INFO = 0, 1, 2
TYPES = ("ok", "fail", "info")
FS = ("send", "poll", "txn", "assign", "subscribe", "crash")
F_POLL = FS.index("poll")
SINGLE_KEY_WRITER = 1
IDEMPOTENT = 2
PROVEN = 4
COLUMNS = ("key", "offset", "value", "op", "process", "kind", "otype", "fcode", "pos",
           "itime", "ctime", "cindex", "flags")

_INT_TEXT = re.compile(r"-?[0-9]+")
_MIN, _MAX = -(1 << 63), (1 << 63) - 1


def _long(x) -> int:
    """A JSON value as Spark reads it into a record: an integer, or text of
    one (a poll result's key, or an element Spark kept as text); else NULL."""
    if type(x) is int:
        return x if _MIN < x <= _MAX else NULL
    if type(x) is str and _INT_TEXT.fullmatch(x):
        return _long(int(x))
    return NULL


def _strict_long(x) -> int:
    """A JSON value Spark reads as a long (offsets and values in results)."""
    return x if type(x) is int and _MIN < x <= _MAX else NULL


def _mops(value) -> list | None:
    """A value as Spark's from_json(array<array<string>>) accepts it: a list
    of lists (JSON text is parsed first), else None."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    if isinstance(value, list) and all(isinstance(m, list) or m is None for m in value):
        return value
    return None


def int64s(series: pd.Series) -> np.ndarray:
    """An integer column as int64, NULL for a missing value."""
    return pd.array(series, dtype="Int64").to_numpy("int64", na_value=NULL)


def truthy(x) -> bool:
    """A flag column's value as a bool: missing (None, NA, NaN) is False."""
    return x is not None and x is not pd.NA and not (isinstance(x, float) and x != x) and bool(x)


def _code(name, names: tuple[str, ...]) -> int:
    return names.index(name) if name in names else -1


def _key_text(k) -> str | None:
    """A send's key as Spark compares keys (array_distinct over the micro-op
    read as strings: a JSON string's content, any other value's JSON text)."""
    if k is None or type(k) is str:
        return k
    return str(k) if type(k) is int else json.dumps(k, separators=(",", ":"))


def records_frame(ops: pd.DataFrame) -> pd.DataFrame:
    """The micro-op records of `ops` (checkers/queue/frame.COLUMNS, int64),
    as Spark builds them: queue.bucket.records (every send micro-op of a
    send/txn operation, whatever its outcome, with the offset of an ok or
    info completion; every (offset, value) a poll of a completed poll/txn
    returned; PROVEN on the sends of info ops an ok poll read from) plus the
    RESET row of every assign/subscribe that queue.bucket.bucketed copies
    into each bucket, its HOLD rows, and the START rows of rebalances."""
    return _proven(records_table(record_rows(op_tuples(ops))))


def op_tuples(ops: pd.DataFrame, evidence: list | None = None) -> Iterable[tuple]:
    """Each operation of `ops` (history.read.ParsedHistory.ops columns, or
    the companion's ops/) as record_rows takes it; `evidence`: evidence_logs
    of the operations around them, when `ops` are some of them."""
    n = len(ops)
    return zip(ops["f"].tolist(), ops["type"].tolist(), *(int64s(ops[c]).tolist() for c in (
        "invoke_index", "process", "invoke_time", "complete_time", "complete_index")),
        ops["invoke_value"].tolist(), ops["complete_value"].tolist(),
        ops["idempotent"].tolist() if "idempotent" in ops.columns else [None] * n,
        ops["starts"].tolist() if "starts" in ops.columns else [None] * n,
        evidence_logs(ops) if evidence is None else evidence)


def evidence_logs(ops: pd.DataFrame) -> list:
    """Each completed poll/txn's `rebalance_log` with whether its starts are
    evidence for the op's own polls, as (log, evidence); None for an op
    without one (queue_mops_spark.rebalance_starts does the same in Spark).
    The log holds the callbacks since the process's previous ok
    poll/txn, and a callback runs inside a poll, before the records that
    poll returns. So the starts are where the op's records of those keys
    must begin when (1) the process ran no other poll/txn since that
    previous ok one (an aborted txn in between may have run the callback
    and then rewound its consumer elsewhere) and (2) the op has exactly one
    poll micro-op (in a txn with two, the callback may have come after the
    first, whose records then precede the start)."""
    out: list = [None] * len(ops)
    if "rebalance_log" not in ops.columns or not (ops["f"] == "subscribe").any():
        return out      # only a subscription rebalances (as queue.spark gates it)
    logs, kinds = ops["rebalance_log"].to_numpy(dtype=object), ops["type"].to_numpy(dtype=object)
    at = np.flatnonzero(ops["f"].isin(["poll", "txn"]).to_numpy())
    process, index = int64s(ops["process"])[at], int64s(ops["invoke_index"])[at]
    at = at[np.lexsort((index, process))]
    same = int64s(ops["process"])[at]
    after_ok = np.ones(len(at), dtype=bool)
    after_ok[1:] = (same[1:] != same[:-1]) | (kinds[at][:-1] == "ok")
    invoked = ops["invoke_value"].to_numpy(dtype=object)
    for i, first_since_ok in zip(at, after_ok):
        if kinds[i] in TYPES and isinstance(logs[i], (list, str)):
            out[i] = (logs[i], bool(first_since_ok and kinds[i] == "ok" and poll_mop_count(invoked[i]) == 1))
    return out


def poll_mop_count(value) -> int:
    """How many poll micro-ops a poll/txn's invoke value holds."""
    return sum(1 for m in _mops(value) or [] if m and m[0] == "poll")


def records_table(rows: list[tuple]) -> pd.DataFrame:
    """record_rows' tuples as a frame of COLUMNS (int64)."""
    table = np.array(rows, dtype=np.int64).reshape(-1, len(COLUMNS))
    return pd.DataFrame({c: table[:, i] for i, c in enumerate(COLUMNS)})


def record_rows(ops: Iterable[tuple], resets: bool = True) -> list[tuple]:
    """The micro-op records (tuples of COLUMNS) of `ops`, each given as (f,
    type, invoke index, process, invoke time, completion time, completion
    index, invoke value, completion value, idempotent, starts, (rebalance
    log, evidence) or None (evidence_logs)), NULL for a missing integer;
    PROVEN is left to the caller (it needs every poll). `resets`: with the
    RESET and HOLD rows of every assign/subscribe and the START rows of
    rebalances (built from the operations when checked, not stored)."""
    rows: list[tuple] = []
    add = rows.append
    for f, t, op, p, it, ct, ci, invoked, done, idempotent, starts, rebalance in ops:
        t_code, f_code = _code(t, TYPES), _code(f, FS)
        if f in ("send", "txn"):
            sent = _mops(invoked) or []
            results_ = _mops(done) if t in ("ok", "info") else None
            sends = [(i, m) for i, m in enumerate(sent) if m and m[0] == "send"]
            keys = {_key_text(m[1] if len(m) > 1 else None) for _, m in sends}
            fl = ((SINGLE_KEY_WRITER if f == "send" and len(keys) == 1 else 0)
                  | (IDEMPOTENT if truthy(idempotent) else 0))
            for i, m in sends:
                o = NULL
                if results_ is not None and i < len(results_):
                    r = results_[i]
                    if r and r[0] == "send" and len(r) > 2 and isinstance(r[2], list) and r[2]:
                        o = _strict_long(r[2][0])
                add((_long(m[1] if len(m) > 1 else None), o, _long(m[2] if len(m) > 2 else None), op, p,
                     SEND, t_code, f_code, i << 31, it, ct, ci, fl))
        if t in TYPES and f in ("poll", "txn"):
            for i, m in enumerate(_mops(done) or []):
                if not (m and m[0] == "poll" and len(m) > 1 and isinstance(m[1], dict)):
                    continue
                for k, pairs in m[1].items():
                    k = _long(k)
                    for j, pair in enumerate(pairs if isinstance(pairs, list) else []):
                        pair = pair if isinstance(pair, list) else []
                        add((k, _strict_long(pair[0]) if pair else NULL,
                             _strict_long(pair[1]) if len(pair) > 1 else NULL, op, p,
                             POLL, t_code, f_code, (i << 31) + j, it, ct, ci, 0))
            if resets and rebalance is not None:
                log, evidence = rebalance
                for key, start in rebalance_starts(log):
                    add((key, start if evidence else NULL, NULL, op, p, START, t_code, f_code, 0, it, ct, ci, 0))
        elif resets and f in ("assign", "subscribe"):
            add((NULL, NULL, NULL, op, p, RESET, t_code, f_code, 0, NULL, NULL, NULL, 0))
            for key, start in held_keys(invoked, done, starts):
                add((key, start, NULL, op, p, HOLD, t_code, f_code, 0, it, ct, ci, 0))
    return rows


def _keys(value) -> list | None:
    """An assign/subscribe value as Spark's from_json(array<string>) accepts
    it: a list (JSON text is parsed first), else None."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    return value if isinstance(value, list) else None


def held_keys(invoked, done, starts) -> list[tuple[int, int]]:
    """(key, start) of each distinct key an assign/subscribe lists (its
    completion's value, else its invoke's, as Jepsen reads `:value`), with
    the start its completion's `starts` records for it (else NULL)."""
    keys = _keys(done)
    keys = _keys(invoked) if keys is None else keys
    if isinstance(starts, str):     # as the Parquet companion keeps it: JSON text
        try:
            starts = json.loads(starts)
        except ValueError:
            starts = None
    recorded = starts if isinstance(starts, dict) else {}
    held = {}
    for k in keys or []:
        key = _long(k)
        if key != NULL and key not in held:
            held[key] = _strict_long(recorded.get(str(key)))
    return list(held.items())


def rebalance_starts(log) -> list[tuple[int, int]]:
    """(key, start) of each key a `rebalance_log` (a list, or its JSON text)
    names: the start its last entry recorded, if that is an "assigned" one
    naming it, else NULL (revoked after, or assigned with no start known;
    queue_mops_spark.rebalance_starts)."""
    if isinstance(log, str):
        try:
            log = json.loads(log)
        except ValueError:
            return []
    last: dict[int, int] = {}
    for entry in log if isinstance(log, list) else []:
        if not (isinstance(entry, list) and len(entry) > 1 and isinstance(entry[1], list)):
            continue
        recorded = entry[2] if entry[0] == "assigned" and len(entry) > 2 and isinstance(entry[2], dict) else {}
        for k in entry[1]:
            key = _long(k)
            if key != NULL:
                last[key] = _strict_long(recorded.get(str(key)))
    return list(last.items())


def _proven(rec: pd.DataFrame) -> pd.DataFrame:
    """PROVEN on every send of an info op that an ok poll returned one of
    the values of, on any key (queue.bucket._proven)."""
    kind, otype = rec["kind"].to_numpy(), rec["otype"].to_numpy()
    info = (kind == SEND) & (otype == TYPES.index("info"))
    if info.any():
        read = rec.loc[(kind == POLL) & (otype == TYPES.index("ok")), ["key", "value"]]
        ops = proven_ops(rec.loc[info, ["key", "value", "op"]], read)
        rec.loc[info & rec["op"].isin(ops).to_numpy(), "flags"] |= PROVEN
    return rec


def proven_ops(info: pd.DataFrame, read: pd.DataFrame) -> np.ndarray:
    """The ops of the `info` sends (key, value, op) whose (key, value) is
    among `read`'s (ok polls)."""
    at = rows_of_same_record(info, read)
    if at is None:
        read = read[read["value"].isin(info["value"].unique())].drop_duplicates()
        return info[["key", "value", "op"]].merge(read, on=["key", "value"])["op"].unique()
    return pd.unique(info["op"].to_numpy()[at[at >= 0]])


def rows_of_same_record(written: pd.DataFrame, read: pd.DataFrame) -> np.ndarray | None:
    """For each row of `read`: the position of the row of `written` with the
    same key and value, or -1; None when `written`'s values repeat. A hash
    lookup by value (values are unique in a validated history), several
    times faster than a merge on (key, value) over millions of rows."""
    index = pd.Index(written["value"].to_numpy())
    if not index.is_unique:
        return None
    at = index.get_indexer(read["value"].to_numpy())
    hit = at >= 0
    hit[hit] = written["key"].to_numpy()[at[hit]] == read["key"].to_numpy()[hit]
    return np.where(hit, at, -1)
