"""The pass a check is in ("reading history", "checking on Spark", ...), for whoever
shows progress (harness/check_progress.py): the checkers say which pass they enter,
and never print anything themselves."""
from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Iterator

_current: list[str] = []    # the passes under way, innermost last (one check per process)
_lock = threading.Lock()


_parsed = [0]               # bytes of the history the pass under way has parsed so far


@contextmanager
def stage(name: str) -> Iterator[None]:
    """Marks `name` as the pass under way while the block runs."""
    with _lock:
        _current.append(name)
        _parsed[0] = 0
    try:
        yield
    finally:
        with _lock:
            _current.remove(name)


def current() -> str | None:
    """The innermost pass under way, or None between passes."""
    with _lock:
        return _current[-1] if _current else None


def parsed(nbytes: int) -> None:
    """A reader that holds the history in memory says how much more of it it has parsed
    (one whose file stays open is followed through its descriptor instead)."""
    _parsed[0] += nbytes


def parsed_bytes() -> int:
    return _parsed[0]
