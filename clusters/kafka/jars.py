"""Putting a Kafka release on a node: the jars (uploaded where they differ, or shared
with the control node's cache on a local node), a Java recent enough, the directories
and the logging config."""
from __future__ import annotations

import functools
import hashlib
import logging
import re
import shlex
from pathlib import Path

from clusters.db import DatabaseError
from clusters.kafka.install import ensure_installed
from clusters.kafka.paths import KafkaPaths
from clusters.nodes.ssh import NodeSession, SSHPool

log = logging.getLogger(__name__)


class KafkaJars:
    def __init__(self, ssh: SSHPool, paths: KafkaPaths) -> None:
        self.ssh, self.paths = ssh, paths
        self.release = paths.release

    def _session(self, node: str) -> NodeSession:
        return self.ssh[node]

    def install(self, node: str) -> None:
        """Fetches the release's jars into the control node's cache on first use, checks
        the node's Java, and puts the jars and the logging config on the node."""
        ensure_installed(self.release, say=log.info)
        session = self._session(node)
        self._check_java(node)
        if self.paths.node(node).local:
            self._check_shared_cache(node)
        else:
            self.sync(node)
        session.exec(f"mkdir -p {shlex.quote(self.paths.logs_dir(node))} "
                     f"{shlex.quote(self.paths.data_dir(node))}", timeout=30)
        session.upload(self.release.log_config, self.paths.log_config_file(node))

    def _check_java(self, node: str) -> None:
        """The node's java is at least what the release needs; the error names both."""
        needs = f"{self.release.label} needs Java {self.release.min_java}+"
        java = self._session(node).exec("command -v java >/dev/null && java -version 2>&1 | head -1",
                                        timeout=30, check=False)
        if java.exit_code != 0:
            raise DatabaseError(node, f"java is not installed ({needs})")
        major = java_major(java.stdout)
        if major is None or major < self.release.min_java:
            raise DatabaseError(node, f"cannot run {self.release.label} here: {needs}, "
                                f"the node has {java.stdout.strip()!r}")

    def _check_shared_cache(self, node: str) -> None:
        jar = f"{self.paths.libs_dir(node)}/{self.release.broker_jar}"
        found = self._session(node).exec(f"test -f {shlex.quote(jar)}", check=False, timeout=30)
        if found.exit_code != 0:
            raise DatabaseError(node, f"the node is marked local but {jar} is missing there; "
                                "run `make kafka` (scripts/install-kafka.sh)")

    def sync(self, node: str) -> list[str]:
        """Uploads only the jars whose sha256 differs on the node, removes jars that do not
        belong, then verifies them all. Returns the names uploaded."""
        session, libs = self._session(node), self.paths.libs_dir(node)
        wanted = local_jar_checksums(self.release.libs_dir)
        session.exec(f"mkdir -p {shlex.quote(libs)}", timeout=30)
        present = parse_sha256sum(session.exec(
            f"cd {shlex.quote(libs)} && sha256sum -- *.jar 2>/dev/null", check=False,
            timeout=120).stdout)
        stale = [name for name, digest in wanted.items() if present.get(name) != digest]
        extra = [name for name in present if name not in wanted]
        for name in stale:
            log.info("node %s: uploading %s", node, name)
            session.upload(self.release.libs_dir / name, f"{libs}/{name}.part")
            session.exec(f"mv -f {shlex.quote(f'{libs}/{name}.part')} "
                         f"{shlex.quote(f'{libs}/{name}')}", timeout=30)
        if extra:
            session.exec(f"cd {shlex.quote(libs)} && rm -f -- "
                         + " ".join(shlex.quote(n) for n in extra), timeout=30)
        manifest = "".join(f"{digest}  {name}\n" for name, digest in sorted(wanted.items()))
        session.write_file(f"{libs}/SHA256SUMS", manifest)
        check = session.exec(f"cd {shlex.quote(libs)} && sha256sum --quiet -c SHA256SUMS",
                             check=False, timeout=300)
        if check.exit_code != 0:
            raise DatabaseError(node, f"jar checksums differ after upload: "
                                f"{(check.stdout + check.stderr).strip()[-400:]}")
        return stale


@functools.lru_cache(maxsize=4)
def local_jar_checksums(libs: Path) -> dict[str, str]:
    jars = sorted(libs.glob("*.jar"))
    if not jars:
        raise DatabaseError("control", f"no Kafka jars in {libs}; run `make kafka`")
    return {jar.name: hashlib.sha256(jar.read_bytes()).hexdigest() for jar in jars}


def java_major(version_line: str) -> int | None:
    """17 from 'openjdk version "17.0.15"', 8 from '"1.8.0_392"'."""
    match = re.search(r'version "(\d+)(?:\.(\d+))?', version_line)
    if not match:
        return None
    major = int(match.group(1))
    return int(match.group(2) or 0) if major == 1 else major


def parse_sha256sum(output: str) -> dict[str, str]:
    sums = {}
    for line in output.splitlines():
        digest, _, name = line.partition("  ")
        if name:
            sums[name.strip()] = digest.strip()
    return sums
