"""What `logtrial test` is asked to do, as specs: where the cluster is and what
runs on it, the workload and its settings, the faults, the check, and the
timing. `TestOptions.from_flat` builds them from the command line's flat
names (harness/flat.py); test.json records them flat, under the same names.

Validation raises ValueError naming the first bad option, before anything is
created."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from checkers.options import CheckOptions
from clusters.kafka.config import check_dynamic_quorum, release_settings
from clusters.kafka.versions import resolve
from clusters.nodes.pinning import local_cluster_of
from clusters.nodes.local import DEFAULT_NAME, LocalClusterError, check_name
from clusters.systems import DEFAULT_SYSTEM, SYSTEMS, system_kind
from harness.flat import flat, flat_names, from_flat, replace_flat, to_flat
from results import store
from workloads.client_kinds import client_kind
from workloads.producer_knobs import check_max_in_flight
from workloads.registry import WorkloadKind, workload_kind
from workloads.settings import DEFAULT_CLIENT, WorkloadSettings

TXN_VERSIONS = (1, 2)
TXN_VERSION_SINCE = (4, 0, 0)


def check_txn_version(level: int, release) -> None:
    """ValueError unless `level` is a transaction.version the release has (`test` and
    `cluster up` take --txn-version)."""
    if level not in TXN_VERSIONS:
        raise ValueError(f"--txn-version must be one of {', '.join(map(str, TXN_VERSIONS))}")
    if release.parts < TXN_VERSION_SINCE:
        raise ValueError(f"--txn-version needs Kafka 4.0 or later (transaction.version), not {release.version}")
# settings of specs owned elsewhere that `logtrial test` leaves at their defaults
NO_OPTION = {
    "examples": "CheckOptions: examples kept per anomaly type (`check` has no option either)",
    "poll_timeout": "WorkloadSettings: how long one consumer poll waits; tuned, not a test axis",
    "kafka_clients_version": "WorkloadSettings: the cluster's Kafka version, filled in at setup",
}


@dataclass(frozen=True)
class ClusterSpec:
    # where the cluster is: an inventory, a local cluster to bring up, or bare bootstrap servers
    nodes_file: str | None = None
    local: int | None = None
    bootstrap_servers: str | None = None   # an external Kafka without SSH: no faults, no node logs
    insecure_host_keys: bool = False
    # the system under test (clusters/systems.py); None: the inventory's, else kafka
    db: str | None = None
    # which Kafka (clusters/kafka/versions.py); None: the inventory's, else the default
    kafka_version: str | None = None
    kafka_mode: str | None = None
    dynamic_quorum: bool = False  # a KIP-853 controller quorum (--dynamic-quorum)
    db_settings: dict = field(default_factory=dict)  # broker settings: --set and --preset
    # each process's clients reach one node only, round-robin (docs/pinned-clients.md)
    pin_clients: bool = False
    leave_db_running: bool = False
    # the cluster's transaction.version feature (Kafka 4.0+); None: as the cluster has it
    txn_version: int | None = None

    def validate(self) -> None:
        sources = [n for n in ("nodes_file", "local", "bootstrap_servers") if getattr(self, n)]
        if len(sources) != 1:
            raise ValueError("give exactly one of --nodes-file, --local N or --bootstrap-servers")
        if self.local:
            _check_local_cluster_name()
        if self.pin_clients and self.bootstrap_servers:
            raise ValueError("--pin-clients needs a local cluster (--local or --nodes-file of one), "
                             "not --bootstrap-servers")
        if self.pin_clients and self.nodes_file:
            local_cluster_of(self.nodes_file)  # PinningError: real machines have no client namespaces
        if self.bootstrap_servers and (self.kafka_version or self.kafka_mode):
            raise ValueError("--kafka-version/--kafka-mode choose what logtrial installs; an "
                             "existing Kafka at --bootstrap-servers runs what it runs")
        if self.bootstrap_servers and self.dynamic_quorum:
            raise ValueError("--dynamic-quorum chooses how logtrial formats its cluster; an "
                             "existing Kafka at --bootstrap-servers runs what it runs")
        if self.db not in (None, *SYSTEMS):
            raise ValueError(f"--db {self.db}: unknown system (known: {', '.join(SYSTEMS)})")
        if not system_kind(self.db or DEFAULT_SYSTEM).kafka_release:
            self._check_not_kafka()
            return
        if self.kafka_version or self.kafka_mode or self.dynamic_quorum:
            release = resolve(self.kafka_version, self.kafka_mode)  # KafkaVersionError names the version
            if self.dynamic_quorum:
                check_dynamic_quorum(release)
        if self.txn_version is not None:
            self._check_txn_version()

    def _check_not_kafka(self) -> None:
        """Kafka's own options name no release of another system."""
        kafka_only = [option for option, given in (("--kafka-version", self.kafka_version),
                                                   ("--kafka-mode", self.kafka_mode),
                                                   ("--dynamic-quorum", self.dynamic_quorum),
                                                   ("--txn-version", self.txn_version is not None)) if given]
        if kafka_only:
            raise ValueError(f"{', '.join(kafka_only)}: Kafka's own, not for --db {self.db}")
        if self.bootstrap_servers:
            raise ValueError(f"--db {self.db} chooses what logtrial brings up; an existing cluster at "
                             "--bootstrap-servers runs what it runs")

    def _check_txn_version(self) -> None:
        if self.bootstrap_servers:
            raise ValueError("--txn-version sets a feature through Kafka's tools on a node: it needs a "
                             "cluster reached over SSH (--nodes-file or --local)")
        check_txn_version(self.txn_version, resolve(self.kafka_version, self.kafka_mode))

    @property
    def release_settings(self) -> dict[str, str]:
        return release_settings(self.kafka_version, self.kafka_mode, self.dynamic_quorum)


