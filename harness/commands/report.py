"""`logtrial report RUN_DIR`: rebuild report.html of one run."""
from __future__ import annotations

from pathlib import Path

import click

from common import exit_codes
@click.command()
@click.argument("run_dir", type=click.Path(path_type=Path))
def report(run_dir: Path) -> None:
    """Rebuild RUN_DIR/report.html from its history, results and settings."""
    from results.report import write_report  # loads matplotlib: only when needed

    if not run_dir.is_dir():
        click.echo(f"logtrial report: {run_dir} is not a run directory", err=True)
        raise SystemExit(exit_codes.BAD_INPUT)
    click.echo(str(write_report(run_dir)))
