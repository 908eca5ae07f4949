"""Producer knobs for the producer-state tests (docs/producer-state.md).

- `--max-in-flight N`: librdkafka's max.in.flight.requests.per.connection.
  With idempotence librdkafka allows at most 5 (it keeps ordering by sequence
  number only up to that); without it, up to 1,000,000, where retries can reorder.
- `--idle-p P` / `--idle-ms MS`: before each operation a process goes idle for
  MS milliseconds with chance P: its producer sends nothing in that time. An
  idle producer whose pause outlasts producer.id.expiration.ms is forgotten by
  the brokers (see nemesis/producer_state.py, mode `expire`).
- Every send/txn invoke carries the optional history field
  `"producer": {"idempotent": bool, "transactional": bool}`, which the
  checker uses to tell idempotent duplicates apart (checkers/queue/producer_errors.py).

Producers are long-lived already: a process keeps its producer across faults
and only gets a new one after an `info` completion or a client crash.
"""
from __future__ import annotations

import random
import time
from typing import Any

IDEMPOTENT_MAX_IN_FLIGHT = 5
LIBRDKAFKA_MAX_IN_FLIGHT = 1_000_000
PRODUCER_OPS = ("send", "txn")


def check_max_in_flight(max_in_flight: int | None, idempotent: bool) -> None:
    """Raises ValueError when librdkafka would refuse the setting."""
    if max_in_flight is None:
        return
    limit = IDEMPOTENT_MAX_IN_FLIGHT if idempotent else LIBRDKAFKA_MAX_IN_FLIGHT
    if not 1 <= max_in_flight <= limit:
        why = " with idempotence (librdkafka's limit)" if idempotent else ""
        raise ValueError(f"--max-in-flight must be between 1 and {limit}{why}, not {max_in_flight}")


def producer_config(settings) -> dict[str, Any]:
    """What the knobs add to a producer's librdkafka configuration."""
    if getattr(settings, "max_in_flight", None) is None:
        return {}
    return {"max.in.flight.requests.per.connection": settings.max_in_flight}


def producer_flags(settings) -> dict[str, bool]:
    """The optional `producer` field of send/txn invokes. librdkafka makes every
    transactional producer idempotent."""
    return {"idempotent": bool(settings.idempotence or settings.txn), "transactional": bool(settings.txn)}


def invoke_extra(f: str, settings) -> dict:
    """Optional history fields for an invoke of `f` (none for a workload
    without Kafka producer settings)."""
    return {"producer": producer_flags(settings)} if f in PRODUCER_OPS and settings is not None else {}


class IdleGenerator:
    """Wraps a generator: before handing a process its next op, sometimes keeps
    it idle for idle_ms. Sleeps outside the wrapped generator's lock, so other
    processes go on."""

    def __init__(self, inner, idle_p: float, idle_ms: float, seed: int) -> None:
        self.inner = inner
        self.idle_p = idle_p
        self.idle_s = idle_ms / 1000.0
        self.seed = seed
        self._rngs: dict[int, random.Random] = {}
        self.idles = 0  # pauses taken so far

    def next_op(self, process: int):
        rng = self._rngs.get(process)
        if rng is None:  # made once per process, not once per op as setdefault's argument was
            rng = self._rngs[process] = random.Random(f"{self.seed}/idle/{process}")
        if self.idle_p > 0 and rng.random() < self.idle_p:
            self.idles += 1
            time.sleep(self.idle_s)
        return self.inner.next_op(process)

    def __getattr__(self, name: str):
        return getattr(self.inner, name)


def with_idle(generator, settings, seed: int):
    """The generator, wrapped in IdleGenerator when --idle-p is set."""
    if getattr(settings, "idle_p", 0.0) > 0 and getattr(settings, "idle_ms", 0) > 0:
        return IdleGenerator(generator, settings.idle_p, settings.idle_ms, seed)
    return generator