@dataclass(frozen=True)
class WorkloadSpec:
    name: str = field(default="queue", metadata=flat("workload"))
    settings: WorkloadSettings = field(default_factory=WorkloadSettings)

    @property
    def kind(self) -> WorkloadKind:
        return workload_kind(self.name)

    def validate(self) -> None:
        self.kind  # UnknownWorkload names the known ones
        s = self.settings
        if self.name not in client_kind(s.client).workloads:
            raise ValueError(f"--client {s.client} has no client for --workload {self.name} "
                             f"(it has: {', '.join(client_kind(s.client).workloads)})")
        gaps = client_kind(s.client).gaps
        gap = gaps(s) if gaps is not None else None
        if gap:
            raise ValueError(f"--client {s.client}: {gap}")
        if s.op_timeout <= 0:
            raise ValueError("--op-timeout must be positive")
        if s.idempotence and s.acks != "all":  # librdkafka refuses the combination
            raise ValueError(f"--idempotence needs --acks all (got --acks {s.acks}); add --no-idempotence")
        if s.idempotence and s.retries == 0:
            raise ValueError("--idempotence needs --retries > 0; add --no-idempotence")
        if s.txn and not s.idempotence:
            raise ValueError("--txn needs idempotence (transactions imply it); drop --no-idempotence")
        check_max_in_flight(s.max_in_flight, s.idempotence or s.txn)

    def settings_for(self, brokers: int, kafka_version: str | None = None) -> WorkloadSettings:
        """The settings on a cluster of `brokers` running `kafka_version` (None: not known):
        replication capped by its size, the Java client on its version's jars."""
        replication = min(self.settings.replication_factor, brokers)
        return dataclasses.replace(self.settings, replication_factor=replication,
                                   min_insync_replicas=min(self.settings.min_insync_replicas, replication),
                                   kafka_clients_version=kafka_version)


@dataclass(frozen=True)
class NemesisSpec:
    kinds: tuple[str, ...] = field(default=(), metadata=flat("nemesis"))
    interval: float = field(default=10.0, metadata=flat("nemesis_interval"))
    # None: NemesisRunner's defaults
    targets: tuple[str, ...] | None = field(default=None, metadata=flat("db_targets"))
    schedule_file: str | None = field(default=None, metadata=flat("nemesis_schedule"))
    partition_clients: bool = False

    @property
    def active_kinds(self) -> list[str]:
        kinds = [k for k in self.kinds if k and k != "none"]
        if not kinds and self.schedule_file:
            kinds = ["replay"]  # the schedule file says which faults
        return kinds

    def runner_kwargs(self) -> dict[str, Any]:
        """NemesisRunner's keywords beyond kinds and interval (unset ones left to its defaults)."""
        given = {"targets": self.targets, "schedule_file": self.schedule_file,
                 "partition_clients": self.partition_clients}
        return {k: v for k, v in given.items() if v is not None}


