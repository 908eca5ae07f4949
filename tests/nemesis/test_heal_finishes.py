"""Heals that finish (docs/findings.md, seed 50): a voter of a static quorum wiped while
it led, so that on restart the other voters still name it leader of an older epoch and
Kafka refuses its start. At a bound too short the heal says per node what is left and
why, and exits 4; the heal a run's teardown makes (NemesisRunner.heal_all) waits for the
quorum to move on and starts it within its bound; a second heal finds nothing to do. On a 3-node cluster of its own: the voters' fetch
timeout is raised, so the wiped leader is surely back before they give up on it."""
from __future__ import annotations

import dataclasses
import subprocess
import sys
import time
from pathlib import Path

import pytest

from common import exit_codes
from clusters.cluster import HEAL_BOUND, Cluster
from clusters.nodes.inventory import load_inventory, write_inventory
from clusters.kafka.quorum import newest_epoch, quorum_state
from checkers.history.stream import raw_events
from checkers.history.writer import HistoryWriter
from nemesis.heal import heal, verify_healed
from nemesis.roles import RoleResolver
from nemesis.runner import NemesisRunner

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
# the voters keep following a dead leader this long (Kafka's default is 2 s, ours 5 s)
FETCH_TIMEOUT_MS = 45_000


def wipe_the_leader(cluster: Cluster) -> tuple[str, int]:
    """Kills the active controller and empties its log dir, as remove-node does; (node, epoch)."""
    leader = RoleResolver(cluster).controller()
    epoch = newest_epoch([quorum_state(cluster.ssh[n], cluster.db.data_dir(n)) for n in cluster.nodes])
    cluster.db.kill(leader)
    data = cluster.db.data_dir(leader)
    cluster.ssh[leader].exec(f"rm -rf {data} && mkdir -p {data}", timeout=60)
    return leader, epoch


def test_a_wiped_leader_still_named_by_its_quorum_is_reported_then_healed(fresh_cluster, tmp_path):
    local = fresh_cluster(nodes=3, suffix="q")
    inventory = load_inventory(local.inventory_path)
    write_inventory(dataclasses.replace(inventory, settings={
        **inventory.settings, "controller.quorum.fetch.timeout.ms": str(FETCH_TIMEOUT_MS)}), local.inventory_path)
    with Cluster.open(local.inventory_path) as cluster:
        leader, epoch = wipe_the_leader(cluster)
        # a bound too short: the refused start is said, per node, and the exit is 4
        done = subprocess.run([sys.executable, "-m", "harness.cli", "cluster", "heal", "--name", local.name,
                               "--timeout", "1"], cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert done.returncode == exit_codes.HARNESS_ERROR, done.stdout + done.stderr
        assert f"node {leader}: broker did not start in 1 attempt: the controller quorum still names it " \
               f"leader of epoch {epoch}" in done.stderr, done.stdout + done.stderr
        assert f"{leader}: formatted its log dir" in done.stdout
        # the heal a run's teardown makes: it waits for the quorum to move on, within its
        # bound, and the run's history says what it did
        started = time.monotonic()
        with HistoryWriter(tmp_path / "history.jsonl") as history:
            NemesisRunner(cluster, history, ["kill"]).heal_all()
        assert time.monotonic() - started < HEAL_BOUND
        (event,) = [e for e in raw_events(tmp_path / "history.jsonl") if e["f"] == "heal"]
        actions = event["value"]["actions"]
        assert any(a.startswith(f"{leader}: restarted broker") for a in actions), actions
        verify_healed(cluster)
        assert heal(cluster) == []  # idempotent: healed is healed
        verify_healed(cluster)
