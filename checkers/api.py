"""check_history(): the one entry point the CLI and the runner call."""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

from checkers.history_io import load_history, pair_operations
from checkers.history_parquet import Loaded, companion_for, is_companion, load_companion
from checkers.spark import get_spark, tune_for_input

WORKLOADS = ("queue", "list-append")
RESULTS_FILE = "results.json"
JVM_LOG = "spark.log"


class CheckOptionError(ValueError):
    """A bad option to check_history (unknown workload, ...)."""


def _run_checker(spark, loaded: Loaded, workload: str, allow, forbid, consistency_model: str,
                 realtime_cycles: bool) -> dict:
    if workload == "queue":
        from checkers.producer_errors import ProducerChecks
        from checkers.queue import check_queue
        return check_queue(spark, loaded.ops, allow=allow, forbid=forbid, realtime=realtime_cycles,
                           producer=ProducerChecks(), micro=loaded.queue_records)
    if workload == "list-append":
        from checkers.list_append import check_list_append
        from checkers.validity import apply_overrides
        return apply_overrides(check_list_append(spark, loaded.ops, consistency_model), allow, forbid)
    raise CheckOptionError(f"unknown workload {workload!r}: expected one of {', '.join(WORKLOADS)}")


def value_problem(workload: str):
    """The workload's check of each event's `value` (history_io.load_history)."""
    if workload == "queue":
        from checkers.queue_mops import value_problem as queue_value_problem
        return queue_value_problem()
    return None


def load(spark, history_path: Path, workload: str = "queue") -> Loaded:
    """The operations of the history at `history_path`: from its Parquet
    companion when `history_path` is one or has an up-to-date one beside it
    (checkers/history_parquet.py), else parsed and validated from the file."""
    companion = history_path if is_companion(history_path) else companion_for(history_path)
    if companion is not None:
        return load_companion(spark, companion)
    from checkers.producer_errors import producer_flags, with_producer_flags
    ops = pair_operations(load_history(spark, history_path, value_problem=value_problem(workload)))
    return Loaded(ops=with_producer_flags(ops, producer_flags(spark, history_path)),
                  source_bytes=_input_bytes(history_path))


def _input_bytes(path: Path) -> int:
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return path.stat().st_size if path.exists() else 0


def write_results(results: dict, out_dir: Path) -> Path:
    """Write results.json atomically (a reader never sees half a file)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / RESULTS_FILE
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(results, indent=1, sort_keys=False) + "\n")
    os.replace(tmp, path)
    return path


def check_history(history_path, workload: str = "queue", out_dir=None, spark_master=None,
                  allow=(), forbid=(), consistency_model: str = "strict-serializable",
                  realtime_cycles: bool = False) -> dict:
    """Check the history at `history_path` (history.jsonl, its Parquet
    companion, or events in Parquet) with
    the `workload`'s checker on Spark (`spark_master`, embedded local mode
    when None), write results.json into `out_dir` (default: beside the
    history) and return the results. `realtime_cycles` (queue) adds process
    and realtime edges to the cycle search (-process/-realtime variants). Raises history_io.HistoryError on bad
    input, CheckOptionError on a bad option."""
    if workload not in WORKLOADS:
        raise CheckOptionError(f"unknown workload {workload!r}: expected one of {', '.join(WORKLOADS)}")
    history_path = Path(history_path)
    out = Path(out_dir) if out_dir is not None else history_path.parent
    out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    spark = get_spark(spark_master, jvm_log=str(out / JVM_LOG))
    loaded = load(spark, history_path, workload)
    tune_for_input(spark, loaded.source_bytes)
    results = _run_checker(spark, loaded, workload, tuple(allow), tuple(forbid), consistency_model,
                           realtime_cycles)
    results["workload"] = workload
    results["checker"] = {"history": str(history_path), "parquet_companion": loaded.from_companion,
                          "spark_master": spark.sparkContext.master,
                          "seconds": round(time.monotonic() - started, 3),
                          "allow": sorted(allow), "forbid": sorted(forbid)}
    if workload == "list-append":
        results["checker"]["consistency_model"] = consistency_model
    write_results(results, out)
    return results
