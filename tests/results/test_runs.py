"""Reading run dirs: every kind of run, damaged ones included, and the summary cache."""
from __future__ import annotations

import json
import os

from results.index import CACHE_FILE, SummaryCache
from results.runs import list_runs, read_run
from tests.results.sample_runs import make_run


def test_invalid_run_summary(tmp_path):
    run = read_run(make_run(tmp_path, "queue", "20261121T080000", "invalid"), tmp_path)
    assert run.verdict == "invalid"
    assert run.bad_anomaly_types == ["G1c", "inconsistent-offsets"]
    assert run.rel == "queue/20261121T080000"
    assert (run.workload, run.nemesis, run.duration_s, run.ops) == ("queue", ["partition", "pause"], 65.0, 61)
    assert run.problems == []


def test_valid_run_summary(tmp_path):
    run = read_run(make_run(tmp_path, "queue", "20261121T080000", "valid"), tmp_path)
    assert (run.verdict, run.anomaly_types, run.status) == ("valid", [], "complete")


def test_corrupt_run_is_incomplete_and_says_why(tmp_path):
    run = read_run(make_run(tmp_path, "queue", "20261121T080000", "corrupt"), tmp_path)
    assert run.verdict == "incomplete"
    assert run.problems[0].startswith("test.json: not valid JSON (line 1, column 30")
    assert "results.json: missing" in run.problems
    assert run.started == "2026-11-21T08:00:00+00:00"  # from the dir name when test.json is unreadable


def test_running_run_is_incomplete(tmp_path):
    run = read_run(make_run(tmp_path, "queue", "20261121T080000", "running"), tmp_path)
    assert (run.verdict, run.status) == ("incomplete", "running")


def test_empty_and_non_object_files(tmp_path):
    empty = tmp_path / "t" / "20261121T070000"
    empty.mkdir(parents=True)
    assert read_run(empty, tmp_path).verdict == "incomplete"
    odd = tmp_path / "t" / "20261121T070001"
    odd.mkdir()
    (odd / "test.json").write_text("[1, 2]")
    (odd / "results.json").write_text('"valid"')
    run = read_run(odd, tmp_path)
    assert run.verdict == "incomplete"
    assert run.problems == ["test.json: not a JSON object", "results.json: not a JSON object"]


def test_unknown_verdict(tmp_path):
    run_dir = make_run(tmp_path, "queue", "20261121T080000", "valid")
    (run_dir / "results.json").write_text(json.dumps({"valid": "unknown", "anomaly_types": ["unseen"]}))
    assert read_run(run_dir, tmp_path).verdict == "unknown"


def test_list_runs_newest_first_and_skips_latest(tmp_path):
    make_run(tmp_path, "a", "20261121T080000", "valid")
    make_run(tmp_path, "b", "20261121T090000", "invalid")
    make_run(tmp_path, "a", "20261120T080000", "valid")
    (tmp_path / "latest").symlink_to(tmp_path / "b" / "20261121T090000")
    (tmp_path / "a" / "not-a-run").mkdir()
    assert [r.rel for r in list_runs(tmp_path)] == ["b/20261121T090000", "a/20261121T080000", "a/20261120T080000"]


def test_cache_reuses_and_refreshes(tmp_path):
    run_dir = make_run(tmp_path, "a", "20261121T080000", "valid")
    assert [r.verdict for r in SummaryCache(tmp_path).summaries()] == ["valid"]
    assert (tmp_path / CACHE_FILE).exists()
    # a second cache reads the file: a stale entry with the same signature is trusted
    cached = json.loads((tmp_path / CACHE_FILE).read_text())
    cached["a/20261121T080000"]["summary"]["name"] = "from-cache"
    (tmp_path / CACHE_FILE).write_text(json.dumps(cached))
    assert SummaryCache(tmp_path).summaries()[0].name == "from-cache"
    # a changed results.json changes the signature and the summary is re-read
    (run_dir / "results.json").write_text(json.dumps({"valid": False, "anomaly_types": ["G0"], "bad_anomaly_types": ["G0"]}))
    os.utime(run_dir / "results.json", ns=(1, 1))
    summary = SummaryCache(tmp_path).summaries()[0]
    assert (summary.name, summary.verdict, summary.bad_anomaly_types) == ("a", "invalid", ["G0"])


def test_damaged_cache_is_rebuilt(tmp_path):
    make_run(tmp_path, "a", "20261121T080000", "valid")
    (tmp_path / CACHE_FILE).write_text("{not json")
    assert [r.verdict for r in SummaryCache(tmp_path).summaries()] == ["valid"]


def test_ops_from_checker_then_runner_counts_then_history(tmp_path):
    run_dir = make_run(tmp_path, "queue", "20261121T080000", "running")
    lines = [json.loads(line) for line in (run_dir / "history.jsonl").read_text().splitlines()]
    assert read_run(run_dir, tmp_path).ops == sum(e["type"] == "invoke" for e in lines) == 51
    test = json.loads((run_dir / "test.json").read_text())
    (run_dir / "test.json").write_text(json.dumps({**test, "counts": {"ok": 10, "fail": 2, "info": 1}}))
    assert read_run(run_dir, tmp_path).ops == 13
    (run_dir / "results.json").write_text(json.dumps({"valid": True, "stats": {"ops": 7}}))
    assert read_run(run_dir, tmp_path).ops == 7
