"""Kafka versions side by side: the registry (which versions, which modes, clear errors),
the per-version config, and real runs on Kafka 3.0.0 in ZooKeeper mode next to the
shared 4.1.1 KRaft cluster."""
from __future__ import annotations

import dataclasses
import json
import os
import time

import pytest
from click.testing import CliRunner

from clusters.kafka import versions as kafka_versions
from common import exit_codes
from clusters.cluster import Cluster
from clusters.db import DatabaseError
from clusters.nodes.inventory import Inventory, Node, write_inventory
from clusters.kafka.database import KafkaDB
from clusters.kafka.config import release_settings
from clusters.kafka.install import render_pom
from clusters.kafka.jars import java_major
from clusters.kafka.versions import KafkaRelease, KafkaVersionError, parse_metadata, resolve
from harness.cli import main as cli
from harness.commands.test_all import matrix
from harness.runner import TestOptions, run_test
from nemesis.heal import heal, verify_healed
from results.runs import read_run

METADATA = """<?xml version="1.0" encoding="UTF-8"?>
<metadata><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId>
<versioning><latest>4.1.1</latest><release>4.1.1</release><versions>
<version>2.8.2</version><version>3.0.0</version><version>3.10.0-rc1</version>
<version>3.3.2</version><version>3.5.0</version><version>3.10.1</version><version>4.1.1</version>
</versions></versioning></metadata>"""
KNOWN = ["3.0.0", "3.3.2", "3.5.0", "3.10.1", "4.1.1"]


@pytest.fixture
def listed_versions(tmp_path, monkeypatch):
    """The version list from a file, as cached: no network for tests of the config."""
    monkeypatch.setenv("LOGTRIAL_CACHE", str(tmp_path))
    kafka_versions.list_cache_file().write_text(METADATA)


def test_metadata_gives_releases_from_3_0_0_in_version_order():
    assert parse_metadata(METADATA) == KNOWN  # no 2.x, no RC, 3.10 after 3.3


@pytest.mark.parametrize("version, modes", [("3.0.0", ("zk",)), ("3.2.3", ("zk",)),
                                            ("3.3.2", ("kraft", "zk")), ("3.9.1", ("kraft", "zk")),
                                            ("4.0.0", ("kraft",)), ("4.1.1", ("kraft",))])
def test_modes_per_version_default_first(version, modes):
    assert kafka_versions.supported_modes(version) == modes
    assert resolve(version, available=[version]).mode == modes[0]


def test_unknown_version_is_named_with_the_known_ones():
    with pytest.raises(KafkaVersionError, match=r"Kafka 3\.0\.7 is not on Maven Central.*known "
                                                r"versions: 3\.0\.0, 3\.3\.2"):
        resolve("3.0.7", available=KNOWN)
    with pytest.raises(KafkaVersionError, match=r"Kafka 2\.8\.2 is older than 3\.0\.0"):
        resolve("2.8.2", available=KNOWN)
    with pytest.raises(KafkaVersionError, match=r"'latest' is not a release number"):
        resolve("latest", available=KNOWN)


@pytest.mark.parametrize("version, mode, why", [("4.1.1", "zk", "ZooKeeper mode was removed in 4.0"),
                                                ("3.0.0", "kraft", "KRaft was early access before 3.3")])
def test_unsupported_mode_names_version_and_mode(version, mode, why):
    with pytest.raises(KafkaVersionError, match=rf"Kafka {version} does not run in {mode} mode \({why}"):
        resolve(version, mode, available=KNOWN)


def test_both_modes_where_both_exist():
    assert resolve("3.3.2", "zk", available=KNOWN) == KafkaRelease("3.3.2", "zk")
    assert resolve("3.3.2", "kraft", available=KNOWN) == KafkaRelease("3.3.2", "kraft")


def test_version_list_is_cached_and_an_old_list_serves_when_maven_central_is_unreachable(tmp_path, monkeypatch):
    monkeypatch.setenv("LOGTRIAL_CACHE", str(tmp_path))
    monkeypatch.setattr(kafka_versions, "METADATA_URL", "http://127.0.0.1:1/maven-metadata.xml")  # refused
    with pytest.raises(KafkaVersionError, match=r"cannot list Kafka versions: http://127\.0\.0\.1:1/"):
        kafka_versions.available_versions()
    cached = kafka_versions.list_cache_file()
    cached.write_text(METADATA)
    assert kafka_versions.available_versions() == KNOWN  # fresh: Maven Central not asked
    old = time.time() - 2 * kafka_versions.LIST_MAX_AGE_S
    os.utime(cached, (old, old))
    assert kafka_versions.available_versions() == KNOWN  # stale, refresh refused: the old list


