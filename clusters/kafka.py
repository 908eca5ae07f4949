"""Apache Kafka brokers driven over SSH, any version clusters/kafka_versions.py knows:
KRaft combined mode (every node is broker and controller) or, for 3.x, ZooKeeper mode
with a ZooKeeper server on every node (clusters/zookeeper.py). Brokers run under
libfaketime so the clock nemesis can skew a node's clock by rewriting one file.

Settings are Kafka broker properties; logtrial's defaults favour safety (no unclean
election, RF 3, min ISR 2) and fast start-up on a small machine. Any of them can be
overridden (`--set key=value`); `jvm.opts` replaces the JVM options;
`logtrial.kafka.version` and `logtrial.kafka.mode` choose the release.
"""
from __future__ import annotations

import base64
import functools
import hashlib
import logging
import re
import shlex
import socket
import time
from pathlib import Path

from clusters.db import DatabaseError
from clusters.faketime import faketime_env, leftover_files
from clusters.inventory import Inventory, Node
from clusters.jvm_archive import use_options_shell
from clusters.kafka_archive import archive_file
from clusters.kafka_install import ensure_installed
from clusters.kafka_versions import (DEFAULT_VERSION, KRAFT, MODES, RELEASE_PATTERN, ZK, KafkaRelease,
                                     KafkaVersionError, resolve)
from clusters.node_process import NodeProcess
from clusters.ssh import SSHPool
from clusters.zookeeper import ZooKeeper

log = logging.getLogger(__name__)

KAFKA_VERSION = DEFAULT_VERSION  # the version run when none is asked for
CLIENT_PORT = 9092
CONTROLLER_PORT = 9093
START_TIMEOUT = 240  # generous: the box is shared and a starved JVM starts slowly

# Small heap, one GC thread and C1 only: 3-5 brokers fit on a 2-core box and start fast.
DEFAULT_JVM_OPTS = ("-Xms128m -Xmx384m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 "
                    "-XX:MaxMetaspaceSize=160m -XX:MaxDirectMemorySize=128m -Xss512k "
                    "-XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true")

# Static settings the producer-state fault (nemesis/producer_state.py) needs to act within
# seconds instead of minutes: how often brokers look for expired producer ids and for
# segments past retention, and how long a deleted segment lingers. Cheap on test clusters.
PRODUCER_STATE_SETTINGS: dict[str, str] = {
    "producer.id.expiration.check.interval.ms": "1000",
    "log.retention.check.interval.ms": "1000",
    "log.segment.delete.delay.ms": "1000",
}

DEFAULT_SETTINGS: dict[str, str] = {
    # safety: what a Jepsen-style test of acknowledged writes should run against
    "default.replication.factor": "3",
    "min.insync.replicas": "2",
    "unclean.leader.election.enable": "false",
    "auto.create.topics.enable": "false",
    "offsets.topic.replication.factor": "3",
    "transaction.state.log.replication.factor": "3",
    "transaction.state.log.min.isr": "2",
    # fast start-up and fast failure detection on a small machine
    "group.initial.rebalance.delay.ms": "0",
    "offsets.topic.num.partitions": "10",
    "transaction.state.log.num.partitions": "10",
    "num.partitions": "1",
    "num.network.threads": "2",
    "num.io.threads": "2",
    "num.replica.fetchers": "1",
    "background.threads": "2",
    "log.cleaner.threads": "1",
    "log.cleaner.dedupe.buffer.size": "8388608",
    "num.recovery.threads.per.data.dir": "1",
    "replica.lag.time.max.ms": "10000",
    **PRODUCER_STATE_SETTINGS,
}
# failure detection and quorum timing, per metadata mode
KRAFT_SETTINGS: dict[str, str] = {
    "broker.heartbeat.interval.ms": "1000",
    "broker.session.timeout.ms": "6000",
    # Raft timeouts tolerant of a starved CPU: with the 1 s default, a shared 2-core box
    # keeps re-running elections and the quorum never forms
    "controller.quorum.election.timeout.ms": "2500",
    "controller.quorum.fetch.timeout.ms": "5000",
    "controller.quorum.request.timeout.ms": "5000",
}
ZK_SETTINGS: dict[str, str] = {
    "zookeeper.session.timeout.ms": "6000",  # as broker.session.timeout.ms: fenced in seconds
    "zookeeper.connection.timeout.ms": "30000",
}
# Before 3.5 a broker's request handler thread blocks while the controller allocates a
# block of producer ids, and the controller needs a free handler thread to answer
# (KAFKA-14694, fixed in 3.5): with our 2 threads, two producers starting at once stall
# the broker. Kafka's default of 8 threads makes that rare.
BLOCKING_PRODUCER_ID_SETTINGS: dict[str, str] = {"num.io.threads": "8"}
PRODUCER_ID_BLOCKING_FIXED = (3, 5, 0)
SHARE_GROUP_SETTINGS: dict[str, str] = {  # Kafka 4.0+
    "share.coordinator.state.topic.replication.factor": "3",
    "share.coordinator.state.topic.min.isr": "2",
}
REPLICATION_FACTOR_KEYS = ("default.replication.factor", "offsets.topic.replication.factor",
                           "transaction.state.log.replication.factor",
                           "share.coordinator.state.topic.replication.factor")
