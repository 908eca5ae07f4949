"""The published suites run on both engines: every case must give the same
answer in-process ("local", no JVM) and on Spark."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from checkers.api import check_history


@pytest.fixture(params=["local", "spark"])
def engine(request):
    if request.param == "spark":
        request.getfixturevalue("spark")   # the shared session, started once
    return request.param


@pytest.fixture
def check(engine, tmp_path):
    """check(events, workload, **options) -> results dict, on this engine.
    `events` without index/time get them in order."""
    def run(events: list[dict], workload: str, **options) -> dict:
        path = Path(tmp_path) / "history.jsonl"
        with open(path, "w") as out:
            for i, event in enumerate(events):
                out.write(json.dumps({"index": i, "time": (i + 1) * 1000, **event}) + "\n")
        return check_history(path, workload=workload, engine=engine, **options)
    return run
