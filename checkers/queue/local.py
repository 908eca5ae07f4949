"""The queue checker in-process: no JVM, for small histories.

    check_queue_local(ops, allow=(), forbid=()) -> results dict

`ops`: one row per operation, the columns of history_io.pair_operations with
the values parsed (checkers/history/read.ParsedHistory.ops; JSON text is
parsed here too). The analysis is the Spark checker's (checkers/queue/checker.py):
`records_frame` builds the micro-op records exactly as queue_bucket.records
and .bucketed do in Spark, checkers/queue/bucket.analyze_bucket runs over the
whole history as one bucket (every per-key analysis is independent of the
other keys, so one bucket finds what many do), and `LocalPass` gathers from
its rows what SparkPass gathers in Spark, for the same queue.results().
Nothing here imports pyspark.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterable

import numpy as np
import pandas as pd

from checkers.queue import producer_errors
from checkers.queue import cycles as queue_cycles
from checkers.queue import txn_reads as queue_txn_reads
from checkers.queue.checker import DEFAULT_EXAMPLES, QUEUE_OPS, results
from checkers.queue.bucket import OUT_COLUMNS, analyze_bucket
from checkers.queue.frame import (COLUMNS, FS, IDEMPOTENT, NULL, POLL, PROVEN, RESET, SEND, SINGLE_KEY_WRITER, TYPES,
                                  proven_ops)
from checkers.queue.series import TOP_KEYS

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


def _ints(series: pd.Series) -> np.ndarray:
    return pd.array(series, dtype="Int64").to_numpy("int64", na_value=NULL)


def _flag(x) -> bool:
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
    as Spark builds them: queue_bucket.records (every send micro-op of a
    send/txn operation, whatever its outcome, with the offset of an ok or
    info completion; every (offset, value) a poll of a completed poll/txn
    returned; PROVEN on the sends of info ops an ok poll read from) plus the
    RESET row of every assign/subscribe that queue_bucket.bucketed copies
    into each bucket."""
    n = len(ops)
    columns = zip(ops["f"].tolist(), ops["type"].tolist(), *(_ints(ops[c]).tolist() for c in (
        "invoke_index", "process", "invoke_time", "complete_time", "complete_index")),
        ops["invoke_value"].tolist(), ops["complete_value"].tolist(),
        ops["idempotent"].tolist() if "idempotent" in ops.columns else [None] * n)
    return _proven(records_table(record_rows(columns)))


def records_table(rows: list[tuple]) -> pd.DataFrame:
    """record_rows' tuples as a frame of COLUMNS (int64)."""
    table = np.array(rows, dtype=np.int64).reshape(-1, len(COLUMNS))
    return pd.DataFrame({c: table[:, i] for i, c in enumerate(COLUMNS)})


def record_rows(ops: Iterable[tuple], resets: bool = True) -> list[tuple]:
    """The micro-op records (tuples of COLUMNS) of `ops`, each given as (f,
    type, invoke index, process, invoke time, completion time, completion
    index, invoke value, completion value, idempotent), NULL for a missing
    integer; PROVEN is left to the caller (it needs every poll). `resets`:
    with the RESET row of every assign/subscribe."""
    rows: list[tuple] = []
    add = rows.append
    for f, t, op, p, it, ct, ci, invoked, done, idempotent in ops:
        t_code, f_code = _code(t, TYPES), _code(f, FS)
        if f in ("send", "txn"):
            sent = _mops(invoked) or []
            results_ = _mops(done) if t in ("ok", "info") else None
            sends = [(i, m) for i, m in enumerate(sent) if m and m[0] == "send"]
            keys = {_key_text(m[1] if len(m) > 1 else None) for _, m in sends}
            fl = ((SINGLE_KEY_WRITER if f == "send" and len(keys) == 1 else 0)
                  | (IDEMPOTENT if _flag(idempotent) else 0))
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
        elif resets and f in ("assign", "subscribe"):
            add((NULL, NULL, NULL, op, p, RESET, t_code, f_code, 0, NULL, NULL, NULL, 0))
    return rows


def _proven(rec: pd.DataFrame) -> pd.DataFrame:
    """PROVEN on every send of an info op that an ok poll returned one of
    the values of, on any key (queue_bucket._proven)."""
    kind, otype = rec["kind"].to_numpy(), rec["otype"].to_numpy()
    info = (kind == SEND) & (otype == TYPES.index("info"))
    if info.any():
        read = rec.loc[(kind == POLL) & (otype == TYPES.index("ok")), ["key", "value"]]
        ops = proven_ops(rec.loc[info, ["key", "value", "op"]], read)
        rec.loc[info & rec["op"].isin(ops).to_numpy(), "flags"] |= PROVEN
    return rec


