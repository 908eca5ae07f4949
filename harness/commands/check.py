"""`logtrial check`: check a stored run (or any history file), in-process or on Spark."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from checkers.registry import WORKLOAD_NAMES
from clusters import exit_codes

HISTORY_FILE = "history.jsonl"


def resolve_history(target: Path) -> tuple[Path, str | None]:
    """(history file, workload named in the run's test.json if any)."""
    if target.is_dir() and (target / HISTORY_FILE).exists():
        return target / HISTORY_FILE, _workload_of(target / "test.json")
    if target.is_dir() and not any(p.suffix == ".parquet" for p in target.iterdir()):
        history = target / HISTORY_FILE
        if not history.exists():
            raise click.BadParameter(f"{target} has no {HISTORY_FILE}", param_hint="RUN_DIR_OR_HISTORY")
        return history, _workload_of(target / "test.json")
    return target, _workload_of(target.parent / "test.json")


def _workload_of(test_json: Path) -> str | None:
    if not test_json.exists():
        return None
    try:
        return json.loads(test_json.read_text()).get("workload")
    except (json.JSONDecodeError, AttributeError) as e:
        raise click.BadParameter(f"{test_json}: not a JSON object ({e})") from e


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
    lines.append(f"results: {path}")
    return "\n".join(lines)


@click.command()
@click.argument("target", metavar="RUN_DIR_OR_HISTORY", type=click.Path(exists=True, path_type=Path))
@click.option("--workload", type=click.Choice(WORKLOAD_NAMES), default=None,
              help="Default: from the run's test.json, else queue.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where results.json goes (default: beside the history).")
@click.option("--spark-master", default=None, help="spark://host:7077, yarn, k8s://... (default: embedded local[*]).")
@click.option("--allow", multiple=True, metavar="TYPE", help="Anomaly type that does not make the run invalid.")
@click.option("--forbid", multiple=True, metavar="TYPE", help="Anomaly type that makes the run invalid.")
@click.option("--consistency-model", default="strict-serializable", show_default=True,
              help="list-append: the model to check against.")
@click.option("--engine", type=click.Choice(["auto", "local", "spark"]), default="auto", show_default=True,
              help="local: in-process, no JVM; spark: on Spark; auto: local up to 64 MB of JSON Lines "
                   "(queue) or 512 MB (list-append) with no --spark-master, else Spark.")
@click.option("--realtime-cycles", is_flag=True,
              help="queue: also search -process/-realtime cycles (slow on big histories).")
def check(target: Path, workload, out_dir, spark_master, allow, forbid, consistency_model, engine,
          realtime_cycles) -> None:
    """Check a history for anomalies. Exit 0 valid, 1 invalid, 2 unknown, 3 bad input."""
    from checkers.api import check_history
    from checkers.history.errors import HistoryError
    from checkers.options import CheckOptionError, CheckOptions

    try:
        history, detected = resolve_history(target)
        workload = workload or detected or "queue"
        options = CheckOptions(consistency_model=consistency_model, allow=allow, forbid=forbid,
                               realtime_cycles=realtime_cycles)
        results = check_history(history, workload=workload, out_dir=out_dir, spark_master=spark_master,
                                engine=engine, options=options)
    except (HistoryError, click.BadParameter, CheckOptionError) as e:
        click.echo(f"logtrial check: {e}", err=True)
        sys.exit(exit_codes.BAD_INPUT)
    except Exception as e:  # noqa: BLE001 - a crash must not read as "invalid" (exit 1)
        click.echo(f"logtrial check: checker failed: {type(e).__name__}: {e}", err=True)
        sys.exit(exit_codes.HARNESS_ERROR)
    click.echo(summary(results, Path(out_dir or history.parent) / "results.json"))
    sys.exit(exit_code_for(results["valid"]))
