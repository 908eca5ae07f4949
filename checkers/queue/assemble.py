"""The queue checker's results, assembled the same way for every engine.

    spark.check_queue_spark(spark, ops, allow=(), forbid=()) -> results dict  on Spark
    local.check_queue_local(ops, allow=(), forbid=()) -> the same             in-process
    pool.check_queue_pool(companion, allow=(), forbid=()) -> the same         in worker processes

All run the per-key analysis of checkers/queue/bucket.analyze_bucket over
the history's micro-op records, in buckets of keys, and gather from its
output rows the same things (the `Gathered` protocol): exact counts and the
first `limit` examples per anomaly type, the buckets' stats, the unseen
series candidates, the graph's cycles (checkers/queue/cycles.py), the
producer checks (checkers/queue/producer_errors.py) and a few facts about the
operations. `results()` turns what was gathered into the results dict, so
the engines cannot disagree on anything but how they gather:

- Spark (checkers/queue/spark.py): `ops` from history.spark_read.pair_operations
  (or the companion, history.spark_load.load); one shuffle by key bucket runs
  the analysis in executors and the driver receives only counts, examples,
  series candidates and the part of the graph that can hold a cycle;
- in-process (checkers/queue/local.py): `ops` as a pandas frame
  (history.read.ParsedHistory.ops), the whole history one bucket;
- in worker processes (checkers/queue/pool.py): the Parquet companion's
  records in buckets of whole keys (checkers/queue/buckets.py), analysed in
  this process and forked ones, the operations read from ops/ with filters.
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Protocol

from checkers.queue.explain import EXPLAIN
from checkers.queue.series import merge_series
from checkers.verdict.verdict import Evidence, verdict

if TYPE_CHECKING:

    from checkers.queue.producer_errors import ProducerChecks

QUEUE_OPS = ("send", "poll", "txn", "assign", "subscribe", "crash")


class Gathered(Protocol):
    """What an engine gathers from one history, for `results()`. Built for
    one `limit` (examples per type) and `realtime` (order edges in the
    cycle search)."""

    op_stats: dict    # {"ops", "by_type", "by_f", "end_time"}: operation counts and the time span

    def anomaly_rows(self) -> tuple[dict[str, int], list[tuple[str, str]]]:
        """({type: exact count}, [(type, example JSON)]: the first `limit` per
        type by (sort, sort2, example JSON), in that order)."""

    def bucket_stats(self) -> dict[str, int]:
        """The buckets' "stat" rows summed and "max" rows maximised."""

    def series_candidates(self) -> list[tuple[int, int, list[int]]]:
        """The TOP_KEYS (key, peak, counts) unseen series first by queue.series.rank."""

    def cycles(self) -> tuple[dict[str, dict], dict]:
        """queue.cycles.search's ({type: {count, examples}}, stats)."""

    def used_subscribe(self) -> bool:
        """Did some operation subscribe?"""

    def polled_after(self, time: int) -> bool:
        """Did an ok poll (or txn with a poll) begin after `time`?"""

    def producer(self, checks: ProducerChecks) -> dict:
        """queue.producer_errors.producer_results for this history."""

    def txn_reads(self) -> dict[str, dict]:
        """queue.txn_reads.anomaly: partial transaction reads, with the first
        `limit` examples."""


def anomalies(counts: dict[str, int], firsts: list[tuple[str, str]]) -> dict[str, dict]:
    """{type: {"count", "examples"}}, each example explained."""
    found = {kind: {"count": n, "examples": []} for kind, n in counts.items()}
    for kind, text in firsts:
        example = json.loads(text)
        if kind in EXPLAIN:
            example["explanation"] = EXPLAIN[kind](example)
        found[kind]["examples"].append(example)
    return found


def results(gathered: Gathered, allow=(), forbid=(), cycles: bool = True,
            producer: ProducerChecks | None = None) -> dict:
    """The results (docs/history-format.md) from what an engine gathered:
    the one assembly both engines share."""
    stats = dict(gathered.op_stats)
    found = anomalies(*gathered.anomaly_rows())
    bucket_stats = gathered.bucket_stats()
    cycle_anomalies, cycle_stats = gathered.cycles() if cycles else ({}, {})
    found.update(cycle_anomalies)
    found.update(gathered.txn_reads())
    used_subscribe = gathered.used_subscribe()
    last_ack = bucket_stats.get("last_ack")
    producer_found = gathered.producer(producer) if producer is not None else None
    if producer_found is not None:
        stats.update(producer_found["stats"])
        found.update(producer_found["anomalies"])
    evidence = Evidence(used_subscribe=used_subscribe, any_ok=_any_data_ok(stats),
                        final_reads=last_ack is None or gathered.polled_after(last_ack),
                        wr_only_g1c=cycle_stats.get("wr_only", {}))
    valid, bad = verdict(list(found), evidence, allow=allow, forbid=forbid)
    stats.update({"sends": bucket_stats.get("sends", 0), "polled_values": bucket_stats.get("polled_values", 0),
                  "keys": bucket_stats.get("keys", 0), "used_subscribe": used_subscribe,
                  "final_reads": evidence.final_reads, "cycles": cycle_stats})
    return {
        "valid": valid,
        "anomaly_types": sorted(found),
        "bad_anomaly_types": bad,
        "anomalies": {k: found[k] for k in sorted(found)},
        "stats": stats,
        "series": {"unseen": merge_series(gathered.series_candidates(), stats["end_time"])},
    }


def _any_data_ok(stats: dict) -> bool:
    """Did any send, poll or txn succeed? (An ok assign alone checks nothing.)"""
    return any(stats["by_f"].get(f, {}).get("ok", 0) for f in ("send", "poll", "txn"))


def stats_from_counts(counts: list[tuple[str, str, int, int | None]]) -> dict:
    """op_stats from (f, type, operations, last time) per f and type (the
    Parquet companion keeps them: history.spark_load.Loaded.op_counts)."""
    by_f: dict[str, dict[str, int]] = {}
    for f, kind, n, _ in counts:
        by_f.setdefault(f, {})[kind] = n
    by_type: dict[str, int] = {}
    for per_type in by_f.values():
        for kind, n in per_type.items():
            by_type[kind] = by_type.get(kind, 0) + n
    end = max((last or 0 for *_, last in counts), default=0)
    return {"ops": sum(by_type.values()), "by_type": by_type, "by_f": by_f, "end_time": end}
