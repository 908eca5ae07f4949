"""The report says in words, beside the verdict, which faults ran, which may
lose data, and whether they explain what was found (results.json `faults`),
on histories checked by the real queue checker (in-process)."""
from __future__ import annotations

import json
import re
from pathlib import Path

from checkers.api import check_history
from results.report import write_report
from tests.checkers.test_fault_verdict import lost_write
from tests.results.sample_runs import HOSTILE, make_run

TRUNCATE_WHY = "DeleteRecords moves the log start to the high watermark"


def start(f: str, fault: str, why: str | None) -> tuple[str, dict]:
    return f, {"at": 1.0, "fault": fault, "may_lose_data": why}


def checked_run(tmp_path: Path, *starts: tuple[str, dict]) -> tuple[dict, str]:
    """A run whose ack of 10 on key 1 is lost after the starts: checked, then reported."""
    lost_write(*starts).write(tmp_path / "history.jsonl")
    (tmp_path / "test.json").write_text(json.dumps({"name": "queue", "status": "complete", "workload": "queue"}))
    results = check_history(tmp_path / "history.jsonl", out_dir=tmp_path, engine="local")
    return results, write_report(tmp_path).read_text()


def faults_block(html: str) -> str:
    return re.search(r"<div id=faults>(.*?)</div>", html).group(1)


def test_a_loss_the_faults_explain_is_said_beside_the_verdict(tmp_path):
    results, html = checked_run(tmp_path, start("truncate-log", "producer-state", TRUNCATE_WHY),
                                start("expire-producer-ids", "producer-state", None),
                                start("start-partition", "partition", None))
    assert results["faults"]["verdict"] == "expected-under-faults"
    assert "data-verdict='invalid'" in re.search(r"<p id=verdict>(.*?)</p>", html).group(1)  # valid is false
    block = faults_block(html)
    assert "data-verdict='expected-under-faults'" in block
    why = re.search(r"<span id=faults-why>(.*?)</span>", block).group(1)
    assert why.startswith("Faults that ran: partition, producer-state. Of these, producer-state may lose "
                          "acknowledged data;")
    assert "Expected under the faults that ran: every anomaly that makes the run invalid (lost-write, unseen)" in why
    rows = re.findall(r"<tr><td>(.*?)</td><td>(.*?)</td><td>(.*?)</td></tr>", block)
    assert rows == [
        ("<b>partition</b>", "1", "<code>start-partition</code> must lose nothing"),
        ("<b>producer-state</b>", "2", "<code>expire-producer-ids</code> must lose nothing<br>"
                                       f"<code>truncate-log</code> may lose data: {TRUNCATE_WHY}")]
    assert html.index("<div id=faults>") < html.index("<h2 id=anomalies>")


def test_a_loss_under_faults_that_must_lose_nothing_is_not_explained(tmp_path):
    _, html = checked_run(tmp_path, start("start-partition", "partition", None))
    block = faults_block(html)
    assert "expected-under-faults" not in block
    assert "None of them may lose acknowledged data. Not explained by the faults that ran: the run is invalid " \
           "(lost-write, unseen)." in block


def test_a_run_checked_before_faults_were_declared_shows_no_faults_block(tmp_path):
    run_dir = make_run(tmp_path, "queue", "20261121T080000", "invalid")
    assert "<div id=faults>" not in write_report(run_dir).read_text()


def test_a_hostile_or_malformed_faults_section_is_escaped_and_never_raises(tmp_path):
    run_dir = make_run(tmp_path, "queue", "20261121T080000", "invalid")
    results = json.loads((run_dir / "results.json").read_text())
    results["faults"] = {"verdict": "expected-under-faults", "explanation": HOSTILE,
                         "in_force": [{"fault": HOSTILE, "f": [HOSTILE, 3], "strikes": "x",
                                       "may_lose_data": {HOSTILE: HOSTILE}}, "not a kind", {"f": "nope"}]}
    (run_dir / "results.json").write_text(json.dumps(results))
    html = write_report(run_dir).read_text()
    assert "<script>alert" not in html and "&lt;script&gt;" in faults_block(html)
    results["faults"] = ["not", "a", "section"]
    (run_dir / "results.json").write_text(json.dumps(results))
    assert "<div id=faults>" not in write_report(run_dir).read_text()


def test_the_index_and_the_matrix_say_which_faults_explain_an_invalid_run(tmp_path):
    from results.index import write_static_index
    from results.matrix_report import MatrixRun, junit_xml, summary_table
    from results.runs import read_run
    store = tmp_path / "store"
    explained, unexplained = store / "queue-a" / "20261128T000001", store / "queue-b" / "20261128T000002"
    for run, starts in ((explained, [start("truncate-log", "producer-state", TRUNCATE_WHY)]),
                        (unexplained, [start("start-partition", "partition", None)])):
        run.mkdir(parents=True)
        checked_run(run, *starts)
    summaries = [read_run(explained, store), read_run(unexplained, store)]
    assert [(s.verdict, s.expected_under) for s in summaries] == [("invalid", ["producer-state"]), ("invalid", [])]
    html = write_static_index(store).read_text()
    assert html.count("expected under producer-state") == 1
    rows = [MatrixRun("queue", n, False, 1, s, 1) for n, s in zip(("producer-state", "partition"), summaries)]
    table = summary_table(rows).splitlines()
    assert "invalid (expected under producer-state)" in table[1] and "expected" not in table[2]
    assert b"lost-write, unseen (expected under producer-state)" in junit_xml(rows)
