"""Benchmark `logtrial check` on synthetic queue histories.

    python -m benchmarks.bench_check --sizes 100000,1000000 [--parquet] [--out DIR]

For each size: generate a history with planted anomalies
(benchmarks/gen_history.py), run `python -m harness.cli check` on it as a
subprocess, sample the RSS of the whole process tree (Python driver + JVM)
every 0.2 s, and verify that every planted anomaly was found with its exact
count. Prints a Markdown table (and writes bench.json in --out).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.gen_history import generate

PLANTS = {"duplicate": 3, "lost-write": 2, "inconsistent-offsets": 2, "G1a": 2, "precommitted-read": 2,
          "poll-skip": 2, "nonmonotonic-poll": 2, "unseen": 2, "G1c": 2}


def _children(pid: int) -> list[int]:
    kids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        kids.append(int(entry))
            except (OSError, IndexError, ValueError):
                pass
    return kids


def tree_rss(pid: int) -> int:
    """Resident bytes of pid and all its descendants."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) * 1024
        except OSError:
            continue
        todo += _children(p)
    return total


def run_check(history: Path, out: Path) -> dict:
    cmd = [sys.executable, "-m", "harness.cli", "check", str(history), "--out", str(out)]
    started = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = 0
    while proc.poll() is None:
        peak = max(peak, tree_rss(proc.pid))
        time.sleep(0.2)
    seconds = time.monotonic() - started
    stdout, stderr = proc.communicate()
    if proc.returncode not in (0, 1, 2):
        raise RuntimeError(f"check failed ({proc.returncode}): {stderr[-2000:]}")
    results = json.loads((out / "results.json").read_text())
    return {"seconds": seconds, "peak_rss": peak, "exit": proc.returncode, "results": results}


def verify(results: dict, planted: dict[str, int]) -> list[str]:
    """Differences between planted and found counts ([] = all found exactly)."""
    found = {k: v["count"] for k, v in results["anomalies"].items()}
    problems = []
    for kind, n in planted.items():
        got = found.get(kind, 0)
        if kind == "poll-skip":   # lost writes also make the drain skip
            got = found.get("poll-skip", 0) + found.get("int-poll-skip", 0)
            n += planted.get("lost-write", 0)
        if got != n:
            problems.append(f"{kind}: planted {n}, found {got}")
    return problems


def bench(sizes: list[int], out: Path, parquet: bool) -> list[dict]:
    rows = []
    for n in sizes:
        history = out / f"history-{n}.jsonl"
        pq = out / f"history-{n}.parquet" if parquet else None
        t = time.monotonic()
        summary = generate(history, n, PLANTS, pq)
        gen_seconds = time.monotonic() - t
        target = pq or history
        run = run_check(target, out / f"check-{n}")
        problems = verify(run["results"], PLANTS)
        row = {"events": summary["events"], "input": target.suffix.lstrip("."),
               "bytes": sum(p.stat().st_size for p in ([target] if target.is_file() else target.rglob("*"))),
               "generate_s": round(gen_seconds, 1), "check_s": round(run["seconds"], 1),
               "events_per_s": round(summary["events"] / run["seconds"]),
               "peak_rss_mb": round(run["peak_rss"] / 2**20), "planted_found": not problems,
               "problems": problems}
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def table(rows: list[dict]) -> str:
    lines = ["| events | input | size (MB) | generate (s) | check (s) | events/s | peak RSS (MB) | planted found |",
             "|---:|---|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        found = "all, exact" if r["planted_found"] else "; ".join(r["problems"])
        lines.append(f"| {r['events']:,} | {r['input']} | {r['bytes'] / 2**20:.0f} | {r['generate_s']} | "
                     f"{r['check_s']} | {r['events_per_s']:,} | {r['peak_rss_mb']:,} | {found} |")
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="100000,1000000")
    ap.add_argument("--out", type=Path, default=Path("/tmp/logtrial-bench"))
    ap.add_argument("--parquet", action="store_true", help="check the Parquet copy instead of JSON Lines")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    rows = bench([int(s) for s in args.sizes.split(",")], args.out, args.parquet)
    (args.out / "bench.json").write_text(json.dumps(rows, indent=1))
    print(table(rows))


if __name__ == "__main__":
    main()
