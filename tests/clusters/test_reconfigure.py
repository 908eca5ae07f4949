"""Which running brokers need a restart for the settings a test asks for (real cluster)."""
from __future__ import annotations

import pytest

from clusters.cluster import Cluster
from clusters.kafka.database import KafkaDB
from clusters.reconfigure import parse_properties, stale_nodes

pytestmark = pytest.mark.cluster


def test_stale_nodes_names_the_settings_that_differ(cluster):
    assert stale_nodes(cluster) == {}
    wanting = Cluster(cluster.inventory, cluster.ssh,
                      KafkaDB(cluster.inventory, cluster.ssh, {"unclean.leader.election.enable": "true",
                                                               "log.flush.interval.messages": "7"}))
    assert stale_nodes(wanting) == {node: ["log.flush.interval.messages", "unclean.leader.election.enable"]
                                    for node in cluster.nodes}


def test_parse_properties_skips_comments_and_blank_lines():
    assert parse_properties("# written by logtrial\n\na=1\n b = x=y \n") == {"a": "1", "b": "x=y"}
