"""`logtrial check` against a naive single-process checker, on the same
input, in the same run (this machine is shared: ratios mean more than
seconds).

    python -m benchmarks.bench_engines --sizes 10000,100000 [--out benchmarks/results/engines.json]

For each workload and size (operations): generate a history
(benchmarks.gen_history / gen_list_append), then time, each in a fresh
process, wall clock start-up included:

- `logtrial check --engine auto` (in-process below 64 MB for the queue, 512 MB for list-append);
- the naive reference: tests/checkers/queue_reference.py or
  la_reference.py (plain Python + networkx, no shrinking, brute-force
  realtime order: what a first checker would be).

- with --previous REV: the same `logtrial check` of an earlier commit (a
  git worktree of REV), the other reference docs/benchmarks.md reports.

Prints a Markdown table with the load average before and after each row.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.naive import ROOT, naive_check, naive_cell, timed

LOGTRIAL = str(Path(sys.executable).with_name("logtrial"))


def generate(workload: str, ops: int, path: Path) -> None:
    if workload == "queue":
        args = ["-m", "benchmarks.gen_history", str(path), "--events", str(2 * ops),
                "--plant", "duplicate=2,lost-write=2,G1a=1,poll-skip=1"]
    else:
        args = ["-m", "benchmarks.gen_list_append", str(path), "--ops", str(ops), "--fault-rate", "0.001"]
    subprocess.run([sys.executable, *args], check=True, cwd=ROOT, stdout=subprocess.DEVNULL)


def previous_checkout(rev: str, tmp: Path) -> Path:
    """A worktree of `rev`, so its checker runs from its own code (PYTHONPATH
    comes before this venv's editable install of the current one)."""
    where = tmp / f"previous-{rev}"
    subprocess.run(["git", "worktree", "add", "--detach", "-q", str(where), rev], cwd=ROOT, check=True)
    return where


def previous_check(where: Path, history: Path, workload: str, out: Path) -> tuple[float | None, str]:
    cmd = [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(where)!r}); "
           "from harness.cli import main; sys.exit(main())",
           "check", str(history), "--workload", workload, "--out", str(out)]
    return timed(cmd, 3600)


def row(workload: str, ops: int, tmp: Path, naive_timeout: float, previous: Path | None = None) -> dict:
    history = tmp / f"{workload}-{ops}.jsonl"
    generate(workload, ops, history)
    load_before = os.getloadavg()[0]
    check_s, check_out = timed([LOGTRIAL, "check", str(history), "--workload", workload,
                                "--out", str(tmp / "out")], 3600)
    engine = json.loads((tmp / "out" / "results.json").read_text())["checker"]["engine"]
    naive_s, naive_out = naive_check(workload, history, naive_timeout)
    previous_s = previous_check(previous, history, workload, tmp / "out-previous")[0] if previous else None
    return {"workload": workload, "ops": ops, "bytes": history.stat().st_size, "engine": engine,
            "previous_s": None if previous_s is None else round(previous_s, 2),
            "check_s": round(check_s, 2), "naive_s": None if naive_s is None else round(naive_s, 2),
            "ratio": None if naive_s is None else round(naive_s / check_s, 1), "naive_timeout": naive_timeout,
            "load": [round(load_before, 1), round(os.getloadavg()[0], 1)], "check_summary": check_out,
            "naive_summary": naive_out[:200]}


def table(rows: list[dict]) -> str:
    lines = ["| workload | operations | engine | `logtrial check` | previous version | naive reference | "
             "naive / check | load avg (before, after) |",
             "|---|---:|---|---:|---:|---:|---:|---|"]
    for r in rows:
        naive = naive_cell(r["naive_s"], r["naive_summary"], r["naive_timeout"])
        ratio = "—" if r["ratio"] is None else f"{r['ratio']}x"
        previous = "—" if r.get("previous_s") is None else f"{r['previous_s']} s"
        lines.append(f"| {r['workload']} | {r['ops']:,} | {r['engine']} | {r['check_s']} s | {previous} | {naive} | {ratio} | "
                     f"{r['load'][0]}, {r['load'][1]} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--workloads", default="queue,list-append")
    ap.add_argument("--naive-timeout", type=float, default=1800)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--previous", metavar="REV", help="also time `logtrial check` as of this commit")
    args = ap.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        previous = previous_checkout(args.previous, Path(tmp)) if args.previous else None
        try:
            for workload in args.workloads.split(","):
                for ops in (int(s) for s in args.sizes.split(",")):
                    rows.append(row(workload, ops, Path(tmp), args.naive_timeout, previous))
                    print(json.dumps(rows[-1]), flush=True)
        finally:
            if previous:
                subprocess.run(["git", "worktree", "remove", "--force", str(previous)], cwd=ROOT)
    print(table(rows))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
