"""The cluster a benchmark measures: a running one (--inventory), or a local one
it brings up under --name and takes down after."""
from __future__ import annotations

import argparse
from contextlib import contextmanager
from typing import Iterator

from clusters.cluster import Cluster
from clusters.nodes.local import LocalCluster


def add_cluster_options(parser: argparse.ArgumentParser, default_name: str) -> None:
    parser.add_argument("--inventory")
    parser.add_argument("--name", default=default_name)


@contextmanager
def bench_cluster(args: argparse.Namespace, nodes: int = 3) -> Iterator[Cluster]:
    local = None
    if args.inventory is None:
        local = LocalCluster(args.name)
        local.down()
        local.up(nodes=nodes)
    try:
        with Cluster.open(args.inventory or local.inventory_path) as cluster:
            yield cluster
    finally:
        if local is not None:
            local.down()
