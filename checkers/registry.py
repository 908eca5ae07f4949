"""Every workload the checkers know, one object each: what a history of it
may hold, how big a history is checked in-process, and its checker on each
engine. `check_history`, the CLI's choices and the history readers look a
workload up here instead of branching on its name; a new workload is a new
entry (and its own modules), not edits across the tree.

The checkers are imported when called: the in-process path must not load
pyspark, and neither should listing the workloads."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from checkers.history.formats import FORMATS, HistoryFormat
from checkers.options import CheckOptionError, CheckOptions

MB = 1 << 20


@dataclass(frozen=True)
class WorkloadChecker:
    name: str
    # Up to this size a JSON Lines history is checked in-process (no JVM).
    local_max_bytes: int
    # what its history may hold (micro-op rules, what the companion keeps)
    history: HistoryFormat
    # whether results.json records the consistency model (the queue has none)
    uses_model: bool
    check_local: Callable[[Any, CheckOptions], dict]          # (ParsedHistory, options)
    check_spark: Callable[[Any, Any, CheckOptions], dict]     # (SparkSession, loaded history, options)
    # in-process above local_max_bytes: over the Parquet companion, in worker
    # processes (companion folder, options); None: Spark checks what is bigger
    check_companion: Callable[[Path, CheckOptions], dict] | None = None
    # the peak memory of check_companion per byte of the JSON Lines history
    companion_memory_per_byte: float = 0.0

    def companion_fits(self, history_bytes: int) -> bool:
        """May auto check a history this big over its companion in-process?
        While its peak stays within half of this machine's memory (above
        that, Spark spills where the pool engine would not)."""
        if self.check_companion is None:
            return False
        return history_bytes * self.companion_memory_per_byte <= physical_memory() / 2

    def validate(self, options: CheckOptions) -> None:
        """Refuses options that would not apply, rather than ignore them."""
        if options.consistency_model is not None and not self.uses_model:
            raise CheckOptionError(
                f"the {self.name} workload is not checked against a consistency model: each anomaly type "
                f"declares whether it makes a run invalid (docs/checkers.md); drop --consistency-model "
                f"{options.consistency_model}, and use --allow or --forbid to change what counts")


def _queue_options(options: CheckOptions) -> dict:
    """The queue checkers' keyword arguments, the same on every engine."""
    from checkers.queue.producer_errors import ProducerChecks  # loads pandas: only when needed
    return {"allow": options.allow, "forbid": options.forbid, "realtime": options.realtime_cycles,
            "limit": options.examples, "producer": ProducerChecks()}


def _queue_local(parsed, options: CheckOptions) -> dict:
    from checkers.queue.local import check_queue_local  # loads pandas: only when needed
    return check_queue_local(parsed.ops, **_queue_options(options))


def _queue_companion(companion: Path, options: CheckOptions) -> dict:
    from checkers.queue.pool import check_queue_pool  # loads pandas and pyarrow: only when needed
    return check_queue_pool(companion, **_queue_options(options))


def _queue_spark(spark, loaded, options: CheckOptions) -> dict:
    from checkers.queue.spark import check_queue_spark  # loads pyspark: only when needed
    return check_queue_spark(spark, loaded.ops, **_queue_options(options), micro=loaded.queue_records,
                             op_counts=loaded.op_counts)


def _list_append_local(parsed, options: CheckOptions) -> dict:
    from checkers.list_append.checker import check_list_append, check_rows  # loads numpy: only when needed
    rows = parsed.rows_by_index()   # as a rule: then no DataFrame, no pandas
    args = (options.model, options.allow, options.forbid)
    if rows is not None:
        return check_rows(rows, *args, examples=options.examples)
    return check_list_append(parsed.ops, *args, examples=options.examples)


def _list_append_spark(spark, loaded, options: CheckOptions) -> dict:
    from checkers.list_append.spark import check_list_append_spark  # loads pyspark: only when needed
    return check_list_append_spark(spark, loaded.ops, options.model, options.allow,
                                   options.forbid, examples=options.examples)


# List-append goes further in-process than the queue: its cycle search needs
# the whole graph on the driver anyway, and 10^6 operations (458 MB) took 66 s
# and 4 GB in-process against 598 s on local Spark (docs/benchmarks.md).
CHECKERS: dict[str, WorkloadChecker] = {
    # companion_memory_per_byte: 10^7 operations (2.4 GB of JSON Lines) peaked at 7.3 GB summed
    # over the pool engine's processes (pages they share counted twice), so 4 leaves room
    "queue": WorkloadChecker("queue", 64 * MB, FORMATS["queue"], uses_model=False,
                             check_local=_queue_local, check_spark=_queue_spark,
                             check_companion=_queue_companion, companion_memory_per_byte=4.0),
    "list-append": WorkloadChecker("list-append", 512 * MB, FORMATS["list-append"], uses_model=True,
                                   check_local=_list_append_local, check_spark=_list_append_spark),
}
WORKLOAD_NAMES: tuple[str, ...] = tuple(CHECKERS)


def checker_for(workload: str) -> WorkloadChecker:
    """The workload's checker; CheckOptionError names the known ones."""
    try:
        return CHECKERS[workload]
    except KeyError:
        raise CheckOptionError(f"unknown workload {workload!r}: expected one of "
                               f"{', '.join(WORKLOAD_NAMES)}") from None


def physical_memory() -> int:
    """This machine's memory in bytes."""
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