def test_pom_per_version_and_the_default_pom_unchanged():
    default = KafkaRelease("4.1.1", "kraft")
    assert render_pom(default) == default.pom_template.read_text()  # caches made before stay valid
    old = render_pom(KafkaRelease("3.0.0", "zk"))
    assert "<kafka.version>3.0.0</kafka.version>" in old and "reload4j" in old
    assert KafkaRelease("3.0.0", "zk").cache_dir.name == "kafka-3.0.0"


def test_java_version_lines():
    assert java_major('openjdk version "17.0.15" 2025-04-15') == 17
    assert java_major('java version "1.8.0_392"') == 8
    assert java_major("no java here") is None


def three_nodes(**settings) -> Inventory:
    nodes = tuple(Node(f"n{i}", f"10.9.9.1{i}", 22, "root", "/k", None, f"/h/n{i}") for i in (1, 2, 3))
    return Inventory("t", nodes, settings=dict(settings))


def test_zookeeper_mode_config(listed_versions):
    db = KafkaDB(three_nodes(**release_settings("3.0.0", None)), ssh=None)
    props = db.properties("n2")
    assert props["zookeeper.connect"] == "10.9.9.11:2181,10.9.9.12:2181,10.9.9.13:2181"
    assert props["broker.id"] == "2" and props["listeners"] == "PLAINTEXT://10.9.9.12:9092"
    assert not {"process.roles", "node.id", "controller.quorum.voters"} & props.keys()
    assert not any(k.startswith("share.") for k in props)  # 4.0 settings
    assert props["num.io.threads"] == "8"  # KAFKA-14694, before 3.5
    assert db.zookeeper.properties("n2")["server.3"] == "10.9.9.13:2888:3888"


def test_kraft_config_per_version(listed_versions):
    props = KafkaDB(three_nodes(**release_settings("3.5.0", None)), ssh=None).properties("n1")
    assert props["process.roles"] == "broker,controller" and "zookeeper.connect" not in props
    assert props["num.io.threads"] == "2" and not any(k.startswith("share.") for k in props)
    latest = KafkaDB(three_nodes(), ssh=None)
    assert latest.release == KafkaRelease("4.1.1", "kraft") and latest.zookeeper is None
    assert latest.properties("n1")["share.coordinator.state.topic.replication.factor"] == "3"


def test_bad_release_in_an_inventory_is_an_error_naming_it():
    with pytest.raises(KafkaVersionError, match="Kafka 4.1.1 does not run in zk mode"):
        KafkaDB(three_nodes(**release_settings("4.1.1", "zk")), ssh=None)


def test_run_options_refuse_versions_before_any_cluster_work(listed_versions):
    with pytest.raises(KafkaVersionError, match="Kafka 4.1.1 does not run in zk mode"):
        TestOptions.from_flat(local=1, kafka_mode="zk").validate()
    with pytest.raises(ValueError, match="--bootstrap-servers runs what it runs"):
        TestOptions.from_flat(bootstrap_servers="127.0.0.1:9092", kafka_version="3.0.0").validate()


def test_cli_errors_name_the_version(listed_versions):
    result = CliRunner().invoke(cli, ["cluster", "up", "--name", "never-made", "--kafka-version", "4.1.1",
                                      "--kafka-mode", "zk"])
    assert result.exit_code == exit_codes.BAD_INPUT
    assert "Kafka 4.1.1 does not run in zk mode" in result.output
    result = CliRunner().invoke(cli, ["test", "--local", "1", "--kafka-version", "2.8.0"])
    assert result.exit_code == exit_codes.BAD_INPUT and "Kafka 2.8.0 is older than 3.0.0" in result.output
    result = CliRunner().invoke(cli, ["test-all", "--nodes-file", __file__, "--kafka-versions", "4.1.1,3.0.0"])
    assert result.exit_code == exit_codes.BAD_INPUT and "needs --local N" in result.output


def test_version_axis_groups_runs_by_version():
    cells = matrix(["queue"], ["none", "kill"], "off", 1, ["4.1.1", "3.0.0"])
    assert [(c.kafka_version, c.nemesis) for c in cells] == [
        ("4.1.1", "none"), ("4.1.1", "kill"), ("3.0.0", "none"), ("3.0.0", "kill")]


