"""NemesisRunner: runs the fault schedule beside the workload and heals at the end.

One thread per fault kind walks that kind's timeline (so a slow broker restart does
not delay a partition), writing one nemesis event per action. A command that fails
on a node is recorded (value.errors and the event's `error`) and the run goes on.
A start's value also names its kind and whether it may lose acknowledged data
(FaultKind.declared), which is how the checkers know what the faults may excuse.

heal_all() is idempotent and shielded from Ctrl-C: the heal runs in its own thread
and an interrupt only makes it say it is still healing (the interrupt is re-raised
once the cluster is healed), so a run never leaves a cluster partitioned.
"""
from __future__ import annotations

import logging
import threading
import time
from typing import Iterable, Iterator, Sequence

from nemesis import schedule as sched
from nemesis.client_delay import DEFAULT_OP_TIMEOUT_S
from nemesis.heal import ClusterNotHealed, heal, heal_until_healed
from nemesis.kind import FaultContext
from nemesis.registry import fault_kind, make_faults
from nemesis.roles import RoleResolver
from nemesis.schedule import START, Step

log = logging.getLogger(__name__)

DEFAULT_INTERVAL = 15.0
DEFAULT_TARGETS = ("one", "minority", "majority", "all", "controller", "leader")
# how long heal_all waits for an action in progress (a broker restart) to finish
WORKER_JOIN_TIMEOUT = 90.0


class NemesisRunner:
    def __init__(self, cluster, history, kinds: Sequence[str], interval: float = DEFAULT_INTERVAL,
                 seed: int = 0, targets: Sequence[str] = DEFAULT_TARGETS,
                 partition_clients: bool = False, schedule_file=None,
                 topics: Sequence[str] | None = None,
                 partition_shapes: Sequence[str] | None = None,
                 op_timeout_s: float = DEFAULT_OP_TIMEOUT_S) -> None:
        self.cluster, self.history = cluster, history
        self.interval, self.seed = interval, seed
        self.targets = list(targets)
        self.roles = RoleResolver(cluster, list(topics or []))
        if schedule_file is not None:
            replayed = sched.load_schedule(schedule_file)
            self.timelines: dict[str, Iterator[Step]] = _by_kind(replayed)
            kinds = sorted(self.timelines)
        else:
            self.timelines = sched.timelines(kinds, cluster.inventory.node_names, interval, seed,
                                             self.targets, partition_shapes)
        self.kinds = list(kinds)
        self.faults = make_faults(self.kinds, FaultContext(
            self.roles.resolve, partition_clients, partition_shapes, topics=self.roles.topics,
            op_timeout_s=op_timeout_s, heal_cluster=heal))
        self._stop = threading.Event()
        self._workers: list[threading.Thread] = []
        self._heal_lock = threading.Lock()
        self._dirty = False  # something was struck since the last heal

    # -- the main phase -------------------------------------------------------------------
    def run(self, stop: threading.Event) -> None:
        """Runs the schedule until `stop` (or heal_all) is set; returns once every
        action in progress has finished."""
        started = time.monotonic()
        self._workers = [threading.Thread(target=self._walk, args=(kind, steps, started, stop),
                                          name=f"nemesis-{kind}", daemon=True)
                         for kind, steps in self.timelines.items()]
        for worker in self._workers:
            worker.start()
        while not (stop.is_set() or self._stop.is_set()):
            stop.wait(0.2)
        for worker in self._workers:
            worker.join()

    def _walk(self, kind: str, steps: Iterable[Step], started: float,
              stop: threading.Event) -> None:
        for step in steps:
            delay = started + step.at - time.monotonic()
            if delay > 0 and (stop.wait(delay) or self._stop.is_set()):
                return
            if stop.is_set() or self._stop.is_set():
                return
            self._execute(step)

    def _execute(self, step: Step) -> None:
        fault = self.faults[step.fault]
        self._dirty = True
        if step.action == START:
            f = fault.start_f(step.params)
            call = lambda: fault.start(self.cluster, step.params)  # noqa: E731
        else:
            f = fault.stop_f
            call = lambda: fault.stop(self.cluster)  # noqa: E731
        try:
            value = call()
        except Exception as e:  # noqa: BLE001 - recorded; the run goes on
            log.warning("nemesis %s failed: %s", f, e)
            value = {**(step.params or {}), "errors": {"*": f"{type(e).__name__}: {e}"}}
        value = {**value, "at": step.at}
        if step.action == START:  # the kind's word on data loss, for the checkers
            value.update(fault_kind(step.fault).declared(f, value))
        self._record(f, value)

    def _record(self, f: str, value: dict) -> None:
        errors = value.get("errors")
        extra = {}
        if errors:
            summary = "; ".join(f"{node}: {msg}" for node, msg in errors.items())
            extra["error"] = ["nemesis-error", summary]
            log.warning("nemesis %s: %s", f, summary)
        else:
            log.info("nemesis %s %s", f, value)
        try:
            self.history.nemesis(f, value, **extra)
        except RuntimeError as e:  # the history was closed (run ending): the log has it
            log.warning("nemesis %s not recorded: %s", f, e)

    # -- the end ------------------------------------------------------------------------------
    def heal_all(self) -> list[str]:
        """Stops the schedule, undoes every fault on every node and verifies the cluster
        is healed (raises ClusterNotHealed otherwise). Safe to call more than once, from
        finally blocks, and while Ctrl-C is pressed."""
        self._stop.set()
        outcome: dict = {}
        healer = threading.Thread(target=self._heal_guarded, args=(outcome,),
                                  name="nemesis-heal")
        healer.start()
        interrupted = False
        while healer.is_alive():
            try:
                healer.join()
            except KeyboardInterrupt:
                interrupted = True
                log.warning("still healing the cluster; the run stops once it is healed")
        if "error" in outcome:
            raise outcome["error"]
        if interrupted:
            raise KeyboardInterrupt
        return outcome.get("actions", [])

    def _heal_guarded(self, outcome: dict) -> None:
        try:
            with self._heal_lock:
                outcome["actions"] = self._heal()
        except BaseException as e:  # noqa: BLE001 - handed to the caller's thread
            outcome["error"] = e

    def _heal(self) -> list[str]:
        self._join_workers()
        actions = self._heal_once()
        if any(worker.is_alive() for worker in self._workers):
            # an action outlived the wait: let it finish, then undo it too
            for worker in self._workers:
                worker.join()
            actions += self._heal_once()
        self._dirty = False
        return actions

    def _join_workers(self) -> None:
        deadline = time.monotonic() + WORKER_JOIN_TIMEOUT
        for worker in self._workers:
            worker.join(max(0.0, deadline - time.monotonic()))

    def _heal_once(self) -> list[str]:
        """Heals until verified healed or HEAL_BOUND; either way the history says what
        was done, and at the bound what is left on each node."""
        for fault in self.faults.values():
            fault.heal(self.cluster)
        try:
            actions = heal_until_healed(self.cluster)
        except ClusterNotHealed as e:
            self._record("heal", {"actions": e.actions, "not_healed": e.problems})
            raise
        if actions or self._dirty:
            self._record("heal", {"actions": actions})
        return actions


def _by_kind(steps: Sequence[Step]) -> dict[str, Iterator[Step]]:
    kinds = sorted({step.fault for step in steps})
    return {kind: iter([s for s in steps if s.fault == kind]) for kind in kinds}
