"""How long each fault takes to strike and to undo, and what a heal costs.

    .venv/bin/python -m benchmarks.nemesis_latency [--inventory FILE | --name bench-nemesis]
                                                    [--repeat 3]

With --inventory it uses that (running) cluster; otherwise it brings up a local
3-node cluster and tears it down after. Prints one JSON object: the median seconds
of each action over --repeat rounds (control node to every node over SSH, so it
includes SSH round trips), the clock skew a bump asked for and the one observed,
and the machine's CPU pressure for context."""
from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from pathlib import Path

from benchmarks.bench_cluster import add_cluster_options, bench_cluster
from clusters.cluster import Cluster
from nemesis.clock import ClockFault
from nemesis.heal import heal, verify_healed
from nemesis.partition import PartitionFault
from nemesis.pause import PauseFault
from nemesis.roles import RoleResolver
from nemesis.shapes import majority


def timed(fn) -> tuple[float, object]:
    start = time.monotonic()
    result = fn()
    return time.monotonic() - start, result


def measure(cluster: Cluster, repeat: int) -> dict:
    roles = RoleResolver(cluster)
    samples: dict[str, list[float]] = {}
    skews = []

    def add(name: str, fn):
        seconds, result = timed(fn)
        samples.setdefault(name, []).append(seconds)
        return result

    for i in range(repeat):
        node = cluster.nodes[i % len(cluster.nodes)]
        pause, partition, clock = PauseFault(roles.resolve), PartitionFault(), \
            ClockFault(roles.resolve)
        add("resolve_controller", roles.controller)
        add("pause_start", lambda: pause.start(cluster, {"target": "one", "nodes": [node]}))
        add("pause_stop", lambda: pause.stop(cluster))
        plan = majority(cluster.nodes, random.Random(i)).to_value()
        add("partition_start", lambda: partition.start(cluster, plan))
        add("partition_stop", lambda: partition.stop(cluster))
        bump = add("clock_bump_start", lambda: clock.start(
            cluster, {"target": "one", "nodes": [node], "mode": "bump", "offset_ms": 5000.0}))
        skews.append(bump["observed_ms"][node])
        add("clock_reset", lambda: clock.stop(cluster))
        add("heal_healthy_cluster", lambda: heal(cluster))
        pause.start(cluster, {"target": "one", "nodes": [node]})
        partition.start(cluster, plan)
        add("heal_after_pause_and_partition", lambda: heal(cluster))
        add("verify_healed", lambda: verify_healed(cluster))
    return {"median_s": {k: round(statistics.median(v), 3) for k, v in samples.items()},
            "max_s": {k: round(max(v), 3) for k, v in samples.items()},
            "clock_bump_asked_ms": 5000.0, "clock_bump_observed_ms": skews}


def main() -> None:
    parser = argparse.ArgumentParser()
    add_cluster_options(parser, "bench-nemesis")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with bench_cluster(args) as cluster:
        result = measure(cluster, args.repeat)
    result["cpu_pressure"] = Path("/proc/pressure/cpu").read_text().splitlines()[0]
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
