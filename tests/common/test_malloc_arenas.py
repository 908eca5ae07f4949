"""The control process caps glibc's malloc arenas (common/malloc_arenas.py), unless the
user's MALLOC_ARENA_MAX already does, and every command gets the cap."""
from __future__ import annotations

import os
import subprocess
import sys

from common.malloc_arenas import limit_malloc_arenas

ASK = "from common.malloc_arenas import limit_malloc_arenas; print(limit_malloc_arenas())"
HEAPS = ("import ctypes, ctypes.util, os, tempfile, threading\n"
         "from harness.cli import main\n"
         "import sys; sys.argv = ['logtrial', 'doctor', '--help']\n"
         "try:\n    main()\nexcept SystemExit:\n    pass\n"
         "libc = ctypes.CDLL(ctypes.util.find_library('c'))\n"
         "libc.malloc.restype = ctypes.c_void_p; libc.free.argtypes = [ctypes.c_void_p]\n"
         "def churn():\n"
         "    for _ in range(2000):\n"
         "        libc.free(libc.malloc(100_000))\n"
         "threads = [threading.Thread(target=churn) for _ in range(16)]\n"
         "[t.start() for t in threads]; [t.join() for t in threads]\n"
         "f = tempfile.TemporaryFile('w+')\n"
         "libc.fdopen.restype = ctypes.c_void_p; libc.fdopen.argtypes = [ctypes.c_int, ctypes.c_char_p]\n"
         "libc.fflush.argtypes = [ctypes.c_void_p]; libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]\n"
         "stream = libc.fdopen(os.dup(f.fileno()), b'w'); libc.malloc_info(0, stream); libc.fflush(stream)\n"
         "f.seek(0); print(f.read().count('<heap nr='))\n")


def run(code: str, **env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}
    return subprocess.run([sys.executable, "-c", code], env={**clean, **env}, capture_output=True, text=True,
                          check=True, timeout=120).stdout.strip()


def test_the_cap_is_taken_unless_the_user_set_one():
    assert run(ASK) == "True"
    assert run(ASK, MALLOC_ARENA_MAX="4") == "False"


def test_a_command_runs_with_at_most_the_capped_arenas_however_many_threads_malloc():
    """16 threads allocating through C's malloc, after the CLI ran a command: malloc_info
    lists the arenas (its <heap nr=...> entries), two at most. Without the CLI the same
    threads each get an arena of their own (glibc gives a new thread one while fewer
    than 8 per core exist): the control."""
    assert 1 <= int(run(HEAPS).splitlines()[-1]) <= 2
    assert int(run(HEAPS.replace("from harness.cli import main\n", "main = lambda: None\n"))) > 2


def test_in_this_process_too():
    assert limit_malloc_arenas() is ("MALLOC_ARENA_MAX" not in os.environ)
