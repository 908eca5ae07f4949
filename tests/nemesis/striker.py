"""Strike a fault from a process of its own, then SIGKILL it: what a heal must undo
when the process that struck is gone (the tests of each fault kind's traces)."""
from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def strike_then_sigkill(script: str, inventory: Path) -> str:
    """Runs `script` (argv[1]: the inventory), waits for the line it prints once it has
    struck, SIGKILLs it and returns that line."""
    proc = subprocess.Popen([sys.executable, "-c", script, str(inventory)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        struck = proc.stdout.readline()
        if not struck:
            proc.kill()
            pytest.fail(f"the striking process died: {proc.communicate()[1][-2000:]}")
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        proc.kill()
    return struck


def cluster_heal(inventory: Path) -> subprocess.CompletedProcess:
    """What a user types after the crash: a new process that knows only the inventory."""
    return subprocess.run([sys.executable, "-m", "harness.cli", "cluster", "heal",
                           "--inventory", str(inventory)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