# -- real clusters ---------------------------------------------------------------------------
@pytest.mark.cluster
@pytest.mark.slow
def test_kafka_3_0_0_zookeeper_mode_queue_run_is_valid(zookeeper_cluster, tmp_path):
    options = TestOptions.from_flat(nodes_file=str(zookeeper_cluster.inventory.path), store=str(tmp_path),
                                    leave_db_running=True, time_limit=10, rate=50, concurrency=4, recovery_time=1,
                                    final_time_limit=30, report=False, txn=True)
    result = run_test(options)
    test_json = json.loads((result.run_dir / "test.json").read_text())
    assert result.status == "complete" and result.valid is True
    assert test_json["kafka"] == {"version": "3.0.0", "mode": "zk"}
    assert test_json["versions"]["kafka"] == "3.0.0"
    assert read_run(result.run_dir, tmp_path).kafka == "3.0.0 zk"  # what the run index shows
    # acknowledged work, not a vacuous verdict: at load 25 the machine did 22 ok ops in 6 s
    assert result.counts.get("ok", 0) >= 10
    logs = result.run_dir / "nodes" / "n1"
    assert (logs / "server.log").stat().st_size > 0
    assert "zookeeper.connect=" in (logs / "server.properties").read_text()
    assert (logs / "zookeeper" / "server.log").stat().st_size > 0


@pytest.mark.cluster
def test_a_cluster_running_another_release_is_refused_naming_both(zookeeper_cluster, tmp_path):
    with pytest.raises(DatabaseError, match=r"node n1: is set up for Kafka 3\.0\.0 \(ZooKeeper mode\), "
                                            r"but Kafka 4\.1\.1 \(KRaft mode\) was asked for"):
        Cluster.open(zookeeper_cluster.inventory.path, db_settings=release_settings("4.1.1", None))
    # an inventory that names no release (real machines: logtrial never rewrites it)
    silent = tmp_path / "inventory.yaml"
    write_inventory(dataclasses.replace(zookeeper_cluster.inventory, settings={}), silent)
    with pytest.raises(DatabaseError, match=r"but Kafka 4\.1\.1 \(KRaft mode\) was asked for; pass "
                                            r"--kafka-version 3\.0\.0 --kafka-mode zk"):
        Cluster.open(silent)  # a test would run: never on another release than it says
    with Cluster.open(silent, start=False) as managing:  # status, heal, down: what is there
        assert managing.db.release == KafkaRelease("3.0.0", "zk") and managing.db.zookeeper


@pytest.mark.cluster
def test_heal_restarts_a_dead_zookeeper(zookeeper_cluster):
    zookeeper = zookeeper_cluster.db.zookeeper
    assert zookeeper.serving_mode("n1") == "standalone"
    zookeeper.kill("n1")
    with pytest.raises(Exception, match="zookeeper is stopped"):
        verify_healed(zookeeper_cluster)
    status = CliRunner().invoke(cli, ["cluster", "status", "--inventory", str(zookeeper_cluster.inventory.path)])
    assert status.exit_code == exit_codes.HARNESS_ERROR
    assert "Kafka 3.0.0 (ZooKeeper mode)" in status.output and "running, zookeeper stopped" in status.output
    assert "n1: restarted zookeeper" in heal(zookeeper_cluster)
    verify_healed(zookeeper_cluster)
    assert zookeeper.serving_mode("n1") == "standalone"


def test_admin_tools_are_found_where_each_release_keeps_them():
    """3.x moved the tools the faults run from the broker jar into kafka-tools, one
    release at a time; 3.9.1 failed with ClassNotFoundException before this table."""
    def classes(version: str) -> dict[str, str]:
        release = resolve(version, "kraft")
        return {tool: release.tool_class(tool) for tool in ("quorum", "cluster", "feature", "reassign")}
    assert classes("3.3.2") == {"quorum": "kafka.admin.MetadataQuorumCommand", "cluster": "kafka.tools.ClusterTool",
                                "feature": "kafka.admin.FeatureCommand",
                                "reassign": "kafka.admin.ReassignPartitionsCommand"}
    assert classes("3.6.2") == {"quorum": "org.apache.kafka.tools.MetadataQuorumCommand",
                                "cluster": "org.apache.kafka.tools.ClusterTool",
                                "feature": "org.apache.kafka.tools.FeatureCommand",
                                "reassign": "kafka.admin.ReassignPartitionsCommand"}
    assert set(classes("3.9.1").values()) == set(classes("4.1.1").values()) == {
        "org.apache.kafka.tools.MetadataQuorumCommand", "org.apache.kafka.tools.ClusterTool",
        "org.apache.kafka.tools.FeatureCommand", "org.apache.kafka.tools.reassign.ReassignPartitionsCommand"}
