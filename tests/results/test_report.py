"""report.html content, and the streaming pieces behind it, on hand-written runs."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from results.cycle_svg import cycle_svg
from results.excerpts import ExcerptCollector
from results.faults import FaultWindows
from checkers.history.stream import events
from results.report import write_report
from results.timeline import read_timeline
from tests.results.sample_runs import HOSTILE, MS, HistoryBuilder, make_run, queue_history

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def invalid_report(tmp_path_factory) -> tuple[Path, str]:
    run_dir = make_run(tmp_path_factory.mktemp("store"), "queue", "20261121T080000", "invalid")
    return run_dir, write_report(run_dir).read_text()


def test_verdict_and_bad_types_at_the_top(invalid_report):
    _, html = invalid_report
    verdict = re.search(r"<p id=verdict>(.*?)</p>", html).group(1)
    assert "data-verdict='invalid'" in verdict
    assert "G1c" in verdict and "inconsistent-offsets" in verdict and "unseen" not in verdict


def test_every_anomaly_type_has_a_section(invalid_report):
    _, html = invalid_report
    assert re.findall(r"<section class=anomaly id='anomaly-([^']+)'", html) == [
        "G1c", "inconsistent-offsets", "mystery-type", "unseen"]  # bad types first
    assert "a field the report does not know" in html  # unknown fields are still shown


def test_untrusted_text_is_escaped(invalid_report):
    _, html = invalid_report
    assert "<script>alert" not in html
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;&amp;&quot;quote&quot;" in html


def test_example_links_land_on_history_lines(invalid_report):
    run_dir, html = invalid_report
    _, refs = queue_history(conflict=True)
    lines = run_dir.joinpath("history.jsonl").read_text().splitlines()
    assert "<th>type</th><th>value</th><th>offset</th></tr>" in html  # the checker's extra op fields as columns
    for index in refs["sends"]:
        assert f"href='#h{index}'" in html
        anchored = re.search(rf"<span class='line ref' id='h{index}'><span class=muted>\s*(\d+) </span>(.*?)</span>", html)
        assert int(anchored.group(1)) == index + 1
        assert json.loads(anchored.group(2).replace("&quot;", '"')) == json.loads(lines[index])


def test_offset_diagram_marks_the_conflicting_offset(invalid_report):
    _, html = invalid_report
    diagram = re.search(r"<svg[^>]*class='offsets' data-key='1'>.*?</svg>", html).group(0)
    assert re.search(r"<text[^>]*fill='#d1342f'>5</text>", diagram)  # offset 5 header in red
    red_cells = re.findall(r"<title>value (\d+)</title><rect[^>]*stroke='#d1342f'", diagram)
    assert set(red_cells) == {"117", "120"}  # the two values claiming offset 5


def test_cycle_is_drawn_with_labelled_edges(invalid_report):
    _, html = invalid_report
    svg = re.search(r"<svg[^>]*class='cycle'>.*?</svg>", html).group(0)
    assert re.findall(r"data-edge='(\w+)'", svg) == ["wr", "ww"]
    assert svg.count("<rect x=") >= 4  # two nodes + two edge labels
    _, refs = queue_history(conflict=True)
    assert re.findall(r">(T\d: \d+ p\d send)</text>", svg) == [f"T1: {refs['sends'][0]} p0 send",
                                                                f"T2: {refs['sends'][1]} p1 send"]


def test_plots_and_links(invalid_report):
    _, html = invalid_report
    titles = re.findall(r"<div class=plot><h3>([^<]+)</h3><img alt='[^']*' src='data:image/png;base64,", html)
    assert titles == ["Latency over time", "Latency quantiles", "Throughput", "Unseen messages", "Realtime lag"]
    for link in ("history.jsonl", "results.json", "logtrial.log", "nodes/n1/server.log"):
        assert f"href='{link}'" in html
    assert "http://" not in html.replace("http://www.w3.org/2000/svg", "") and "https://" not in html


def test_corrupt_run_report_lists_problems(tmp_path):
    run_dir = make_run(tmp_path, "queue", "20261121T080000", "corrupt")
    html = write_report(run_dir).read_text()
    assert "data-verdict='incomplete'" in html
    problems = re.search(r"<h2 id=problems>Problems</h2><ul>(.*?)</ul>", html).group(1)
    assert "test.json: not valid JSON (line 1, column 30" in problems
    last_line = len(run_dir.joinpath("history.jsonl").read_text().splitlines())  # the one cut off mid-write
    assert f"history.jsonl: 1 unreadable line(s): line {last_line}: not JSON (Unterminated string" in problems


def test_report_of_an_empty_run_dir(tmp_path):
    html = write_report(tmp_path).read_text()
    assert "data-verdict='incomplete'" in html and "No operations to plot" in html


def test_report_command_rebuilds(tmp_path):
    run_dir = make_run(tmp_path, "queue", "20261121T080000", "valid")
    done = subprocess.run([sys.executable, "-m", "harness.cli", "report", str(run_dir)], cwd=ROOT,
                          capture_output=True, text=True, check=True)
    assert done.stdout.strip() == str(run_dir / "report.html")
    assert "data-verdict='valid'" in (run_dir / "report.html").read_text()
    missing = subprocess.run([sys.executable, "-m", "harness.cli", "report", str(tmp_path / "nope")], cwd=ROOT,
                             capture_output=True, text=True)
    assert missing.returncode == 3 and "is not a run directory" in missing.stderr


# ---- streaming pieces ---------------------------------------------------------------------------


def test_fault_windows_by_kind():
    faults = FaultWindows()
    for f, t in [("start-partition", 1), ("pause", 2), ("start-partition", 3), ("resume", 4),
                 ("stop-partition", 5), ("kill", 6), ("bump-clock", 7), ("reset-clock", 8), ("mystery", 9)]:
        faults.add(f, t)
    faults.close_all(10)
    assert faults.windows == [("pause", 2, 4), ("partition", 1, 5), ("clock", 7, 8), ("kill", 6, 10)]
    assert faults.instants == [("mystery", 9)]


def test_realtime_lag_is_time_since_a_newer_acknowledged_send():
    h = HistoryBuilder()
    h.add(0, "invoke", "send", [["send", 1, 10]], step_ms=0)
    h.add(0, "ok", "send", [["send", 1, [0, 10]]], step_ms=10)      # acked at 10 ms
    h.add(0, "invoke", "send", [["send", 1, 11]], step_ms=0)
    h.add(0, "ok", "send", [["send", 1, [1, 11]]], step_ms=10)      # acked at 20 ms
    h.add(1, "invoke", "poll", [["poll"]], step_ms=30)              # poll begins at 50 ms
    h.add(1, "ok", "poll", [["poll", {"1": [[0, 10]]}]], step_ms=5)  # saw only offset 0
    h.add(1, "invoke", "poll", [["poll"]], step_ms=0)
    h.add(1, "ok", "poll", [["poll", {"1": [[1, 11]]}]], step_ms=5)  # up to date
    path = Path(__import__("tempfile").mkstemp(suffix=".jsonl")[1])
    h.write(path)
    lags = [lag for _, lag in read_timeline(path).lags.items]
    assert lags == [pytest.approx(0.030), 0.0]  # 50 ms - 20 ms


def test_timeline_memory_is_bounded_by_the_reservoir(tmp_path):
    h = HistoryBuilder()
    for i in range(500):
        h.add(i % 4, "invoke", "send", [["send", 0, i]], step_ms=1)
        h.add(i % 4, "ok", "send", [["send", 0, [i, i]]], step_ms=1)
    h.write(tmp_path / "h.jsonl")
    timeline = read_timeline(tmp_path / "h.jsonl", reservoir_size=50)
    sample = timeline.latencies[("send", "ok")]
    assert (sample.seen, len(sample.items), len(timeline.lags.items)) == (500, 50, 0)
    assert sum(timeline.throughput[("send", "ok")].values()) == 500


def test_excerpts_keep_context_around_references(tmp_path):
    h = HistoryBuilder()
    for i in range(40):
        h.add(0, "invoke", "poll", [["poll"]])
    h.write(tmp_path / "h.jsonl")
    collector = ExcerptCollector({10, 12, 30}, context=2)
    for line in events(tmp_path / "h.jsonl"):
        collector.feed(line)
    assert [[e.index for e in block] for block in collector.blocks()] == [
        [8, 9, 10, 11, 12, 13, 14], [28, 29, 30, 31, 32]]


def test_cycle_edges_follow_to_by_op_index():
    ops = [{"op": {"index": 7 + i, "process": i}, "edge": "rw", "to": 7 + (i + 2) % 3} for i in range(3)]
    svg = cycle_svg(ops)
    assert svg.count("data-edge='rw'") == 3 and "href='#h7'" in svg


def test_lines_cut_mid_write_are_counted_not_fatal(tmp_path):
    path = tmp_path / "h.jsonl"
    path.write_text('{"index":0,"time":1,"type":"invoke","process":0,"f":"poll","value":null}\n[1]\n{"index":')
    timeline = read_timeline(path)
    assert timeline.bad_lines.count == 2
    assert timeline.bad_lines.examples[0] == "line 2: not a JSON object"
    assert timeline.unfinished == 1 and timeline.events == 1 and timeline.end_s == 1 / 1e9
    assert MS == 1_000_000 and HOSTILE  # the sample module's constants used above


def test_unknown_verdict_says_why(tmp_path):
    run_dir = make_run(tmp_path, "queue", "20261121T080000", "valid")
    (run_dir / "results.json").write_text(json.dumps({"valid": "unknown", "anomaly_types": [], "anomalies": {},
                                                      "not_checked": "checker failed: <boom>"}))
    html = write_report(run_dir).read_text()
    assert "data-verdict='unknown'" in html
    assert "<span id=verdict-why>checker failed: &lt;boom&gt;; no anomalies found</span>" in html
    assert "<li>results.json: not checked: checker failed: &lt;boom&gt;</li>" in html
