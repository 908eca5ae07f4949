"""Ctrl-C and SIGTERM as a run sees them.

The signal handler raises KeyboardInterrupt where the main thread happens to be,
and also remembers that it came. Some code between the handler and the runner
catches BaseException (a library's cleanup, a teardown step that must go on), so
the exception alone can be lost; the runner checks the memory at each phase and
in its waits, and a run that was asked to stop always ends as interrupted.
"""
from __future__ import annotations

import signal
import threading

_requested = threading.Event()
_signal_name: list[str] = []


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
    _signal_name[:] = [name]
    _requested.set()


def requested() -> bool:
    return _requested.is_set()


def raise_if_requested() -> None:
    """Raises KeyboardInterrupt again when a signal came and its first one was swallowed."""
    if _requested.is_set():
        raise KeyboardInterrupt(_signal_name[0] if _signal_name else "interrupted")


def clear() -> None:
    """Forgets a request (between the tests of `--test-count`, after one was interrupted)."""
    _requested.clear()
    _signal_name.clear()
