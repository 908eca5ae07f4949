"""`make bench`: every benchmark once, at the sizes the figures in docs/benchmarks.md come from.

Each benchmark is its own module with its own options; this only runs them in
turn, so one can also be run alone (see its docstring).
"""
from __future__ import annotations

import subprocess
import sys

# (module, arguments): docs/benchmarks.md's tables were made with these
BENCHMARKS: list[tuple[str, list[str]]] = [
    ("benchmarks.runner_overhead", ["--seconds", "5", "--concurrency", "10"]),
    ("benchmarks.runner_throughput", ["--local", "3"]),
    ("benchmarks.cluster_bringup", ["--nodes", "3"]),
    ("benchmarks.nemesis_latency", ["--repeat", "3"]),
    ("benchmarks.client_overhead", ["--ops", "1000"]),
    # issue 12's targets: 10^7 queue operations (2 x 10^7 events) from JSON Lines and from Parquet
    ("benchmarks.bench_check", ["--sizes", "2000000,20000000", "--json-up-to", "20000000",
                                "--out", "/tmp/logtrial-bench", "--results", "benchmarks/results/check-1e7.json"]),
    ("benchmarks.bench_engines", ["--sizes", "10000,100000", "--out", "benchmarks/results/engines.json"]),
    ("benchmarks.bench_engines", ["--workloads", "list-append", "--sizes", "1000000", "--naive-timeout", "600",
                                  "--out", "benchmarks/results/engines-1e6.json"]),
    ("benchmarks.report_big_history", ["--ops", "500000"]),
    ("benchmarks.index_listing", ["--runs", "3000"]),
    # not here: benchmarks.soak, an hour on a cluster of its own (docs/benchmarks.md, "Soak")
    # last: issue 12's targets table, from the JSON the checker benchmarks above wrote
    ("benchmarks.targets", []),
]


def main() -> int:
    failed = []
    for module, args in BENCHMARKS:
        print(f"\n=== {module} {' '.join(args)}", flush=True)
        if subprocess.run([sys.executable, "-m", module, *args]).returncode != 0:
            failed.append(module)
    if failed:
        print(f"\nfailed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
