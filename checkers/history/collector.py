"""Process memory settings around big passes.

without_cyclic_gc: pauses Python's cyclic garbage collector around passes
that allocate millions of small objects and no reference cycles (history
reading, the list-append analysis): each burst of allocations would make
the collector walk the whole heap, and at 10^6 operations that cost more
than the work itself. Reference counting still frees everything.

kept_heap: glibc's malloc keeps freed memory for the next allocation
instead of handing every big block back to the kernel (arrays above 32 MB
are always mmap'ed, and each new one is faulted in and zeroed page by page:
on this machine about 0.5 s per GB, which in the pool engine's pass over
10^7 operations was a third of its time).

jemalloc_for_arrow: pyarrow allocates from jemalloc instead of its default
mimalloc, which here spends most of a big read in the kernel (the 1.7 GB of
records of 10^7 operations: 7.0 s against 1.0 s, same file, same run)."""
from __future__ import annotations

import ctypes
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


_M_TRIM_THRESHOLD, _M_MMAP_MAX = -1, -4
_DEFAULT_TRIM_THRESHOLD, _DEFAULT_MMAP_MAX = 128 * 1024, 65536


def _glibc() -> ctypes.CDLL | None:
    try:
        libc = ctypes.CDLL(None)
        return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None
    except OSError:
        return None


@contextmanager
def kept_heap() -> Iterator[None]:
    """Big allocations from the heap, which is not trimmed, for the block;
    then glibc's defaults again and the free memory handed back. Only for
    passes whose big allocations are on the main thread: with mmap off, a
    thread's arena cannot serve a block above 64 MB."""
    libc = _glibc()
    if libc is None:
        yield
        return
    libc.mallopt(_M_MMAP_MAX, 0)
    libc.mallopt(_M_TRIM_THRESHOLD, (1 << 31) - 1)
    try:
        yield
    finally:
        libc.mallopt(_M_MMAP_MAX, _DEFAULT_MMAP_MAX)
        libc.mallopt(_M_TRIM_THRESHOLD, _DEFAULT_TRIM_THRESHOLD)
        libc.malloc_trim(0)


@contextmanager
def jemalloc_for_arrow() -> Iterator[None]:
    """pyarrow's default memory pool is jemalloc's for the block (buffers
    keep the pool they came from, so any may outlive it)."""
    import pyarrow as pa    # only here: the in-process readers need no pyarrow
    before = pa.default_memory_pool()
    try:
        pa.set_memory_pool(pa.jemalloc_memory_pool())
    except NotImplementedError:     # a pyarrow built without it
        yield
        return
    try:
        yield
    finally:
        pa.set_memory_pool(before)

