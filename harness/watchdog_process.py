"""The run's watchdog process: it heals the run's cluster when the
control process hangs or dies before it could.

Why a process: a C call that holds the GIL while it blocks (confluent-kafka's
`Consumer.assignment()` behind a librdkafka lock-order deadlock did, in the
soak: docs/benchmarks.md) stops every Python thread of the control process,
its signal handlers included, so nothing inside it can heal the cluster or
even exit; and a SIGKILL, a segfault in a client library or the OOM killer
leave no chance to either.

The control process keeps a heartbeat file fresh from a thread of its own (one
touch a second, which needs the GIL). The watchdog inherits the run's cluster
lock (clusters/nodes/lock.py), so no new run starts on the cluster until it
is done. When the heartbeat is older than the hang timeout, it:
1. sends SIGUSR1, on which the control process's faulthandler, in C and without
   the GIL, writes every thread's Python stack to `hang-stacks.txt`;
2. SIGKILLs it (by pid, checked against its start time);
3. goes on as after a death.
When the control process is gone without having ended its run (the heartbeat
file is still there), the watchdog heals the run's cluster (as `logtrial
cluster heal --run` does) and marks test.json `incomplete`, with an error that
says what happened and what it did. A cluster the run brought up (`--local`)
is left up, healed; the nodes' logs are collected into the run's nodes/ as
its teardown would have. A stopped control process (Ctrl-Z) is not a hang:
its time does not count. The history written so far stays on disk
(its last half second of buffered events, at most, is lost with the process).

    python -m harness.watchdog_process RUN_DIR PID HANG_TIMEOUT_S
"""
from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

from clusters.nodes.proc import is_stopped, start_time
from harness.cluster_targets import Target, run_target
from harness.watchdog import HEARTBEAT, STACKS, WATCHDOG_LOG, clear_heartbeat
from results import store


CHECK_S = 1.0
STACKS_WAIT_S = 2.0


ENDED, HUNG, DIED = "ended", "hung", "died"


def watch(run_dir: Path, pid: int, hang_timeout: float) -> str:
    """Waits for the control process to end its run (ENDED), hang (HUNG: killed
    here, its stacks dumped) or die (DIED). Staleness is measured on this
    process's monotonic clock, from when the heartbeat's mtime last changed: a
    jump of the wall clock is not a hang."""
    born = start_time(pid)
    heartbeat = run_dir / HEARTBEAT
    last_mtime, changed_at = None, time.monotonic()
    while born is not None and start_time(pid) == born:
        time.sleep(CHECK_S)
        try:
            mtime = heartbeat.stat().st_mtime_ns
        except FileNotFoundError:
            return ENDED  # the run removed it
        now = time.monotonic()
        if mtime != last_mtime or is_stopped(pid):
            last_mtime, changed_at = mtime, now
        elif now - changed_at >= hang_timeout:
            kill_hung(run_dir, pid, born, now - changed_at)
            return HUNG
    return DIED if heartbeat.exists() else ENDED


def kill_hung(run_dir: Path, pid: int, born: str, silent_s: float) -> None:
    say(run_dir, f"the control process (pid {pid}) has not beaten for {silent_s:.0f} s: dumping its stacks")
    os.kill(pid, signal.SIGUSR1)
    time.sleep(STACKS_WAIT_S)
    if start_time(pid) == born:
        os.kill(pid, signal.SIGKILL)
    while start_time(pid) == born:
        time.sleep(0.1)
    say(run_dir, f"killed it (its threads' stacks are in {STACKS})")


def recover(run_dir: Path, outcome: str, pid: int, hang_timeout: float) -> None:
    """After a hang or a death: the cluster healed, the run marked incomplete."""
    what = (f"the control process hung (no heartbeat for {hang_timeout:.0f} s); its watchdog dumped its "
            f"threads' stacks ({STACKS}) and killed it" if outcome == HUNG else
            f"the control process (pid {pid}) died before the run ended (killed, or crashed)")
    clear_heartbeat(run_dir)
    store.mark_incomplete(run_dir, f"{what}; its watchdog is healing its cluster ({WATCHDOG_LOG})")
    healed = f"{what}; {heal_run_cluster(run_dir)}"
    store.mark_incomplete(run_dir, healed)
    checked = check_what_was_written(run_dir, what)
    if checked:
        store.mark_incomplete(run_dir, f"{healed}; {checked}")


