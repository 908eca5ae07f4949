"""The watchdog (harness/watchdog.py, harness/watchdog_process.py): a control
process that hangs holding the GIL, the way the soak's did, has its stacks
dumped, is killed, and its cluster healed, from outside; one that dies is
healed after; a process stopped by Ctrl-Z is left alone."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from harness.watchdog import STACKS, WATCHDOG_LOG, Heartbeat
from harness.watchdog_process import DIED, ENDED, HUNG, recover, watch
from results import store
from results.runs import read_run
from tests.fixtures.killed_runs import sigkill_run_when, wait_for_record
from tests.harness.test_interrupted_runs import assert_history_parses, unhealed_faults

ROOT = Path(__file__).resolve().parents[2]
HANG_TIMEOUT_S = 4.0

# a control process in miniature: heartbeat on, then a C call that deadlocks holding the GIL
HANGS = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from harness.watchdog import Heartbeat
    from tests.harness.hang_after_partition import hold_the_gil
    Heartbeat(Path(sys.argv[1])).start()
    time.sleep(2)
    def stuck_in_c():
        hold_the_gil()
    stuck_in_c()
""")

# the same, beating, stopped from outside for longer than the timeout, then ending on its own
ENDS = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from harness.watchdog import Heartbeat
    beat = Heartbeat(Path(sys.argv[1])).start()
    time.sleep(float(sys.argv[2]))
    beat.stop()
""")


def child(script: str, run_dir: Path, *args: str) -> subprocess.Popen:
    """`script` started, once its heartbeat exists: the runner starts its heartbeat
    before its watchdog, and a watch begun before the beat takes the run for ended."""
    proc = subprocess.Popen([sys.executable, "-c", script, str(run_dir), *args], cwd=ROOT,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not (run_dir / "heartbeat").exists():
        assert proc.poll() is None, proc.stderr.read()
        assert time.monotonic() < deadline, "the child never started its heartbeat"
        time.sleep(0.05)
    return proc


def run_dir_with_record(tmp_path: Path) -> Path:
    store.write_test_json(tmp_path, {"name": "hangs", "status": "running"})
    return tmp_path


def test_a_process_holding_the_gil_has_its_stacks_dumped_and_is_killed(tmp_path):
    run_dir = run_dir_with_record(tmp_path)
    proc = child(HANGS, run_dir)
    started = time.monotonic()
    assert watch(run_dir, proc.pid, HANG_TIMEOUT_S) == HUNG
    assert proc.wait(timeout=10) == -signal.SIGKILL
    assert time.monotonic() - started < 30
    stacks = (run_dir / STACKS).read_text()
    assert "in stuck_in_c" in stacks and "Thread" in stacks
    recover(run_dir, HUNG, proc.pid, HANG_TIMEOUT_S)
    test = json.loads((run_dir / "test.json").read_text())
    assert test["status"] == "incomplete"
    assert test["error"] == (f"the control process hung (no heartbeat for {HANG_TIMEOUT_S:.0f} s); its watchdog "
                             f"dumped its threads' stacks ({STACKS}) and killed it; it had no cluster to heal")
    assert "killed it" in (run_dir / WATCHDOG_LOG).read_text()
    assert not (run_dir / "heartbeat").exists()


def test_a_stopped_process_is_not_a_hang_and_its_end_ends_the_watch(tmp_path):
    run_dir = run_dir_with_record(tmp_path)
    proc = child(ENDS, run_dir, "8")
    time.sleep(1.5)
    proc.send_signal(signal.SIGSTOP)         # Ctrl-Z: stopped for twice the timeout
    stopped = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(8.5)"])
    try:
        assert watch_until(run_dir, proc, stopped) == ENDED
    finally:
        proc.send_signal(signal.SIGCONT)
    assert proc.wait(timeout=30) == 0
    assert not (run_dir / STACKS).exists() and not (run_dir / WATCHDOG_LOG).exists()
    assert json.loads((run_dir / "test.json").read_text())["status"] == "running"


def watch_until(run_dir: Path, proc: subprocess.Popen, stopped: subprocess.Popen) -> int:
    """Watches `proc` while a timer (`stopped`) keeps it stopped, then lets it go on."""
    import threading
    result: list[str] = []
    watcher = threading.Thread(target=lambda: result.append(watch(run_dir, proc.pid, HANG_TIMEOUT_S)))
    watcher.start()
    stopped.wait()
    proc.send_signal(signal.SIGCONT)
    watcher.join(timeout=60)
    return result[0]


def test_heartbeat_leaves_nothing_behind(tmp_path):
    beat = Heartbeat(tmp_path).start()
    beat.stop()
    assert list(tmp_path.iterdir()) == []


def test_a_process_that_dies_before_its_run_ends_is_recorded_so(tmp_path):
    run_dir = run_dir_with_record(tmp_path)
    proc = child(ENDS, run_dir, "60")
    proc.kill()
    proc.wait()
    assert watch(run_dir, proc.pid, HANG_TIMEOUT_S) == DIED
    recover(run_dir, DIED, proc.pid, HANG_TIMEOUT_S)
    assert sorted(p.name for p in run_dir.iterdir()) == ["test.json"]   # no heartbeat, no empty stacks
    test = json.loads((run_dir / "test.json").read_text())
    assert (test["status"], test["error"]) == ("incomplete", f"the control process (pid {proc.pid}) died before "
                                               "the run ended (killed, or crashed); it had no cluster to heal")


@pytest.mark.cluster
def test_a_run_that_hangs_with_a_partition_in_force_is_healed_by_its_watchdog(healed_cluster, local_cluster, tmp_path):
    command = [sys.executable, "tests/harness/hang_after_partition.py", "test",
               "--nodes-file", str(local_cluster.inventory_path), "--store", str(tmp_path), "--time-limit", "60",
               "--rate", "20", "--concurrency", "2", "--nemesis", "partition", "--nemesis-interval", "1",
               "--hang-timeout", str(HANG_TIMEOUT_S), "--leave-db-running", "--no-check", "--no-report"]
    proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-3000:]
    assert "partition struck; holding the GIL" in proc.stderr
    assert "logtrial watchdog: healing its cluster" in proc.stderr
    (run_dir,) = [p.parent for p in tmp_path.glob("*/*/test.json")]
    test = json.loads((run_dir / "test.json").read_text())
    assert test["status"] == "incomplete" and "healed its cluster" in test["error"], test.get("error")
    assert "in wrapped" in (run_dir / STACKS).read_text()     # the nemesis thread, where it hung
    assert assert_history_parses(run_dir / "history.jsonl") > 0
    assert unhealed_faults(local_cluster) == []


def partition_in_force(store_dir: Path) -> bool:
    """The history's last partition event started one (flushed every 0.5 s)."""
    events = [line for h in store_dir.glob("*/*/history.jsonl") for line in h.read_text().splitlines()
              if '"process":"nemesis"' in line and "-partition" in line]
    return bool(events) and '"f":"start-partition"' in events[-1]


