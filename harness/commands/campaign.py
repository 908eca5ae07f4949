"""`logtrial campaign STORE...`: the campaign table of test-all stores made again from
their journals (STORE/matrix.json) and runs, the cells of all of them summed. A campaign
run in parts (seeds 1-10 in one store and 11-20 in another, or stopped and resumed)
counts as one; a stopped matrix that never wrote campaign.md gets its table."""
from __future__ import annotations

import sys
from pathlib import Path

import click

from common import exit_codes
from harness.commands.test_all import finished_rows
from harness.matrix_journal import Journal, JournalError
from results.campaign import markdown, merged, totals_by_cell


@click.command()
@click.argument("stores", nargs=-1, required=True, type=click.Path(path_type=Path))
def campaign(stores: tuple[Path, ...]) -> None:
    """Print the campaign table of the test-all STOREs, each cell summed over all of them."""
    tables = []
    for store in stores:
        try:
            journal = Journal.load(store)
        except JournalError as e:
            click.echo(f"logtrial campaign: {e}", err=True)
            sys.exit(exit_codes.BAD_INPUT)
        tables.append(totals_by_cell(finished_rows(journal, store), store))
    click.echo(markdown(merged(tables)))
