"""test-all's matrix, summary table, JUnit XML and exit code, on run dirs written
by hand (the runner's RunResult only contributes run_dir and exit_code; the
end-to-end run through the runner is tests/results/test_nightly.py)."""
from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from common import exit_codes
from harness import runner
from harness.commands.test_all import Cell, matrix, options_for
from results.matrix_report import MatrixRun, exit_code, junit_xml, summary_table
from results.runs import read_run
from tests.results.sample_runs import make_run


def matrix_run(store, kind: str, nemesis: str = "partition", attempt: int = 1) -> MatrixRun:
    run_dir = make_run(store, f"queue-{kind}", f"2026112{attempt}T080000", kind)
    summary = read_run(run_dir, store)
    code = {"valid": 0, "invalid": 1}.get(summary.verdict, 2)
    return MatrixRun("queue", nemesis, False, attempt, summary, code)


def test_matrix_covers_every_combination():
    cells = matrix(["queue", "list-append"], ["none", "partition+pause"], "both", 2)
    queue = [c for c in cells if c.workload == "queue"]
    assert len(queue) == 2 * 2 * 2 and {c.txn for c in queue} == {False, True}
    assert [c for c in cells if c.workload == "list-append"] == [
        Cell("list-append", "none", True, 1), Cell("list-append", "none", True, 2),
        Cell("list-append", "partition+pause", True, 1), Cell("list-append", "partition+pause", True, 2)]
    assert {c.txn for c in matrix(["queue"], ["none"], "off", 1)} == {False}


def test_options_for_a_cell():
    base = runner.TestOptions.from_flat(local=3, time_limit=5)
    options = options_for(base, Cell("queue", "partition+pause", True, 1))
    assert (options.workload.name, options.nemesis.kinds, options.workload.settings.txn, options.cluster.local,
            options.timing.time_limit) == ("queue", ("partition", "pause"), True, 3, 5)
    assert options_for(runner.TestOptions.from_flat(), Cell("queue", "none", False, 1)).nemesis.kinds == ()


def test_junit_one_testcase_per_run_with_bad_types_as_failure(tmp_path):
    runs = [matrix_run(tmp_path, "valid", attempt=1), matrix_run(tmp_path, "invalid", attempt=2),
            matrix_run(tmp_path, "running", attempt=3),
            MatrixRun("queue", "kill", True, 1, None, exit_codes.HARNESS_ERROR, "SSHError: n2 unreachable")]
    suite = ET.fromstring(junit_xml(runs))
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("4", "1", "2")
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == ["queue nemesis=partition txn=off #1", "queue nemesis=partition txn=off #2",
                                              "queue nemesis=partition txn=off #3", "queue nemesis=kill txn=on #1"]
    assert cases[0].find("failure") is None and cases[0].find("error") is None
    assert cases[1].find("failure").get("message") == "G1c, inconsistent-offsets"
    assert cases[2].find("error").get("type") == "incomplete"
    assert "status is still 'running'" in cases[2].find("error").get("message")
    assert cases[3].find("error").get("message") == "SSHError: n2 unreachable"
    assert cases[1].find("system-out").text.startswith("run dir: queue-invalid/20261122T080000")


def test_summary_table_and_exit_codes(tmp_path):
    valid, invalid = matrix_run(tmp_path, "valid", attempt=1), matrix_run(tmp_path, "invalid", attempt=2)
    running = matrix_run(tmp_path, "running", attempt=3)
    table = summary_table([valid, invalid, running])
    lines = table.splitlines()
    assert lines[0].split() == ["#", "workload", "nemesis", "txn", "verdict", "bad", "anomalies", "duration", "run", "dir"]
    assert lines[2].split()[:6] == ["2", "queue", "partition", "off", "invalid", "G1c,"]
    assert lines[-1] == "3 runs: 1 valid, 1 invalid, 1 incomplete"
    assert exit_code([valid]) == exit_codes.VALID
    assert exit_code([valid, running]) == exit_codes.UNKNOWN
    assert exit_code([valid, running, invalid]) == exit_codes.INVALID
    crashed = MatrixRun("queue", "none", False, 1, None, exit_codes.HARNESS_ERROR, "boom")
    assert exit_code([invalid, crashed]) == exit_codes.HARNESS_ERROR


