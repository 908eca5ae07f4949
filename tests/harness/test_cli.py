"""`logtrial cluster ...` and `logtrial doctor` through the real CLI entry point."""
from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from common import exit_codes
from clusters.nodes.local import LocalCluster, link_exists, list_netns
from clusters.nodes.proc import is_zombie
from clusters.systems import system_kind
from harness.cli import main
from harness.commands.doctor_nodes import checks_from, node_tools

pytestmark = pytest.mark.cluster


def run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_status_shows_every_node_reachable_and_running(cluster, local_cluster):
    result = run("cluster", "status", "--name", local_cluster.name)
    assert result.exit_code == 0, result.output
    for node in cluster.inventory.nodes:
        line = next(l for l in result.output.splitlines() if l.strip().startswith(node.name))
        assert node.host in line and "reachable" in line and line.rstrip().endswith("running")


def test_status_explains_an_unreachable_local_node(fresh_cluster):
    local = fresh_cluster(nodes=1, suffix="st")
    sshd_pid = int((local.sshd_dir("n1") / "sshd.pid").read_text())
    os.kill(sshd_pid, signal.SIGKILL)
    # the signal is delivered, not yet acted on: until sshd is gone its socket
    # still takes connections (and resets them), and status would see it running
    deadline = time.monotonic() + 10
    while not is_zombie(sshd_pid):
        assert time.monotonic() < deadline, f"sshd {sshd_pid} outlived SIGKILL"
        time.sleep(0.02)
    result = run("cluster", "status", "--name", local.name)
    assert result.exit_code == exit_codes.HARNESS_ERROR
    line = next(l for l in result.output.splitlines() if l.strip().startswith("n1"))
    assert "UNREACHABLE" in line and "netns present, sshd NOT RUNNING" in line


def test_heal_on_a_healthy_cluster_does_nothing(cluster, local_cluster):
    result = run("cluster", "heal", "--name", local_cluster.name)
    assert result.exit_code == 0, result.output
    assert f"cluster {local_cluster.name}: healed (0 actions)" in result.output


@pytest.fixture
def state_root(tmp_path, monkeypatch):
    """An isolated state root, so "every local cluster" means only the ones a
    test puts there (other clusters on this machine are never touched)."""
    import clusters.nodes.local
    root = tmp_path / "clusters"
    root.mkdir()
    monkeypatch.setattr(clusters.nodes.local, "STATE_ROOT", root)
    return root


def test_heal_and_status_without_a_name_act_on_every_cluster_and_say_which(cluster, local_cluster,
                                                                              state_root):
    (state_root / local_cluster.name).symlink_to(local_cluster.dir)
    for command in ("heal", "status"):
        result = run("cluster", command)
        assert result.exit_code == 0, result.output
        assert f"local clusters in {state_root}: {local_cluster.name}" in result.output
    assert f"cluster {local_cluster.name}: healed (0 actions)" in run("cluster", "heal").output


@pytest.mark.own_cluster
def test_down_without_a_name_removes_every_cluster_there(state_root):
    local = LocalCluster("lt-cli-all", state_root)
    local.up(nodes=1)
    result = run("cluster", "down")
    assert result.exit_code == 0, result.output
    assert "local clusters in" in result.output and "cluster lt-cli-all: removed" in result.output
    assert not [ns for ns in list_netns() if ns.startswith("lt-lt-cli-all-")]
    assert not link_exists(local.bridge) and not local.dir.exists()
    assert "local clusters in" in run("cluster", "down").output  # none left: says so, exit 0


def test_heal_with_run_finds_the_cluster_the_run_recorded(cluster, local_cluster, tmp_path):
    import json
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "test.json").write_text(json.dumps(
        {"cluster": {"local": local_cluster.name, "state_root": str(local_cluster.root)}}))
    result = run("cluster", "heal", "--run", str(run_dir))
    assert result.exit_code == 0, result.output
    assert f"cluster {local_cluster.name}: healed" in result.output
    (run_dir / "test.json").write_text(json.dumps({"status": "complete"}))
    result = run("cluster", "heal", "--run", str(run_dir))
    assert result.exit_code == exit_codes.BAD_INPUT and "recorded no cluster" in result.output


def test_status_of_unknown_cluster_is_bad_input():
    result = run("cluster", "status", "--name", "no-such-cluster")
    assert result.exit_code == exit_codes.BAD_INPUT
    assert "no local cluster 'no-such-cluster'" in result.output


@pytest.mark.parametrize("command", ["up", "down", "status", "heal"])
def test_a_name_no_cluster_can_have_is_bad_input_named(command):
    result = run("cluster", command, "--name", "Bad_Name")
    assert result.exit_code == exit_codes.BAD_INPUT, result.output
    assert "Invalid value for '--name': cluster name 'Bad_Name' is not valid" in result.output
    assert "Traceback" not in result.output


def test_bad_set_is_bad_input():
    result = run("cluster", "up", "--name", "never", "--set", "novalue")
    assert result.exit_code == exit_codes.BAD_INPUT and "expected key=value" in result.output


def test_txn_version_is_checked_before_anything_is_made():
    result = run("cluster", "up", "--name", "never", "--txn-version", "2", "--kafka-version", "3.0.0")
    assert result.exit_code == exit_codes.BAD_INPUT
    assert "--txn-version needs Kafka 4.0 or later (transaction.version), not 3.0.0" in result.output
    result = run("cluster", "up", "--name", "never", "--txn-version", "1", "--db", "tansu")
    assert result.exit_code == exit_codes.BAD_INPUT and "--txn-version is Kafka's own" in result.output
    assert not LocalCluster("never").dir.exists()


