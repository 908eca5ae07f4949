"""`logtrial to-parquet`: write a history's Parquet companion
(checkers/history_parquet.py), so later checks skip parsing the JSON."""
from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from harness import exit_codes
from harness.commands.check import resolve_history


@click.command("to-parquet")
@click.argument("target", metavar="RUN_DIR_OR_HISTORY", type=click.Path(exists=True, path_type=Path))
@click.option("--workload", type=click.Choice(["queue", "list-append"]), default=None,
              help="Default: from the run's test.json, else queue.")
@click.option("--spark-master", default=None, help="spark://host:7077, yarn, k8s://... (default: embedded local[*]).")
def to_parquet(target: Path, workload, spark_master) -> None:
    """Validate a history.jsonl and write history.parquet/ beside it. Exit 0
    written, 3 bad input (file:line on stderr, nothing written)."""
    from checkers.api import validate_first
    from checkers.history_io import HistoryError
    from checkers.history_parquet import write_companion
    from checkers.spark import get_spark
    history, detected = resolve_history(target)
    if history.suffix != ".jsonl":
        click.echo(f"logtrial to-parquet: {history} is not a JSON Lines history", err=True)
        sys.exit(exit_codes.BAD_INPUT)
    started = time.monotonic()
    workload = workload or detected or "queue"
    try:
        validated = validate_first(history, workload)     # bad input: no JVM started
        spark = get_spark(spark_master, jvm_log=str(history.parent / "spark.log"))
        out = write_companion(spark, history, workload, validated)
    except HistoryError as e:
        click.echo(f"logtrial to-parquet: {e}", err=True)
        sys.exit(exit_codes.BAD_INPUT)
    click.echo(f"{out} ({time.monotonic() - started:.1f} s)")
