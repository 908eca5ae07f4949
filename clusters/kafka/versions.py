"""Which Apache Kafka versions logtrial can run, in which metadata mode, from which jars.

Versions are the releases of org.apache.kafka:kafka_2.13 on Maven Central from 3.0.0
on (the version Jepsen tested, in ZooKeeper mode). The list is read from Maven
Central's maven-metadata.xml and cached for a day under the jar cache.

Modes, from Kafka's own documentation:
- before 3.3 KRaft was early access, "not for production" (3.0-3.2 docs), so those
  versions run with ZooKeeper only;
- 3.3 marked KRaft production ready for new clusters (KIP-833, 3.3 upgrade notes), so
  3.3-3.9 run either way, KRaft by default;
- 4.0 removed ZooKeeper (KIP-833's plan, 4.0 upgrade notes): KRaft only.

Standard library only: scripts/install-kafka.sh runs it before the venv exists.
"""
from __future__ import annotations

import os
import re
import time
import urllib.request
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

DEFAULT_VERSION = "4.1.1"
ZK, KRAFT = "zk", "kraft"
MODES = (ZK, KRAFT)
OLDEST = (3, 0, 0)
KRAFT_PRODUCTION_READY = (3, 3, 0)
ZOOKEEPER_REMOVED = (4, 0, 0)
METADATA_URL = "https://repo1.maven.org/maven2/org/apache/kafka/kafka_2.13/maven-metadata.xml"
LIST_MAX_AGE_S = 24 * 3600
RELEASE_PATTERN = re.compile(r"^\d+\.\d+\.\d+$")
POMS = Path(__file__).parent  # pom and log4j templates sit beside this module


class KafkaVersionError(ValueError):
    """A version or mode logtrial cannot run; the message names them."""


# The admin tools the faults run, by the first release whose kafka-tools jar has each
# where it lives now (newest first); before that, the broker jar's Scala tool.
# Measured in the jars on Maven Central (3.4.1, 3.5.2, 3.6.2, 3.7.2, 3.9.1).
TOOL_CLASSES = {
    "quorum": [((3, 4, 0), "org.apache.kafka.tools.MetadataQuorumCommand"), ((), "kafka.admin.MetadataQuorumCommand")],
    "cluster": [((3, 5, 0), "org.apache.kafka.tools.ClusterTool"), ((), "kafka.tools.ClusterTool")],
    "feature": [((3, 6, 0), "org.apache.kafka.tools.FeatureCommand"), ((), "kafka.admin.FeatureCommand")],
    "reassign": [((3, 7, 0), "org.apache.kafka.tools.reassign.ReassignPartitionsCommand"),
                 ((), "kafka.admin.ReassignPartitionsCommand")],
}


def cache_root() -> Path:
    return Path(os.environ.get("LOGTRIAL_CACHE", os.path.expanduser("~/.cache/logtrial")))


def version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


@dataclass(frozen=True)
class KafkaRelease:
    """One Kafka version in one mode: where its jars live and how it is configured."""

    version: str
    mode: str

    @property
    def parts(self) -> tuple[int, ...]:
        return version_tuple(self.version)

    @property
    def label(self) -> str:
        return f"Kafka {self.version} ({'ZooKeeper' if self.mode == ZK else 'KRaft'} mode)"

    @property
    def cache_dir(self) -> Path:
        return cache_root() / f"kafka-{self.version}"

    @property
    def libs_dir(self) -> Path:
        return self.cache_dir / "libs"

    @property
    def broker_jar(self) -> str:
        return f"kafka_2.13-{self.version}.jar"

    @property
    def pom_template(self) -> Path:
        """4.x uses log4j2 and needs kafka-tools for StorageTool; 3.x logs through the
        log4j 1 API (reload4j) and brings ZooKeeper along."""
        return POMS / ("pom.xml" if self.parts >= ZOOKEEPER_REMOVED else "pom-3.xml")

    @property
    def log_config(self) -> Path:
        return POMS / ("log4j2.properties" if self.parts >= ZOOKEEPER_REMOVED else "log4j.properties")

    def log_config_option(self, path: str) -> str:
        """The JVM system property that points the logging backend at `path`."""
        if self.parts >= ZOOKEEPER_REMOVED:
            return f"-Dlog4j2.configurationFile={path}"
        return f"-Dlog4j.configuration=file:{path}"

    @property
    def min_java(self) -> int:
        """Kafka 4.0 brokers need Java 17 (KIP-750); 3.x runs on Java 8 and later."""
        return 17 if self.parts >= ZOOKEEPER_REMOVED else 8

    def tool_class(self, tool: str) -> str:
        """The main class of one of Kafka's admin tools in this release (TOOL_CLASSES)."""
        return next(cls for since, cls in TOOL_CLASSES[tool] if self.parts >= since)

    @property
    def has_share_groups(self) -> bool:
        """share.coordinator.* settings exist from 4.0 (KIP-932)."""
        return self.parts >= ZOOKEEPER_REMOVED


