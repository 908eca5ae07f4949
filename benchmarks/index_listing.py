"""Listing a store of many runs: cold (no cache), warm (from the cache file), one page rendered.

    .venv/bin/python -m benchmarks.index_listing [--runs 3000]
"""
from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path

from results.index import Filters, SummaryCache, render_index, served_links


def make_store(runs: int) -> Path:
    store = Path(tempfile.mkdtemp(prefix="logtrial-bench-index-"))
    for i in range(runs):
        run_dir = store / f"t{i % 20}" / f"202611{1 + i % 28:02d}T{i // 100 % 24:02d}{i % 60:02d}{i % 59:02d}-{i}"
        run_dir.mkdir(parents=True)
        (run_dir / "test.json").write_text(json.dumps({
            "name": "t", "status": "complete", "workload": "queue", "nemesis": ["partition"],
            "start_time": "2026-11-21T08:00:00+00:00", "end_time": "2026-11-21T08:01:00+00:00"}))
        (run_dir / "results.json").write_text(json.dumps({
            "valid": i % 7 != 0, "anomaly_types": [], "bad_anomaly_types": [], "stats": {"ops": 1000}}))
        (run_dir / "history.jsonl").write_text("{}\n")
    return store


def timed(fn):
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3000)
    args = parser.parse_args()
    store = make_store(args.runs)
    try:
        _, cold = timed(lambda: SummaryCache(store).summaries())
        runs, warm = timed(lambda: SummaryCache(store).summaries())
        html, render = timed(lambda: render_index(runs, Filters(), served_links(), 3))
        print(f"{args.runs} runs: cold {cold:.2f}s, warm (from the cache file) {warm:.2f}s, "
              f"one page rendered in {render * 1000:.0f} ms ({len(html) / 1e3:.0f} KB)")
    finally:
        shutil.rmtree(store)


if __name__ == "__main__":
    main()
