"""The producer-state fault on the shared real cluster: truncation moves the log
start, expiry makes the partition leader forget an idle idempotent producer,
short retention deletes segments, and stop/heal put every config back."""
from __future__ import annotations

import json
import subprocess
import time
import uuid

import pytest
from confluent_kafka import Producer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource, OffsetSpec

from clusters.kafka.admin import create_topic
from clusters.kafka.config import kafka_cache_dir
from nemesis.heal import heal
from nemesis.producer_state import EXPIRATION_KEY, ProducerStateFault, broker_ids

pytestmark = pytest.mark.cluster
WAIT_S = 60  # generous: the box is shared; these are waits, not timing assertions


def _topic(cluster, partitions: int = 2) -> str:
    name = f"ps-{uuid.uuid4().hex[:8]}-0"
    create_topic(cluster, name, partitions=partitions)
    return name


def _producer(cluster, stats: list | None = None) -> Producer:
    config = {"bootstrap.servers": cluster.db.bootstrap_servers(), "enable.idempotence": True,
              "linger.ms": 0, "logger": _Silent()}
    if stats is not None:
        config.update({"statistics.interval.ms": 200, "stats_cb": lambda s: stats.append(json.loads(s))})
    return Producer(config)


def _send(producer: Producer, topic: str, partition: int, count: int) -> None:
    errors = []
    for i in range(count):
        producer.produce(topic, b"%d" % i, partition=partition, on_delivery=lambda e, m: e and errors.append(e))
    assert producer.flush(WAIT_S) == 0
    assert errors == []


def _earliest(admin: AdminClient, topic: str, partitions: int) -> list[int]:
    tps = {TopicPartition(topic, p): OffsetSpec.earliest() for p in range(partitions)}
    return [f.result(timeout=WAIT_S).offset for _, f in sorted(admin.list_offsets(tps).items(),
                                                               key=lambda kv: kv[0].partition)]


def describe_producers(bootstrap: str, topic: str, partition: int) -> dict[int, dict]:
    """The partition leader's producer state (DescribeProducers, KIP-664), via
    Kafka's own tool: {producer id: {"epoch": ..., "last_sequence": ...}}."""
    out = subprocess.run(
        ["java", "-Xmx128m", "-XX:TieredStopAtLevel=1", "-cp", f"{kafka_cache_dir()}/libs/*",
         "org.apache.kafka.tools.TransactionsCommand", "--bootstrap-server", bootstrap,
         "describe-producers", "--topic", topic, "--partition", str(partition)],
        capture_output=True, text=True, timeout=WAIT_S, check=True).stdout
    rows = [line.split() for line in out.splitlines()[1:] if line.strip()]
    return {int(r[0]): {"epoch": int(r[1]), "last_sequence": int(r[3])} for r in rows}


def _wait_for(predicate, what: str):
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.5)
    pytest.fail(f"not within {WAIT_S} s: {what}")


def _override(admin: AdminClient, resource: ConfigResource, key: str) -> str | None:
    entry = admin.describe_configs([resource])[resource].result(timeout=WAIT_S)[key]
    dynamic = {ConfigSource.DYNAMIC_TOPIC_CONFIG.value, ConfigSource.DYNAMIC_BROKER_CONFIG.value}
    return entry.value if getattr(entry.source, "value", entry.source) in dynamic else None


def test_truncate_moves_the_log_start_to_the_high_watermark(cluster):
    topic = _topic(cluster)
    admin = AdminClient({"bootstrap.servers": cluster.db.bootstrap_servers()})
    producer = _producer(cluster)
    _send(producer, topic, 0, 5)
    _send(producer, topic, 1, 3)
    fault = ProducerStateFault(topics=[topic])
    value = fault.start(cluster, {"mode": "truncate"})
    assert value == {"mode": "truncate", "partitions": {f"{topic}/0": 5, f"{topic}/1": 3}}
    assert _earliest(admin, topic, 2) == [5, 3]
    assert fault.stop(cluster) == {"restored": []}


