"""The runner writes report.html at the end of a real run (its no-op workload
drives the real worker loop and history writer, no cluster needed), and the
index lists the run."""
from __future__ import annotations

import json
import re

from benchmarks.runner_overhead import NoopRun
from harness import runner
from results.index import SummaryCache


def test_the_runner_writes_a_report_the_index_lists(tmp_path):
    options = runner.TestOptions.from_flat(bootstrap_servers="unused", store=str(tmp_path), time_limit=1.0,
                                           rate=500, concurrency=3, recovery_time=0, seed=11,
                                           check=False)  # the checked path is test_checked_report.py; Spark is slow
    result = NoopRun(options).execute()
    html = (result.run_dir / "report.html").read_text()
    results = json.loads((result.run_dir / "results.json").read_text())
    verdict = {True: "valid", False: "invalid"}.get(results["valid"], "unknown")
    assert f"data-verdict='{verdict}'" in html and results["not_checked"] in html
    test_json = json.loads((result.run_dir / "test.json").read_text())
    plotted = re.findall(r"<div class=plot><h3>([^<]+)</h3>", html)
    assert plotted[:3] == ["Latency over time", "Latency quantiles", "Throughput"]
    completions = sum(test_json["counts"].values())
    assert f"<b>ok completions</b>: <code>{test_json['counts']['ok']}</code>" in html
    (run,) = SummaryCache(tmp_path).summaries()
    assert (run.rel, run.verdict, run.status, run.ops) == (
        str(result.run_dir.relative_to(tmp_path)), verdict, "complete", completions)
    assert run.has_report and "<td>seed</td><td><code>11</code></td>" in html
