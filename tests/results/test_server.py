"""`logtrial serve` over real HTTP on loopback: listing, paging, zip, and refusing
every path outside the store (traversal, encoded traversal, symlinks)."""
from __future__ import annotations

import http.client
import io
import json
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import pytest

from results.index import Filters, Links, render_index
from results.runs import RunSummary
from results.server import make_server
from tests.results.sample_runs import make_run

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A store with an invalid, a valid and a corrupt run, a secret outside it, and symlinks."""
    base = tmp_path_factory.mktemp("serve")
    store = base / "store"
    secret = base / "secret.txt"
    secret.write_text("outside the store")
    make_run(store, "queue", "20261121T080000", "invalid")
    make_run(store, "queue", "20261121T090000", "valid")
    corrupt = make_run(store, "broken", "20261121T100000", "corrupt")
    (store / "latest").symlink_to(store / "queue" / "20261121T090000")
    (corrupt / "leak.txt").symlink_to(secret)
    (corrupt / "leakdir").symlink_to(base)
    (corrupt / "inside.log").symlink_to(store / "queue" / "20261121T080000" / "logtrial.log")
    server = make_server(store, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield store, server.server_address[1]
    server.shutdown()
    server.server_close()


def get(port: int, path: str) -> tuple[int, bytes, dict[str, str]]:
    """A raw request: the path goes out exactly as written (no client-side normalising)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.putrequest("GET", path, skip_host=False, skip_accept_encoding=True)
    connection.endheaders()
    response = connection.getresponse()
    body = response.read()
    connection.close()
    return response.status, body, dict(response.getheaders())


@pytest.mark.parametrize("path", [
    "/runs/../secret.txt",
    "/runs/queue/../../secret.txt",
    "/runs/%2e%2e/secret.txt",
    "/runs/queue/..%2f..%2fsecret.txt",
    "/runs/%2E%2E%2Fsecret.txt",
    "/runs//etc/passwd",
    "/runs/..\\secret.txt",
    "/runs/broken/20261121T100000/leak.txt",        # symlink to a file outside
    "/runs/broken/20261121T100000/leakdir/secret.txt",  # symlink to a dir outside
    "/runs/broken/20261121T100000/leakdir/",
    "/zip/..",
    "/zip/broken/20261121T100000/leakdir",
    "/etc/passwd",
])
def test_paths_outside_the_store_are_refused(served, path):
    _, port = served
    status, body, _ = get(port, path)
    assert status == 404 and b"outside the store" not in body


def test_symlink_inside_the_store_is_served(served):
    _, port = served
    status, body, _ = get(port, "/runs/broken/20261121T100000/inside.log")
    assert (status, body) == (200, b"run started\n")


def test_run_files_are_served_with_types(served):
    _, port = served
    status, body, headers = get(port, "/runs/queue/20261121T080000/report.html")
    assert status == 404  # no report was built for this store: only files that exist are served
    status, body, headers = get(port, "/runs/queue/20261121T080000/history.jsonl")
    assert status == 200 and headers["Content-Type"].startswith("text/plain") and body.count(b"\n") > 50
    status, body, _ = get(port, "/runs/queue/20261121T080000")
    assert status == 301
    status, body, _ = get(port, "/runs/queue/20261121T080000/")
    assert status == 200 and b"history.jsonl" in body


def test_api_lists_runs_newest_first_corrupt_as_incomplete(served):
    _, port = served
    status, body, _ = get(port, "/api/runs")
    runs = json.loads(body)
    assert status == 200
    assert [(r["rel"], r["verdict"]) for r in runs] == [
        ("broken/20261121T100000", "incomplete"), ("queue/20261121T090000", "valid"), ("queue/20261121T080000", "invalid")]


def test_index_filters_by_verdict(served):
    _, port = served
    status, body, _ = get(port, "/?verdict=invalid")
    html = body.decode()
    assert status == 200
    assert html.count("<tr data-verdict=") == 1 and "<tr data-verdict='invalid'" in html
    _, body, _ = get(port, "/?nemesis=none")  # the corrupt run has no readable nemesis
    assert body.decode().count("<tr data-verdict=") == 1


def test_zip_holds_the_run_but_not_what_leaks_out(served):
    _, port = served
    status, body, headers = get(port, "/zip/broken/20261121T100000")
    assert status == 200 and headers["Content-Type"] == "application/zip"
    names = zipfile.ZipFile(io.BytesIO(body)).namelist()
    assert "broken/20261121T100000/history.jsonl" in names
    assert "broken/20261121T100000/inside.log" in names
    assert not any("leak" in n for n in names)
    assert get(port, "/zip/queue")[0] == 404  # a test dir is not a run


def summaries(count: int) -> list[RunSummary]:
    return [RunSummary(rel=f"t/2026{i:010d}", name="t", timestamp=f"2026{i:010d}", started=None, status="complete",
                       verdict=["valid", "invalid"][i % 2], workload="queue") for i in range(count)]


def test_paging_thousands_of_runs():
    runs = summaries(2500)
    links = Links(run=lambda s: f"/runs/{s.rel}/")
    html = render_index(runs, Filters(verdict="invalid"), links, page_no=3, page_size=50)
    assert html.count("<tr data-verdict='invalid'") == 50
    assert "page 3 of 25" in html and "verdict=invalid&amp;page=2" in html and "verdict=invalid&amp;page=4" in html
    assert render_index(runs, Filters(), links, page_no=999, page_size=50).count("page 50 of 50") == 2


def test_index_command_writes_static_html(tmp_path):
    make_run(tmp_path, "queue", "20261121T080000", "invalid")
    done = subprocess.run([sys.executable, "-m", "harness.cli", "index", "--store", str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, check=True)
    html = Path(done.stdout.strip()).read_text()
    assert "href='queue/20261121T080000/'" in html  # no report yet: link to the run dir
    out = tmp_path / "elsewhere" / "runs.html"
    out.parent.mkdir()
    subprocess.run([sys.executable, "-m", "harness.cli", "index", "--store", str(tmp_path), "--out", str(out)],
                   cwd=ROOT, check=True, capture_output=True)
    assert "href='../queue/20261121T080000/'" in out.read_text()


def free_port() -> int:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_serve_command_binds_localhost_by_default(tmp_path):
    make_run(tmp_path, "queue", "20261121T080000", "valid")
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "harness.cli", "serve", "--store", str(tmp_path), "--port", str(port)],
                              cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert server.stdout.readline().startswith(f"serving {tmp_path} at http://127.0.0.1:{port}/")
        status, body, _ = get(port, "/")
        assert status == 200 and b"data-verdict='valid'" in body
    finally:
        server.terminate()
        server.wait(timeout=30)
    missing = subprocess.run([sys.executable, "-m", "harness.cli", "serve", "--store", str(tmp_path / "nope")],
                             cwd=ROOT, capture_output=True, text=True)
    assert missing.returncode == 3 and "is not a directory" in missing.stderr
