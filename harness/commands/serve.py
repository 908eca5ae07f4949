"""`logtrial serve` (browse the store over HTTP) and `logtrial index` (the same
index as one static HTML file, for CI artifacts)."""
from __future__ import annotations

from pathlib import Path

import click

from common import exit_codes
from results.index import write_static_index
from results.server import make_server

store_option = click.option("--store", "store", type=click.Path(path_type=Path), default=Path("store"),
                            show_default=True, help="the store directory holding the runs")


def existing_store(store: Path) -> Path:
    if not store.is_dir():
        click.echo(f"logtrial: store {store} is not a directory", err=True)
        raise SystemExit(exit_codes.BAD_INPUT)
    return store


@click.command()
@store_option
@click.option("--host", default="127.0.0.1", show_default=True, help="address to bind (other than localhost exposes the store)")
@click.option("--port", default=8080, show_default=True, type=int)
def serve(store: Path, host: str, port: int) -> None:
    """Serve an index of every run in the store, with links into each report."""

    server = make_server(existing_store(store), host, port)
    click.echo(f"serving {store.resolve()} at http://{host}:{server.server_address[1]}/ (Ctrl-C to stop)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        raise SystemExit(exit_codes.INTERRUPTED)
    finally:
        server.server_close()


@click.command()
@store_option
@click.option("--out", type=click.Path(path_type=Path), default=None, help="where to write (default STORE/index.html)")
def index(store: Path, out: Path | None) -> None:
    """Write the index of every run as static HTML."""

    click.echo(str(write_static_index(existing_store(store), out)))
