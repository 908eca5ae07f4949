"""producer-state: make the brokers forget what they know about producers.

Idempotence rests on the partition leader remembering, per producer id, the
last sequence numbers it appended; that memory is what turns a retried batch
into a DUPLICATE_SEQUENCE_NUMBER instead of a second copy, and what makes a gap
an OUT_OF_ORDER_SEQUENCE_NUMBER. Three ways to take it away, one drawn per strike:

- `truncate`: DeleteRecords up to the high watermark of every partition of the
  test topics, so the log start passes every producer's last batch;
- `retention`: retention.ms / segment.ms of the test topics set tiny (segments
  roll and are deleted within seconds), restored on stop;
- `expire`: the dynamic producer.id.expiration.ms set tiny on every broker (per
  broker: the Python client cannot address the cluster-wide default), so the
  state of a producer idle for longer is dropped, restored on stop. The broker
  checks for expired producers every producer.id.expiration.check.interval.ms,
  a static setting: the cluster must start with it small (BROKER_SETTINGS:
  logtrial's clusters have it by default; `--preset producer-state` and
  `--nemesis producer-state` add it to inventories that override it).

The test topics are those the runner names, widened to every topic sharing
their prefix (the workload creates topics as it rotates keys), or every
non-internal topic when it names none.
"""
from __future__ import annotations

import logging
import random
import time
from typing import TYPE_CHECKING, Callable, Sequence

from confluent_kafka import KafkaException, TopicPartition
from confluent_kafka.admin import (AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource,
                                   ConfigSource, OffsetSpec)

from clusters.db import ProducerState, require
from clusters.kafka.config import PRODUCER_STATE_SETTINGS
from nemesis.fault import Fault, with_errors
from nemesis.kind import START, STOP, FaultKind
from nemesis.topics import fault_topics, topic_prefixes

if TYPE_CHECKING:
    from clusters.cluster import Cluster

log = logging.getLogger(__name__)

MODES = ("truncate", "retention", "expire")
START_F = {"truncate": "truncate-log", "retention": "shrink-retention", "expire": "expire-producer-ids"}
STOP_F = "restore-producer-state"
RETENTION_MS = 1000
SEGMENT_MS = 1000
EXPIRATION_MS = 2000
EXPIRATION_KEY = "producer.id.expiration.ms"
ADMIN_TIMEOUT_S = 10.0
HEAL_TIMEOUT_S = 90.0  # a restarted broker may take this long to take configs again
# static broker settings without which `retention` and `expire` act only after minutes
# (logtrial's clusters have them by default; a preset adds them to other inventories)
BROKER_SETTINGS = PRODUCER_STATE_SETTINGS
SOURCE_OF_OVERRIDE = {ConfigResource.Type.BROKER: ConfigSource.DYNAMIC_BROKER_CONFIG,
                      ConfigResource.Type.TOPIC: ConfigSource.DYNAMIC_TOPIC_CONFIG}


def _wait(futures: dict, timeout: float = ADMIN_TIMEOUT_S) -> tuple[dict, dict[str, str]]:
    """Results and errors (by str(key)) of an AdminClient future map."""
    results, errors = {}, {}
    for key, future in futures.items():
        try:
            results[key] = future.result(timeout=timeout)
        except Exception as e:  # noqa: BLE001 - reported per partition/resource, the run goes on
            errors[_name(key)] = f"{type(e).__name__}: {e}"
    return results, errors


def _alter(admin: AdminClient, requests: list[ConfigResource]) -> tuple[dict, dict[str, str]]:
    """incremental_alter_configs, one call for all topics and one per broker
    (librdkafka allows only one BROKER resource per call)."""
    topics = [r for r in requests if r.restype != ConfigResource.Type.BROKER]
    calls = ([topics] if topics else []) + [[r] for r in requests if r.restype == ConfigResource.Type.BROKER]
    futures: dict = {}
    for call in calls:
        futures.update(admin.incremental_alter_configs(call, request_timeout=ADMIN_TIMEOUT_S))
    return _wait(futures)


def broker_ids(cluster) -> list[str]:
    """Every broker of the inventory, running or not (a killed broker keeps its
    per-broker configs in the metadata log)."""
    return [str(cluster.db.node_id(node)) for node in cluster.inventory.node_names]


def _name(key) -> str:
    if isinstance(key, TopicPartition):
        return f"{key.topic}/{key.partition}"
    if isinstance(key, ConfigResource):
        return f"broker {key.name}" if key.restype == ConfigResource.Type.BROKER else key.name
    return str(key)


