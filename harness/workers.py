"""The workload's logical processes and their recording: one thread per
process slot offering ops at the run's rate, each op's invocation and
completion written to the history, and a slot whose op ended `info` going on
as a new process with fresh clients (docs/runner.md, "main")."""
from __future__ import annotations

import itertools
import logging
import random
import threading
import time
import traceback

from checkers.history.writer import HistoryWriter
from clusters.nodes.pinning import ClientPins
from workloads.base import Client, Completion, Generator, Op, Workload
from workloads.producer_knobs import invoke_extra

log = logging.getLogger(__name__)


class Workers:
    def __init__(self, history: HistoryWriter, workload: Workload, pins: ClientPins | None, seed: int,
                 stop: threading.Event):
        self.history = history
        self.workload = workload
        self.pins = pins
        self.seed = seed
        self.stop = stop
        self.threads: list[threading.Thread] = []
        self._processes = itertools.count()
        self._process_lock = threading.Lock()

    def new_process(self) -> int:
        with self._process_lock:
            return next(self._processes)

    def start(self, generator: Generator, rate: float, opened: list[tuple[int, Client]]) -> None:
        """One worker thread per opened (process, client) (harness/client_open.py), sharing
        `rate` ops/s, until `stop` is set."""
        interval = len(opened) / rate
        for slot, first in enumerate(opened):
            worker = threading.Thread(target=self._worker, args=(slot, generator, interval, first),
                                      name=f"worker-{slot}", daemon=True)
            worker.start()
            self.threads.append(worker)

    def join(self, op_timeout: float) -> None:
        """Waits for the workers to finish their ops; one stuck past the deadline leaves its op open."""
        deadline = time.monotonic() + op_timeout * 2 + 5
        for worker in self.threads:
            worker.join(timeout=max(0.0, deadline - time.monotonic()))
        stuck = [w.name for w in self.threads if w.is_alive()]
        if stuck:
            log.warning("workers still inside an op after the deadline (their ops stay open): %s", stuck)

    def record(self, process: int, client: Client, op: Op) -> Completion:
        """Runs one op on a client, recording its invocation and completion."""
        pinned = self.pins.node_field(process) if self.pins is not None else {}
        self.history.invoke(process, op.f, op.value, **invoke_extra(op.f, self.workload.settings),
                            **pinned)
        try:
            completion = client.invoke(op)
        except Exception as e:  # a bug or an unexpected client error: we cannot know what happened
            log.warning("process %s: %s raised:\n%s", process, op.f, traceback.format_exc())
            completion = Completion("info", op.value, ["CLIENT_CRASH", f"{type(e).__name__}: {e}"])
        self.history.complete(completion.type, process, op.f, completion.value, completion.error,
                              **completion.extra, **pinned)
        return completion

    def _worker(self, slot: int, generator: Generator, interval: float, first: tuple[int, Client]) -> None:
        rng = random.Random(self.seed + slot)
        process, client = first
        if self.pins is not None:  # opened on another thread: this one's calls reach the same node
            self.pins.enter(process)
        next_due = time.monotonic() + rng.uniform(0, interval)
        try:
            while not self.stop.is_set():
                now = time.monotonic()
                if next_due > now and self.stop.wait(next_due - now):
                    break
                # never build up more than a second of backlog after a slow op
                next_due = max(next_due, now - 1.0) + interval * (0.5 + rng.random())
                op = generator.next_op(process)
                if op is None:
                    break
                completion = self.record(process, client, op)
                if completion.type == "info" or completion.retire:
                    close_in_background(client)
                    process = self.new_process()
                    client = self.new_client(process)
        except RuntimeError as e:  # the history closed under a worker stuck past the deadline
            log.warning("worker %s stopped: %s", slot, e)
        finally:
            close_in_background(client)

    def new_client(self, process: int) -> Client:
        """A process's client; pinned, the calling thread first moves to its node's namespace.
        Mid-run (after an indeterminate op) it opens as it is made, unwarmed, as it always has."""
        if self.pins is not None:
            self.pins.enter(process)
        return self.workload.new_client(process)


def close_in_background(client: Client) -> None:
    """Closing can block (leaving a group during a partition): keep it off the workers."""
    def close() -> None:
        try:
            client.close()
        except Exception as e:
            log.info("closing a client failed: %s", e)
    threading.Thread(target=close, name="client-close", daemon=True).start()