def check_what_was_written(run_dir: Path, what: str) -> str | None:
    """The run's checker over the history written so far, into results.json with
    `partial` saying why the history stops short (the verdict stays `incomplete`:
    a lost write may just be a read never made). None when the run checks nothing."""
    test = store.read_test_json(run_dir)
    if not (test.get("options") or {}).get("check", True) or not (run_dir / store.HISTORY).exists():
        return None
    from checkers.api import check_history, write_results  # loads the checkers: only when needed
    from checkers.options import CheckOptions
    recorded = test.get("check") if isinstance(test.get("check"), dict) else {}
    say(run_dir, "checking the history written so far")
    try:
        results = check_history(run_dir / store.HISTORY, workload=test.get("workload") or "queue", out_dir=run_dir,
                                spark_master=recorded.get("spark_master"), engine=recorded.get("engine", "auto"),
                                options=CheckOptions.from_record(recorded))
    except Exception as e:  # noqa: BLE001 - said in the record; the history is still there
        say(run_dir, f"the check failed: {type(e).__name__}: {e}")
        return f"the check of the history written so far FAILED ({type(e).__name__}: {e})"
    write_results({**results, "partial": f"the history stops where {what}"}, run_dir)
    found = {kind: found["count"] for kind, found in results["anomalies"].items()}
    say(run_dir, f"the history written so far: valid {results['valid']}, anomalies {found or 'none'}")
    return f"the history written so far checked: valid {results['valid']} (results.json, partial)"


def heal_run_cluster(run_dir: Path) -> str:
    """Heals the run's cluster as `logtrial cluster heal --run` does; says how it went."""
    try:
        test = store.read_test_json(run_dir)
    except (OSError, ValueError) as e:
        return f"its cluster was not healed: test.json unreadable ({e})"
    if not test.get("cluster"):
        return "it had no cluster to heal"
    from nemesis.heal import heal_inventory  # loads the clients: only when needed
    say(run_dir, "healing its cluster")
    try:
        target = run_target(run_dir)
        actions = heal_inventory(target.inventory_path)
    except Exception as e:  # noqa: BLE001 - said, and the run's record says it too
        say(run_dir, f"the heal failed: {type(e).__name__}: {e}")
        return f"the heal of its cluster FAILED ({type(e).__name__}: {e}); run `logtrial cluster heal --run`"
    for action in actions:
        say(run_dir, f"  {action}")
    left = " (left up)" if target.local is not None else ""
    return f"its watchdog healed its cluster{left} ({len(actions)} actions) and {collect_node_logs(run_dir, target)}"


def collect_node_logs(run_dir: Path, target: Target) -> str:
    """The nodes' logs into the run's nodes/, as the run's teardown would have: a
    crash's evidence is in them. Best effort; says how it went."""
    from clusters.cluster import Cluster
    try:
        with Cluster.open(target.inventory_path, start=False) as cluster:
            failed = cluster.collect_logs(run_dir / store.NODES)
    except Exception as e:  # noqa: BLE001 - said in the record
        return f"could not collect its nodes' logs ({type(e).__name__}: {e})"
    return "collected its nodes' logs" + (f" (not from {', '.join(sorted(failed))})" if failed else "")


def say(run_dir: Path, message: str) -> None:
    """To the run's watchdog.log (made only when there is something to say) and to
    the terminal the run was started from."""
    line = f"{time.strftime('%H:%M:%S')} logtrial watchdog: {message}"
    with open(run_dir / WATCHDOG_LOG, "a") as log:
        print(line, file=log)
    print(line, file=sys.stderr, flush=True)


def main(argv: list[str]) -> int:
    run_dir, pid, hang_timeout = Path(argv[0]), int(argv[1]), float(argv[2])
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # the run ended and stops us
    outcome = watch(run_dir, pid, hang_timeout)
    if outcome == ENDED:
        return 0
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # nobody is left to stop us; finish the heal
    recover(run_dir, outcome, pid, hang_timeout)
    say(run_dir, f"{run_dir}: marked incomplete")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
