"""Run directories: store/<test-name>/<YYYYmmddTHHMMSS>/ and store/latest.

A run directory holds history.jsonl, test.json, logtrial.log, nodes/<node>/,
and later results.json and report.html. test.json is rewritten atomically at
every phase change, so a crash leaves the last known state on disk.
"""
from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any

TIMESTAMP_FORMAT = "%Y%m%dT%H%M%S"
TEST_JSON = "test.json"
HISTORY = "history.jsonl"
LOG = "logtrial.log"
NODES = "nodes"


def safe_name(text: str) -> str:
    """A readable directory name: letters, digits, '=', ',', '.', '-', '_'."""
    return re.sub(r"[^A-Za-z0-9=,._-]+", "-", text).strip("-") or "test"


def create_run_dir(store_root: str | Path, test_name: str, now: float | None = None) -> Path:
    """Makes store/<test-name>/<timestamp>/ (suffixing -1, -2 on a clash) and points store/latest at it."""
    root = Path(store_root)
    stamp = time.strftime(TIMESTAMP_FORMAT, time.localtime(now))
    parent = root / safe_name(test_name)
    parent.mkdir(parents=True, exist_ok=True)
    run_dir, n = parent / stamp, 0
    while True:
        try:
            run_dir.mkdir()
            break
        except FileExistsError:
            n += 1
            run_dir = parent / f"{stamp}-{n}"
    (run_dir / NODES).mkdir()
    point_latest(root, run_dir)
    return run_dir


def point_latest(store_root: Path, run_dir: Path) -> None:
    link = store_root / "latest"
    tmp = store_root / f".latest.{os.getpid()}"
    if tmp.is_symlink() or tmp.exists():
        tmp.unlink()
    tmp.symlink_to(os.path.relpath(run_dir, store_root))
    os.replace(tmp, link)


def write_test_json(run_dir: str | Path, data: dict[str, Any]) -> None:
    path = Path(run_dir) / TEST_JSON
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True, default=str) + "\n")
    os.replace(tmp, path)


def read_test_json(run_dir: str | Path) -> dict[str, Any]:
    return json.loads((Path(run_dir) / TEST_JSON).read_text())


def mark_incomplete(run_dir: str | Path, error: str, test: dict[str, Any] | None = None) -> None:
    """test.json says the run ended unfinished, and why (`test`: its record, when the
    caller has read it; an unreadable one is replaced by these two fields)."""
    if test is None:
        try:
            test = read_test_json(run_dir)
        except (OSError, ValueError):
            test = {}
    write_test_json(run_dir, {**test, "status": "incomplete", "error": error})
