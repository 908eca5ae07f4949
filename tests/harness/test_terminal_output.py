"""What a user watches during `logtrial test`: a killed broker prints nothing but the
progress lines; librdkafka's own log lines (`%3|...|FAIL|rdkafka#producer-N| ...
Connection refused`) go into the run's logtrial.log."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from common import exit_codes
pytestmark = [pytest.mark.cluster, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
LIBRDKAFKA_LINE = re.compile(r"^%\d+\|", re.MULTILINE)  # librdkafka's own stderr format
# all a run says when output is not a terminal: the progress line every 10 s, where
# the run is, its verdict and how it ended (harness/runner.py)
RUN_LINE = re.compile(r"\[[a-z]+\] +[\d.]+s \| ok \d+ fail \d+ info \d+ \| faults: .*|run directory: .*|"
                      r"valid: .*|(complete|incomplete): .*")


def test_a_killed_broker_prints_nothing_but_progress(healed_cluster, tmp_path):
    store = tmp_path / "store"
    command = [sys.executable, "-m", "harness.cli", "test", "--nodes-file", str(healed_cluster.inventory.path),
               "--store", str(store), "--time-limit", "12", "--rate", "50", "--concurrency", "4",
               "--nemesis", "kill", "--nemesis-interval", "2", "--db-targets", "leader",
               "--recovery-time", "2", "--final-time-limit", "30", "--leave-db-running", "--no-check",
               "--no-report", "--seed", "4"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    output = done.stdout + done.stderr
    assert done.returncode == exit_codes.UNKNOWN, output  # unchecked: unknown
    assert not LIBRDKAFKA_LINE.search(output), output
    assert [line for line in output.splitlines() if not RUN_LINE.fullmatch(line)] == [], output
    run_log = next(store.glob("*/*/logtrial.log")).read_text()
    assert "librdkafka" in run_log  # the broker's death was heard, in the run's log


def test_librdkafka_lines_outside_a_run_reach_no_terminal():
    # no handler attached (a check after the run, test-all between cells): logging's
    # last resort must not print them either
    script = ("from common.client_logging import LIBRDKAFKA_LOG\n"
              "LIBRDKAFKA_LOG.error('FAIL [lt-p0#producer-1] Connection refused')\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