def op_stats(ops: pd.DataFrame) -> dict:
    """queue_spark.op_stats on a pandas frame."""
    ends = np.where(ops["complete_time"].isna().to_numpy(), _ints(ops["invoke_time"]), _ints(ops["complete_time"]))
    by_f: dict[str, dict[str, int]] = {}
    by_type: dict[str, int] = {}
    end = 0
    for (f, t), rows in sorted(pd.Series(np.arange(len(ops))).groupby(
            [ops["f"].to_numpy(), ops["type"].to_numpy()]).groups.items()):
        by_f.setdefault(f, {})[t] = len(rows)
        by_type[t] = by_type.get(t, 0) + len(rows)
        end = max(end, int(ends[rows].max()))
    return {"ops": sum(by_type.values()), "by_type": by_type, "by_f": by_f, "end_time": end}


def _polled(value) -> bool:
    """Does a completion's value hold a poll (Spark: its JSON text contains "poll")?"""
    return '"poll"' in (value if isinstance(value, str) else json.dumps(value))


class LocalPass:
    """queue.Gathered from analyze_bucket's rows over the whole history."""

    def __init__(self, ops: pd.DataFrame, limit: int = DEFAULT_EXAMPLES, realtime: bool = False,
                 passed: pd.DataFrame | None = None, stats: dict | None = None) -> None:
        """`passed`/`stats`: the bucket pass's rows and op_stats when an engine
        ran them already (Spark, for a small history: queue_spark.driver_pass)."""
        self.values = ops[ops["f"].isin(QUEUE_OPS)]
        self.limit, self.realtime = limit, realtime
        self.op_stats = stats if stats is not None else op_stats(self.values)
        self.records = records_frame(self.values)
        if passed is not None:
            self.passed = passed
        elif len(self.records):     # Spark runs no bucket when there is no record at all
            self.passed = analyze_bucket(self.records, limit, self.op_stats["end_time"], shrink=not realtime)
        else:
            self.passed = pd.DataFrame({c: pd.Series(dtype=object) for c in OUT_COLUMNS})

    def _rec(self, kind: str) -> pd.DataFrame:
        return self.passed[self.passed["rec"] == kind]

    def anomaly_rows(self) -> tuple[dict[str, int], list[tuple[str, str]]]:
        counts = self._rec("count").groupby("type")["count"].sum()
        rows = self._rec("anomaly")
        ranked = sorted(zip(rows["type"], _ints(rows["sort"]), _ints(rows["sort2"]), rows["example"]))
        firsts, taken = [], {}
        for kind, _, _, example in ranked:
            taken[kind] = taken.get(kind, 0) + 1
            if taken[kind] <= self.limit:
                firsts.append((kind, example))
        return {kind: int(n) for kind, n in counts.items()}, firsts

    def bucket_stats(self) -> dict[str, int]:
        rows = self.passed[self.passed["rec"].isin(["stat", "max"])]
        out = {}
        for (rec, kind), counts in rows.groupby(["rec", "type"])["count"]:
            out[kind] = int(counts.sum() if rec == "stat" else counts.max())
        return out

    def series_candidates(self) -> list[tuple[int, int, list[int]]]:
        rows = self._rec("unseen")
        top = sorted(zip(_ints(rows["count"]), _ints(rows["key"]), rows["example"]),
                     key=lambda r: (-r[0], r[1]))[:TOP_KEYS]
        return [(int(k), int(n), json.loads(example)) for n, k, example in top]

    def cycles(self) -> tuple[dict[str, dict], dict]:
        return queue_cycles.find_cycles_local(self._rec("edge"), self.values, self.limit, self.realtime)

    def used_subscribe(self) -> bool:
        return bool((self.values["f"] == "subscribe").any())

    def polled_after(self, time: int) -> bool:
        v = self.values
        polls = v[(v["type"] == "ok") & v["f"].isin(["poll", "txn"]) & (_ints(v["invoke_time"]) > time)]
        return any(_polled(done) for done in polls["complete_value"])

    def txn_reads(self) -> dict[str, dict]:
        return queue_txn_reads.from_bucket_rows(self.passed, self.limit)

    def producer(self, checks: producer_errors.ProducerChecks) -> dict:
        lost = self._rec("lost")
        lost = pd.DataFrame({"key": lost["key"], "value": lost["value"], "start": lost["sort"], "end": lost["sort2"]})
        dups = self._rec("idem_dup")[["key", "value"]]
        sends = self.records[self.records["kind"] == SEND]
        return producer_errors.analyze_local(self.values, sends, checks, lost, dups, null_key=NULL)


def check_queue_local(ops: pd.DataFrame, allow=(), forbid=(), limit: int = DEFAULT_EXAMPLES,
                      realtime: bool = False, producer: producer_errors.ProducerChecks | None = None,
                      cycles: bool = True) -> dict:
    """queue.check_queue's results for the operations in `ops` (a pandas
    frame, see the module docstring), computed in-process."""
    return results(LocalPass(ops, limit, realtime), allow, forbid, cycles, producer)
