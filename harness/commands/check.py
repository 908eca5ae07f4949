"""`logtrial check`: check a stored run (or any history file), in-process or on Spark."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from checkers.api import check_history
from checkers.history.companion import is_companion
from checkers.history.errors import HistoryError
from checkers.options import CheckOptionError, CheckOptions
from checkers.registry import WORKLOAD_NAMES
from common import exit_codes
from harness import check_progress
from harness.check_cli import check_options, given_on_command_line

HISTORY_FILE = "history.jsonl"


def resolve_history(target: Path) -> tuple[Path, dict]:
    """(history file, the run's test.json, {} if there is none)."""
    if target.is_dir() and (target / HISTORY_FILE).exists():
        return target / HISTORY_FILE, _test_json(target / "test.json")
    if target.is_dir() and not is_companion(target) and not any(p.suffix == ".parquet" for p in target.iterdir()):
        history = target / HISTORY_FILE
        if not history.exists():
            raise click.BadParameter(f"{target} has no {HISTORY_FILE}", param_hint="RUN_DIR_OR_HISTORY")
        return history, _test_json(target / "test.json")
    return target, _test_json(target.parent / "test.json")


def _test_json(path: Path) -> dict:
    if not path.exists():
        return {}
    try:
        found = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise click.BadParameter(f"{path}: not a JSON object ({e})") from e
    if not isinstance(found, dict):
        raise click.BadParameter(f"{path}: not a JSON object")
    return found


def recorded_check(test: dict, given: dict) -> dict:
    """The check options: the command line's, else those the run recorded
    (test.json's "check", written by `logtrial test`), else the defaults."""
    recorded = test.get("check") if isinstance(test.get("check"), dict) else {}
    return {**recorded, **given}


def exit_code_for(valid) -> int:
    if valid is True:
        return exit_codes.VALID
    if valid is False:
        return exit_codes.INVALID
    return exit_codes.UNKNOWN


def summary(results: dict, path: Path) -> str:
    lines = [f"valid: {results['valid']}"]
    for kind, found in results["anomalies"].items():
        bad = "  (bad)" if kind in results["bad_anomaly_types"] else ""
        lines.append(f"  {kind}: {found['count']}{bad}")
    if "faults" in results:  # which faults ran and what they explain (checkers/verdict/faults.py)
        lines.append(f"faults: {results['faults']['verdict']}: {results['faults']['explanation']}")
    lines.append(f"results: {path}")
    return "\n".join(lines)


@click.command()
@click.argument("target", metavar="RUN_DIR_OR_HISTORY", type=click.Path(exists=True, path_type=Path))
@click.option("--workload", type=click.Choice(WORKLOAD_NAMES), default=None,
              help="Default: from the run's test.json, else queue.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where results.json goes (default: beside the history).")
@check_options
def check(target: Path, workload, out_dir, **check_values) -> None:
    """Check a history for anomalies. Exit 0 valid, 1 invalid, 2 unknown, 3 bad input."""

    try:
        history, test = resolve_history(target)
        workload = workload or test.get("workload") or "queue"
        values = recorded_check(test, given_on_command_line(check_values))
        with check_progress.shown(history):
            results = check_history(history, workload=workload, out_dir=out_dir,
                                    spark_master=values.get("spark_master"), engine=values.get("engine", "auto"),
                                    options=CheckOptions.from_record(values))
    except (HistoryError, click.BadParameter, CheckOptionError) as e:
        click.echo(f"logtrial check: {e}", err=True)
        sys.exit(exit_codes.BAD_INPUT)
    except Exception as e:  # noqa: BLE001 - a crash must not read as "invalid" (exit 1)
        click.echo(f"logtrial check: checker failed: {type(e).__name__}: {e}", err=True)
        sys.exit(exit_codes.HARNESS_ERROR)
    click.echo(summary(results, Path(out_dir or history.parent) / "results.json"))
    sys.exit(exit_code_for(results["valid"]))
