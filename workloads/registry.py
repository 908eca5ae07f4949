"""Every workload the harness runs, one object each: its name, how it is built
(generator + clients), which settings axes apply to it, and its checker. The
CLI's choices, the runner and `test-all` look a workload up here instead of
branching on its name; a new workload is a new entry (and its own modules).

The workload modules are imported when a workload is built: listing the
workloads (the CLI's --help) must not load confluent-kafka's clients."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from checkers.registry import WorkloadChecker, checker_for
from workloads.base import Workload
from workloads.client_kinds import open_clients
from workloads.settings import WorkloadSettings

# (bootstrap servers, settings, run id, seed) -> the workload
WorkloadFactory = Callable[[str, WorkloadSettings, str, int], Workload]


@dataclass(frozen=True)
class WorkloadKind:
    name: str
    factory: WorkloadFactory
    # whether --txn is a choice; a workload without the axis runs one txn setting
    txn_axis: bool

    def make(self, bootstrap: str, settings: WorkloadSettings, run_id: str, seed: int) -> Workload:
        return self.factory(bootstrap, settings, run_id, seed)

    @property
    def checker(self) -> WorkloadChecker:
        return checker_for(self.name)

    def txn_settings(self, wanted: tuple[bool, ...]) -> tuple[bool, ...]:
        """The txn values a test matrix runs: all wanted ones on the axis, else the
        last one (list-append's ops are transactions whichever way)."""
        return wanted if self.txn_axis else wanted[-1:]


def _queue(bootstrap: str, settings: WorkloadSettings, run_id: str, seed: int) -> Workload:
    from workloads.queue import QueueWorkload  # loads confluent_kafka: only when needed
    return QueueWorkload(bootstrap, settings, run_id, seed, open_clients(settings))


def _list_append(bootstrap: str, settings: WorkloadSettings, run_id: str, seed: int) -> Workload:
    from workloads.list_append import ListAppendWorkload  # loads confluent_kafka: only when needed
    return ListAppendWorkload(bootstrap, settings, run_id, seed, open_clients(settings))


KINDS: dict[str, WorkloadKind] = {
    "queue": WorkloadKind("queue", _queue, txn_axis=True),
    "list-append": WorkloadKind("list-append", _list_append, txn_axis=False),
}
WORKLOAD_NAMES: tuple[str, ...] = tuple(KINDS)


class UnknownWorkload(ValueError):
    pass


def workload_kind(name: str) -> WorkloadKind:
    """The workload called `name`; UnknownWorkload names the known ones."""
    try:
        return KINDS[name]
    except KeyError:
        raise UnknownWorkload(f"--workload must be one of {', '.join(WORKLOAD_NAMES)}, not {name!r}") from None
