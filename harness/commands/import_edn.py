"""`logtrial import-edn`: turn a Jepsen/Elle history.edn into a history.jsonl
(checkers/history/edn_convert.py), so `logtrial check` can check it and its results
can be compared with Jepsen's."""
from __future__ import annotations

import sys
from pathlib import Path

import click

from checkers.history.edn_convert import import_edn as convert
from checkers.history.edn_read import EdnImportError
from common import exit_codes
def default_out(src: Path) -> Path:
    """history.edn (or history.edn.gz) -> history.jsonl beside it."""
    name = src.name.removesuffix(".gz")
    return src.with_name(name.removesuffix(".edn") + ".jsonl" if name.endswith(".edn") else src.name + ".jsonl")


@click.command("import-edn")
@click.argument("src", metavar="HISTORY.edn", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Where the JSON Lines history goes (default: HISTORY.jsonl beside the input).")
@click.option("--workload", type=click.Choice(["queue", "list-append"]), default=None,
              help="Default: from the history's micro-ops (:send/:poll -> queue, :append/:r -> list-append).")
def import_edn(src: Path, out: Path | None, workload: str | None) -> None:
    """Convert a Jepsen/Elle EDN history (one op map per line, or one vector
    of maps) to logtrial's history.jsonl. Keys that are not ints get ints in
    first-seen order, written to OUT.keys.json. Exit 0 written, 3 bad input
    (file:line on stderr, nothing written)."""

    out = out or default_out(src)
    if out.resolve() == src.resolve():
        click.echo(f"logtrial import-edn: --out {out} would overwrite the input", err=True)
        sys.exit(exit_codes.BAD_INPUT)
    if not out.parent.is_dir():
        click.echo(f"logtrial import-edn: --out {out}: no such directory {out.parent}", err=True)
        sys.exit(exit_codes.BAD_INPUT)
    try:
        result = convert(src, out, workload)
    except EdnImportError as e:
        click.echo(f"logtrial import-edn: {e}", err=True)
        sys.exit(exit_codes.BAD_INPUT)
    except OSError as e:
        click.echo(f"logtrial import-edn: cannot read {src} or write {out}: {e.strerror or e}", err=True)
        sys.exit(exit_codes.BAD_INPUT)
    how = "detected from its micro-ops" if result.detected else "as given"
    click.echo(f"workload: {result.workload} ({how})", err=True)
    if result.keys_path is not None:
        click.echo(f"keys were not ints: {len(result.key_ids)} keys numbered 0..{len(result.key_ids) - 1} "
                   f"in first-seen order; the mapping is in {result.keys_path}", err=True)
    click.echo(f"{out} ({result.events} events); check it with: "
               f"logtrial check {out} --workload {result.workload}")
