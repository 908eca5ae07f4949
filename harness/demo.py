"""`make demo`'s body: an acks=all produce/consume round trip on an RF-3 topic of a
running local cluster, with the result written under store/demo-roundtrip/."""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from clusters.cluster import Cluster
from clusters.kafka.admin import create_topic
from clusters.nodes.local import LocalCluster
from clusters.smoke import roundtrip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--name", default="demo", help="local cluster name")
    parser.add_argument("--messages", type=int, default=1000)
    parser.add_argument("--store", default="store")
    args = parser.parse_args(argv)

    run_dir = Path(args.store) / "demo-roundtrip" / time.strftime("%Y%m%dT%H%M%S")
    run_dir.mkdir(parents=True, exist_ok=True)
    with Cluster.open(LocalCluster(args.name).inventory_path, start=False) as cluster:
        topic = f"demo-{int(time.time())}"
        create_topic(cluster, topic, partitions=1, replication_factor=3,
                     min_insync_replicas=2)
        result = roundtrip(cluster.db.bootstrap_servers(), topic, count=args.messages)
        for node in cluster.nodes:
            cluster.db.collect_logs(node, run_dir / "nodes" / node)
    summary = {"test": "demo-roundtrip", "cluster": args.name, "acks": "all",
               "replication_factor": 3, "min_insync_replicas": 2, **result.as_dict()}
    (run_dir / "results.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(f"round trip: {result.sent} acknowledged, {result.read} read back, "
          f"{len(result.missing)} missing, {result.seconds:.1f} s")
    print(f"results: {run_dir / 'results.json'} (broker logs in {run_dir / 'nodes'})")
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
