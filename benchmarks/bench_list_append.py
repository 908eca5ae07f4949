"""How the list-append checker scales: wall time and how much of the
dependency graph reaches the driver, for synthetic histories of growing size.

    python -m benchmarks.bench_list_append --sizes 1000 10000 100000 --out benchmarks/out

Writes list_append.json (one row per size) and list_append.png (time and
edges: built in Spark vs collected to the driver).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from benchmarks.gen_list_append import write


def measure(spark, ops: int, fault_rate: float, seed: int, workdir: Path,
            collect_limit: int) -> dict:
    from checkers.history_io import load_history, pair_operations
    from checkers.list_append import check_list_append

    path = workdir / f"la-{ops}.jsonl"
    events = write(str(path), ops, processes=8, keys=16, fault_rate=fault_rate, seed=seed)
    started = time.monotonic()
    results = check_list_append(spark, pair_operations(load_history(spark, str(path))),
                                collect_limit=collect_limit)
    seconds = time.monotonic() - started
    graph = results["stats"]["graph"]
    return {"ops": ops, "events": events, "fault_rate": fault_rate, "seconds": round(seconds, 2),
            "edges": graph["edges"], "rounds": graph["rounds"],
            "after_scc": graph.get("after_scc"), "steps_collected": graph["steps_collected"],
            "phases": results["stats"]["seconds"],
            "anomaly_types": results["anomaly_types"], "valid": results["valid"]}


def plot(rows: list[dict], out: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ops = [r["ops"] for r in rows]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    left.plot(ops, [r["seconds"] for r in rows], "o-")
    left.set(xscale="log", xlabel="operations", ylabel="check time (s)", ylim=(0, None),
             title="list-append check, local[2]")
    right.plot(ops, [r["edges"] for r in rows], "o-", label="edges built (Spark)")
    right.plot(ops, [max(r["steps_collected"], 0.5) for r in rows], "s-",
               label="steps collected by the driver (0 drawn at 0.5)")
    right.set(xscale="log", yscale="log", xlabel="operations", ylabel="edges",
              title="graph shrinking")
    right.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=120)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000, 100_000])
    ap.add_argument("--fault-rate", type=float, default=0.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default="benchmarks/out")
    ap.add_argument("--collect-limit", type=int, default=200_000,
                    help="graph_shrink collect limit (small values force shrinking)")
    args = ap.parse_args(argv)

    from checkers.spark import get_spark
    spark = get_spark("local[2]")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for ops in args.sizes:
            rows.append(measure(spark, ops, args.fault_rate, args.seed, Path(tmp),
                                args.collect_limit))
            print(json.dumps(rows[-1]))
    (out / "list_append.json").write_text(json.dumps(rows, indent=1) + "\n")
    plot(rows, out / "list_append.png")
    spark.stop()


if __name__ == "__main__":
    main()
