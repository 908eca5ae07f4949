"""The power fault on a real broker, on a one-node cluster of the test's own (its data on
powerfs from its first start): what Kafka never fsynced is gone after the loss, what it
fsynced (flush.messages=1) is there, and a heal after a loss its control process never
finished (the layer cut, the broker never killed) leaves no FUSE mount on the node."""
from __future__ import annotations

import dataclasses
import re
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

from clusters.cluster import Cluster
from clusters.kafka.admin import create_topic
from clusters.kafka.config import UNSYNCED_ACKS
from clusters.nodes import powerfs
from clusters.nodes.inventory import load_inventory, write_inventory
from clusters.nodes.local import LocalCluster
from clusters.reconfigure import restart_if_reconfigured
from clusters.smoke import consume_all, produce
from common.client_logging import QUIET_CLIENT_LOGGER
from harness.probes import format_power_loss
from nemesis.heal import heal_inventory
from nemesis.kind import FaultContext
from nemesis.power import KIND, OFF_MINORITY
from tests.fixtures.cluster import shared_cluster_name
from tests.fixtures.killed_runs import sigkill_run_when, wait_for_record

pytestmark = [pytest.mark.own_cluster, pytest.mark.slow]
RECORDS = 40


@pytest.fixture(scope="module")
def power_cluster() -> Iterator[LocalCluster]:
    """One node whose inventory asks for powerfs, so that every start (a heal's too) puts
    the broker's data on the layer."""
    local = LocalCluster(f"{shared_cluster_name()}-pw")
    local.down()
    try:
        local.up(nodes=1)
        ask_for_powerfs(local, True)
        yield local
    finally:
        local.down()


def ask_for_powerfs(local: LocalCluster, wanted: bool) -> None:
    """The cluster option: the inventory's settings ask for the layer, or not."""
    settings = {powerfs.POWERFS_KEY: "true"} if wanted else {}
    write_inventory(dataclasses.replace(load_inventory(local.inventory_path), settings=settings),
                    local.inventory_path)


def fuse_mounts(cluster: Cluster) -> list[str]:
    return powerfs.mounted(cluster.ssh["n1"])


@contextmanager
def on_powerfs(local: LocalCluster) -> Iterator[Cluster]:
    """The cluster with its broker on the layer, whatever the test before left (tests run
    in any order: `--order-seed`)."""
    ask_for_powerfs(local, True)
    with Cluster.open(local.inventory_path) as cluster:
        restart_if_reconfigured(cluster)
        yield cluster


def test_a_power_loss_forgets_what_kafka_never_fsynced(power_cluster: LocalCluster) -> None:
    with on_powerfs(power_cluster) as cluster:
        data_dir = cluster.db.data_dir("n1")
        assert fuse_mounts(cluster) == [data_dir]
        create_topic(cluster, "unflushed", replication_factor=1, min_insync_replicas=1)
        create_topic(cluster, "flushed", replication_factor=1, min_insync_replicas=1,
                     config={"flush.messages": "1"})
        values = [f"v{i}" for i in range(RECORDS)]
        assert produce(cluster.db.bootstrap_servers(), "unflushed", values) == values
        assert produce(cluster.db.bootstrap_servers(), "flushed", values) == values

        fault = KIND.make(FaultContext())
        params = {"target": "one", "nodes": ["n1"], "majority": False, "mode": "clean"}
        assert fault.start_f(params) == OFF_MINORITY
        struck = fault.start(cluster, params)
        assert "errors" not in struck, struck
        dropped = struck["dropped"]["n1"]
        assert dropped["bytes"] > 0 and dropped["files"] > 0
        assert any("unflushed-0/" in f["path"] for f in dropped["file_list"]), dropped
        assert struck["may_lose_data"] == UNSYNCED_ACKS     # the broker-wide default flush
        assert fuse_mounts(cluster) == [] and not cluster.db.is_running("n1")

        assert "errors" not in fault.stop(cluster)
        assert fuse_mounts(cluster) == [data_dir]
        bootstrap = cluster.db.bootstrap_servers()
        assert consume_all(bootstrap, "flushed", RECORDS, timeout=60) == values
        assert len(consume_all(bootstrap, "unflushed", RECORDS, timeout=10)) < RECORDS


@contextmanager
def writing(bootstrap: str, topic: str) -> Iterator[None]:
    """A producer sending to `topic` without a pause for the `with` block, so that the
    broker is writing to its log when the power goes."""
    from confluent_kafka import Producer
    done = threading.Event()

    def send() -> None:
        producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 1, "message.timeout.ms": 3000,
                             "logger": QUIET_CLIENT_LOGGER})
        sent = 0
        while not done.is_set():
            try:
                producer.produce(topic, value=str(sent).encode())
                sent += 1
            except BufferError:
                pass
            producer.poll(0.001)
        producer.flush(3)

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    time.sleep(1)       # under way
    try:
        yield
    finally:
        done.set()
        sender.join(10)


def test_a_broker_writing_when_the_power_goes_never_sees_the_cut_layer(power_cluster: LocalCluster) -> None:
    """A machine without power does nothing more: the broker is frozen before its layer is
    cut, so it never gets the layer's EIO, and never marks its log dir offline for it."""
    with on_powerfs(power_cluster) as cluster:
        create_topic(cluster, "busy", replication_factor=1, min_insync_replicas=1)
        log = f"{cluster.db.paths.logs_dir('n1')}/server.log"
        before = int(cluster.ssh["n1"].exec(f"stat -c %s {log}").stdout)
        fault = KIND.make(FaultContext())
        with writing(cluster.db.bootstrap_servers(), "busy"):
            struck = fault.start(cluster, {"target": "one", "nodes": ["n1"], "majority": False, "mode": "clean"})
        assert "errors" not in struck, struck
        assert struck["dropped"]["n1"]["bytes"] > 0      # it was writing
        since = cluster.ssh["n1"].exec(f"tail -c +{before + 1} {log}").stdout
        assert "Input/output error" not in since and "KafkaStorageException" not in since, since[-2000:]
        assert "errors" not in fault.stop(cluster)


