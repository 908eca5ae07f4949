"""Issue 12's scale targets as one table, from what the other benchmarks wrote.

    python -m benchmarks.targets [--engines F ...] [--check F]

Reads bench_engines' JSON (small sizes, list-append 10^6) and bench_check's
(the queue at 10^7 operations, from JSON Lines and from the Parquet
companion) and prints, per target, the measured time beside the naive
reference measured in the same run, their ratio, the load average and
whether the target is met. `make bench` (run_all.py) ends with it.
"""
from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path

from benchmarks.naive import naive_cell

RESULTS = Path(__file__).with_name("results")
ENGINES = (RESULTS / "engines.json", RESULTS / "engines-1e6.json")
CHECK = RESULTS / "check-1e7.json"


@dataclass(frozen=True)
class Target:
    what: str
    seconds: float


@dataclass(frozen=True)
class Measured:
    target: Target
    seconds: float | None
    naive_s: float | None
    naive_why: str
    naive_timeout: float
    load: tuple[float, float]
    detail: str = ""


def _engine_rows(rows: list[dict]) -> list[Measured]:
    out = []
    for r in rows:
        ops, workload = r["ops"], r["workload"]
        if ops <= 10**4:
            target = Target(f"{workload}, {ops:,} operations", 2)
        elif ops == 10**5:
            target = Target(f"{workload}, {ops:,} operations", 5)
        elif ops == 10**6 and workload == "list-append":
            target = Target("list-append, 1,000,000 operations", 60)
        else:
            continue
        out.append(Measured(target, r["check_s"], r["naive_s"], r.get("naive_summary", ""),
                            r.get("naive_timeout", 0), tuple(r["load"]), f"engine {r['engine']}"))
    return out


def _check_rows(rows: list[dict]) -> list[Measured]:
    out = []
    for r in rows:
        if r["ops"] < 10**7 - 10**5:     # the generator lands near, not on, its size
            continue
        naive = r["naive"]
        label = f"{r['ops']:,} queue operations ({r['events']:,} events)"
        # issue 43: 60 s from JSON Lines (issue 12 asked 120 s of it, and 60 s from the companion)
        for source, key, goal in (("from JSON Lines", "json", 60), ("from the Parquet companion", "parquet", 60)):
            if key in r:
                found = "all planted found" if not r[key]["problems"] else "; ".join(r[key]["problems"])
                spark = r.get(f"{key}_spark")
                beside = f", Spark in the same run {spark['s']} s" if spark else ""
                out.append(Measured(Target(f"{label} {source}", goal), r[key]["s"], naive["s"], naive["why"],
                                    naive["timeout"], tuple(r["load"]),
                                    f"engine {r[key].get('engine')}{beside}; peak RSS {r[key]['rss_mb']:,} MB, "
                                    f"{found}"))
    return out


def table(measured: list[Measured]) -> str:
    lines = ["| input | target | measured | naive reference | naive / measured | met | load avg (before, after) | notes |",
             "|---|---:|---:|---:|---:|---|---|---|"]
    for m in measured:
        got = "not run" if m.seconds is None else f"{m.seconds:.2f} s" if m.seconds < 100 else f"{m.seconds:.1f} s"
        ratio = "—" if m.seconds is None or m.naive_s is None else f"{m.naive_s / m.seconds:.1f}x"
        met = "—" if m.seconds is None else ("yes" if m.seconds <= m.target.seconds else "no")
        naive = naive_cell(m.naive_s, m.naive_why, m.naive_timeout)
        lines.append(f"| {m.target.what} | ≤ {m.target.seconds:g} s | {got} | {naive} | {ratio} | {met} | "
                     f"{m.load[0]}, {m.load[1]} | {m.detail} |")
    return "\n".join(lines)


def _load(path: Path) -> list[dict]:
    return json.loads(path.read_text()) if path.is_file() else []


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engines", type=Path, nargs="*", default=list(ENGINES))
    ap.add_argument("--check", type=Path, default=CHECK)
    args = ap.parse_args(argv)
    measured = [m for path in args.engines for m in _engine_rows(_load(path))] + _check_rows(_load(args.check))
    print(table(measured))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
