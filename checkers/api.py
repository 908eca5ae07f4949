"""check_history(): the one entry point the CLI and the runner call."""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

from checkers.history_parquet import Loaded, load
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
