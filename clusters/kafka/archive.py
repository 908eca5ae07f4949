"""The class-data-sharing archive of a Kafka release's broker (common/jvm_archive.py).

Built once per release, Java and broker JVM options, by running a one-node
broker on loopback until it serves clients and stopping it cleanly; it lives
in the release's cache, so only nodes that share that cache (local ones) map
it. Brokers and Kafka's tools (same class path) then start on half the CPU.

Usage: python -m clusters.kafka.archive [VERSION]   (make install)
"""
from __future__ import annotations

import shlex
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import jvm_archive
from clusters.kafka.config import DEFAULT_JVM_OPTS
from clusters.kafka.install import MARKER
from clusters.kafka.versions import DEFAULT_VERSION, ZK, KafkaRelease, KafkaVersionError, resolve
from clusters.nodes.local import port_open

READY_TIMEOUT_S = 180
CLUSTER_ID = "bG9ndHJpYWwtYXJjaGl2ZQ"   # any valid KRaft cluster id
STOP_TIMEOUT_S = 120


def archive_file(release: KafkaRelease, jvm_opts: str) -> Path:
    """Where the archive for these JVM options is (whether it exists or not). Its
    id covers the jars too (the install's marker), so re-assembled jars get a new one."""
    marker = release.cache_dir / MARKER
    jars = marker.read_text() if marker.is_file() else ""
    return release.cache_dir / f"classes-{jvm_archive.java_key(jvm_opts, str(release.libs_dir), jars)}.jsa"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _config(data: Path, client: int, controller: int) -> str:
    return "\n".join([
        "process.roles=broker,controller", "node.id=1",
        f"controller.quorum.voters=1@127.0.0.1:{controller}",
        f"listeners=PLAINTEXT://127.0.0.1:{client},CONTROLLER://127.0.0.1:{controller}",
        f"advertised.listeners=PLAINTEXT://127.0.0.1:{client}",
        "controller.listener.names=CONTROLLER",
        "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        f"log.dirs={data}", "offsets.topic.replication.factor=1",
        "transaction.state.log.replication.factor=1", "transaction.state.log.min.isr=1", ""])


def _java(release: KafkaRelease, opts: str, main_and_args: str, log: Path) -> list[str]:
    classpath = shlex.quote(f"{release.libs_dir}/*")
    return ["sh", "-c", f"exec java {opts} -Dkafka.logs.dir={shlex.quote(str(log))} -cp {classpath} "
                        f"{main_and_args}"]


def _run_broker(release: KafkaRelease, jvm_opts: str, partial: Path, work: Path) -> str | None:
    """Runs a one-node broker with the dump option until it serves clients, then
    stops it (SIGTERM: a clean exit writes the dump); None, or what went wrong."""
    client, controller = _free_port(), _free_port()
    config = work / "server.properties"
    config.write_text(_config(work / "data", client, controller))
    log = work / "broker.log"
    fmt = subprocess.run(_java(release, "-Xmx256m -XX:+UseSerialGC",
                               f"kafka.tools.StorageTool format --ignore-formatted "
                               f"--cluster-id={CLUSTER_ID} --config {config}", work),
                         capture_output=True, text=True, timeout=STOP_TIMEOUT_S)
    if fmt.returncode != 0:
        return f"formatting failed: {(fmt.stdout + fmt.stderr).strip()[-300:]}"
    with open(log, "w") as out:
        broker = subprocess.Popen(_java(release, f"{jvm_opts} {jvm_archive.dump_option(partial)}",
                                        f"kafka.Kafka {config}", work),
                                  stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while not port_open("127.0.0.1", client, 1):
            if broker.poll() is not None or time.monotonic() > deadline:
                return f"the broker did not come up; see {log}"
            time.sleep(0.3)
        time.sleep(2)   # let it finish starting: its later classes belong in the archive too
    finally:
        if broker.poll() is None:
            broker.terminate()
        try:
            broker.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            broker.kill()
            broker.wait()
            return "the broker did not stop cleanly"
    return None


def ensure_archive(release: KafkaRelease, jvm_opts: str, say=print) -> Path | None:
    """The release's archive, built first if missing; None if it cannot be
    (the brokers then start without one). ZooKeeper-mode releases get none."""
    if release.mode == ZK:
        return None

    def build(partial: Path) -> str | None:
        with tempfile.TemporaryDirectory(prefix="logtrial-archive-") as work:
            return _run_broker(release, jvm_opts, partial, Path(work))
    return jvm_archive.ensure(archive_file(release, jvm_opts), build, f"kafka {release.version}", say)


def main(argv: list[str]) -> int:
    try:
        release = resolve(argv[0] if argv else DEFAULT_VERSION)
    except KafkaVersionError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    found = ensure_archive(release, DEFAULT_JVM_OPTS)
    if found:
        print(f"kafka {release.version}: class archive {found}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
