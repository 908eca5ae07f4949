"""A Kafka node formatted shortly before a power loss never starts again: Kafka 4.1.1
writes `bootstrap.checkpoint` with no fsync (docs/findings.md, row 16).

    logtrial probe format-power-loss NAME [--fsync-format]

NAME is a local Kafka cluster whose data sits on powerfs (`logtrial cluster up --name
NAME --nodes 1 --set logtrial.powerfs=true`). On its last node the probe
1. stops the broker and empties its log dir (a replaced disk, as the membership fault's
   remove-node leaves it);
2. formats it again (`kafka-storage format`, through the layer);
3. cuts the node's power (the power fault's own steps) and powers it on;
4. waits for the broker to serve.

`BootstrapDirectory.writeBinaryFile` (kafka-metadata) writes a temporary file through
`BatchFileWriter`, whose `close()` has no `force()`, and renames it over
`bootstrap.checkpoint` with no fsync of the directory. powerfs keeps the rename and
forgets the content, as a file system may within its writeback window (about 30 s on
Linux's defaults), so the broker finds an empty file and exits: `No FeatureLevelRecord
for metadata.version was found in the bootstrap metadata`. meta.properties, which
Kafka fsyncs, survives. Exit 1 if the broker did not start (UNBOOTABLE), 0 if it did.
Afterwards the probe formats the node again, fsyncs what the format wrote (`sync FILE`),
and starts it. `--fsync-format` is the control: the format fsynced before the loss, as
the harness's own set-up and heals do (clusters/kafka/storage.py); the loss then
forgets nothing the format wrote, and the broker starts.
"""
from __future__ import annotations

import shlex
import time

from clusters.cluster import Cluster
from clusters.db import DatabaseError
from clusters.nodes import powerfs
from harness.probes.powerfs_cluster import require_powerfs

START_WAIT_S = 60.0
BOOTSTRAP_FILE = "bootstrap.checkpoint"
FATAL_WORDS = "No FeatureLevelRecord"


def run(cluster: Cluster, fsync_format: bool = False) -> int:
    db = require_powerfs(cluster, "format-power-loss")
    node = cluster.nodes[-1]
    fresh_disk(cluster, node, durable=fsync_format)
    dropped = db.power_cut(node, powerfs.CLEAN)
    db.power_off(node)
    print(f"  {node}: formatted, then power lost: forgot {dropped['bytes']:,} bytes in {dropped['files']} files "
          f"({', '.join(sorted({f['path'].rsplit('/', 1)[-1] for f in dropped['file_list']}))})")
    fatal_before = len(fatal_lines(cluster, node))
    db.power_on(node)
    fatal = start_outcome(cluster, node, fatal_before)
    started = fatal is None
    print(f"  {node}: {BOOTSTRAP_FILE} is {file_size(cluster, node, BOOTSTRAP_FILE)} bytes after the loss")
    if not started:
        print(f"    {fatal}")
    restore(cluster, node)
    print("UNBOOTABLE: the broker exits at every start" if not started else "ok: the broker started")
    return 0 if started else 1


def fresh_disk(cluster: Cluster, node: str, durable: bool) -> None:
    """The broker stopped, its log dir emptied and formatted again (fsynced if `durable`)."""
    cluster.db.stop(node)
    data = shlex.quote(cluster.db.data_dir(node))
    cluster.ssh[node].exec(f"find {data} -mindepth 1 -delete", timeout=60)
    cluster.db.storage.reformat(node, durable=durable)


def start_outcome(cluster: Cluster, node: str, fatal_before: int) -> str | None:
    """None once the broker serves; the fatal line this start wrote (one more than
    `fatal_before`) once there is one. Neither within START_WAIT_S is no verdict: a broker
    not yet started, or one that died of something else, must not pass for this finding."""
    deadline = time.monotonic() + START_WAIT_S
    while time.monotonic() < deadline:
        if cluster.db.serves_metadata(node):
            return None
        lines = fatal_lines(cluster, node)
        if len(lines) > fatal_before:
            return lines[-1]
        time.sleep(0.5)
    raise DatabaseError(node, f"neither served nor logged '{FATAL_WORDS}' within {START_WAIT_S:g} s of power-on; "
                              f"last log lines:\n{cluster.db.log_tail(node)}")


def file_size(cluster: Cluster, node: str, name: str) -> str:
    path = shlex.quote(f"{cluster.db.data_dir(node)}/{name}")
    return cluster.ssh[node].exec(f"stat -c %s {path} 2>/dev/null || echo missing", check=False).stdout.strip()


def fatal_lines(cluster: Cluster, node: str) -> list[str]:
    """Every line with FATAL_WORDS in the broker's server.log and its stdout, oldest first
    in each. A broker whose log4j2 did not take its configuration (seen after a heal had
    moved its data off the layer and back) prints the exception on stdout only."""
    paths = cluster.db.paths
    logs = " ".join(shlex.quote(f) for f in (f"{paths.logs_dir(node)}/server.log", paths.stdout_file(node)))
    out = cluster.ssh[node].exec(f"grep -h '{FATAL_WORDS}' {logs}", check=False).stdout
    return [line.strip()[:300] for line in out.splitlines()]


def restore(cluster: Cluster, node: str) -> None:
    """The node formatted again, what the format wrote fsynced (Kafka does not, so the next
    power loss would empty it again), and started: the cluster serves after the probe."""
    if cluster.db.is_running(node):
        return
    fresh_disk(cluster, node, durable=True)
    cluster.db.start(node)
