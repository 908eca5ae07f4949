"""Bringing running brokers onto the settings a test asks for.

Cluster.start_database leaves running brokers alone, so a reused cluster
(`--local` left running, a shared inventory) would keep its old static
settings even when a preset or `--set` wants others. This compares each
node's server.properties with what KafkaDB would write now and, if any node
differs, restarts every broker on the new settings (all together: a KRaft
quorum needs a majority to come up).
"""
from __future__ import annotations

import shlex

from clusters.db import Config, PowerLoss, Process, require
from clusters.nodes import powerfs


def parse_properties(text: str) -> dict[str, str]:
    props = {}
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#") and "=" in line:
            key, _, value = line.partition("=")
            props[key.strip()] = value.strip()
    return props


def stale_nodes(cluster) -> dict[str, list[str]]:
    """{node: [setting keys whose value differs from the wanted one]} for the
    nodes whose server.properties is not what KafkaDB would write now."""
    db = require(cluster.db, Config, "bringing brokers onto new settings")
    stale = {}
    for node in cluster.inventory.node_names:
        path = shlex.quote(db.config_file(node))
        text = cluster.ssh[node].exec(f"cat {path} 2>/dev/null", check=False, timeout=30).stdout
        current, wanted = parse_properties(text), db.properties(node)
        differ = sorted(k for k in wanted.keys() | current.keys() if current.get(k) != wanted.get(k))
        if isinstance(db, PowerLoss) and any(powerfs.is_on_layer(cluster.ssh[node], d) != db.powerfs
                                             for d in db.power_dirs(node)):
            differ.append(powerfs.POWERFS_KEY)  # on powerfs or off it, not as the run asks
        if differ:
            stale[node] = differ
    return stale


def restart_if_reconfigured(cluster) -> list[str]:
    """Restarts every broker on the wanted settings when any node runs with
    others; returns what it did, one line per action."""
    stale = stale_nodes(cluster)
    if not stale:
        return []
    nodes = cluster.inventory.node_names
    keys = sorted({k for differ in stale.values() for k in differ})
    db = require(cluster.db, Process, "bringing brokers onto new settings")
    cluster.ssh.run_on(nodes, lambda s: db.stop(s.node.name))
    cluster.ssh.run_on(nodes, lambda s: cluster.db.setup(s.node.name))
    cluster.db.start_all(nodes)
    return [f"restarted brokers {', '.join(nodes)} with new settings: {', '.join(keys)}"]
