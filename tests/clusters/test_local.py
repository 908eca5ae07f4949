"""Local cluster lifecycle: conflicts are refused by name, and `down` leaves nothing."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import yaml

from clusters.cluster import Cluster
from clusters.nodes.faketime import leftover_files
from clusters.kafka.admin import create_topic
from clusters.nodes.local import LocalCluster, LocalClusterError, link_exists, list_netns
from nemesis.heal import verify_healed

pytestmark = pytest.mark.cluster


def test_same_name_is_refused(local_cluster):
    with pytest.raises(LocalClusterError, match=f"cluster {local_cluster.name} already exists"):
        LocalCluster(local_cluster.name).up(nodes=1)


def test_subnet_in_use_is_refused_naming_its_owner(local_cluster):
    subnet = yaml.safe_load(local_cluster.state_path.read_text())["subnet"]
    other = LocalCluster(f"{local_cluster.name}-clash")
    with pytest.raises(LocalClusterError, match=f"in use by cluster {local_cluster.name}"):
        other.up(nodes=1, subnet=subnet)
    assert not other.dir.exists() and not list_netns_with(other)


def test_invalid_names_and_sizes(local_cluster):
    with pytest.raises(LocalClusterError, match="not valid"):
        LocalCluster("Bad_Name")
    with pytest.raises(LocalClusterError, match="--nodes"):
        LocalCluster(f"{local_cluster.name}-big").up(nodes=20)


def list_netns_with(local: LocalCluster) -> list[str]:
    return [ns for ns in list_netns() if ns.startswith(f"lt-{local.name}-")]


def processes_in(pids: list[int]) -> list[int]:
    return [p for p in pids if Path(f"/proc/{p}").exists()
            and "Z" not in Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[:1]]


def test_down_removes_every_trace(fresh_cluster):
    local = fresh_cluster(nodes=1, suffix="down")
    with Cluster.open(local.inventory_path) as opened:
        create_topic(opened, "before-reset", replication_factor=1, min_insync_replicas=1)
        opened.reset_database()
        from confluent_kafka.admin import AdminClient
        admin = AdminClient({"bootstrap.servers": opened.db.bootstrap_servers()})
        assert "before-reset" not in admin.list_topics(timeout=30).topics  # wiped
        verify_healed(opened)
        broker_pid = int(opened.ssh["n1"].exec(f"cat {opened.db.pid_file('n1')}").stdout)
    sshd_pid = int((local.sshd_dir("n1") / "sshd.pid").read_text())
    namespaces, interfaces = list_netns_with(local), [local.bridge, local.veth("n1")]
    assert namespaces == [local.netns("n1")]
    assert all(link_exists(i) for i in interfaces)
    assert processes_in([broker_pid, sshd_pid]) == [broker_pid, sshd_pid]
    assert all(os.path.exists(f) for f in leftover_files(broker_pid))

    removed = local.down(keep_data=True)

    assert f"netns {local.netns('n1')}" in removed
    assert list_netns_with(local) == []
    assert not any(link_exists(i) for i in interfaces)
    assert processes_in([broker_pid, sshd_pid]) == []
    assert not any(os.path.exists(f) for f in leftover_files(broker_pid))
    assert (local.home("n1") / "kafka" / "data" / "meta.properties").exists()  # data kept

    local.down()
    assert not local.dir.exists()
    assert local.down() == []  # twice is fine
    ip_addrs = subprocess.run(["ip", "-o", "addr"], capture_output=True, text=True).stdout
    assert local.bridge not in ip_addrs


def test_non_root_is_told_why_root_is_needed(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(LocalClusterError, match="needs root: it creates network namespaces"):
        LocalCluster("whoever").up()
