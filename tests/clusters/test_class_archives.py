"""Class-data-sharing archives (common/jvm_archive.py): the shared cluster's
brokers and the Spark session's driver map the archives `make install` built,
and a JVM given a missing, corrupt or switched-off archive runs without one."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from common import jvm_archive
from clusters.kafka.archive import archive_file
from clusters.kafka.config import DEFAULT_JVM_OPTS


def mapped_files(pid: int | str) -> set[str]:
    """The files process `pid` has mapped into memory."""
    lines = Path(f"/proc/{pid}/maps").read_text().splitlines()
    return {line.split(maxsplit=5)[5] for line in lines if len(line.split(maxsplit=5)) == 6}


@pytest.mark.cluster
def test_every_broker_maps_the_release_archive(cluster):
    archive = archive_file(cluster.db.release, DEFAULT_JVM_OPTS)
    assert archive.is_file(), f"make install builds {archive}"
    for node in cluster.nodes:
        pid = Path(cluster.db.pid_file(node)).read_text().strip()
        assert str(archive) in mapped_files(pid), f"{node}'s broker (pid {pid}) does not map {archive}"


@pytest.mark.spark
def test_the_spark_driver_maps_its_archive(spark):
    from checkers.spark.archive import archive_file as spark_archive
    archive = spark_archive()
    assert archive.is_file(), f"make install builds {archive}"
    assert str(archive) in mapped_files(spark.sparkContext._gateway.proc.pid)


def test_options_only_for_an_archive_that_exists_and_not_when_switched_off(tmp_path, monkeypatch):
    archive = tmp_path / "classes.jsa"
    assert jvm_archive.use_options(archive) == ""       # a missing file would cost the base archive too
    archive.write_bytes(b"not an archive")
    assert jvm_archive.use_options(archive).startswith(f"-XX:SharedArchiveFile={archive} ")
    monkeypatch.setenv(jvm_archive.SWITCH, "off")
    assert jvm_archive.use_options(archive) == "" and jvm_archive.use_options_shell(str(archive)) == ""


def _shell(command: str) -> subprocess.CompletedProcess:
    return subprocess.run(["sh", "-c", command], capture_output=True, text=True, timeout=60)


def test_the_node_shell_decides_whether_to_map_it(tmp_path):
    archive = tmp_path / "classes.jsa"
    assert _shell(f"echo {jvm_archive.use_options_shell(str(archive))}").stdout.strip() == ""
    archive.write_bytes(b"x")
    assert _shell(f"echo {jvm_archive.use_options_shell(str(archive))}").stdout.split()[0] == \
        f"-XX:SharedArchiveFile={archive}"


def test_a_corrupt_archive_does_not_stop_the_jvm_nor_print_on_its_stdout(tmp_path):
    archive = tmp_path / "classes.jsa"
    archive.write_bytes(bytes(range(256)) * 400)
    ran = _shell(f"java {jvm_archive.use_options_shell(str(archive))} -version")
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == "" and "openjdk version" in ran.stderr.lower()


def test_publish_keeps_only_a_complete_dump(tmp_path):
    archive = tmp_path / "classes.jsa"
    partial = jvm_archive.partial_path(archive)
    partial.write_bytes(b"")
    assert not jvm_archive.publish(partial, archive) and not archive.exists() and not partial.exists()
    partial.write_bytes(b"dumped")
    assert jvm_archive.publish(partial, archive) and archive.read_bytes() == b"dumped" and not partial.exists()


@pytest.mark.slow
def test_building_an_archive_runs_a_broker_and_leaves_one_the_jvm_can_map(tmp_path, monkeypatch):
    """ensure_archive in a cache of its own (the real jars linked in): the
    archive it publishes maps with sharing forced on, a stale one is gone and
    no partial dump is left."""
    from clusters.kafka.archive import ensure_archive
    from clusters.kafka.install import MARKER
    from clusters.kafka.versions import resolve
    real_libs, real_marker = resolve().libs_dir, resolve().cache_dir / MARKER   # (paths follow the env)
    monkeypatch.setenv("LOGTRIAL_CACHE", str(tmp_path))
    release = resolve()
    release.cache_dir.mkdir(parents=True)
    release.libs_dir.symlink_to(real_libs)
    (release.cache_dir / MARKER).write_text(real_marker.read_text())
    stale = release.cache_dir / "classes-0000000000000000.jsa"
    stale.write_bytes(b"an archive of another Java")
    archive = ensure_archive(release, DEFAULT_JVM_OPTS, say=lambda _: None)
    assert archive == archive_file(release, DEFAULT_JVM_OPTS) and archive.is_file()
    assert not stale.exists() and not list(release.cache_dir.glob("*.partial"))
    ran = subprocess.run(["java", "-Xshare:on", f"-XX:SharedArchiveFile={archive}", "-cp",
                          f"{release.libs_dir}/*", "kafka.tools.StorageTool", "random-uuid"],
                         capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0 and len(ran.stdout.strip()) == 22, ran.stdout + ran.stderr