@pytest.mark.cluster
def test_a_run_killed_with_a_partition_in_force_is_healed_by_its_watchdog(healed_cluster, local_cluster, tmp_path):
    pid = sigkill_run_when(["--nodes-file", str(local_cluster.inventory_path), "--time-limit", "60", "--rate", "20",
                            "--concurrency", "2", "--nemesis", "partition", "--nemesis-interval", "2", "--seed", "4",
                            "--leave-db-running", "--no-report"], tmp_path, partition_in_force, timeout=120)
    assert partition_in_force(tmp_path)
    (run_dir,) = [p.parent for p in tmp_path.glob("*/*/test.json")]
    test = wait_for_record(run_dir, "(results.json, partial)")
    assert test["status"] == "incomplete"
    assert test["error"].startswith(f"the control process (pid {pid}) died before the run ended (killed, "
                                    "or crashed); its watchdog healed its cluster ("), test["error"]
    assert "and collected its nodes' logs; the history written so far checked: valid " in test["error"]
    results = json.loads((run_dir / "results.json").read_text())  # the verdict on what was written
    assert results["partial"] == f"the history stops where the control process (pid {pid}) died before " \
                                 "the run ended (killed, or crashed)"
    assert results["stats"]["ops"] > 0 and results["valid"] in (True, False, "unknown")
    assert read_run(run_dir).verdict == "incomplete"  # not a verdict on the whole run
    assert "removed logtrial's iptables chain" in (run_dir / WATCHDOG_LOG).read_text()  # the partition, healed
    assert sorted(p.name for p in (run_dir / "nodes").iterdir()) == ["n1", "n2", "n3"]
    assert any((run_dir / "nodes" / "n1").rglob("server.log*"))
    assert unhealed_faults(local_cluster) == []
    assert not (run_dir / "heartbeat").exists()
