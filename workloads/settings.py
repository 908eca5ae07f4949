"""Settings the workloads take from the command line (see docs/runner.md)."""
from __future__ import annotations

from dataclasses import dataclass

DEFAULT_CLIENT = "librdkafka"  # confluent-kafka's, in this process (workloads/client_kinds.py)


@dataclass(frozen=True)
class WorkloadSettings:
    client: str = DEFAULT_CLIENT          # which Kafka client (workloads/client_kinds.py)
    # the Kafka version whose kafka-clients jar the Java client runs: the cluster's,
    # filled in at setup (None: the default version)
    kafka_clients_version: str | None = None
    acks: str = "all"
    idempotence: bool = True
    retries: int | None = None            # None: librdkafka's default
    isolation_level: str = "read_committed"
    auto_offset_reset: str = "earliest"
    enable_auto_commit: bool = False
    sub_via: str = "assign"               # "assign" | "subscribe"
    assign_p: float = 0.08                # queue: chance an op is an assign/subscribe
    txn: bool = False
    abort_p: float = 0.0                  # chance a txn is aborted on purpose
    crash_clients: bool = False
    key_count: int = 4                    # active keys at a time
    max_writes_per_key: int = 1024
    replication_factor: int = 3
    min_insync_replicas: int = 2
    op_timeout: float = 10.0              # seconds before the harness calls an op indefinite
    poll_timeout: float = 0.1             # seconds one consumer poll waits for messages
    # producer knobs (workloads/producer_knobs.py)
    max_in_flight: int | None = None      # max.in.flight.requests.per.connection; None: librdkafka's
    idle_p: float = 0.0                   # chance a process idles before an op
    idle_ms: int = 0                      # how long it idles