class ProducerStateFault(Fault):
    name = "producer-state"
    stop_f = STOP_F

    def __init__(self, topics: Sequence[str] | None = None, modes: Sequence[str] = MODES,
                 retention_ms: int = RETENTION_MS, segment_ms: int = SEGMENT_MS,
                 expiration_ms: int = EXPIRATION_MS,
                 heal_cluster: Callable[[Cluster], list[str]] | None = None) -> None:
        unknown = [m for m in modes if m not in MODES]
        if unknown or not modes:
            raise ValueError(f"producer-state modes {list(modes)}: valid are {', '.join(MODES)}")
        self.prefixes = topic_prefixes(topics or [])
        self.modes = list(modes)
        self.retention_ms, self.segment_ms, self.expiration_ms = retention_ms, segment_ms, expiration_ms
        # what stop/heal must put back: resource -> {config key: previous value or None (no override)}
        self._restore: dict[ConfigResource, dict[str, str | None]] = {}
        self._admin_client: AdminClient | None = None
        self.heal_cluster = heal_cluster
        self._bootstrap: str | None = None

    # -- planning ----------------------------------------------------------------------------
    def plan(self, nodes: Sequence[str], target_specs: Sequence[str], rng: random.Random) -> dict:
        return {"mode": rng.choice(self.modes)}

    def start_f(self, params: dict) -> str:
        return START_F[params["mode"]]

    # -- striking ----------------------------------------------------------------------------
    def start(self, cluster, params: dict) -> dict:
        require(cluster.db, ProducerState, "the producer-state fault")
        admin = self._admin(cluster)
        mode = params["mode"]
        if mode == "truncate":
            return {**params, **self.truncate(admin)}
        if mode == "retention":
            overrides = {"retention.ms": str(self.retention_ms), "segment.ms": str(self.segment_ms)}
            resources = [ConfigResource(ConfigResource.Type.TOPIC, t) for t in self.topics(admin)]
            return {**params, **self._override(admin, resources, overrides)}
        if mode == "expire":
            brokers = [ConfigResource(ConfigResource.Type.BROKER, b) for b in broker_ids(cluster)]
            return {**params, **self._override(admin, brokers, {EXPIRATION_KEY: str(self.expiration_ms)})}
        raise ValueError(f"unknown producer-state mode {mode!r} (valid: {', '.join(MODES)})")

    def stop(self, cluster) -> dict:
        return self._restore_all(self._admin(cluster))

    def heal(self, cluster) -> None:
        """Restores every config still overridden. A broker that is down (killed,
        partitioned away) cannot take its config back: then the cluster is healed
        first (`heal_cluster`, nemesis.heal.heal: idempotent) and the restore tried again."""
        if not self._restore or not self._restore_all(self._admin(cluster)).get("errors"):
            return
        if self.heal_cluster is not None:
            self.heal_cluster(cluster)
        deadline = time.monotonic() + HEAL_TIMEOUT_S
        while True:
            self._admin_client = None  # a fresh client: the old one may still wait on a dead connection
            errors = self._restore_all(self._admin(cluster)).get("errors")
            if not errors:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"producer-state: could not restore configs: {errors}")
            time.sleep(2)

    # -- the three ways ----------------------------------------------------------------------
    def topics(self, admin: AdminClient) -> list[str]:
        return fault_topics(admin.list_topics(timeout=ADMIN_TIMEOUT_S).topics, self.prefixes)

    def partitions(self, admin: AdminClient) -> list[TopicPartition]:
        metadata = admin.list_topics(timeout=ADMIN_TIMEOUT_S).topics
        return [TopicPartition(t, p) for t in self.topics(admin) for p in sorted(metadata[t].partitions)]

    def truncate(self, admin: AdminClient) -> dict:
        """DeleteRecords to the high watermark; reports {partition: new log start}."""
        partitions = self.partitions(admin)
        if not partitions:
            return {"partitions": {}}
        latest, errors = _wait(admin.list_offsets({tp: OffsetSpec.latest() for tp in partitions},
                                                  request_timeout=ADMIN_TIMEOUT_S))
        targets = [TopicPartition(tp.topic, tp.partition, info.offset) for tp, info in latest.items()
                   if info.offset > 0]
        deleted, delete_errors = _wait(admin.delete_records(targets, request_timeout=ADMIN_TIMEOUT_S,
                                                            operation_timeout=ADMIN_TIMEOUT_S)) \
            if targets else ({}, {})
        value = {"partitions": {_name(tp): result.low_watermark for tp, result in deleted.items()}}
        return with_errors(value, {**errors, **delete_errors})

    def _override(self, admin: AdminClient, resources: list[ConfigResource], overrides: dict[str, str]) -> dict:
        """Sets `overrides` on each resource, remembering what to put back."""
        for resource in resources:
            if resource not in self._restore:
                self._restore[resource] = self._current(admin, resource, list(overrides))
        entries = [ConfigEntry(k, v, incremental_operation=AlterConfigOpType.SET) for k, v in overrides.items()]
        done, errors = _alter(admin, [ConfigResource(r.restype, r.name, incremental_configs=entries)
                                      for r in resources])
        return with_errors({"configs": overrides, "resources": sorted(_name(r) for r in done)}, errors)

    def _current(self, admin: AdminClient, resource: ConfigResource, keys: list[str]) -> dict[str, str | None]:
        """The overrides now in place for `keys` (None: none, the default applies).
        A broker that is down cannot say; logtrial sets no per-broker overrides
        of its own, so it is taken to have none."""
        try:
            entries = admin.describe_configs([resource], request_timeout=ADMIN_TIMEOUT_S)[resource] \
                .result(timeout=ADMIN_TIMEOUT_S)
        except (KafkaException, TimeoutError) as e:
            if resource.restype != ConfigResource.Type.BROKER:
                raise
            log.info("producer-state: cannot describe %s (%s); restoring it to the default", _name(resource), e)
            entries = {}
        wanted = SOURCE_OF_OVERRIDE[resource.restype].value
        current: dict[str, str | None] = {}
        for key in keys:
            entry = entries.get(key)
            override = entry is not None and getattr(entry.source, "value", entry.source) == wanted
            current[key] = entry.value if override else None
        return current

    def _restore_all(self, admin: AdminClient) -> dict:
        if not self._restore:
            return {"restored": []}
        requests = []
        for resource, previous in self._restore.items():
            entries = [ConfigEntry(k, v, incremental_operation=AlterConfigOpType.SET) if v is not None
                       else ConfigEntry(k, None, incremental_operation=AlterConfigOpType.DELETE)
                       for k, v in previous.items()]
            requests.append(ConfigResource(resource.restype, resource.name, incremental_configs=entries))
        done, errors = _alter(admin, requests)
        restored = {_name(r) for r in done}
        # keep what failed for the next stop/heal (a deleted topic has nothing left to restore)
        self._restore = {r: v for r, v in self._restore.items()
                         if _name(r) not in restored and "UNKNOWN_TOPIC" not in errors.get(_name(r), "")}
        return with_errors({"restored": sorted(restored)}, errors)

    def _admin(self, cluster) -> AdminClient:
        bootstrap = cluster.db.bootstrap_servers()
        if self._admin_client is None or bootstrap != self._bootstrap:
            self._admin_client = AdminClient({"bootstrap.servers": bootstrap, "socket.timeout.ms": 5000,
                                              "logger": _QUIET})
            self._bootstrap = bootstrap
        return self._admin_client


