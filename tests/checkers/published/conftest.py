"""The published suites (Elle's list-append tests, Jepsen's Kafka checker
tests) run in-process on every case. The Spark engine shares every analysis
function with it, so what Spark can get wrong is its plumbing: a
deterministic sixth of the cases (every case with LOGTRIAL_SPARK_ALL=1, as
the nightly job sets) is also checked on Spark, and the two results must be
equal. A tiny check costs Spark 3-8 s of fixed job overhead; all of them on
every `make test` would cost about ten minutes."""
from __future__ import annotations

import json
import os
import zlib
from pathlib import Path

import pytest

from checkers.api import check_history
from checkers.options import CheckOptions

SPARK_SHARE = 6     # one case in SPARK_SHARE also runs on Spark


def on_spark_too(nodeid: str) -> bool:
    return os.environ.get("LOGTRIAL_SPARK_ALL") == "1" or zlib.crc32(nodeid.encode()) % SPARK_SHARE == 0


def comparable(results: dict) -> dict:
    """Everything but how and how fast it was checked."""
    return {k: v for k, v in results.items() if k != "checker"}


@pytest.fixture
def check(request, tmp_path):
    """check(events, workload, **options) -> results dict (in-process), also
    compared with Spark's for the sampled cases. `events` without index/time
    get them in order."""
    def run(events: list[dict], workload: str, **options) -> dict:
        path = Path(tmp_path) / "history.jsonl"
        with open(path, "w") as out:
            for i, event in enumerate(events):
                out.write(json.dumps({"index": i, "time": (i + 1) * 1000, **event}) + "\n")
        local = check_history(path, workload=workload, engine="local", out_dir=tmp_path / "local",
                              options=CheckOptions(**options))
        if on_spark_too(request.node.nodeid):
            request.getfixturevalue("spark")     # the shared session, started once
            spark = check_history(path, workload=workload, engine="spark", out_dir=tmp_path / "spark",
                                  options=CheckOptions(**options))
            assert comparable(spark) == comparable(local), f"engines disagree on {request.node.nodeid}"
        return local
    return run