MIN_ISR_KEYS = ("min.insync.replicas", "transaction.state.log.min.isr",
                "share.coordinator.state.topic.min.isr")
# keys that are logtrial's, not Kafka's
JVM_OPTS_KEY = "jvm.opts"
FAKETIME_KEY = "logtrial.faketime"
VERSION_KEY = "logtrial.kafka.version"
MODE_KEY = "logtrial.kafka.mode"
QUORUM_KEY = "logtrial.kraft.quorum"  # "dynamic": a KIP-853 controller quorum (else static)
DYNAMIC = "dynamic"
DYNAMIC_QUORUM_SINCE = (3, 9, 0)  # KIP-853: kafka-storage format --initial-controllers


def kafka_cache_dir(version: str = DEFAULT_VERSION) -> Path:
    """Where scripts/install-kafka.sh assembles a version's jars on the control node."""
    return KafkaRelease(version, KRAFT).cache_dir


def release_settings(version: str | None, mode: str | None, dynamic_quorum: bool = False) -> dict[str, str]:
    """The settings that choose a release (--kafka-version, --kafka-mode) and how its
    storage is formatted (--dynamic-quorum); empty for defaults."""
    return {k: v for k, v in ((VERSION_KEY, version), (MODE_KEY, mode),
                              (QUORUM_KEY, DYNAMIC if dynamic_quorum else None)) if v}


def check_dynamic_quorum(release: KafkaRelease) -> None:
    """KafkaVersionError unless the release can run a dynamic (KIP-853) controller quorum."""
    if release.mode != KRAFT or release.parts < DYNAMIC_QUORUM_SINCE:
        raise KafkaVersionError(f"--dynamic-quorum needs KRaft on Kafka 3.9.0 or later (KIP-853); "
                                f"{release.label} cannot run one")


def directory_id(name: str, node_id: int) -> str:
    """The metadata log dir's directory id (a base64 UUID, as meta.properties holds it) a
    dynamic quorum is formatted with, stable for a cluster name and node."""
    digest = bytearray(hashlib.sha256(f"{name}/{node_id}".encode()).digest()[:16])
    digest[6] = (digest[6] & 0x0F) | 0x40  # a version-4 UUID, as Uuid.randomUuid() makes
    digest[8] = (digest[8] & 0x3F) | 0x80
    return base64.urlsafe_b64encode(bytes(digest)).decode()[:22]


def cluster_id(name: str) -> str:
    """A valid KRaft cluster id (22-char base64 UUID), stable for a cluster name."""
    return base64.urlsafe_b64encode(hashlib.sha256(name.encode()).digest()[:16]).decode()[:22]


def format_storage_args(cluster_name: str, config_file: str) -> str:
    """StorageTool's main class and arguments that format a node's storage. The id is
    attached with `=`: a base64 id may begin with '-', which argparse would take for
    an option."""
    return ("kafka.tools.StorageTool format --ignore-formatted "
            f"--cluster-id={cluster_id(cluster_name)} --config {shlex.quote(config_file)}")