class _Quiet(logging.Logger):
    """librdkafka's connection chatter while brokers are down goes to debug."""

    def __init__(self) -> None:
        super().__init__("nemesis.producer_state.librdkafka")

    def log(self, level, msg, *args, **kwargs) -> None:  # noqa: A003
        log.debug(msg, *args)


_QUIET = _Quiet()


KIND = FaultKind(
    name="producer-state",
    summary="makes the brokers forget producer state: truncate the test topics' logs, shrink "
            "their retention, or expire producer ids",
    make=lambda context: ProducerStateFault(context.topics, heal_cluster=context.heal_cluster),
    history_f={**{f: START for f in START_F.values()}, STOP_F: STOP},
    params=("mode",),
    loses_data={
        START_F["truncate"]: "DeleteRecords moves the log start of every test partition to its "
                             "high watermark: every record written so far is deleted on purpose",
        START_F["retention"]: "retention.ms=1000 on the test topics: segments older than a second "
                              "are deleted on purpose while it is in force",
        # only the brokers' memory of idle producers goes, no record: a retried batch may be
        # appended twice (idempotent-duplicate, docs/producer-state.md), none is lost
        START_F["expire"]: None,
    },
    needs=ProducerState,
    by_name_only="its truncate and retention modes delete records on purpose (expected lost-write and unseen)",
)
