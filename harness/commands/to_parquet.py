"""`logtrial to-parquet`: write a history's Parquet companion
(checkers/history/companion_write.py), so later checks skip parsing the JSON."""
from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from checkers.history.errors import HistoryError
from common import exit_codes
from harness import check_progress
from harness.commands.check import resolve_history


@click.command("to-parquet")
@click.argument("target", metavar="RUN_DIR_OR_HISTORY", type=click.Path(exists=True, path_type=Path))
@click.option("--workload", type=click.Choice(["queue", "list-append"]), default=None,
              help="Default: from the run's test.json, else queue.")
@click.option("--spark-master", default=None, hidden=True,
              help="Unused: the conversion runs in-process. Accepted so that older scripts still run.")
def to_parquet(target: Path, workload, spark_master) -> None:
    """Validate a history.jsonl and write history.parquet/ beside it, in one
    pass and in-process (no JVM). Exit 0 written, 3 bad input (file:line on
    stderr, nothing written)."""
    from checkers.history.companion_write import write_companion  # loads pandas: only when needed
    history, test = resolve_history(target)
    if history.suffix != ".jsonl":
        click.echo(f"logtrial to-parquet: {history} is not a JSON Lines history", err=True)
        sys.exit(exit_codes.BAD_INPUT)
    started = time.monotonic()
    try:
        with check_progress.shown(history):
            out = write_companion(history, workload or test.get("workload") or "queue")
    except HistoryError as e:
        click.echo(f"logtrial to-parquet: {e}", err=True)
        sys.exit(exit_codes.BAD_INPUT)
    click.echo(f"{out} ({time.monotonic() - started:.1f} s)")
