"""What grew in the soak child's Python heap between two tracemalloc snapshots
(benchmarks/traced_child.py), by the traceback that allocated it.

    python -m benchmarks.heap_growth EARLIER.snapshot LATER.snapshot [--top 25]
"""
from __future__ import annotations

import argparse
import tracemalloc

IGNORED = ("<frozen importlib._bootstrap>", "<frozen importlib._bootstrap_external>", tracemalloc.__file__)


def growth(earlier: str, later: str, top: int) -> list[tracemalloc.StatisticDiff]:
    filters = [tracemalloc.Filter(False, pattern) for pattern in IGNORED]
    old = tracemalloc.Snapshot.load(earlier).filter_traces(filters)
    new = tracemalloc.Snapshot.load(later).filter_traces(filters)
    return new.compare_to(old, "traceback")[:top]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("earlier")
    parser.add_argument("later")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    stats = growth(args.earlier, args.later, args.top)
    total = sum(s.size_diff for s in stats)
    print(f"top {len(stats)} growths: {total / 2**20:+.2f} MiB")
    for stat in stats:
        print(f"\n{stat.size_diff / 2**10:+10.1f} KiB  {stat.count_diff:+8d} blocks  (now {stat.size / 2**10:.1f} KiB)")
        for line in stat.traceback.format(limit=8, most_recent_first=True):
            print("   ", line)


if __name__ == "__main__":
    main()
