"""A fault kind: everything the harness knows about one `--nemesis` name, in one object.

Each fault module declares its kind (`KIND = FaultKind(...)`) beside its Fault class,
and nemesis/registry.py lists the kinds once. What used to be spread over tables in
five files is read from here: the names `--nemesis` takes and what `all` means (the
registry), the history `f` names a recorded schedule replays (nemesis/schedule.py), the
database capability a run is refused without (harness/system_support.py), the
traces a heal undoes (nemesis/heal.py), and whether a strike may lose acknowledged
data, which each start's history event carries to the checkers (`declared`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

from nemesis.fault import ClusterTraces, Fault, NodeTraces

if TYPE_CHECKING:
    from clusters.cluster import Cluster

START, STOP = "start", "stop"
# what a start's history value says of its kind, beside where it struck (docs/history-format.md,
# "Nemesis events"): the checkers learn from it which faults ran, without importing nemesis/
FAULT_KEY, MAY_LOSE_DATA_KEY, REWRITES_OFFSETS_KEY = "fault", "may_lose_data", "rewrites_offsets"


def _no_roles(role: str) -> list[str]:
    raise RuntimeError("roles are resolved when a fault strikes, not while planning")


@dataclass(frozen=True)
class FaultContext:
    """What a run's options give its fault objects. The defaults are those of planning
    (nemesis/schedule.py), where no cluster exists to name a role's holder."""
    resolve_role: Callable[[str], list[str]] = _no_roles
    partition_clients: bool = False         # --partition-clients
    partition_shapes: Sequence[str] | None = None  # None: every shape
    topics: Sequence[str] | None = None     # the run's topics (producer-state, membership)
    op_timeout_s: float | None = None       # the workload's op timeout (client-delay); None: its default
    # nemesis.heal.heal, for a fault whose own heal needs every broker back (producer-state);
    # passed in, as nemesis/heal.py reads the kinds' traces from the registry
    heal_cluster: Callable[[Cluster], list[str]] | None = None


@dataclass(frozen=True)
class FaultKind:
    name: str                                 # the --nemesis name
    summary: str                              # one line: what it does (--help, docs)
    make: Callable[[FaultContext], Fault]     # a fault object, which remembers what it struck
    history_f: Mapping[str, str]              # each history f it writes -> START or STOP
    params: tuple[str, ...]                   # what a recorded start must say, to be replayed
    # each start f -> why a strike may lose acknowledged data at --safe settings (acks=all,
    # min ISR 2, no unclean election); None: the system must lose nothing under it. Required,
    # so that every kind says it.
    loses_data: Mapping[str, str | None]
    needs: type | None = None                 # the database capability (clusters/db.py) its start needs
    by_name_only: str | None = None           # why `--nemesis all` leaves it out (None: all includes it)
    node_traces: NodeTraces | None = None     # what it leaves on a node, found and undone by a heal
    cluster_traces: ClusterTraces | None = None  # ... on the cluster, undone once every broker serves
    control_traces: ClusterTraces | None = None  # ... on the control node, undone before any SSH
    # database settings a run with this fault starts its cluster with (power: its data on powerfs)
    db_settings: Mapping[str, str] | None = None
    # the start fs that may lose data by cutting a log's acknowledged tail, whose offsets
    # later writes then reuse (power: a broker recovers its log to what was fsynced, and the
    # next records take the lost ones' offsets), not only by deleting records
    rewrites_offsets: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        wrong = {f: action for f, action in self.history_f.items() if action not in (START, STOP)}
        if wrong or set(self.history_f.values()) != {START, STOP}:
            raise ValueError(f"fault kind {self.name}: history_f must map each f to {START!r} or "
                             f"{STOP!r}, with at least one of each: {dict(self.history_f)}")
        if set(self.loses_data) != set(self.start_fs):
            raise ValueError(f"fault kind {self.name}: loses_data must say, for each start f "
                             f"({', '.join(self.start_fs)}), why it may lose data or None: "
                             f"{dict(self.loses_data)}")
        if any(self.loses_data.get(f) is None for f in self.rewrites_offsets):
            raise ValueError(f"fault kind {self.name}: rewrites_offsets names start fs that lose no "
                             f"data: {sorted(self.rewrites_offsets)}")

    @property
    def start_fs(self) -> tuple[str, ...]:
        return tuple(f for f, action in self.history_f.items() if action == START)

    def declared(self, f: str, value: dict) -> dict:
        """What the start event `f` with history value `value` says of its fault: the kind
        and why this strike may lose acknowledged data (None: it may not), and whether by
        cutting a log's tail whose offsets are written again (rewrites_offsets). A strike that
        changed nothing (`skipped`, as membership's on a cluster that cannot take it)
        cannot have lost anything, and one whose value says `may_lose_data` itself (the
        fault asked the system it struck) is taken at its word where the kind allows a loss."""
        why = None if value.get("skipped") else self.loses_data[f]
        if why is not None and MAY_LOSE_DATA_KEY in value:
            # the strike's own word, from the system it struck (power: whether it acknowledges
            # before an fsync); it may narrow the kind's declaration, never widen it
            why = value[MAY_LOSE_DATA_KEY]
        declared = {FAULT_KEY: self.name, MAY_LOSE_DATA_KEY: why}
        if why is not None and f in self.rewrites_offsets:
            declared[REWRITES_OFFSETS_KEY] = True   # written only when true: old histories stay as they were
        return declared

    @property
    def in_all(self) -> bool:
        return self.by_name_only is None
