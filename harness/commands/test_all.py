"""`logtrial test-all`: a matrix of workloads x nemeses x txn on/off x --test-count,
each run through the runner's Python API; prints a summary table, writes JUnit
XML, writes the static index, and exits non-zero if any run is not valid."""
from __future__ import annotations

import dataclasses
import itertools
import sys
import traceback
from pathlib import Path

import click

from harness import exit_codes

TXN_CHOICES = {"both": (False, True), "on": (True,), "off": (False,)}


def split_list(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


@dataclasses.dataclass(frozen=True)
class Cell:
    workload: str
    nemesis: str     # kinds joined by "+", or "none"
    txn: bool
    attempt: int


def matrix(workloads: list[str], nemeses: list[str], txn: str, test_count: int) -> list[Cell]:
    """Every combination, in a stable order. txn applies to the queue workload only
    (list-append is always transactional), so list-append gets one txn setting."""
    cells = []
    for workload, nemesis, attempt in itertools.product(workloads, nemeses, range(1, test_count + 1)):
        for with_txn in TXN_CHOICES[txn] if workload == "queue" else (TXN_CHOICES[txn][-1],):
            cells.append(Cell(workload, nemesis, with_txn, attempt))
    return cells


def options_for(base, cell: Cell):
    kinds = tuple(k for k in cell.nemesis.split("+") if k and k != "none")
    return dataclasses.replace(base, workload=cell.workload, nemesis=kinds, txn=cell.txn)


def run_cell(base, cell: Cell, store: Path):
    """Run one cell; a crash of the harness becomes an error row, not the end of the matrix."""
    from harness.runner import run_test
    from results.matrix_report import MatrixRun
    from results.runs import read_run

    try:
        result = run_test(options_for(base, cell))
    except KeyboardInterrupt:
        raise
    except Exception as e:
        traceback.print_exc()
        return MatrixRun(cell.workload, cell.nemesis, cell.txn, cell.attempt, None, exit_codes.HARNESS_ERROR,
                         f"{type(e).__name__}: {e}")
    summary = read_run(Path(result.run_dir), store)
    return MatrixRun(cell.workload, cell.nemesis, cell.txn, cell.attempt, summary, result.exit_code, result.error)


@click.command(name="test-all")
@click.option("--workloads", default="queue,list-append", show_default=True, help="Comma-separated workloads.")
@click.option("--nemeses", default="none,partition,pause,kill", show_default=True,
              help="Comma-separated nemeses; combine kinds in one run with '+', e.g. partition+pause.")
@click.option("--txn", type=click.Choice(sorted(TXN_CHOICES)), default="both", show_default=True,
              help="Queue workload with transactions on, off, or both.")
@click.option("--test-count", type=click.IntRange(1), default=1, show_default=True, help="Runs per combination.")
@click.option("--nodes-file", type=click.Path(exists=True, dir_okay=False), help="Inventory of the cluster.")
@click.option("--local", type=click.IntRange(1, 9), help="Bring up a local cluster of N nodes for each run.")
@click.option("--bootstrap-servers", help="An existing Kafka without SSH (nemesis must be none).")
@click.option("--store", default="store", show_default=True, type=click.Path(file_okay=False, path_type=Path))
@click.option("--time-limit", type=float, default=30.0, show_default=True, help="Seconds of main phase per run.")
@click.option("--rate", type=float, default=100.0, show_default=True)
@click.option("--concurrency", type=click.IntRange(1), default=10, show_default=True)
@click.option("--nemesis-interval", type=float, default=10.0, show_default=True)
@click.option("--recovery-time", type=float, default=10.0, show_default=True)
@click.option("--final-time-limit", type=float, default=60.0, show_default=True)
@click.option("--seed", type=int, help="Seed for every run (default: random per run).")
@click.option("--junit", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="JUnit XML output (default STORE/junit.xml).")
@click.option("--leave-db-running", is_flag=True, help="Leave Kafka up after the last run.")
def test_all(workloads: str, nemeses: str, txn: str, test_count: int, store: Path, junit: Path | None,
             **settings) -> None:
    """Run a matrix of tests and summarise them (table, JUnit XML, static index)."""
    from harness.runner import TestOptions
    from results.index import write_static_index
    from results.matrix_report import exit_code, summary_table, write_junit

    if sum(bool(settings.get(k)) for k in ("nodes_file", "local", "bootstrap_servers")) != 1:
        raise click.UsageError("give exactly one of --nodes-file, --local N or --bootstrap-servers")
    base = TestOptions(store=str(store), **settings)
    cells = matrix(split_list(workloads), split_list(nemeses) or ["none"], txn, test_count)
    runs = []
    try:
        for number, cell in enumerate(cells, 1):
            click.echo(f"[{number}/{len(cells)}] {cell.workload} nemesis={cell.nemesis} txn={cell.txn}", err=True)
            runs.append(run_cell(base, cell, store))
    except KeyboardInterrupt:
        click.echo("interrupted: summarising the runs so far", err=True)
        runs.append(interrupted_row(cells[len(runs)]))
    click.echo(summary_table(runs))
    click.echo(f"junit: {write_junit(runs, junit or store / 'junit.xml')}")
    if store.is_dir():
        click.echo(f"index: {write_static_index(store)}")
    sys.exit(exit_code(runs))


def interrupted_row(cell: Cell):
    from results.matrix_report import MatrixRun
    return MatrixRun(cell.workload, cell.nemesis, cell.txn, cell.attempt, None, exit_codes.INTERRUPTED, "interrupted")
