"""Opening the run's clients before its clock starts, as Jepsen's `open!` runs before
the generator: one client per process slot, made and warmed (its optional
`warm(keys)`, workloads/base.py) so that no op in the history pays for a JVM's class
loading, a child's first connections or a transactional producer's init. Clients open
in parallel, one thread each, as the workers have always made them; each thread enters
its process's pinned namespace first. The wait is bounded: a client that fails or does
not open in time fails the run, naming its client and process (docs/runner.md, "open")."""
from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from harness import interrupts
from harness.workers import close_in_background
from workloads.base import Client, ClientOpenError

log = logging.getLogger(__name__)

# the bound: a child's start (workloads/bridge/process.py allows 60 s) and a few op
# timeouts for the warm-up's requests, which the child bounds by the op timeout each
OPEN_BASE_S = 60.0
OPEN_OP_TIMEOUTS = 3
WARM_RETRY_S = 0.5  # between a failed warm-up and the next, within the bound


def open_bound(op_timeout: float) -> float:
    return OPEN_BASE_S + OPEN_OP_TIMEOUTS * op_timeout


@dataclass
class Opening:
    """One process's client being opened on its own thread."""
    process: int
    client: Client | None = None
    error: str | None = None
    seconds: float | None = None
    done: threading.Event = field(default_factory=threading.Event)


@dataclass
class OpenedClients:
    clients: list[tuple[int, Client]]  # (process, client), one per slot
    seconds: float                     # from the first thread's start to the last client open
    per_process_s: dict[int, float]

    def record(self, kind: str) -> dict:
        """test.json's optional `client_open`."""
        return {"client": kind, "clients": len(self.clients), "seconds": round(self.seconds, 3),
                "per_process_s": {str(p): round(s, 3) for p, s in self.per_process_s.items()}}


def open_clients(processes: list[int], new_client: Callable[[int], Client], keys: list[int] | None, kind: str,
                 bound_s: float) -> OpenedClients:
    """Opens a client for each process in parallel, warmed for `keys` (None: made only);
    ClientOpenError if one cannot within bound_s."""
    started = time.monotonic()
    openings = [Opening(p) for p in processes]
    for opening in openings:
        threading.Thread(target=_open_one, args=(opening, new_client, keys, started + bound_s),
                         name=f"open-{opening.process}", daemon=True).start()
    try:
        _wait(openings, started + bound_s)
        _raise_first_failure(openings, kind, bound_s)
    except BaseException:
        close_opened(openings)
        raise
    return OpenedClients([(o.process, o.client) for o in openings], time.monotonic() - started,
                         {o.process: o.seconds for o in openings})


def _open_one(opening: Opening, new_client: Callable[[int], Client], keys: list[int] | None,
              deadline: float) -> None:
    began = time.monotonic()
    try:
        opening.client = new_client(opening.process)
        warm = getattr(opening.client, "warm", None)  # a client without one opens as it is made
        if warm is not None and keys is not None:
            _warm_until(warm, keys, deadline)
        opening.seconds = time.monotonic() - began
    except ClientOpenError as e:  # reported by open_clients, naming the process
        opening.error = str(e)
    except Exception as e:  # e.g. a child that would not start
        opening.error = f"{type(e).__name__}: {e}"
    finally:
        opening.done.set()


def _warm_until(warm: Callable[[list[int]], None], keys: list[int], deadline: float) -> None:
    """Warms, again after a failure while the bound allows: a fresh cluster answers
    NOT_COORDINATOR while it makes __consumer_offsets, as the first assign would have met.
    What a failed attempt made is kept, so the next one does only the rest."""
    while True:
        try:
            warm(keys)
            return
        except ClientOpenError as e:
            if time.monotonic() + WARM_RETRY_S >= deadline:
                raise
            log.info("warming a client again in %.1f s: %s", WARM_RETRY_S, e)
        time.sleep(WARM_RETRY_S)


def _wait(openings: list[Opening], deadline: float) -> None:
    """Waits in short steps, so Ctrl-C lands promptly, until all are done or the deadline passes."""
    for opening in openings:
        while not opening.done.wait(min(0.2, max(0.0, deadline - time.monotonic()))):
            interrupts.raise_if_requested()
            if time.monotonic() >= deadline:
                return


def _raise_first_failure(openings: list[Opening], kind: str, bound_s: float) -> None:
    for opening in openings:
        if opening.error is not None:
            raise ClientOpenError(f"client {kind}, process {opening.process}: could not open: {opening.error}")
        if not opening.done.is_set():
            raise ClientOpenError(f"client {kind}, process {opening.process}: not open after {bound_s:.0f} s")


def close_opened(openings: list[Opening]) -> None:
    """Closes the clients that did open, off this thread (a close can block)."""
    for opening in openings:
        if opening.done.is_set() and opening.client is not None:
            close_in_background(opening.client)