def test_cluster_heal_after_a_loss_cut_short_leaves_no_fuse_mount(power_cluster: LocalCluster) -> None:
    with on_powerfs(power_cluster) as cluster:
        data_dir = cluster.db.data_dir("n1")
        assert fuse_mounts(cluster) == [data_dir]
        cluster.db.power_cut("n1", "clean")  # the control process died right after the cut
        assert cluster.db.is_running("n1") and fuse_mounts(cluster) == [data_dir]
    # what `logtrial cluster heal` and the watchdog run; its cluster does not ask for the layer
    ask_for_powerfs(power_cluster, False)
    actions = heal_inventory(power_cluster.inventory_path)
    assert f"n1: unmounted powerfs from {data_dir}" in actions
    with Cluster.open(power_cluster.inventory_path, start=False) as cluster:
        assert fuse_mounts(cluster) == []
        assert cluster.db.serves_metadata("n1")
        assert cluster.ssh["n1"].exec(f"test -f {data_dir}/meta.properties", check=False).exit_code == 0


def test_a_killed_layer_daemon_is_healed_and_the_broker_restarted_on_a_new_layer(
        power_cluster: LocalCluster) -> None:
    ask_for_powerfs(power_cluster, False)
    heal_inventory(power_cluster.inventory_path)  # the broker off the layer, whatever came before
    ask_for_powerfs(power_cluster, True)
    with Cluster.open(power_cluster.inventory_path) as cluster:
        session = cluster.ssh["n1"]
        data_dir = cluster.db.data_dir("n1")
        # a broker running without the layer when a run asks for it is restarted onto it
        assert restart_if_reconfigured(cluster) == [f"restarted brokers n1 with new settings: {powerfs.POWERFS_KEY}"]
        assert fuse_mounts(cluster) == [data_dir]
        assert session.signal(powerfs.layer_paths(session, data_dir).pid_file, "KILL")
        actions = heal_inventory(power_cluster.inventory_path)
        assert f"n1: unmounted powerfs from {data_dir}" in actions
        assert fuse_mounts(cluster) == [data_dir]  # the inventory asks for it: a fresh layer
        assert powerfs.broken(session, data_dir) is None and cluster.db.serves_metadata("n1")


def test_a_node_formatted_just_before_a_power_loss_never_starts_again(
        power_cluster: LocalCluster, capsys) -> None:
    """docs/findings.md row 16 (harness/probes/format_power_loss.py): Kafka writes
    bootstrap.checkpoint with no fsync, so the loss empties it and the broker exits at
    every start; the probe then formats the node again and starts it."""
    with on_powerfs(power_cluster) as cluster:
        assert format_power_loss.run(cluster) == 1
        out = capsys.readouterr().out
        assert "n1: bootstrap.checkpoint is 0 bytes after the loss" in out
        assert "No FeatureLevelRecord for metadata.version" in out  # the broker's own words
        assert out.splitlines()[-1] == "UNBOOTABLE: the broker exits at every start"
        assert cluster.db.serves_metadata("n1")


def test_a_node_the_harness_formats_survives_a_power_loss_right_after(power_cluster: LocalCluster, capsys) -> None:
    """The control of row 16, and what the harness's own set-up and heals do: the format
    fsynced (clusters/kafka/storage.py), the loss forgets none of it and the broker starts."""
    with on_powerfs(power_cluster) as cluster:
        assert format_power_loss.run(cluster, fsync_format=True) == 0
        out = capsys.readouterr().out
        forgot = next(line for line in out.splitlines() if "formatted, then power lost: forgot" in line)
        # what the format wrote is kept (the list may name the old log's files, deleted before)
        assert "bootstrap.checkpoint" not in forgot and "meta.properties" not in forgot
        size = re.search(r"n1: bootstrap.checkpoint is (\d+) bytes after the loss", out)
        assert size and int(size[1]) > 0
        assert out.splitlines()[-1] == "ok: the broker started"
        assert cluster.db.serves_metadata("n1")


def powered_off(store: Path) -> bool:
    """Whether a run under `store` has recorded a power-off (its nodes are down now)."""
    return any('"f":"power-off' in path.read_text() for path in store.glob("*/*/history.jsonl"))


def test_a_run_killed_while_its_nodes_are_powered_off_is_healed_with_no_fuse_mount(
        power_cluster: LocalCluster, tmp_path: Path) -> None:
    ask_for_powerfs(power_cluster, False)  # the run asks for the layer itself (--nemesis power)
    # SIGKILL: the control process never powers the node on again
    sigkill_run_when(["--nodes-file", str(power_cluster.inventory_path), "--time-limit", "60", "--rate", "20",
                      "--concurrency", "2", "--nemesis", "power", "--nemesis-interval", "3", "--db-targets", "all",
                      "--leave-db-running", "--no-check", "--no-report"], tmp_path, powered_off, timeout=600)
    assert powered_off(tmp_path)
    (run_dir,) = [p.parent for p in tmp_path.glob("*/*/test.json")]
    test = wait_for_record(run_dir, "healed its cluster", timeout=600)
    assert "healed its cluster" in (test.get("error") or ""), "the watchdog did not heal the cluster"
    with Cluster.open(power_cluster.inventory_path, start=False) as cluster:
        assert fuse_mounts(cluster) == []
        assert cluster.db.serves_metadata("n1")
        assert powerfs.leftovers(cluster.ssh["n1"], cluster.db.data_dir("n1")) == []
