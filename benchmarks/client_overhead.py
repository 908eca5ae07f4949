"""What an operation costs on each client: the queue workload's own clients
(librdkafka through confluent-kafka, Kafka's Java client through the JVM bridge)
run the same sends and polls one after the other against the same cluster, and
the bridge's bare round trip (an `echo` through the pipe, no Kafka) is timed apart,
as is aiokafka's hand-off to its event loop thread and back (a call doing nothing).

    .venv/bin/python -m benchmarks.client_overhead [--inventory FILE | --name bench-clients]
                                                   [--ops 2000] [--clients librdkafka,sarama]

With --inventory it uses that (running) cluster; otherwise it brings up a local
3-node cluster and tears it down after. Prints one JSON object: per client and op,
the median, 90th percentile and mean microseconds of one invoke (as the runner
calls it), and the load average before and after."""
from __future__ import annotations

import argparse
import json
import os
import statistics
import time
import uuid

from benchmarks.bench_cluster import add_cluster_options, bench_cluster
from workloads.base import Op
from workloads.registry import workload_kind
from workloads.settings import WorkloadSettings

CLIENTS = ("librdkafka", "java", "sarama", "aiokafka", "kafkajs")


def summary(samples: list[float]) -> dict[str, float]:
    micros = sorted(s * 1e6 for s in samples)
    return {"median_us": round(statistics.median(micros)), "p90_us": round(micros[int(len(micros) * 0.9)]),
            "mean_us": round(statistics.fmean(micros)), "n": len(micros)}


def timed_ops(client, ops: list[Op]) -> list[float]:
    samples = []
    for op in ops:
        start = time.perf_counter()
        completion = client.invoke(op)
        samples.append(time.perf_counter() - start)
        if completion.type != "ok":
            raise RuntimeError(f"{op.f} ended {completion.type}: {completion.error}")
    return samples


def measure_client(bootstrap: str, client: str, kafka_version: str, ops: int) -> dict:
    settings = WorkloadSettings(client=client, key_count=1, kafka_clients_version=kafka_version, poll_timeout=0.0)
    workload = workload_kind("queue").make(bootstrap, settings, f"bench{uuid.uuid4().hex[:6]}", 1)
    try:
        workload.setup()
        c = workload.new_client(0)
        timed_ops(c, [Op("assign", [0])])
        sends = [Op("send", [["send", 0, i]]) for i in range(ops)]
        timed_ops(c, sends[:50])  # warm-up: connections, and the JVM's JIT for java
        result = {"send": summary(timed_ops(c, sends[50:])),
                  # polls of an idle partition with timeout 0: the client's own cost
                  "poll": summary(timed_ops(c, [Op("poll", [["poll"]])] * ops))}
        if hasattr(c, "child"):  # a client in a child process (workloads/bridge/)
            result["bridge_echo"] = summary([_echo(c.child) for _ in range(ops)])
        if hasattr(getattr(c, "pair", None), "loop"):  # a client on an event loop thread (aiokafka)
            result["loop_hop"] = summary([_hop(c.pair.loop) for _ in range(ops)])
        c.close()
        return result
    finally:
        workload.close()


def _echo(child) -> float:
    start = time.perf_counter()
    child.call(0, "echo", 10, value=[["send", 0, 1]])
    return time.perf_counter() - start


def _hop(loop) -> float:
    """One call handed to the loop's thread and its answer back, doing nothing there."""
    async def nothing() -> None:
        return None
    start = time.perf_counter()
    loop.run(nothing, 10)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    add_cluster_options(parser, "bench-clients")
    parser.add_argument("--ops", type=int, default=2000)
    parser.add_argument("--clients", default=",".join(CLIENTS), help="comma-separated, measured in this order")
    args = parser.parse_args()
    with bench_cluster(args) as cluster:
        load_before = os.getloadavg()
        result = {name: measure_client(cluster.db.bootstrap_servers(), name, cluster.db.release.version,
                                       args.ops) for name in args.clients.split(",")}
        result["loadavg_before"], result["loadavg_after"] = load_before, os.getloadavg()
        result["kafka"] = cluster.db.release.version
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
