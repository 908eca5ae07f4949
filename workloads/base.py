"""The pieces every workload is made of (Jepsen's split).

A *generator* hands out operations; a *client*, one per logical process,
executes them against the cluster and says how each ended. The runner owns
the processes, the history and the clock; a workload never writes the history
itself except through the `Recorder` the runner gives it for the final reads.
"""
from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from workloads.errors import Classified
from workloads.settings import WorkloadSettings


@dataclass(frozen=True)
class Op:
    f: str
    value: Any


@dataclass
class Completion:
    type: str                      # "ok" | "fail" | "info"
    value: Any
    error: list[str] | None = None
    extra: dict = field(default_factory=dict)  # optional history fields (offsets, rebalance_log, ...)
    retire: bool = False           # replace the client even though the op did not end info

    @classmethod
    def ok(cls, value: Any, **extra: Any) -> "Completion":
        return cls("ok", value, None, extra)

    @classmethod
    def failed(cls, classified: Classified, value: Any, **extra: Any) -> "Completion":
        """A completion for an error: `fail` or `info` as the error table says."""
        return cls(classified.outcome, value, classified.error, extra)


class Client(Protocol):
    def invoke(self, op: Op) -> Completion: ...
    def close(self) -> None: ...
    # optional: `warm(keys)` makes what the first ops on `keys` would make lazily (clients,
    # connections, metadata, the group's coordinator), raising ClientOpenError if it cannot;
    # the runner calls it before its clock starts (harness/client_open.py)


class ClientOpenError(RuntimeError):
    """A client could not be opened (warmed) before the run's clock: the run stops."""


class Generator(Protocol):
    def next_op(self, process: int) -> Op | None: ...  # None: nothing more to do


# Runs one op for a process: records invoke and completion, returns the completion.
Recorder = Callable[[int, Client, Op], Completion]


class Workload(Protocol):
    name: str
    settings: WorkloadSettings

    def setup(self) -> None: ...                          # topics for the first keys
    def topic_names(self) -> list[str]: ...
    def first_keys(self) -> list[int]: ...               # what the clients are warmed for
    def generator(self) -> Generator: ...
    def new_client(self, process: int) -> Client: ...
    # reads everything back after the faults; new_process() gives a fresh process number
    def final_reads(self, process: int, record: Recorder, deadline: float,
                    new_process: Callable[[], int]) -> dict: ...
    def close(self) -> None: ...


class ValueSource:
    """Unique ints for every value written in a run (thread-safe)."""

    def __init__(self) -> None:
        self._counter = itertools.count()
        self._lock = threading.Lock()

    def next(self) -> int:
        with self._lock:
            return next(self._counter)


class KeyRotation:
    """A pool of active keys; a key that has taken max_writes values is retired
    and replaced by a fresh one, so no partition grows without bound."""

    def __init__(self, active: int, max_writes: int, on_new_key: Callable[[int], None] | None = None):
        self.max_writes = max_writes
        self._active = list(range(active))
        self._next_key = active
        self._writes: dict[int, int] = {}
        self._on_new_key = on_new_key

    @property
    def active(self) -> list[int]:
        return list(self._active)

    def take_write(self, rng) -> int:
        """Picks an active key for one more write (callers hold the generator lock)."""
        slot = rng.randrange(len(self._active))
        key = self._active[slot]
        count = self._writes.get(key, 0) + 1
        self._writes[key] = count
        if count >= self.max_writes:
            self._active[slot] = self._next_key
            self._next_key += 1
            if self._on_new_key is not None:
                self._on_new_key(self._active[slot])
        return key
