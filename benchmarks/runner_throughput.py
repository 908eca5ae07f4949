"""Ops/s the runner achieves against a real cluster with --safe settings.

    .venv/bin/python -m benchmarks.runner_throughput --nodes-file inv.yaml [--rate 5000]
    .venv/bin/python -m benchmarks.runner_throughput --local 3
"""
from __future__ import annotations

import argparse
import tempfile

from collections import Counter

from checkers.history.stream import raw_events
from harness.runner import TestOptions, run_test
from results.store import read_test_json


def measure(cluster: dict, workload: str, seconds: float, rate: float, concurrency: int, store: str,
            **settings) -> dict:
    options = TestOptions.from_flat(workload=workload, store=store, time_limit=seconds, rate=rate,
                                    concurrency=concurrency, recovery_time=0, final_time_limit=60, check=False,
                                    report=False, leave_db_running=True,
                                    acks="all", idempotence=True, isolation_level="read_committed",
                                    auto_offset_reset="earliest", enable_auto_commit=False, sub_via="assign",
                                    **cluster, **settings)
    result = run_test(options)
    first_final = read_test_json(result.run_dir)["final"]["first_index"]
    main_ops = Counter(e["type"] for e in raw_events(result.run_dir / "history.jsonl")
                       if e["index"] < first_final and e["type"] != "invoke" and e["process"] != "nemesis")
    return {"ops_per_s": sum(main_ops.values()) / seconds, "counts": dict(main_ops)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--nodes-file")
    where.add_argument("--local", type=int)
    where.add_argument("--bootstrap-servers")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--rate", type=float, default=5000.0, help="offered rate; the result is what was achieved")
    parser.add_argument("--concurrency", type=int, default=10)
    parser.add_argument("--workload", default="queue")
    parser.add_argument("--txn", action="store_true")
    args = parser.parse_args()
    cluster = {k: v for k, v in (("nodes_file", args.nodes_file), ("local", args.local),
                                 ("bootstrap_servers", args.bootstrap_servers)) if v}
    with tempfile.TemporaryDirectory() as store:
        r = measure(cluster, args.workload, args.seconds, args.rate, args.concurrency, store, txn=args.txn)
    print(f"{args.workload}{' txn' if args.txn else ''} --safe, concurrency {args.concurrency}, offered "
          f"{args.rate:.0f} ops/s: achieved {r['ops_per_s']:,.0f} ops/s (main phase: {r['counts']})")


if __name__ == "__main__":
    main()
