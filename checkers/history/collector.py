"""Pausing Python's cyclic garbage collector around passes that allocate
millions of small objects and no reference cycles (history reading, the
list-append analysis): each burst of allocations would make the collector
walk the whole heap, and at 10^6 operations that cost more than the work
itself. Reference counting still frees everything."""
from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def without_cyclic_gc() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
