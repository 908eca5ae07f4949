"""docs/findings.md row 7 on Apache Kafka: the trigger that kills librdkafka's consumers on
tansu (tests/clusters/test_tansu_cluster.py), a topic deleted while they fetch it, leaves
them alive on Kafka, whose answer names the topic and gives no leader hint."""
from __future__ import annotations

import pytest

from harness.probes import deleted_topic_fetch


@pytest.mark.cluster
def test_librdkafka_consumers_live_when_kafka_deletes_the_topic_they_fetch(cluster, tmp_path, capsys):
    debug_log = tmp_path / "fetch-debug.log"
    assert deleted_topic_fetch.run(cluster, rounds=1, debug_log=str(debug_log)) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == "round 1: ok: the consumers lived 20 s"
    assert any(line.startswith("  deleted lt-deleted-") for line in out)
    # Kafka's answer to the deleted topic reached them: the trigger struck while they fetched
    assert "UNKNOWN_TOPIC" in debug_log.read_text()