def test_cluster_up_finalizes_the_txn_version(local_cluster):
    from clusters.cluster import Cluster
    from clusters.kafka.admin import TRANSACTION_VERSION, finalized_feature
    name = f"{local_cluster.name}-tv"
    LocalCluster(name).down()
    try:
        result = run("cluster", "up", "--name", name, "--nodes", "1", "--txn-version", "1")
        assert result.exit_code == 0, result.output
        assert "Kafka 4.1.1 (KRaft mode), transaction.version 1" in result.output
        with Cluster.open(LocalCluster(name).inventory_path, start=False) as opened:
            assert finalized_feature(opened, "n1", TRANSACTION_VERSION) == 1
    finally:
        LocalCluster(name).down()


def test_failed_bring_up_leaves_nothing_behind(local_cluster):
    name = f"{local_cluster.name}-fail"
    local = LocalCluster(name)
    local.down()
    # Kafka refuses this config while formatting storage, after netns and sshd exist
    result = run("cluster", "up", "--name", name, "--nodes", "1",
                 "--set", "process.roles=nonsense")
    assert result.exit_code == exit_codes.HARNESS_ERROR
    assert "node n1" in result.output and "cluster up failed" in result.output
    assert not [ns for ns in list_netns() if ns.startswith(f"lt-{name}-")]
    assert not link_exists(local.bridge) and not local.dir.exists()


def test_doctor_reports_everything_present():
    result = run("doctor")
    assert result.exit_code == 0, result.output
    assert "[ok  ] JVM under libfaketime" in result.output
    assert "[ok  ] class archive: brokers" in result.output and "[ok  ] class archive: spark" in result.output
    # `make test` builds every client under test first (its `clients` target)
    for client in ("java", "franz-go", "sarama", "kafka-python", "kafkajs"):
        assert f"[ok  ] client {client}" in result.output, result.output
    # kafkajs's toolchain, found, with its versions
    assert "[ok  ] node (kafkajs)" in result.output and "[ok  ] npm (kafkajs)" in result.output


def test_doctor_checks_every_node_of_an_inventory(cluster):
    result = run("doctor", "--inventory", str(cluster.inventory.path))
    assert result.exit_code == 0, result.output
    for node in cluster.inventory.node_names:
        section = result.output.split(f"node {node}:\n", 1)[1].split("node ", 1)[0]
        for tool in ("iptables", "java", "python3", "setsid"):
            assert f"[ok  ] {tool}" in section, section
        # this machine's kernel has no netem: the packet faults take the fallback path
        assert "packet faults" in section and "path fallback (netem False, htb True, nfqueue True)" in section


def test_doctor_names_a_node_it_cannot_reach(cluster, tmp_path):
    inventory = yaml.safe_load(Path(cluster.inventory.path).read_text())
    unreachable = inventory["nodes"][0]
    unreachable["host"] = "10.201.255.254"   # in the pool, owned by no cluster
    path = tmp_path / "inventory.yaml"
    path.write_text(yaml.safe_dump(inventory))
    result = run("doctor", "--inventory", str(path))
    assert result.exit_code == exit_codes.HARNESS_ERROR
    assert f"node {unreachable['name']}:" in result.output and "[MISS] ssh" in result.output
    assert f"ssh on {unreachable['name']}" in result.output


def test_doctor_refuses_an_inventory_that_is_not_one(tmp_path):
    path = tmp_path / "inventory.yaml"
    path.write_text("nodes: 3\n")
    result = run("doctor", "--inventory", str(path))
    assert result.exit_code == exit_codes.BAD_INPUT and str(path) in result.output


def test_a_node_without_java_is_named_missing_what_needs_it():
    checks = checks_from({"java": "none", "iptables": "/usr/sbin/iptables"},
                         {"path": "netem", "netem": True, "htb": True, "nfqueue": False},
                         node_tools(system_kind("kafka"), None))
    java = next(c for c in checks if c.what == "java")
    assert not java.ok and java.required and "Kafka brokers" in java.detail
    assert next(c for c in checks if c.what == "iptables").ok
    assert next(c for c in checks if c.what == "packet faults").ok


def test_a_tansu_storage_node_needs_postgresql_and_its_brokers_no_java():
    tansu = system_kind("tansu")
    storage, broker = node_tools(tansu, "storage"), node_tools(tansu, None)
    assert "java" not in storage and "java" not in broker
    postgres = next(t for t in storage if t.endswith("/postgres"))
    assert postgres not in broker and storage[postgres][1]


def test_a_node_has_fuse_only_with_both_the_device_and_fusermount3():
    tools = node_tools(system_kind("kafka"), None)
    paths = {"path": "netem", "netem": True, "htb": True, "nfqueue": False}
    fuse = lambda found: next(c for c in checks_from(found, paths, tools) if c.what == "FUSE")  # noqa: E731
    assert fuse({"/dev/fuse": "present", "fusermount3": "/usr/bin/fusermount3"}).ok
    missing = fuse({"/dev/fuse": "present", "fusermount3": "none"})
    assert not missing.ok and not missing.required and "power fault" in missing.detail
    assert not fuse({"/dev/fuse": "none", "fusermount3": "/usr/bin/fusermount3"}).ok
