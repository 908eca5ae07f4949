"""The settings a Kafka cluster runs with: which release, the JVM options, libfaketime
or not, and each broker's server.properties.

Settings are Kafka broker properties; logtrial's defaults favour safety (no unclean
election, RF 3, min ISR 2) and fast start-up on a small machine. Any of them can be
overridden (`--set key=value`); `jvm.opts` replaces the JVM options;
`logtrial.kafka.version` and `logtrial.kafka.mode` choose the release.
"""
from __future__ import annotations

from pathlib import Path

from clusters.kafka.paths import CLIENT_PORT, CONTROLLER_PORT, KafkaPaths
from clusters.nodes.powerfs import POWERFS_KEY, names_model  # the broker's data on powerfs, for the power fault
from clusters.kafka.versions import DEFAULT_VERSION, KRAFT, KafkaRelease, KafkaVersionError, resolve

KAFKA_VERSION = DEFAULT_VERSION  # the version run when none is asked for

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
# an fsync after every message, broker-wide: each topic without its own flush.messages takes
# it, the internal ones included, so a write is on disk before it is acknowledged
FLUSH_MESSAGES_KEY = "log.flush.interval.messages"
UNSYNCED_ACKS = ("Kafka acknowledges a write before any fsync (log.flush.interval.messages defaults "
                 "to Long.MAX_VALUE); when a majority loses power at once, every replica of an "
                 "acknowledged record may lose it from its unflushed tail")



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


def parse_settings(pairs: list[str] | tuple[str, ...]) -> dict[str, str]:
    """`key=value` strings (from repeated --set) into a dict; ValueError names the bad one."""
    settings = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--set {pair!r}: expected key=value")
        settings[key.strip()] = value.strip()
    return settings



class KafkaConfig:
    """The settings of one cluster: the inventory's, then the caller's (which win).
    KafkaVersionError (a ValueError) if they ask for a release that cannot run."""

    def __init__(self, inventory_settings: dict[str, str], settings: dict | None = None) -> None:
        self.given = dict(settings or {})
        base = dict(inventory_settings)
        if VERSION_KEY in self.given:
            base.pop(MODE_KEY, None)  # a version asked for alone runs in its own default mode
        overrides = {**base, **self.given}
        self.faketime = overrides.pop(FAKETIME_KEY, "true").lower() not in ("false", "0", "no")
        # None: no layer; else when its name changes become durable (a ValueError names a bad value)
        self.powerfs_names = names_model(overrides.pop(POWERFS_KEY, "false"))
        self.powerfs = self.powerfs_names is not None
        self.jvm_opts = overrides.pop(JVM_OPTS_KEY, DEFAULT_JVM_OPTS)
        # whether the inventory or the caller named a release (else: the default)
        self.release_chosen = VERSION_KEY in overrides or MODE_KEY in overrides
        self.release = resolve(overrides.pop(VERSION_KEY, None), overrides.pop(MODE_KEY, None))
        quorum = overrides.pop(QUORUM_KEY, "static")
        if quorum not in ("static", DYNAMIC):
            raise KafkaVersionError(f"{QUORUM_KEY}={quorum!r}: expected static or {DYNAMIC}")
        self.dynamic_quorum = quorum == DYNAMIC
        if self.dynamic_quorum:
            check_dynamic_quorum(self.release)
        self.overrides = overrides  # broker properties only: logtrial's own keys are taken out

    def unsynced_acks(self) -> str | None:
        """Why a broker may acknowledge a write it has not fsynced (PowerLoss); None with
        an fsync of every message."""
        return None if self.overrides.get(FLUSH_MESSAGES_KEY, "").strip() == "1" else UNSYNCED_ACKS

    @property
    def quorum_kind(self) -> str:
        return DYNAMIC if self.dynamic_quorum else "static"

    def for_release(self, release: KafkaRelease) -> dict:
        """The settings given, with another release chosen."""
        return {**self.given, **release_settings(release.version, release.mode)}

    # -- server.properties --------------------------------------------------------------
    def properties(self, paths: KafkaPaths, node: str, zookeeper_connect: str | None = None) -> dict[str, str]:
        """The broker's server.properties: the mode's listeners and quorum, the safe
        defaults for this release, then user settings (which win). ZooKeeper mode
        needs the ensemble's connect string."""
        n = paths.node(node)
        count = len(paths.inventory.nodes)
        props = {
            **(self._kraft_properties(paths, node) if self.release.mode == KRAFT else
               {"broker.id": str(paths.node_id(node)),
                "zookeeper.connect": zookeeper_connect,
                "listeners": f"PLAINTEXT://{n.host}:{CLIENT_PORT}",
                **ZK_SETTINGS}),
            "advertised.listeners": f"PLAINTEXT://{n.host}:{CLIENT_PORT}",
            "inter.broker.listener.name": "PLAINTEXT",
            "log.dirs": paths.data_dir(node),
            **DEFAULT_SETTINGS,
            **(SHARE_GROUP_SETTINGS if self.release.has_share_groups else {}),
            **(BLOCKING_PRODUCER_ID_SETTINGS if self.release.parts < PRODUCER_ID_BLOCKING_FIXED else {}),
        }
        # a cluster smaller than the default replication factor could create nothing
        for key in (k for k in REPLICATION_FACTOR_KEYS if k in props):
            props[key] = str(min(int(props[key]), count))
        for key in (k for k in MIN_ISR_KEYS if k in props):
            props[key] = str(min(int(props[key]), max(count - 1, 1)))
        props.update(self.overrides)
        return props

    def _kraft_properties(self, paths: KafkaPaths, node: str) -> dict[str, str]:
        host = paths.node(node).host
        # static: the voters are fixed in every config; dynamic: the voter set lives in the
        # metadata log (formatted with --initial-controllers) and the config only says
        # where to find the quorum
        quorum = ({"controller.quorum.bootstrap.servers": paths.controller_servers()} if self.dynamic_quorum
                  else {"controller.quorum.voters": paths.initial_voters(with_directories=False)})
        return {
            "process.roles": "broker,controller",
            "node.id": str(paths.node_id(node)),
            **quorum,
            "listeners": f"PLAINTEXT://{host}:{CLIENT_PORT},CONTROLLER://{host}:{CONTROLLER_PORT}",
            "controller.listener.names": "CONTROLLER",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            **KRAFT_SETTINGS,
        }
