"""What each workload's history may hold, as the readers see it: one entry per
workload, looked up instead of branching on the workload's name. The checkers'
registry (checkers/registry.py) holds each workload's entry beside its checker."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from checkers.history import mop_rules
from checkers.history.list_append_lines import common_rows as list_append_rows

if TYPE_CHECKING:
    from checkers.history.spark_read import ValueCheck


class UnknownWorkload(ValueError):
    """A history read for a workload no format is declared for."""


@dataclass(frozen=True)
class HistoryFormat:
    workload: str
    check_invoke: mop_rules.InvokeRule          # an invoke's micro-ops (docs/history-format.md)
    check_completion: mop_rules.CompletionRule  # an ok completion's, against its invoke's
    write_mop: str                              # the micro-op that writes a value
    # the Parquet companion keeps the micro-op records (queue-mops/) beside the operations
    micro_records: bool
    # in Spark, the check of each event's value; None: the value is parsed by the checker
    spark_value_check: Callable[[], ValueCheck] | None
    # the rows and nemesis count of a history's bytes in the workload's common
    # shape, read in bulk; None: the careful reader must read it (read.py)
    common_rows: Callable[[bytes], tuple[list[tuple], int] | None] | None = None


def _queue_spark_value_check() -> ValueCheck:
    from checkers.history.queue_mops_spark import value_check   # loads pyspark: only on the Spark path
    return value_check()


FORMATS: dict[str, HistoryFormat] = {
    "queue": HistoryFormat("queue", mop_rules.queue_invoke, mop_rules.queue_completion, "send",
                           micro_records=True, spark_value_check=_queue_spark_value_check),
    "list-append": HistoryFormat("list-append", mop_rules.list_append_invoke, mop_rules.list_append_completion,
                                 "append", micro_records=False, spark_value_check=None,
                                 common_rows=list_append_rows),
}


def format_for(workload: str) -> HistoryFormat:
    try:
        return FORMATS[workload]
    except KeyError:
        raise UnknownWorkload(f"unknown workload {workload!r}: expected one of {', '.join(FORMATS)}") from None