def test_expire_makes_the_leader_forget_an_idle_idempotent_producer(cluster):
    topic = _topic(cluster, partitions=1)
    bootstrap = cluster.db.bootstrap_servers()
    admin = AdminClient({"bootstrap.servers": bootstrap})
    stats: list[dict] = []
    producer = _producer(cluster, stats)
    _send(producer, topic, 0, 3)
    (pid, state), = _wait_for(lambda: describe_producers(bootstrap, topic, 0), "producer state").items()
    assert state["last_sequence"] == 2

    fault = ProducerStateFault(topics=[topic], expiration_ms=1000)
    try:
        value = fault.start(cluster, {"mode": "expire"})
        assert value["resources"] == sorted(f"broker {b}" for b in broker_ids(cluster)) and "errors" not in value
        # the producer stays idle until the leader has dropped its state
        _wait_for(lambda: pid not in describe_producers(bootstrap, topic, 0), "producer id expired")
        _send(producer, topic, 0, 2)
    finally:
        restored = fault.stop(cluster)
    # Kafka >= 2.5 (KIP-360) accepts any sequence from a producer it does not know, so
    # the idle producer's next batch (sequence 3, not 0) is appended without
    # UNKNOWN_PRODUCER_ID and without an epoch bump: the broker starts over from it
    assert describe_producers(bootstrap, topic, 0)[pid] == {"epoch": state["epoch"], "last_sequence": 4}
    producer.poll(0.5)
    assert stats and stats[-1]["eos"]["epoch_cnt"] == 1 and stats[-1]["eos"]["producer_epoch"] == 0
    assert restored == {"restored": sorted(f"broker {b}" for b in broker_ids(cluster))}
    _wait_for(lambda: all(_override(admin, ConfigResource("BROKER", b), EXPIRATION_KEY) is None
                          for b in broker_ids(cluster)), "per-broker expiry overrides removed")


def test_retention_deletes_segments_and_stop_restores_the_topic_config(cluster):
    topic = _topic(cluster, partitions=1)
    admin = AdminClient({"bootstrap.servers": cluster.db.bootstrap_servers()})
    producer = _producer(cluster)
    _send(producer, topic, 0, 3)
    fault = ProducerStateFault(topics=[topic], retention_ms=500, segment_ms=500)
    resource = ConfigResource("TOPIC", topic)
    try:
        assert fault.start(cluster, {"mode": "retention"})["resources"] == [topic]
        _wait_for(lambda: _override(admin, resource, "retention.ms") == "500", "retention.ms override seen")

        def moved() -> bool:  # segments roll on the next append once segment.ms has passed
            _send(producer, topic, 0, 1)
            return _earliest(admin, topic, 1)[0] > 0
        _wait_for(moved, "log start offset moved by retention")
    finally:
        fault.heal(cluster)
    # brokers apply config changes from the metadata log a little later
    _wait_for(lambda: _override(admin, resource, "retention.ms") is None
              and _override(admin, resource, "segment.ms") is None, "topic overrides removed")
    assert fault.stop(cluster) == {"restored": []}  # nothing left to restore


class _Silent:
    def log(self, *args, **kwargs) -> None:
        pass


def test_heal_restores_the_config_of_a_broker_that_was_down(healed_cluster):
    cluster = healed_cluster
    admin = AdminClient({"bootstrap.servers": cluster.db.bootstrap_servers()})
    fault = ProducerStateFault(expiration_ms=1500, heal_cluster=heal)
    down = cluster.nodes[-1]
    down_id = str(cluster.db.node_id(down))
    assert "errors" not in fault.start(cluster, {"mode": "expire"})
    cluster.db.kill(down)
    stopped = fault.stop(cluster)
    # the killed broker cannot take its config back; the others usually can, but
    # not always while the quorum elects a new controller (the kill may have hit it)
    assert f"broker {down_id}" in stopped["errors"]
    assert set(stopped["errors"]) <= {f"broker {b}" for b in broker_ids(cluster)}
    fault.heal(cluster)  # restarts the killed broker, then restores its config
    assert cluster.db.is_running(down)
    _wait_for(lambda: all(_override(admin, ConfigResource("BROKER", b), EXPIRATION_KEY) is None
                          for b in broker_ids(cluster)), "every broker's expiry override removed")