def test_junit_error_says_why_a_run_is_unknown(tmp_path):
    run = matrix_run(tmp_path, "valid")
    (tmp_path / run.summary.rel / "results.json").write_text(
        '{"valid": "unknown", "not_checked": "checker failed: SparkError"}')
    run.summary = read_run(tmp_path / run.summary.rel, tmp_path)
    error = ET.fromstring(junit_xml([run])).find("testcase/error")
    assert (error.get("type"), error.get("message")) == ("unknown", "unknown: checker failed: SparkError")


def test_bad_cells_are_refused_before_any_run(tmp_path):
    done = subprocess.run([sys.executable, "-m", "harness.cli", "test-all", "--bootstrap-servers", "127.0.0.1:1",
                           "--workloads", "queue", "--nemeses", "none,partition", "--txn", "off",
                           "--store", str(tmp_path / "store")],
                          cwd=Path(__file__).resolve().parents[2], capture_output=True, text=True)
    assert done.returncode == exit_codes.BAD_INPUT
    assert "queue nemesis=partition txn=off: faults need a cluster reached over SSH" in done.stderr
    assert not (tmp_path / "store").exists()


def test_quorum_axis_runs_every_combination_on_each_quorum_and_shows_it(tmp_path):
    cells = matrix(["queue"], ["none", "membership"], "off", 1, None, [False, True])
    assert [(c.dynamic_quorum, c.nemesis) for c in cells] == [
        (False, "none"), (False, "membership"), (True, "none"), (True, "membership")]
    base = runner.TestOptions.from_flat(local=3)
    assert [options_for(base, c).cluster.dynamic_quorum for c in cells] == [False, False, True, True]
    dynamic = runner.TestOptions.from_flat(dynamic_quorum=True)
    assert options_for(dynamic, Cell("queue", "none", False, 1)).cluster.dynamic_quorum
    runs = [matrix_run(tmp_path, "valid", attempt=1), matrix_run(tmp_path, "invalid", attempt=2)]
    runs[0].quorum, runs[1].quorum = "static", "dynamic"
    lines = summary_table(runs).splitlines()
    assert lines[0].split()[:3] == ["#", "quorum", "workload"]
    assert lines[1].split()[:3] == ["1", "static", "queue"] and lines[2].split()[:3] == ["2", "dynamic", "queue"]
    assert [c.get("name") for c in ET.fromstring(junit_xml(runs)).findall("testcase")] == [
        "quorum=static queue nemesis=partition txn=off #1", "quorum=dynamic queue nemesis=partition txn=off #2"]


def test_quorum_axis_bad_input_is_refused_before_any_run(tmp_path):
    def test_all(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "harness.cli", "test-all", "--store", str(tmp_path), *args],
                              capture_output=True, text=True, timeout=120)
    unknown = test_all("--local", "3", "--quorums", "static,raft")
    assert unknown.returncode == exit_codes.BAD_INPUT
    assert "--quorums static,raft: unknown raft (valid: static, dynamic)" in unknown.stderr
    shared = test_all("--nodes-file", __file__, "--quorums", "static,dynamic")
    assert shared.returncode == exit_codes.BAD_INPUT and "--quorums static,dynamic needs --local N" in shared.stderr
    old = test_all("--local", "3", "--quorums", "dynamic", "--kafka-versions", "3.0.0", "--kafka-mode", "zk")
    assert old.returncode == exit_codes.BAD_INPUT
    assert "quorum=dynamic" in old.stderr and "--dynamic-quorum needs KRaft on Kafka 3.9.0" in old.stderr
    assert not any(tmp_path.iterdir())   # no run started
