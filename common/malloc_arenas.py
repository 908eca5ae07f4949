"""Fewer glibc malloc arenas for the control process.

glibc gives threads that contend for malloc arenas of their own, up to 8 per core,
and an arena's freed pages are rarely given back. The test process runs a hundred
and more threads (librdkafka's, per client instance, made and closed all run long),
so its RSS crept up with no live object behind it: in two 20-minute soaks side by
side (2026-11-28, benchmarks/soak.py, load 2-28) it grew 6.6 MiB from minute 5 to 20
with glibc's default and 1.5 MiB with MALLOC_ARENA_MAX=2, which also started 10 MiB
lower, while the Python heap stayed flat under tracemalloc. Python's own small
objects do not use the arenas (pymalloc), so two cost it nothing measurable.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os

M_ARENA_MAX = -8  # glibc's malloc.h
ARENAS = 2


def limit_malloc_arenas(arenas: int = ARENAS) -> bool:
    """Caps this process's malloc arenas, unless MALLOC_ARENA_MAX already does; call
    it before the process starts threads. False where there is no glibc to ask."""
    if "MALLOC_ARENA_MAX" in os.environ:
        return False  # the user's choice, applied by glibc at start
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return bool(libc.mallopt(M_ARENA_MAX, arenas))
    except (OSError, AttributeError):
        return False