def supported_modes(version: str) -> tuple[str, ...]:
    parts = version_tuple(version)
    if parts < KRAFT_PRODUCTION_READY:
        return (ZK,)
    if parts < ZOOKEEPER_REMOVED:
        return (KRAFT, ZK)  # default first
    return (KRAFT,)


def resolve(version: str | None = None, mode: str | None = None,
            available: list[str] | None = None) -> KafkaRelease:
    """The release for a --kafka-version and --kafka-mode (None: the defaults).
    KafkaVersionError names the version (and mode) that cannot run."""
    version = (version or DEFAULT_VERSION).strip()
    if not RELEASE_PATTERN.match(version):
        raise KafkaVersionError(f"Kafka version {version!r} is not a release number like 3.0.0")
    if version_tuple(version) < OLDEST:
        raise KafkaVersionError(f"Kafka {version} is older than {'.'.join(map(str, OLDEST))}, "
                                "the oldest version logtrial runs")
    if version != DEFAULT_VERSION:
        known = available if available is not None else available_versions()
        if version not in known:
            raise KafkaVersionError(
                f"Kafka {version} is not on Maven Central (org.apache.kafka:kafka_2.13); "
                f"known versions: {', '.join(known)}")
    modes = supported_modes(version)
    if mode is None:
        return KafkaRelease(version, modes[0])
    if mode not in MODES:
        raise KafkaVersionError(f"--kafka-mode must be one of {', '.join(MODES)}, not {mode!r}")
    if mode not in modes:
        raise KafkaVersionError(f"Kafka {version} does not run in {mode} mode "
                                f"({_mode_reason(version)}); it runs in: {', '.join(modes)}")
    return KafkaRelease(version, mode)


def _mode_reason(version: str) -> str:
    if version_tuple(version) < KRAFT_PRODUCTION_READY:
        return "KRaft was early access before 3.3, not for production"
    return "ZooKeeper mode was removed in 4.0"


# -- the list of versions on Maven Central ------------------------------------------------
def list_cache_file() -> Path:
    return cache_root() / "kafka_2.13-maven-metadata.xml"


def parse_metadata(xml_text: str) -> list[str]:
    """Release versions >= OLDEST from a maven-metadata.xml, oldest first (no RCs)."""
    root = ET.fromstring(xml_text)
    found = {v.text.strip() for v in root.iter("version") if v.text}
    releases = [v for v in found if RELEASE_PATTERN.match(v) and version_tuple(v) >= OLDEST]
    return sorted(releases, key=version_tuple)


def available_versions(refresh: bool = False) -> list[str]:
    """The versions logtrial can run. Maven Central is asked at most once a day; if it
    cannot be reached, an older cached list is used, and with no list at all the error
    says so."""
    cached = list_cache_file()
    fresh = cached.exists() and time.time() - cached.stat().st_mtime < LIST_MAX_AGE_S
    if refresh or not fresh:
        try:
            _download_list(cached)
        except (OSError, ET.ParseError) as e:
            if not cached.exists():
                raise KafkaVersionError(f"cannot list Kafka versions: {METADATA_URL}: {e}") from None
    return parse_metadata(cached.read_text(encoding="utf-8"))


def _download_list(dest: Path) -> None:
    with urllib.request.urlopen(METADATA_URL, timeout=30) as response:
        text = response.read().decode("utf-8")
    parse_metadata(text)  # a broken answer must not replace a good cached list
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(dest.name + f".{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, dest)
