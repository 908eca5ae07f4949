"""scripts/nightly.sh in quick mode against the shared local cluster: one real run
through the runner, then the JUnit XML, the report and the static index must all
agree with what the run wrote."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from common import exit_codes
from results.runs import list_runs

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]


def test_nightly_quick_mode(healed_cluster, tmp_path):
    store = tmp_path / "nightly"
    env = {**os.environ, "NIGHTLY_QUICK": "1", "NIGHTLY_SKIP_INSTALL": "1", "NIGHTLY_STORE": str(store),
           "NIGHTLY_NODES_FILE": str(healed_cluster.inventory.path), "PYTHON": sys.executable}
    done = subprocess.run(["bash", str(ROOT / "scripts" / "nightly.sh")], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    runs = list_runs(store)
    assert len(runs) == 1, done.stdout + done.stderr
    run = runs[0]
    run_dir = store / run.rel
    results = json.loads((run_dir / "results.json").read_text())
    assert run.status == "complete" and run.workload == "queue" and run.nemesis == ["partition"]
    # the exit status follows the verdict the checker wrote
    expected = {True: exit_codes.VALID, False: exit_codes.INVALID}.get(results["valid"], exit_codes.UNKNOWN)
    assert done.returncode == expected, done.stdout + done.stderr
    suite = ET.parse(store / "junit.xml").getroot()
    (case,) = suite.findall("testcase")
    assert case.get("name") == "queue nemesis=partition txn=off #1"
    assert (case.find("failure") is not None) == (results["valid"] is False)
    assert f"data-verdict='{run.verdict}'" in (run_dir / "report.html").read_text()
    assert f"href='{run.rel}/report.html'" in (store / "index.html").read_text()
    assert f"1 runs: 1 {run.verdict}" in done.stdout  # the summary table
