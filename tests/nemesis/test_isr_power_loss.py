"""docs/findings.md, power round 3, on demand (harness/probes/isr_power_loss.py): with the
third replica down, acks=all records live only in the page caches of the two ISR
members; both lose power, and every one is gone, while the controllers log an UNCLEAN
election of the last known leader. With an fsync per record (the control) none is."""
from __future__ import annotations

import re
from typing import Iterator

import pytest

from clusters.cluster import Cluster
from clusters.nodes.local import LocalCluster
from harness.probes import isr_power_loss
from tests.fixtures.cluster import shared_cluster_name
from tests.nemesis.test_power_fault import ask_for_powerfs

pytestmark = [pytest.mark.own_cluster, pytest.mark.slow]


@pytest.fixture(scope="module")
def cluster_on_powerfs() -> Iterator[Cluster]:
    local = LocalCluster(f"{shared_cluster_name()}-isrpw")
    local.down()
    try:
        local.up(nodes=isr_power_loss.NODES)
        ask_for_powerfs(local, True)
        with Cluster.open(local.inventory_path) as cluster:  # starts Kafka, on the layer
            yield cluster
    finally:
        local.down()


def test_both_isr_members_losing_power_lose_every_acknowledged_record(cluster_on_powerfs, capsys):
    """And the same producer's next sends are taken at its next sequence numbers, though
    the broker lost every earlier one and the producer's state with them: no
    OutOfOrderSequence, no UNKNOWN_PRODUCER_ID, nothing the producer could notice
    (KIP-360's detection claim, docs/findings.md row 17)."""
    assert isr_power_loss.run(cluster_on_powerfs, rounds=1, send_after=20) == 1
    out = capsys.readouterr().out
    sent = isr_power_loss.MESSAGES
    assert f"{sent} of {sent} sends acknowledged by the ISR [1, 2]" in out
    assert out.splitlines()[-1] == f"round 1: LOST {sent} acknowledged records"
    assert "UNCLEAN partition change" in out and "lastKnownElr" in out  # the controllers' own words
    assert "then the same producer sent 20 more: 20 acknowledged\n" in out
    assert "client errors other than the outage's: 0" in out
    assert re.search(rf"now starts at offset 0: producer \d+ epoch 0 sequence {sent}, ", out), out
    assert "of the 20 acknowledged after the loss, 0 not read" in out


def test_with_an_fsync_per_record_the_same_loss_keeps_every_record(cluster_on_powerfs, capsys):
    assert isr_power_loss.run(cluster_on_powerfs, rounds=1, fsync_each=True) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "round 1: ok: every acknowledged record read"
