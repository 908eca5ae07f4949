"""What a run asks of the system under test, checked once its cluster is open and
before any workload or fault starts: a fault needs a capability of the database
(clusters/db.py), a workload setting a feature of the Kafka API that some
Kafka-compatible systems lack (their SystemKind's client_features). A run that asks for what
the system cannot do is refused with a message naming both, never left to crash
halfway through."""
from __future__ import annotations

from clusters.db import Membership
from clusters.systems import client_features, system_of
from harness.test_options import TestOptions
from nemesis.registry import fault_kind
from nemesis.schedule import load_schedule
from nemesis.targets import ROLE_TARGETS

# targets resolved through a KRaft log dir or partition leadership
ROLE_TARGETS_NEED = Membership
# workload setting -> the client feature it uses
FEATURE_OF = {"txn": "transactions", "idempotence": "idempotence"}
# ListOffsets for the latest offset from a read_committed client (get_watermark_offsets)
LATEST_COMMITTED = "latest-offset-read-committed"
ASKS_LATEST_OFFSETS = ("list-append",)


def fault_targets(db: object, targets: tuple[str, ...] | None) -> tuple[str, ...] | None:
    """The targets the faults draw from: the default ones, less the roles, on a
    system without them (asked for by name, they are refused by check_supported)."""
    if isinstance(db, ROLE_TARGETS_NEED) or not _default_targets(targets):
        return targets
    from nemesis.runner import DEFAULT_TARGETS  # loads confluent_kafka: only when needed
    return tuple(t for t in DEFAULT_TARGETS if t not in ROLE_TARGETS)


def _default_targets(targets: tuple[str, ...] | None) -> bool:
    from nemesis.runner import DEFAULT_TARGETS
    return targets is None or tuple(targets) == tuple(DEFAULT_TARGETS)


def struck_kinds(options: TestOptions) -> list[str]:
    """The fault kinds the run will strike: a replayed schedule's own (the runner takes
    them from it, whatever --nemesis says), else those asked for."""
    if options.nemesis.schedule_file:
        return sorted({step.fault for step in load_schedule(options.nemesis.schedule_file)})
    return options.nemesis.active_kinds


class Unsupported(ValueError):
    """The run asks for what the system under test cannot do; names both."""


def check_supported(db: object, options: TestOptions) -> None:
    """Unsupported naming the first fault, target or workload setting the database lacks."""
    system = " ".join(system_of(db))
    for fault in struck_kinds(options):
        needed = fault_kind(fault).needs  # None: it acts on the nodes, not on the database
        if needed is not None and not isinstance(db, needed):
            raise Unsupported(f"--nemesis {fault} needs the {needed.__name__} capability, "
                              f"which {system} does not have")
    roles = [t for t in options.nemesis.targets or () if t in ROLE_TARGETS]
    if roles and not isinstance(db, ROLE_TARGETS_NEED) and not _default_targets(options.nemesis.targets):
        raise Unsupported(f"--db-targets {roles[0]}: {system} has no KRaft controller or partition "
                          "leaders to aim at (every tansu broker serves every partition)")
    features = client_features(db)
    if features is None:
        return
    settings = options.workload.settings
    for setting, feature in FEATURE_OF.items():
        if getattr(settings, setting) and feature not in features:
            flag = "--txn" if setting == "txn" else "--idempotence (the default; add --no-idempotence)"
            raise Unsupported(f"{flag} needs Kafka {feature}, which {system} does not support "
                              "(docs/findings.md, tansu)")
    if (options.workload.name in ASKS_LATEST_OFFSETS and settings.isolation_level == "read_committed"
            and LATEST_COMMITTED not in features):
        raise Unsupported(f"--workload {options.workload.name} asks for each partition's latest offset, which "
                          f"{system} cannot give read_committed clients here; add --isolation-level "
                          "read_uncommitted (without transactions it reads the same records)")
