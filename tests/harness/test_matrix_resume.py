"""`logtrial test-all --resume STORE`: a three-cell matrix SIGKILLed during its second
cell (a partition in force) goes on: the first cell is kept, the second run again (on a
healed cluster), the third run, and the JUnit XML and summary cover all three."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from checkers.history.stream import raw_events
from common import exit_codes
from harness.matrix_journal import JOURNAL
from nemesis.control_link import cut_nodes, restore
from results.runs import list_runs

ROOT = Path(__file__).resolve().parents[2]
NEMESES = ("none", "partition", "pause")


def logtrial(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=600, **kwargs)


def journal(store: Path) -> dict:
    try:
        return json.loads((store / JOURNAL).read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return {}


def unfinished(store: Path) -> bool:
    return subprocess.run([sys.executable, "-m", "harness.matrix_journal", str(store)], cwd=ROOT).returncode == 0


def struck_in_second_cell(store: Path) -> bool:
    """The second cell is under way and its partition has struck."""
    if journal(store).get("running") != 1:
        return False
    histories = [p for p in store.glob("*partition*/*/history.jsonl")]
    return any(e["process"] == "nemesis" and e["type"] == "info" for h in histories for e in raw_events(h))


@pytest.mark.cluster
@pytest.mark.slow
def test_a_matrix_killed_in_its_second_cell_resumes_to_a_complete_junit(healed_cluster, tmp_path):
    store = tmp_path / "store"
    command = [sys.executable, "-m", "harness.cli", "test-all", "--nodes-file", str(healed_cluster.inventory.path),
               "--leave-db-running", "--store", str(store), "--workloads", "queue", "--nemeses", ",".join(NEMESES),
               "--txn", "off", "--time-limit", "6", "--recovery-time", "1", "--final-time-limit", "20",
               "--rate", "20", "--concurrency", "2", "--nemesis-interval", "1", "--engine", "local", "--seed", "5"]
    with open(tmp_path / "first.log", "w") as out:
        proc = subprocess.Popen(command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 300
            while not struck_in_second_cell(store):
                assert proc.poll() is None and time.monotonic() < deadline, (tmp_path / "first.log").read_text()
                time.sleep(0.3)
        finally:
            proc.kill()  # SIGKILL: nothing of the control node gets to clean up
            proc.wait()
    first_run = journal(store)["finished"]["0"]["run_dir"]
    assert unfinished(store)

    done = logtrial("test-all", "--resume", str(store))
    output = done.stdout + done.stderr
    assert done.returncode in (exit_codes.VALID, exit_codes.INVALID, exit_codes.UNKNOWN), output
    assert "[1/3] queue nemesis=none txn=off: kept from before" in done.stderr
    assert "[2/3] queue nemesis=partition txn=off (run again" in done.stderr
    assert "3 runs:" in done.stdout
    cases = ET.parse(store / "junit.xml").getroot().findall("testcase")
    assert [c.get("name") for c in cases] == [f"queue nemesis={n} txn=off #1" for n in NEMESES]
    recorded = journal(store)
    assert sorted(recorded["finished"]) == ["0", "1", "2"] and recorded["running"] is None
    assert recorded["finished"]["0"]["run_dir"] == first_run  # kept, not run again
    assert not unfinished(store)
    # the killed cell's run stays in the store beside the one that replaced it, incomplete
    per_nemesis = sorted((tuple(r.nemesis), r.status) for r in list_runs(store))
    assert per_nemesis == [((), "complete"), (("partition",), "complete"), (("partition",), "incomplete"),
                           (("pause",), "complete")]


def test_resume_takes_its_options_from_the_journal_and_names_what_is_wrong(tmp_path):
    done = logtrial("test-all", "--resume", str(tmp_path))
    assert done.returncode == exit_codes.BAD_INPUT
    assert f"{tmp_path / JOURNAL}: no matrix journal here" in done.stderr
    (tmp_path / JOURNAL).write_text("{")
    done = logtrial("test-all", "--resume", str(tmp_path))
    assert done.returncode == exit_codes.BAD_INPUT and f"{tmp_path / JOURNAL}: unreadable" in done.stderr
    done = logtrial("test-all", "--resume", str(tmp_path), "--workloads", "queue", "--time-limit", "3")
    assert done.returncode == exit_codes.BAD_INPUT
    assert "drop --workloads, --time-limit" in done.stderr
    (tmp_path / JOURNAL).write_text(json.dumps({"format": 1, "options": {"workloads": "queue", "warp": 9},
                                                "cells": [], "finished": {}}))
    done = logtrial("test-all", "--resume", str(tmp_path))
    assert done.returncode == exit_codes.BAD_INPUT
    assert f"{tmp_path / JOURNAL}: options this logtrial does not have: warp" in done.stderr


def children(pid: int) -> list[int]:
    """The processes `pid` started (its watchdog among them), from /proc."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(child) for child in (task / "children").read_text().split()]
    return found


def kill_with_children(proc: subprocess.Popen) -> None:
    """SIGKILL to the process's children first (a watchdog would heal at its parent's
    death), then to it."""
    for child in children(proc.pid):
        try:
            os.kill(child, signal.SIGKILL)
        except ProcessLookupError:
            pass
    proc.kill()
    proc.wait()


def cut_struck(store: Path) -> bool:
    """The control-link fault has cut a node's SSH link (its start is recorded)."""
    histories = store.glob("*control-link*/*/history.jsonl")
    return any(e["process"] == "nemesis" and e["f"] == "cut-control-link" and e["type"] == "info"
               for h in histories for e in raw_events(h))


@pytest.mark.cluster
@pytest.mark.slow
def test_a_matrix_killed_while_a_control_link_was_cut_resumes(healed_cluster, tmp_path):
    """The cut lives in this machine's OUTPUT chain and outlives the killed matrix; every
    SSH connection to that node fails on it, so the resumed matrix must restore it before
    its heal connects (as `cluster heal` does: one heal for every caller)."""
    store = tmp_path / "store"
    command = [sys.executable, "-m", "harness.cli", "test-all", "--nodes-file", str(healed_cluster.inventory.path),
               "--leave-db-running", "--store", str(store), "--workloads", "queue", "--nemeses", "control-link",
               "--txn", "off", "--time-limit", "20", "--recovery-time", "1",
               "--final-time-limit", "20", "--rate", "20", "--concurrency", "2", "--nemesis-interval", "2",
               "--engine", "local", "--seed", "5"]
    with open(tmp_path / "first.log", "w") as out:
        proc = subprocess.Popen(command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 300
            while not cut_struck(store):
                assert proc.poll() is None and time.monotonic() < deadline, (tmp_path / "first.log").read_text()
                time.sleep(0.2)
        finally:
            kill_with_children(proc)  # the control node dies, its watchdog too: the cut stays
    assert cut_nodes(healed_cluster.inventory), "the killed matrix left no cut: nothing to test"
    try:
        done = logtrial("test-all", "--resume", str(store))
    finally:
        restore(healed_cluster.inventory)  # whatever happened, the shared cluster's link is back
    output = done.stdout + done.stderr
    assert done.returncode in (exit_codes.VALID, exit_codes.INVALID, exit_codes.UNKNOWN), output
    assert "restored the control node's SSH link" in done.stderr, output
    assert "[1/1] queue nemesis=control-link txn=off (run again" in done.stderr, output
    assert journal(store)["running"] is None and not unfinished(store)
