"""`logtrial` whose control process hangs the way the soak's did: a C call that
holds the GIL and never returns, here right after the first partition struck
(so a fault is in force when it hangs). For tests/harness/test_watchdog.py only.

    python tests/harness/hang_after_partition.py test --nodes-file ... --nemesis partition ...
"""
from __future__ import annotations

import ctypes
import sys

from harness.cli import main
from nemesis.partition import PartitionFault

MUTEX_BYTES = 64  # more than a pthread_mutex_t; zeroed is PTHREAD_MUTEX_INITIALIZER


def hold_the_gil() -> None:
    """Locks a plain mutex twice through PyDLL, which keeps the GIL across the
    call: a self-deadlock that no signal interrupts, so every Python thread of
    the process stops for good, as behind librdkafka#5476's lock-order
    deadlock."""
    libc = ctypes.PyDLL(None)
    mutex = ctypes.create_string_buffer(MUTEX_BYTES)
    libc.pthread_mutex_lock(mutex)
    libc.pthread_mutex_lock(mutex)


def start_then_hang(start):
    def wrapped(self, cluster, params: dict) -> dict:
        started = start(self, cluster, params)
        print("partition struck; holding the GIL", file=sys.stderr, flush=True)
        hold_the_gil()
        return started
    return wrapped


if __name__ == "__main__":
    PartitionFault.start = start_then_hang(PartitionFault.start)
    sys.argv[0] = "logtrial"
    main()
