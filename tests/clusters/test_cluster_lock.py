"""clusters/nodes/lock.py with real processes: a run waits for the run (or the
watchdog) that holds its cluster and says for whom; a watchdog's inherited copy
keeps the lock after the control process let go; heals take turns."""
from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from clusters.nodes.lock import ClusterBusy, RunLock, heal_lock

ROOT = Path(__file__).resolve().parents[2]

# holds the run lock, hands a copy to a child that outlives it, and exits
HOLDS = textwrap.dedent("""
    import subprocess, sys, time
    from clusters.nodes.lock import RunLock
    lock = RunLock(sys.argv[1]).acquire("the run in /store/x (pid 1)", 0, print)
    if sys.argv[2] == "hand-over":
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3)"], pass_fds=(lock.fd,))
        print("handed over", flush=True)
        sys.exit(0)
    print("holding", flush=True)
    time.sleep(float(sys.argv[3]))
""")


def holder(inventory: Path, *args: str) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", HOLDS, str(inventory), *args], cwd=ROOT,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() in ("holding", "handed over")
    return proc


def test_a_run_waits_for_the_holder_names_it_and_gives_up_at_its_bound(tmp_path):
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text("nodes: []\n")
    proc = holder(inventory, "hold", "30")
    said: list[str] = []
    started = time.monotonic()
    with pytest.raises(ClusterBusy, match=r"still in use by the run in /store/x \(pid 1\) after 1 s"):
        RunLock(inventory).acquire("me", 1.0, said.append)
    assert time.monotonic() - started >= 1.0
    assert said == ["waiting for the run in /store/x (pid 1) to let go of the cluster"]
    proc.kill()
    proc.wait()
    lock = RunLock(inventory).acquire("me", 0, said.append)   # the kernel dropped the dead holder's
    assert lock.path.read_text() == "me"
    lock.release()


def test_an_inherited_copy_keeps_the_lock_after_its_first_holder_exits(tmp_path):
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text("nodes: []\n")
    proc = holder(inventory, "hand-over")
    assert proc.wait(timeout=30) == 0      # the first holder is gone; its child holds on for 3 s
    said: list[str] = []
    started = time.monotonic()
    lock = RunLock(inventory).acquire("next run", 30, said.append)
    assert 1.0 < time.monotonic() - started < 20
    assert said == ["waiting for the run in /store/x (pid 1) to let go of the cluster"]
    lock.release()


def test_the_same_inventory_by_another_path_is_the_same_cluster(tmp_path):
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text("nodes: []\n")
    (tmp_path / "link.yaml").symlink_to(inventory)
    lock = RunLock(inventory).acquire("me", 0, print)
    with pytest.raises(ClusterBusy):
        RunLock(tmp_path / "link.yaml").acquire("other", 0, print)
    lock.release()


def test_heals_take_turns(tmp_path):
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text("nodes: []\n")
    order: list[str] = []

    def second() -> None:
        with heal_lock(inventory):
            order.append("second")

    with heal_lock(inventory):
        thread = threading.Thread(target=second)
        thread.start()
        time.sleep(0.5)
        order.append("first done")
    thread.join(timeout=10)
    assert order == ["first done", "second"]
