"""Benchmark `logtrial check` on synthetic queue histories.

    python -m benchmarks.bench_check --sizes 100000,1000000,10000000 [--json-up-to N] [--out DIR]

For each size: generate a history with planted anomalies
(benchmarks/gen_history.py); check the JSON Lines directly with the default
engine (sizes up to --json-up-to; above 64 MB that check writes the Parquet
companion itself, then checks it in worker processes, no JVM), and again on
Spark as the reference (the companion removed first, so it pays the same
writing); write the companion again with `logtrial to-parquet`; check it
with the default engine and on Spark.
Each step is a subprocess of `python -m harness.cli`; the RSS of its whole
process tree (Python driver, JVM, Python workers) is sampled every 0.2 s.
Every planted anomaly must be found with its exact count. Beside them, in
the same run, the naive single-process reference (benchmarks/naive.py) on the
same JSON Lines, capped in time and memory. Prints a Markdown table with the
load average (and writes bench.json in --out).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.gen_history import generate
from benchmarks.naive import naive_cell, naive_check

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


def run_cli(args: list[str]) -> dict:
    """Run `python -m harness.cli ARGS`: seconds, peak RSS, exit code."""
    cmd = [sys.executable, "-m", "harness.cli", *args]
    started = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = 0
    while proc.poll() is None:
        peak = max(peak, tree_rss(proc.pid))
        time.sleep(0.2)
    seconds = time.monotonic() - started
    _, stderr = proc.communicate()
    if proc.returncode not in (0, 1, 2):
        raise RuntimeError(f"{' '.join(args[:1])} failed ({proc.returncode}): {stderr[-2000:]}")
    return {"seconds": seconds, "peak_rss": peak, "exit": proc.returncode}


def run_check(history: Path, out: Path, *options: str) -> dict:
    run = run_cli(["check", str(history), "--out", str(out), *options])
    run["results"] = json.loads((out / "results.json").read_text())
    return run


def verify(results: dict, planted: dict[str, int]) -> list[str]:
    """Differences between planted and found counts ([] = all found exactly)."""
    found = {k: v["count"] for k, v in results["anomalies"].items()}
    problems = []
    for kind, n in planted.items():
        got = found.get(kind, 0)
        if kind == "poll-skip":   # lost writes also make the drain skip
            got = found.get("poll-skip", 0) + found.get("int-poll-skip", 0)
            n += planted.get("lost-write", 0)
        if kind == "unseen":      # unseen counts lost writes too, as Jepsen's does
            n += planted.get("lost-write", 0)
        if got != n:
            problems.append(f"{kind}: planted {n}, found {got}")
    return problems


def _checked(run: dict, planted: dict) -> dict:
    return {"s": round(run["seconds"], 1), "rss_mb": round(run["peak_rss"] / 2**20),
            "problems": verify(run["results"], planted),
            "companion": run["results"]["checker"].get("parquet_companion"),
            "engine": run["results"]["checker"].get("engine")}


def bench(sizes: list[int], out: Path, json_up_to: int, naive_timeout: float) -> list[dict]:
    rows = []
    for n in sizes:
        load_before = os.getloadavg()[0]
        history = out / f"history-{n}.jsonl"
        t = time.monotonic()
        summary = generate(history, n, PLANTS, None)
        row = {"events": summary["events"], "ops": summary["events"] // 2,
               "jsonl_mb": round(history.stat().st_size / 2**20), "generate_s": round(time.monotonic() - t, 1)}
        companion = history.with_suffix(".parquet")
        if companion.exists():
            shutil.rmtree(companion)
        if n <= json_up_to:
            row["json"] = _checked(run_check(history, out / f"check-json-{n}"), PLANTS)
            shutil.rmtree(companion, ignore_errors=True)
            row["json_spark"] = _checked(run_check(history, out / f"check-json-spark-{n}", "--engine", "spark"),
                                         PLANTS)
        convert = run_cli(["to-parquet", str(history)])
        row["to_parquet"] = {"s": round(convert["seconds"], 1), "rss_mb": round(convert["peak_rss"] / 2**20)}
        # the companion itself: auto checks a small history's JSON in-process instead
        row["parquet"] = _checked(run_check(companion, out / f"check-parquet-{n}"), PLANTS)
        row["parquet_spark"] = _checked(run_check(companion, out / f"check-parquet-spark-{n}", "--engine", "spark"),
                                        PLANTS)
        for key in ("parquet", "parquet_spark"):
            row[key]["events_per_s"] = round(summary["events"] / row[key]["s"])
        naive_s, why = naive_check("queue", history, naive_timeout)
        row["naive"] = {"s": None if naive_s is None else round(naive_s, 1), "why": why, "timeout": naive_timeout}
        row["load"] = [round(load_before, 1), round(os.getloadavg()[0], 1)]
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def table(rows: list[dict]) -> str:
    lines = ["| events (ops) | JSONL MB | check from JSONL (s): default engine / Spark | to-parquet (s) "
             "| check from companion (s): default engine / Spark | peak RSS (MB): default / Spark "
             "| planted found | naive reference | load avg (before, after) |",
             "|---:|---:|---:|---:|---:|---:|---|---:|---|"]
    for r in rows:
        pq, pq_spark = r["parquet"], r.get("parquet_spark", {})
        js = f"{r['json']['s']} ({r['json']['engine']}) / {r['json_spark']['s']}" if "json" in r else "not run"
        checked = [pq, pq_spark] + ([r["json"], r["json_spark"]] if "json" in r else [])
        problems = [p for c in checked for p in c.get("problems", [])]
        found = "all, exact" if not problems else "; ".join(problems)
        lines.append(f"| {r['events']:,} ({r['ops']:,}) | {r['jsonl_mb']:,} | {js} | {r['to_parquet']['s']} | "
                     f"{pq['s']} ({pq['engine']}) / {pq_spark.get('s')} | {pq['rss_mb']:,} / "
                     f"{pq_spark.get('rss_mb')} | {found} | "
                     f"{naive_cell(r['naive']['s'], r['naive']['why'], r['naive']['timeout'])} | "
                     f"{r['load'][0]}, {r['load'][1]} |")
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="100000,1000000")
    ap.add_argument("--json-up-to", type=int, default=10**7,
                    help="also check the JSON Lines directly for sizes up to this")
    ap.add_argument("--out", type=Path, default=Path("/tmp/logtrial-bench"))
    ap.add_argument("--naive-timeout", type=float, default=900)
    ap.add_argument("--results", type=Path, default=None, help="where the rows go as JSON (default: OUT/bench.json)")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    rows = bench([int(s) for s in args.sizes.split(",")], args.out, args.json_up_to, args.naive_timeout)
    (args.results or args.out / "bench.json").write_text(json.dumps(rows, indent=1))
    print(table(rows))


if __name__ == "__main__":
    main()
