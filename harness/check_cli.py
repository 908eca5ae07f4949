"""The check's command-line options, the same on `logtrial check`, `test` and
`test-all`: they build one checkers.options.CheckOptions (plus the engine and
Spark master), which the runner records in test.json's "check"."""
from __future__ import annotations

from typing import Any, Callable

import click
from click.core import ParameterSource

from checkers.api import ENGINES
from checkers.verdict.consistency import DEFAULT_MODEL

CHECK_OPTIONS = [
    click.option("--consistency-model", default=None, metavar="MODEL",
                 help=f"list-append: the model to check against (default {DEFAULT_MODEL}; Elle's lattice, "
                      "PL-* names too). Refused for the queue, whose anomaly types each say whether they "
                      "make a run invalid."),
    click.option("--allow", multiple=True, metavar="TYPE", help="Anomaly type that does not make the run invalid."),
    click.option("--forbid", multiple=True, metavar="TYPE", help="Anomaly type that makes the run invalid."),
    click.option("--realtime-cycles", is_flag=True,
                 help="queue: also search -process/-realtime cycles (slow on big histories)."),
    click.option("--engine", type=click.Choice(ENGINES), default="auto", show_default=True,
                 help="local: in-process, no JVM (a queue history above 64 MB through its Parquet companion, "
                      "in one worker process per core); spark: on Spark; auto: local with no --spark-master, "
                      "up to 512 MB of JSON Lines for list-append and while its memory fits for the queue, "
                      "else Spark."),
    click.option("--spark-master", default=None,
                 help="spark://host:7077, yarn, k8s://... (default: embedded local[*])."),
]
CHECK_NAMES = ("consistency_model", "allow", "forbid", "realtime_cycles", "engine", "spark_master")


def check_options(command: Callable) -> Callable:
    """Adds --consistency-model, --allow, --forbid, --realtime-cycles, --engine and --spark-master."""
    for option in reversed(CHECK_OPTIONS):
        command = option(command)
    return command


def given_on_command_line(values: dict[str, Any]) -> dict[str, Any]:
    """The check options among `values` that the command line set (not defaults)."""
    ctx = click.get_current_context()
    return {name: values[name] for name in CHECK_NAMES
            if ctx.get_parameter_source(name) not in (ParameterSource.DEFAULT, ParameterSource.DEFAULT_MAP, None)}
