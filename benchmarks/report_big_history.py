"""How long report.html takes on a big history, and how big the page gets:
a synthetic queue history (sends + polls on 8 keys, with partition windows) of
--ops operations, one inconsistent-offsets example, then write_report.

    .venv/bin/python -m benchmarks.report_big_history [--ops 500000]
"""
from __future__ import annotations

import argparse
import json
import resource
import tempfile
import time
from pathlib import Path

from results.report import write_report

KEYS = 8


def write_history(path: Path, ops: int) -> tuple[int, int, list[int]]:
    """Writes the history; returns (key, offset, indices) of two sends that share an offset."""
    offsets = [0] * KEYS
    time_ns, index = 0, 0
    writers: dict[tuple[int, int], list[int]] = {}
    with open(path, "w") as f:
        def emit(process, type_, fn, value):
            nonlocal index, time_ns
            time_ns += 200_000
            f.write(json.dumps({"index": index, "time": time_ns, "type": type_, "process": process, "f": fn,
                                "value": value}) + "\n")
            index += 1
            return index - 1
        for op in range(ops):
            if op % 20_000 == 0:
                emit("nemesis", "info", "start-partition" if op % 40_000 == 0 else "stop-partition", None)
            key, process = op % KEYS, op % 16
            if op % 4:
                emit(process, "invoke", "send", [["send", key, op]])
                offset = offsets[key] - (1 if op == ops // 2 + 1 else 0)  # one send reuses an offset
                offsets[key] = offset + 1 if op != ops // 2 + 1 else offsets[key]
                done = emit(process, "ok", "send", [["send", key, [offset, op]]])
                if op >= ops // 2 - 64:
                    writers.setdefault((key, offset), []).append(done)
            else:
                emit(process, "invoke", "poll", [["poll"]])
                emit(process, "ok", "poll", [["poll", {str(key): [[max(0, offsets[key] - 2), op - 8]]}]])
    (key, offset), indices = next((k, v) for k, v in writers.items() if len(v) > 1)
    return key, offset, indices


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ops", type=int, default=500_000)
    args = parser.parse_args()
    run_dir = Path(tempfile.mkdtemp(prefix="logtrial-bench-report-"))
    key, offset, conflict = write_history(run_dir / "history.jsonl", args.ops)
    (run_dir / "results.json").write_text(json.dumps({
        "valid": False, "anomaly_types": ["inconsistent-offsets"], "bad_anomaly_types": ["inconsistent-offsets"],
        "anomalies": {"inconsistent-offsets": {"count": 1, "examples": [
            {"key": key, "offsets": [offset],
             "ops": [{"index": i} for i in conflict], "explanation": "two values at one offset"}]}}}))
    size_mb = (run_dir / "history.jsonl").stat().st_size / 1e6
    start = time.perf_counter()
    report = write_report(run_dir)
    seconds = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"ops={args.ops} history={size_mb:.0f}MB report={seconds:.1f}s page={report.stat().st_size / 1e6:.2f}MB "
          f"peak_rss={peak_mb:.0f}MB ({seconds / args.ops * 1e6:.1f} us/op) dir={run_dir}")


if __name__ == "__main__":
    main()
