"""Reports of histories checked by the real queue checker (Spark): the report
renders what the checker actually writes, and every link to a history line lands
on an anchored line."""
from __future__ import annotations

import re

import pytest

from checkers.api import check_history
from results.report import write_report
from tests.results.browser import ARTIFACTS
from tests.results.sample_runs import make_run, queue_history

pytestmark = [pytest.mark.spark]


def dangling_links(html: str) -> set[str]:
    return set(re.findall(r"href='#(h\d+)'", html)) - set(re.findall(r"id='(h\d+)'", html))


def checked_report(spark, store, kind: str) -> tuple[dict, str]:
    """Check a hand-written run with the real checker; one check only: Spark is slow here."""
    run_dir = make_run(store, "queue", "20261121T080000", kind)
    (run_dir / "results.json").unlink()
    results = check_history(run_dir / "history.jsonl", "queue", out_dir=run_dir,
                            spark_master=spark.sparkContext.master)
    return results, write_report(run_dir).read_text()


def test_inconsistent_offset_found_by_the_checker_is_drawn(spark, tmp_path):
    results, html = checked_report(spark, tmp_path, "invalid")
    assert results["valid"] is False and "inconsistent-offsets" in results["bad_anomaly_types"]
    assert "data-verdict='invalid'" in re.search(r"<p id=verdict>(.*?)</p>", html).group(1)
    section = re.search(r"<section class=anomaly id='anomaly-inconsistent-offsets'.*?</section>", html).group(0)
    _, refs = queue_history(conflict=True)
    for index in refs["sends"]:  # the two sends that claim offset 5 of key 1
        assert f"href='#h{index}'" in section
    diagram = re.search(r"<svg[^>]*class='offsets' data-key='1'>.*?</svg>", html).group(0)
    assert re.search(r"<text[^>]*fill='#d1342f'>5</text>", diagram)
    assert dangling_links(html) == set()
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "checked-report.html").write_text(html)  # self-contained: viewable on its own
    for anomaly_type in results["anomaly_types"]:
        assert f"id='anomaly-{anomaly_type}'" in html
