"""Settings the workloads take from the command line (see docs/runner.md)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class WorkloadSettings:
    acks: str = "all"
    idempotence: bool = True
    retries: int | None = None            # None: librdkafka's default
    isolation_level: str = "read_committed"
    auto_offset_reset: str = "earliest"
    enable_auto_commit: bool = False
    sub_via: str = "assign"               # "assign" | "subscribe"
    txn: bool = False
    abort_p: float = 0.0                  # chance a txn is aborted on purpose
    crash_clients: bool = False
    key_count: int = 4                    # active keys at a time
    max_writes_per_key: int = 1024
    replication_factor: int = 3
    min_insync_replicas: int = 2
    op_timeout: float = 10.0              # seconds before the harness calls an op indefinite
    poll_timeout: float = 0.1             # seconds one consumer poll waits for messages
