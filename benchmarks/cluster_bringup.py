"""How long a local cluster takes to come up, and what one broker costs in memory.

    .venv/bin/python -m benchmarks.cluster_bringup [--nodes 3] [--name bench-bringup]

Prints one JSON object: seconds for the namespaces+sshd part and for Kafka, the
CPU seconds the brokers used to get there, the resident memory (RSS) of each
broker after start and after a 1000-message acks=all round trip, and the whole
machine's CPU pressure during the run for context; then the same bring-up
without the brokers' class archive (clusters/kafka/archive.py), as the
reference measured in the same run."""
from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from common import jvm_archive
from clusters.cluster import Cluster
from clusters.kafka.admin import create_topic
from clusters.nodes.local import LocalCluster
from clusters.smoke import roundtrip


def rss_mib(pid_file: str) -> float:
    pid = Path(pid_file).read_text().strip()
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def cpu_seconds(pid_file: str) -> float:
    pid = Path(pid_file).read_text().strip()
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return round((int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"), 2)


def cpu_pressure() -> str:
    return Path("/proc/pressure/cpu").read_text().splitlines()[0]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=3)
    parser.add_argument("--name", default="bench-bringup")
    args = parser.parse_args()
    with_archive = bring_up(args)
    os.environ[jvm_archive.SWITCH] = "off"
    print(json.dumps({"with_class_archive": with_archive, "without (reference)": bring_up(args)}, indent=2))


def bring_up(args) -> dict:
    local = LocalCluster(args.name)
    local.down()
    try:
        t0 = time.monotonic()
        local.up(nodes=args.nodes)
        t1 = time.monotonic()
        with Cluster.open(local.inventory_path) as cluster:
            t2 = time.monotonic()
            cpu_started = {n: cpu_seconds(cluster.db.pid_file(n)) for n in cluster.nodes}
            rss_started = {n: rss_mib(cluster.db.pid_file(n)) for n in cluster.nodes}
            create_topic(cluster, "bench", partitions=1)
            trip = roundtrip(cluster.db.bootstrap_servers(), "bench", count=1000)
            rss_loaded = {n: rss_mib(cluster.db.pid_file(n)) for n in cluster.nodes}
        return {
            "nodes": args.nodes,
            "namespaces_and_sshd_s": round(t1 - t0, 2),
            "kafka_start_s": round(t2 - t1, 2),
            "total_s": round(t2 - t0, 2),
            "broker_cpu_s_started": cpu_started,
            "broker_rss_mib_started": rss_started,
            "broker_rss_mib_after_roundtrip": rss_loaded,
            "roundtrip_1000_acks_all_s": trip.seconds,
            "cpu_pressure": cpu_pressure(),
            "load_average": os.getloadavg(),
        }
    finally:
        local.down()


if __name__ == "__main__":
    main()
