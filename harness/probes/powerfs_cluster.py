"""What the power-loss probes ask of their cluster: Kafka with its data on powerfs. Light
to import: the probe command loads it before any client."""
from __future__ import annotations

from typing import TYPE_CHECKING

from clusters.db import PowerLoss, require

if TYPE_CHECKING:
    from clusters.cluster import Cluster


class NotOnPowerfs(ValueError):
    pass


def require_powerfs(cluster: Cluster, command: str, nodes: int | None = None) -> PowerLoss:
    """The cluster's database, or NotOnPowerfs naming what the probe needs."""
    from clusters.nodes.powerfs import POWERFS_KEY  # SSH's modules: only once a probe runs
    db = require(cluster.db, PowerLoss, f"probe {command}")
    if not db.powerfs or (nodes is not None and len(cluster.nodes) != nodes):
        size = f"{nodes}-node " if nodes is not None else ""
        raise NotOnPowerfs(f"probe {command} needs a {size}Kafka cluster on powerfs "
                           f"(`logtrial cluster up --name NAME --set {POWERFS_KEY}=true`)")
    return db