def parse_settings(pairs: list[str] | tuple[str, ...]) -> dict[str, str]:
    """`key=value` strings (from repeated --set) into a dict; ValueError names the bad one."""
    settings = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--set {pair!r}: expected key=value")
        settings[key.strip()] = value.strip()
    return settings


class KafkaDB(NodeProcess):
    label = "broker"

    def __init__(self, inventory: Inventory, ssh: SSHPool, settings: dict | None = None,
                 start_timeout: float = START_TIMEOUT) -> None:
        """KafkaVersionError (a ValueError) if the settings ask for a release that
        cannot run."""
        super().__init__(ssh)
        self.inventory = inventory
        self.given_settings = dict(settings or {})
        base = dict(inventory.settings)
        if VERSION_KEY in (settings or {}):
            base.pop(MODE_KEY, None)  # a version asked for alone runs in its own default mode
        self.settings = {**base, **(settings or {})}
        self.start_timeout = start_timeout
        self.faketime = self.settings.pop(FAKETIME_KEY, "true").lower() not in ("false", "0", "no")
        self.jvm_opts = self.settings.pop(JVM_OPTS_KEY, DEFAULT_JVM_OPTS)
        # whether the inventory or the caller named a release (else: the default)
        self.release_chosen = VERSION_KEY in self.settings or MODE_KEY in self.settings
        self.release = resolve(self.settings.pop(VERSION_KEY, None), self.settings.pop(MODE_KEY, None))
        quorum = self.settings.pop(QUORUM_KEY, "static")
        if quorum not in ("static", DYNAMIC):
            raise KafkaVersionError(f"{QUORUM_KEY}={quorum!r}: expected static or {DYNAMIC}")
        self.dynamic_quorum = quorum == DYNAMIC
        if self.dynamic_quorum:
            check_dynamic_quorum(self.release)
        self.zookeeper = (ZooKeeper(inventory, ssh, self.release, self.libs_dir)
                          if self.release.mode == ZK else None)

    # -- layout on each node ----------------------------------------------------------
    def _node(self, node: str) -> Node:
        return self.inventory.node(node)

    def node_id(self, node: str) -> int:
        return self.inventory.node_names.index(node) + 1

    def kafka_dir(self, node: str) -> str:
        return f"{self._node(node).home}/kafka"

    def config_file(self, node: str) -> str:
        return f"{self.kafka_dir(node)}/server.properties"

    def data_dir(self, node: str) -> str:
        return f"{self.kafka_dir(node)}/data"

    def logs_dir(self, node: str) -> str:
        return f"{self.kafka_dir(node)}/logs"

    def stdout_file(self, node: str) -> str:
        return f"{self.logs_dir(node)}/kafka.out"

    def pid_file(self, node: str) -> str:
        return f"{self.kafka_dir(node)}/kafka.pid"

    def release_file(self, node: str) -> str:
        """Which version and mode the node was set up for ("3.0.0 zk")."""
        return f"{self.kafka_dir(node)}/release"

    def quorum_file(self, node: str) -> str:
        """How the node's KRaft quorum was formatted: static or dynamic."""
        return f"{self.kafka_dir(node)}/quorum"

    @property
    def quorum_kind(self) -> str:
        return DYNAMIC if self.dynamic_quorum else "static"

    def recorded_quorum(self, node: str) -> str:
        """The quorum kind the node was formatted for ("static" if never recorded)."""
        text = self._session(node).exec(f"cat {shlex.quote(self.quorum_file(node))} 2>/dev/null",
                                        check=False, timeout=15).stdout.strip()
        return text or "static"

    def clock_offset_file(self, node: str) -> str:
        return f"{self._node(node).home}/faketime.rc"

    def libs_dir(self, node: str) -> str:
        if self._node(node).local:
            return str(self.release.libs_dir)  # same filesystem: share the cache
        return f"{self._node(node).home}/kafka-{self.release.version}-libs"

    def bootstrap_servers(self) -> str:
        return ",".join(f"{n.host}:{CLIENT_PORT}" for n in self.inventory.nodes)

    def controller_servers(self) -> str:
        return ",".join(f"{n.host}:{CONTROLLER_PORT}" for n in self.inventory.nodes)

    def initial_voters(self, with_directories: bool = True) -> str:
        """Every node as a voter: `id@host:port` (controller.quorum.voters) or, for
        `format --initial-controllers`, `id@host:port:directory-id`."""
        return ",".join(f"{self.node_id(n.name)}@{n.host}:{CONTROLLER_PORT}"
                        + (f":{directory_id(self.inventory.name, self.node_id(n.name))}" if with_directories else "")
                        for n in self.inventory.nodes)

    # -- install ----------------------------------------------------------------------
    def install(self, node: str) -> None:
        """Fetches the release's jars into the control node's cache on first use, checks
        the node's Java, and puts the jars and the logging config on the node."""
        ensure_installed(self.release, say=log.info)
        session = self._session(node)
        self._check_java(node)
        if self._node(node).local:
            self._check_shared_cache(node)
        else:
            self.sync_jars(node)
        session.exec(f"mkdir -p {shlex.quote(self.logs_dir(node))} "
                     f"{shlex.quote(self.data_dir(node))}", timeout=30)
        session.upload(self.release.log_config, self.log_config_file(node))

    def log_config_file(self, node: str) -> str:
        return f"{self.kafka_dir(node)}/{self.release.log_config.name}"

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
        jar = f"{self.libs_dir(node)}/{self.release.broker_jar}"
        found = self._session(node).exec(f"test -f {shlex.quote(jar)}", check=False, timeout=30)
        if found.exit_code != 0:
            raise DatabaseError(node, f"the node is marked local but {jar} is missing there; "
                                "run `make kafka` (scripts/install-kafka.sh)")

    def sync_jars(self, node: str) -> list[str]:
        """Uploads only the jars whose sha256 differs on the node, removes jars that do not
        belong, then verifies them all. Returns the names uploaded."""
        session, libs = self._session(node), self.libs_dir(node)
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

    # -- setup ------------------------------------------------------------------------
    def properties(self, node: str) -> dict[str, str]:
        """The broker's server.properties: the mode's listeners and quorum, the safe
        defaults for this release, then user settings (which win)."""
        n = self._node(node)
        count = len(self.inventory.nodes)
        props = {
            **(self._kraft_properties(node) if self.release.mode == KRAFT else
               {"broker.id": str(self.node_id(node)),
                "zookeeper.connect": self.zookeeper.connect_string(),
                "listeners": f"PLAINTEXT://{n.host}:{CLIENT_PORT}",
                **ZK_SETTINGS}),
            "advertised.listeners": f"PLAINTEXT://{n.host}:{CLIENT_PORT}",
            "inter.broker.listener.name": "PLAINTEXT",
            "log.dirs": self.data_dir(node),
            **DEFAULT_SETTINGS,
            **(SHARE_GROUP_SETTINGS if self.release.has_share_groups else {}),
            **(BLOCKING_PRODUCER_ID_SETTINGS if self.release.parts < PRODUCER_ID_BLOCKING_FIXED else {}),
        }
        # a cluster smaller than the default replication factor could create nothing
        for key in (k for k in REPLICATION_FACTOR_KEYS if k in props):
            props[key] = str(min(int(props[key]), count))
        for key in (k for k in MIN_ISR_KEYS if k in props):
            props[key] = str(min(int(props[key]), max(count - 1, 1)))
        props.update(self.settings)
        return props

    def _kraft_properties(self, node: str) -> dict[str, str]:
        host = self._node(node).host
        # static: the voters are fixed in every config; dynamic: the voter set lives in the
        # metadata log (formatted with --initial-controllers) and the config only says
        # where to find the quorum
        quorum = ({"controller.quorum.bootstrap.servers": self.controller_servers()} if self.dynamic_quorum
                  else {"controller.quorum.voters": self.initial_voters(with_directories=False)})
        return {
            "process.roles": "broker,controller",
            "node.id": str(self.node_id(node)),
            **quorum,
            "listeners": f"PLAINTEXT://{host}:{CLIENT_PORT},CONTROLLER://{host}:{CONTROLLER_PORT}",
            "controller.listener.names": "CONTROLLER",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            **KRAFT_SETTINGS,
        }

    def setup(self, node: str) -> None:
        """Writes the config and formats storage (KRaft) or sets up ZooKeeper. A node
        last set up for another release or mode is wiped first: its data cannot be read
        by this one."""
        session = self._session(node)
        recorded = self.recorded_release(node)
        if recorded not in (None, self.release):
            self.for_release(recorded).wipe(node)  # its processes and files, ZooKeeper's too
        elif self.recorded_quorum(node) != self.quorum_kind:
            self.wipe(node)  # a static quorum's metadata log cannot become dynamic, nor back
        session.exec(f"mkdir -p {shlex.quote(self.logs_dir(node))} "
                     f"{shlex.quote(self.data_dir(node))}", timeout=30)
        text = "".join(f"{k}={v}\n" for k, v in self.properties(node).items())
        session.write_file(self.config_file(node), "# written by logtrial (clusters/kafka.py)\n"
                           + text)
        self.reset_clock(node)
        if self.zookeeper:
            self.zookeeper.setup(node)
        else:
            self.format_storage(node)
        session.write_file(self.release_file(node), f"{self.release.version} {self.release.mode}\n")
        session.write_file(self.quorum_file(node), self.quorum_kind + "\n")

    def format_storage(self, node: str, replacement: bool = False) -> None:
        """Formats the node's KRaft storage with the cluster's id (a no-op if formatted).
        In a dynamic quorum every node starts as a voter under its own directory id; a
        `replacement` (a node wiped after it ran) gets a new random directory id and no
        voters (`--no-initial-controllers`), so it rejoins as an observer and votes again
        only once add-controller has made it a voter: the KIP-853 way to replace a disk,
        which keeps a voter from coming back with an empty log under its old identity."""
        args = format_storage_args(self.inventory.name, self.config_file(node))
        if self.dynamic_quorum:
            args += (" --no-initial-controllers" if replacement
                     else f" --initial-controllers {shlex.quote(self.initial_voters())}")
        self._session(node).exec(self.tool_command(node, args, heap="256m"), timeout=180)

    def disk_directory_id(self, node: str) -> str:
        """The directory id in the node's meta.properties (its disk's identity in a
        dynamic quorum); DatabaseError if it has none."""
        meta = shlex.quote(f"{self.data_dir(node)}/meta.properties")
        text = self._session(node).exec(f"cat {meta} 2>/dev/null", check=False, timeout=15).stdout
        found = [line.split("=", 1)[1].strip() for line in text.splitlines() if line.startswith("directory.id=")]
        if not found:
            raise DatabaseError(node, f"no directory.id in {self.data_dir(node)}/meta.properties")
        return found[0]

    def ensure_formatted(self, node: str) -> bool:
        """Formats a KRaft node whose log dir was wiped (the membership fault does that,
        and its control process may die before the node is formatted again) or never
        formatted (a run stopped during set-up); True if it had to. A broker never
        starts on an unformatted dir ("No readable meta.properties files found")."""
        if self.zookeeper:
            return False
        meta = shlex.quote(f"{self.data_dir(node)}/meta.properties")
        config = shlex.quote(self.config_file(node))
        session = self._session(node)
        found = session.exec(f"if test -f {meta}; then echo formatted; elif test -f {config}; "
                             "then echo configured; fi", timeout=15).stdout.strip()
        if found == "formatted":
            return False
        if found != "configured":
            self.setup(node)  # a run stopped during set-up, before it wrote the node's config
            return True
        session.exec(f"mkdir -p {shlex.quote(self.data_dir(node))}", timeout=30)
        # the quorum file is written once set-up has formatted the node: it ran before
        self.format_storage(node, replacement=self.recorded_quorum(node) == DYNAMIC)
        return True

    def tool_command(self, node: str, main_and_args: str, heap: str = "128m") -> str:
        """Shell command running one of Kafka's tools (a main class and its arguments) on the
        node, with the release's jars and a small JVM."""
        return self._java(f"-Xmx{heap} -XX:TieredStopAtLevel=1 -XX:+UseSerialGC", node, main_and_args)

    def for_release(self, release: KafkaRelease) -> "KafkaDB":
        """The same cluster and settings, another release."""
        return KafkaDB(self.inventory, self.ssh,
                       {**self.given_settings, **release_settings(release.version, release.mode)},
                       self.start_timeout)

    def recorded_release(self, node: str) -> KafkaRelease | None:
        """The release the node was last set up for (None if never, or before releases
        were recorded: then it was the default)."""
        path = self.release_file(node)
        text = self._session(node).exec(f"cat {shlex.quote(path)} 2>/dev/null", check=False,
                                        timeout=15).stdout.strip()
        if not text:
            return None
        version, _, mode = text.partition(" ")
        if not RELEASE_PATTERN.match(version) or mode not in MODES:
            raise DatabaseError(node, f"{path} holds {text!r}, not '<version> <mode>' like '3.0.0 zk'")
        return KafkaRelease(version, mode)

    def reset_clock(self, node: str) -> None:
        self._session(node).write_file(self.clock_offset_file(node), "+0\n")

    def _java(self, jvm_opts: str, node: str, main_and_args: str) -> str:
        classpath = shlex.quote(f"{self.libs_dir(node)}/*")
        log_config = self.release.log_config_option(shlex.quote(self.log_config_file(node)))
        logs = shlex.quote(self.logs_dir(node))
        return (f"java {jvm_opts}{self._archive_options(node)} {log_config} -Dkafka.logs.dir={logs} "
                f"-cp {classpath} {main_and_args}")

    def _archive_options(self, node: str) -> str:
        """Maps the release's class archive (clusters/kafka_archive.py) where the node
        shares the cache it lives in and the archive is there; tools use it too."""
        if not self._node(node).local:
            return ""
        options = use_options_shell(str(archive_file(self.release, DEFAULT_JVM_OPTS)))
        return f" {options}" if options else ""

    def _faketime_env(self, node: str) -> dict[str, str]:
        return faketime_env(self.clock_offset_file(node)) if self.faketime else {}

    # -- lifecycle --------------------------------------------------------------------
    def start(self, node: str) -> None:
        self.launch(node)
        self.wait_ready(node)

    def start_all(self, nodes: list[str] | None = None) -> None:
        """Starts several brokers together: a KRaft quorum needs a majority to come up.
        In ZooKeeper mode the ensemble (every node) is started first where it is down."""
        nodes = nodes or self.inventory.node_names
        if self.zookeeper:
            self.zookeeper.start_all()
        self.ssh.run_on(nodes, lambda s: self.launch(s.node.name))
        self.ssh.run_on(nodes, lambda s: self.wait_ready(s.node.name))

    def launch(self, node: str) -> int:
        """Starts the broker process without waiting for it to serve clients."""
        self._forget_dead_process(node)
        command = self._java(self.jvm_opts, node,
                             f"kafka.Kafka {shlex.quote(self.config_file(node))}")
        return self._session(node).start_daemon(command, self.pid_file(node),
                                                self.stdout_file(node),
                                                env=self._faketime_env(node))

    def wait_ready(self, node: str, timeout: float | None = None) -> None:
        """Waits until the broker is registered (unfenced) in the cluster metadata it
        serves on its own listener."""
        timeout = timeout or self.start_timeout
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.is_running(node):
                raise DatabaseError(node, f"broker ({self.release.label}) exited during start-up; "
                                    "last log lines:\n" + self.log_tail(node))
            if self.serves_metadata(node):
                return
            time.sleep(0.5)
        raise DatabaseError(node, f"broker not serving metadata after {timeout:g} s; "
                            "last log lines:\n" + self.log_tail(node))

    def serves_metadata(self, node: str) -> bool:
        """The broker answers on its listener and is registered, unfenced, in the metadata."""
        host = self._node(node).host
        return _port_open(host, CLIENT_PORT) and self.node_id(node) in _broker_ids(host)

    def _forget_dead_process(self, node: str) -> None:
        """Removes what a dead broker left in /dev/shm (libfaketime cleans up only on a
        clean exit); never touches the files of a live process that reused the pid."""
        session = self._session(node)
        pid = session.exited_pid(self.pid_file(node))
        if pid is not None:
            session.exec("rm -f " + " ".join(leftover_files(pid)), timeout=15)

    def shutdown(self, node: str) -> None:
        """Stops the broker and, in ZooKeeper mode, the node's ZooKeeper server."""
        self.stop(node)
        if self.zookeeper:
            self.zookeeper.stop(node)

    def wipe(self, node: str) -> None:
        self.kill(node)
        paths = " ".join(shlex.quote(p) for p in (self.data_dir(node), self.logs_dir(node),
                                                   self.pid_file(node)))
        self._session(node).exec(f"rm -rf {paths}", timeout=60)
        if self.zookeeper:
            self.zookeeper.wipe(node)

    # -- logs -------------------------------------------------------------------------
    def log_tail(self, node: str, lines: int = 40) -> str:
        return self._tail(node, [f"{self.logs_dir(node)}/server.log", self.stdout_file(node)], lines)

    def collect_logs(self, node: str, dest_dir: Path) -> None:
        """Copies the broker's logs and its server.properties into dest_dir (and
        ZooKeeper's into dest_dir/zookeeper)."""
        self._download_logs(node, self.logs_dir(node), self.config_file(node), dest_dir)
        if self.zookeeper:
            self.zookeeper.collect_logs(node, Path(dest_dir) / "zookeeper")

    # -- topics -----------------------------------------------------------------------
    def create_topic(self, name: str, partitions: int = 1, replication_factor: int | None = None,
                     min_insync_replicas: int = 2, config: dict | None = None,
                     timeout: float = 60) -> None:
        """Creates a topic with min.insync.replicas set on the topic itself, so
        acks=all writes need two replicas and Kafka 4.1's eligible leader replicas
        (ELR) can elect safely. An existing topic is an error."""
        from confluent_kafka.admin import AdminClient, NewTopic
        rf = replication_factor or min(3, len(self.inventory.nodes))
        topic_config = {"min.insync.replicas": str(min_insync_replicas), **(config or {})}
        admin = AdminClient({"bootstrap.servers": self.bootstrap_servers(), "logger": QUIET_CLIENT_LOGGER})
        future = admin.create_topics([NewTopic(name, partitions, rf, config=topic_config)],
                                     operation_timeout=timeout, request_timeout=timeout)[name]
        try:
            future.result(timeout=timeout)
        except Exception as e:  # noqa: BLE001 - KafkaException carries the broker's reason
            raise DatabaseError("-", f"creating topic {name!r} ({partitions} partitions, "
                                f"RF {rf}) failed: {e}") from None
        self._await_topic_leaders(admin, name, partitions, deadline=time.monotonic() + timeout)

    @staticmethod
    def _await_topic_leaders(admin, name: str, partitions: int, deadline: float) -> None:
        while time.monotonic() < deadline:
            topic = admin.list_topics(topic=name, timeout=5).topics.get(name)
            if topic and len(topic.partitions) == partitions and \
                    all(p.leader >= 0 for p in topic.partitions.values()):
                return
            time.sleep(0.2)
        raise DatabaseError("-", f"topic {name!r} has partitions without a leader")


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


def _broker_ids(host: str) -> set[int]:
    """Ids of the live brokers in the metadata served at host (empty if none answers)."""
    from confluent_kafka.admin import AdminClient
    admin = AdminClient({"bootstrap.servers": f"{host}:{CLIENT_PORT}", "logger": QUIET_CLIENT_LOGGER,
                         "socket.connection.setup.timeout.ms": 3000})
    try:
        return set(admin.list_topics(timeout=3).brokers)
    except Exception:  # noqa: BLE001 - any client error just means "not ready yet"
        return set()


def _port_open(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


class _QuietLogger(logging.Logger):
    """librdkafka reports every refused connection; during start-up those are expected."""

    def __init__(self) -> None:
        super().__init__("logtrial.kafka.client", level=logging.CRITICAL)


QUIET_CLIENT_LOGGER = _QuietLogger()
