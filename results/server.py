"""`logtrial serve`: browse a store over HTTP.

Routes: `/` the index (query: verdict, workload, nemesis, page), `/runs/<path>`
files of the store (a run dir lists its files), `/zip/<test>/<run>` one run as a
zip, `/api/runs` the summaries as JSON. Only files inside the store are served:
every path is resolved (symlinks followed) and must stay under the resolved
store root, otherwise 404. Binds 127.0.0.1 unless told otherwise.
"""
from __future__ import annotations

import io
import json
import mimetypes
import os
import threading
import time
import zipfile
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

from results.html import esc, href, page
from results.index import Filters, SummaryCache, render_index, served_links
from results.runs import RunSummary

CACHE_TTL_S = 2.0
FAVICON = b"<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'><circle cx='8' cy='8' r='7' fill='#1a5fb4'/></svg>"
CHUNK = 1 << 16
TEXT_TYPES = {".jsonl": "text/plain; charset=utf-8", ".log": "text/plain; charset=utf-8",
              ".json": "application/json; charset=utf-8", ".html": "text/html; charset=utf-8"}


class Store:
    """The store being served: safe path resolution and cached summaries."""

    def __init__(self, root: Path):
        self.root = Path(root).resolve()
        self.cache = SummaryCache(self.root)
        self.lock = threading.Lock()
        self.listed_at = 0.0
        self.runs: list[RunSummary] = []

    def resolve(self, relative: str) -> Path | None:
        """The real path of a store-relative path, or None if it is outside the store or absent."""
        parts = [p for p in unquote(relative).split("/") if p not in ("", ".")]
        if any(p == ".." or "\\" in p or "\0" in p for p in parts):
            return None
        try:
            path = self.root.joinpath(*parts).resolve(strict=True)
        except (OSError, RuntimeError):
            return None
        return path if path == self.root or path.is_relative_to(self.root) else None

    def summaries(self) -> list[RunSummary]:
        with self.lock:
            if time.monotonic() - self.listed_at > CACHE_TTL_S:
                self.runs = self.cache.summaries()
                self.listed_at = time.monotonic()
            return self.runs

    def is_run_dir(self, path: Path) -> bool:
        return path.is_dir() and path.parent.parent == self.root


def zip_run(store: Store, run_dir: Path) -> bytes:
    """The run dir as a zip, skipping anything that resolves outside the store."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for root, dirs, files in os.walk(run_dir):
            dirs.sort()
            for name in sorted(files):
                path = Path(root) / name
                real = path.resolve()
                if real.is_relative_to(store.root) and real.is_file():
                    archive.write(real, str(path.relative_to(run_dir.parent.parent)))
    return buffer.getvalue()


def directory_page(store: Store, path: Path) -> str:
    rel = path.relative_to(store.root)
    entries = sorted(path.iterdir(), key=lambda p: (not p.is_dir(), p.name))
    items = "".join(f"<li><a href='{href(e.name + ('/' if e.is_dir() else ''))}'>{esc(e.name)}</a></li>"
                    for e in entries if not e.name.startswith("."))
    return page(f"logtrial {rel}", f"<h1>{esc(str(rel))}</h1><p><a href='/'>all runs</a></p><ul>{items}</ul>")


class Handler(BaseHTTPRequestHandler):
    store: Store  # set on the subclass made by make_server
    server_version = "logtrial"

    def log_message(self, format: str, *args) -> None:  # quiet; errors still reach stderr
        pass

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        try:
            if url.path == "/":
                self.index(parse_qs(url.query))
            elif url.path == "/api/runs":
                self.send(200, "application/json", json.dumps([r.to_json() for r in self.store.summaries()]).encode())
            elif url.path.startswith("/runs/"):
                self.file(url.path[len("/runs/"):])
            elif url.path.startswith("/zip/"):
                self.zip(url.path[len("/zip/"):])
            elif url.path == "/favicon.ico":  # browsers ask for it on plain-text pages
                self.send(200, "image/svg+xml", FAVICON)
            else:
                self.not_found()
        except (BrokenPipeError, ConnectionResetError):
            pass

    def index(self, query: dict[str, list[str]]) -> None:
        try:
            page_no = int((query.get("page") or ["1"])[0])
        except ValueError:
            page_no = 1
        html = render_index(self.store.summaries(), Filters.from_query(query), served_links(), page_no)
        self.send(200, "text/html; charset=utf-8", html.encode())

    def file(self, relative: str) -> None:
        path = self.store.resolve(relative)
        if path is None:
            return self.not_found()
        if path.is_dir():
            if not self.path.split("?")[0].endswith("/"):
                return self.redirect(self.path.split("?")[0] + "/")
            return self.send(200, "text/html; charset=utf-8", directory_page(self.store, path).encode())
        content_type = TEXT_TYPES.get(path.suffix) or mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        self.send_file(path, content_type)

    def zip(self, relative: str) -> None:
        path = self.store.resolve(relative)
        if path is None or not self.store.is_run_dir(path):
            return self.not_found()
        name = f"{path.parent.name}-{path.name}.zip"
        self.send(200, "application/zip", zip_run(self.store, path),
                  {"Content-Disposition": f'attachment; filename="{name}"'})

    def send_file(self, path: Path, content_type: str) -> None:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(size))
            self.end_headers()
            while chunk := f.read(CHUNK):
                self.wfile.write(chunk)

    def send(self, status: int, content_type: str, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def redirect(self, location: str) -> None:
        self.send_response(HTTPStatus.MOVED_PERMANENTLY)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def not_found(self) -> None:
        self.send(404, "text/plain; charset=utf-8", b"not found\n")


def make_server(store: Path, host: str = "127.0.0.1", port: int = 8080) -> ThreadingHTTPServer:
    """A server for the store, bound but not yet serving (call serve_forever)."""
    handler = type("StoreHandler", (Handler,), {"store": Store(store)})
    server = ThreadingHTTPServer((host, port), handler)
    server.daemon_threads = True
    return server
