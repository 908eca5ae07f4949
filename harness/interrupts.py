"""Ctrl-C and SIGTERM as a run sees them.

The signal handler raises KeyboardInterrupt where the main thread happens to be,
and also remembers that it came. Some code between the handler and the runner
catches BaseException (a library's cleanup, a teardown step that must go on), so
the exception alone can be lost; the runner checks the memory at each phase and
in its waits, and a run that was asked to stop always ends as interrupted.
"""
from __future__ import annotations

import signal

_requested: list[str] = []  # the signal's name, once one came


def install() -> None:
    """Ctrl-C and SIGTERM both end a run the same way (healed, marked incomplete),
    even when started in the background where SIGINT is ignored by default."""
    def interrupt(signum, frame):
        name = signal.Signals(signum).name
        request(name)
        raise KeyboardInterrupt(name)
    signal.signal(signal.SIGINT, interrupt)
    signal.signal(signal.SIGTERM, interrupt)


def request(name: str) -> None:
    """Remembers a stop request; the run raises it at its next phase or wait."""
    _requested[:] = [name]


def raise_if_requested() -> None:
    """Raises KeyboardInterrupt again when a signal came and its first one was swallowed."""
    if _requested:
        raise KeyboardInterrupt(_requested[0])


def clear() -> None:
    """Forgets a request (a test that made one, in-process)."""
    _requested.clear()