@dataclass(frozen=True)
class CheckSpec:
    enabled: bool = field(default=True, metadata=flat("check"))
    options: CheckOptions = field(default_factory=CheckOptions)
    engine: str = "auto"
    spark_master: str | None = None

    def record(self) -> dict[str, Any]:
        """test.json's "check": what `logtrial check` on the run defaults to."""
        return {**self.options.record(), "engine": self.engine, "spark_master": self.spark_master}


@dataclass(frozen=True)
class TimingSpec:
    time_limit: float = 60.0
    rate: float = 100.0
    concurrency: int = 10
    recovery_time: float = 10.0
    final_time_limit: float = 60.0
    hang_timeout: float = 120.0  # the watchdog's (harness/watchdog.py); 0: none

    def validate(self) -> None:
        for name in ("time_limit", "rate"):
            if getattr(self, name) <= 0:
                raise ValueError(f"--{name.replace('_', '-')} must be positive")
        if self.hang_timeout < 0:
            raise ValueError("--hang-timeout must be 0 (no watchdog) or positive")
        if self.concurrency < 1:
            raise ValueError("--concurrency must be at least 1")


@dataclass(frozen=True)
class TestOptions:
    __test__ = False  # not a pytest test class
    cluster: ClusterSpec = field(default_factory=ClusterSpec)
    workload: WorkloadSpec = field(default_factory=WorkloadSpec)
    nemesis: NemesisSpec = field(default_factory=NemesisSpec)
    check: CheckSpec = field(default_factory=CheckSpec)
    timing: TimingSpec = field(default_factory=TimingSpec)
    # the run's own: where it is stored, its name and seed, what it prints
    store: str = "store"
    test_name: str | None = None   # --name
    seed: int | None = None
    report: bool = True
    progress: bool = field(default=False, metadata=flat(cli=False))  # on for the CLI, off for the API
    preset: str | None = None  # recorded; already applied to the other specs (harness/presets.py)

    @classmethod
    def from_flat(cls, **values: Any) -> "TestOptions":
        """From the command line's names: TestOptions.from_flat(local=3, txn=True)."""
        return from_flat(cls, values)

    def replace(self, **values: Any) -> "TestOptions":
        return replace_flat(self, **values)

    @classmethod
    def option_names(cls) -> set[str]:
        """The settings `logtrial test` has an option for: all but those marked
        cli=False and NO_OPTION."""
        return flat_names(cls, cli_only=True) - set(NO_OPTION)

    def record(self) -> dict[str, Any]:
        """test.json's "options": every setting by its command-line name."""
        return to_flat(self)

    def validate(self) -> None:
        """Raises ValueError naming the first bad option (before anything is created)."""
        self.workload.kind  # the workload first: an unknown one says nothing else matters
        self.cluster.validate()
        if self.nemesis.active_kinds and self.cluster.bootstrap_servers:
            raise ValueError("faults need a cluster reached over SSH (--nodes-file or --local), "
                             "not --bootstrap-servers")
        self.timing.validate()
        self.workload.validate()
        self.workload.kind.checker.validate(self.check.options)


def test_name(options: TestOptions) -> str:
    """Readable: workload, faults and the settings that matter."""
    s, cluster = options.workload.settings, options.cluster
    parts = [options.workload.name, ",".join(options.nemesis.active_kinds) or "no-faults", f"acks={s.acks}"]
    flags = [(s.txn, "txn"), (not s.idempotence, "no-idem"), (s.isolation_level != "read_committed", "read-uncommitted"),
             (s.sub_via != "assign", s.sub_via), (s.enable_auto_commit, "auto-commit"), (s.crash_clients, "crash"),
             (cluster.pin_clients, "pinned"), (cluster.dynamic_quorum, "dynamic-quorum"),
             (s.client != DEFAULT_CLIENT, s.client), (cluster.txn_version is not None, f"tv{cluster.txn_version}")]
    parts += [label for on, label in flags if on]
    if cluster.db not in (None, DEFAULT_SYSTEM):
        parts.append(cluster.db)
    if cluster.kafka_version or cluster.kafka_mode:
        parts.append("-".join(["kafka", cluster.kafka_version or "default", cluster.kafka_mode or ""]).rstrip("-"))
    return store.safe_name("-".join(parts))


def _check_local_cluster_name() -> None:
    """--local's cluster is named by LOGTRIAL_LOCAL_CLUSTER: refused before the run, not inside it."""
    try:
        check_name(DEFAULT_NAME)
    except LocalClusterError as e:
        raise ValueError(f"LOGTRIAL_LOCAL_CLUSTER: {e}") from None
