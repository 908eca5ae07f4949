"""The queue checker in-process: no JVM, for small histories.

    check_queue_local(ops, allow=(), forbid=()) -> results dict

`ops`: one row per operation, the columns of history.spark_read.pair_operations with
the values parsed (checkers/history/read.ParsedHistory.ops; JSON text is
parsed here too). The analysis is the Spark checker's (checkers/queue/assemble.py):
`records_frame` builds the micro-op records exactly as queue.bucket.records
and .bucketed do in Spark, checkers/queue/bucket.analyze_bucket runs over the
whole history as one bucket (every per-key analysis is independent of the
other keys, so one bucket finds what many do), and `LocalPass` gathers from
its rows what SparkPass gathers in Spark, for the same queue.assemble.results().
Nothing here imports pyspark.
"""
from __future__ import annotations

import json

import numpy as np
import pandas as pd

from checkers.history.queue_records import NULL, SEND, int64s, records_frame
from checkers.queue import cycles as queue_cycles
from checkers.queue import producer_errors
from checkers.queue import series as queue_series
from checkers.queue import txn_reads as queue_txn_reads
from checkers.queue.assemble import QUEUE_OPS, results
from checkers.queue.bucket import OUT_COLUMNS, analyze_bucket
from checkers.verdict.taxonomy import DEFAULT_EXAMPLES


def op_stats(ops: pd.DataFrame) -> dict:
    """queue.spark.op_stats on a pandas frame."""
    ends = np.where(ops["complete_time"].isna().to_numpy(), int64s(ops["invoke_time"]), int64s(ops["complete_time"]))
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


class PassedRows:
    """What queue.Gathered reads from analyze_bucket's rows alone (`passed`,
    OUT_COLUMNS), whichever engine ran the buckets in-process."""

    def __init__(self, passed: pd.DataFrame, limit: int, realtime: bool) -> None:
        self.passed, self.limit, self.realtime = passed, limit, realtime

    def _rec(self, kind: str) -> pd.DataFrame:
        return self.passed[self.passed["rec"] == kind]

    def anomaly_rows(self) -> tuple[dict[str, int], list[tuple[str, str]]]:
        counts = self._rec("count").groupby("type")["count"].sum()
        rows = self._rec("anomaly")
        ranked = sorted(zip(rows["type"], int64s(rows["sort"]), int64s(rows["sort2"]), rows["example"]))
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
        return queue_series.top([(int(k), int(n), json.loads(example)) for k, n, example
                                 in zip(int64s(rows["key"]), int64s(rows["count"]), rows["example"])])

    def txn_reads(self) -> dict[str, dict]:
        return queue_txn_reads.from_bucket_rows(self.passed, self.limit)

    def lost_and_duplicated(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        """The lost writes (key, value, start, end) and the idempotent-only
        duplicates (key, value), for the producer checks."""
        lost = self._rec("lost")
        lost = pd.DataFrame({"key": lost["key"], "value": lost["value"], "start": lost["sort"], "end": lost["sort2"]})
        return lost, self._rec("idem_dup")[["key", "value"]]


def no_rows() -> pd.DataFrame:
    """analyze_bucket's output when no bucket ran (Spark runs none without records)."""
    return pd.DataFrame({c: pd.Series(dtype=object) for c in OUT_COLUMNS})


class LocalPass(PassedRows):
    """queue.Gathered from analyze_bucket's rows over the whole history."""

    def __init__(self, ops: pd.DataFrame, limit: int = DEFAULT_EXAMPLES, realtime: bool = False,
                 passed: pd.DataFrame | None = None, stats: dict | None = None) -> None:
        """`passed`/`stats`: the bucket pass's rows and op_stats when an engine
        ran them already (Spark, for a small history: queue.spark.driver_pass)."""
        self.values = ops[ops["f"].isin(QUEUE_OPS)]
        self.op_stats = stats if stats is not None else op_stats(self.values)
        self.records = records_frame(self.values)
        if passed is None:
            passed = analyze_bucket(self.records, limit, self.op_stats["end_time"], shrink=not realtime) \
                if len(self.records) else no_rows()
        super().__init__(passed, limit, realtime)

    def cycles(self) -> tuple[dict[str, dict], dict]:
        return queue_cycles.find_cycles_local(self._rec("edge"), self.values, self.limit, self.realtime)

    def used_subscribe(self) -> bool:
        return bool((self.values["f"] == "subscribe").any())

    def polled_after(self, time: int) -> bool:
        v = self.values
        polls = v[(v["type"] == "ok") & v["f"].isin(["poll", "txn"]) & (int64s(v["invoke_time"]) > time)]
        return any(_polled(done) for done in polls["complete_value"])

    def producer(self, checks: producer_errors.ProducerChecks) -> dict:
        lost, dups = self.lost_and_duplicated()
        sends = self.records[self.records["kind"] == SEND]
        return producer_errors.analyze_local(self.values, sends, checks, lost, dups, null_key=NULL)


def check_queue_local(ops: pd.DataFrame, allow=(), forbid=(), limit: int = DEFAULT_EXAMPLES,
                      realtime: bool = False, producer: producer_errors.ProducerChecks | None = None,
                      cycles: bool = True) -> dict:
    """queue.check_queue_spark's results for the operations in `ops` (a pandas
    frame, see the module docstring), computed in-process."""
    return results(LocalPass(ops, limit, realtime), allow, forbid, cycles, producer)
