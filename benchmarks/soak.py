"""An hour-long soak of the harness itself (issue 33, part 4): measured, not tested.

    .venv/bin/python -m benchmarks.soak [--minutes 60] [--cluster soak] [--seed 33]

Runs `logtrial test` as a child process for `--minutes` of the queue workload with
transactions and every fault kind that applies to a static-quorum local 3-node
cluster (SOAK_FAULTS), on a local cluster of its own (`--cluster`, brought up if
missing). Once a minute it samples the control node: per process of the test's tree
(the test and any children), RSS, open file descriptors and threads; and the
history's size and line count. When the run has ended it checks the history's
completeness (benchmarks/soak_history.py), then times `logtrial check` and
`logtrial report` on the run. The samples and the summary go to
benchmarks/results/soak-<date>.json; a table is printed.

The child runs without checking or reporting, so the check and the report are timed
on their own, as a user re-checking the run would run them.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from benchmarks.soak_history import completeness
from benchmarks.soak_procs import HistoryCounter, load_average, sample_tree, summarise
from nemesis.registry import FAULT_NAMES

ROOT = Path(__file__).resolve().parent.parent
STATE_ROOT = Path(os.environ.get("LOGTRIAL_STATE_DIR", "/var/lib/logtrial/clusters"))
# Every fault kind (nemesis/registry.py) applies to a static-quorum local cluster, with one
# part of one kind skipping itself: membership's remove-controller needs a dynamic
# quorum and records `skipped` on a static one (docs/nemesis.md); its remove-node and
# reassign run. producer-state and membership can make the verdict invalid on purpose
# (records deleted, a voter's log wiped); the soak measures the harness, not Kafka.
SOAK_FAULTS = FAULT_NAMES


def main() -> int:
    args = parse_args()
    inventory = ensure_cluster(args.cluster)
    out_dir = Path(args.work_dir).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    started = datetime.now(timezone.utc)
    child = start_test(args, inventory, out_dir)
    samples = watch(child, out_dir / "store", args.sample_every)
    ended = time.monotonic()
    run_dir = find_run_dir(out_dir / "store")
    result = {
        "started_utc": started.isoformat(timespec="seconds"),
        "command": " ".join(sys.argv),
        "options": {"minutes": args.minutes, "seed": args.seed, "faults": list(args.faults), "safe": args.safe,
                    "nemesis_interval_s": args.nemesis_interval,
                    "cluster": args.cluster, "sample_every_s": args.sample_every},
        "run_dir": str(run_dir),
        "test_exit_code": child.returncode,
        "samples": samples,
        "completeness": completeness(run_dir),
        "after_the_run": check_and_report(run_dir, ended),
        "load_average_end": load_average(),
    }
    result["summary"] = summarise(samples, warm_up_minute=args.warm_up, main_ends_minute=args.minutes)
    path = Path(args.out or ROOT / "benchmarks" / "results" / f"soak-{started:%Y-%m-%d}.json")
    path.write_text(json.dumps(result, indent=1) + "\n")
    print_table(result)
    print(f"\nwritten: {path}")
    return 0


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=60.0, help="the main phase's length")
    parser.add_argument("--cluster", default="soak", help="local cluster name (brought up if missing)")
    parser.add_argument("--seed", type=int, default=33)
    parser.add_argument("--faults", type=lambda s: tuple(s.split(",")), default=SOAK_FAULTS)
    parser.add_argument("--safe", action="store_true",
                        help="the run with --safe (acks=all, idempotence, read_committed, min ISR 2): with faults "
                             "that must lose nothing, it must end valid")
    # 30 s, not the runner's 10: each kind is on about half the time on its own timeline,
    # so nine kinds at 10 s left the brokers (restarting in 30 s or more on the loaded
    # machine) no window to serve in, and the workload made no progress after its first
    # seconds (the 3-minute dry run: 342 ok, all in the first 10 s)
    parser.add_argument("--nemesis-interval", type=float, default=30.0)
    parser.add_argument("--sample-every", type=float, default=60.0, help="seconds between samples")
    parser.add_argument("--warm-up", type=float, default=5.0,
                        help="minute from which growth is measured (the reference sample)")
    parser.add_argument("--work-dir", default="/tmp/logtrial-soak", help="the run's store and the child's output")
    parser.add_argument("--out", help="the JSON (default benchmarks/results/soak-<date>.json)")
    parser.add_argument("--tracemalloc", type=float, metavar="SECONDS",
                        help="run the child under tracemalloc, a heap snapshot every SECONDS into WORK_DIR/heap "
                             "(benchmarks/heap_growth.py compares two); it slows the child")
    return parser.parse_args()


def logtrial(*args: str) -> list[str]:
    """This checkout's CLI (not whatever `logtrial` the venv's script points at)."""
    return [sys.executable, "-m", "harness.cli", *args]


def child_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def ensure_cluster(name: str) -> Path:
    """The cluster's inventory, after `cluster up` if it is not there yet."""
    inventory = STATE_ROOT / name / "inventory.yaml"
    if not inventory.exists():
        up = subprocess.run(logtrial("cluster", "up", "--name", name), cwd=ROOT, env=child_env())
        if up.returncode != 0:     # its own message (a bad name, a missing package) is above
            raise SystemExit(f"soak: `logtrial cluster up --name {name}` failed (exit {up.returncode})")
    return inventory


def start_test(args: argparse.Namespace, inventory: Path, out_dir: Path) -> subprocess.Popen:
    command = (traced(args.tracemalloc, out_dir) or logtrial()) + [
        "test", "--nodes-file", str(inventory), "--workload", "queue", "--txn",
        "--nemesis", ",".join(args.faults),
        "--nemesis-interval", str(args.nemesis_interval), "--time-limit", str(args.minutes * 60),
        "--seed", str(args.seed), "--store", str(out_dir / "store"),
        "--no-check", "--no-report", *(["--safe"] if args.safe else [])]
    output = open(out_dir / "test-output.log", "w")
    print("running:", " ".join(command), flush=True)
    return subprocess.Popen(command, cwd=ROOT, env=child_env(), stdout=output, stderr=subprocess.STDOUT)


def traced(every: float | None, out_dir: Path) -> list[str]:
    """The CLI under tracemalloc, snapshotting every `every` s into out_dir/heap
    (benchmarks/traced_child.py), in place of the plain CLI; [] without."""
    if not every:
        return []
    return [sys.executable, "-m", "benchmarks.traced_child", str(every), str(out_dir / "heap")]


def watch(child: subprocess.Popen, store: Path, every: float) -> list[dict]:
    """Samples the child's tree every `every` seconds until it exits (and once at the end
    of each phase it is seen in, so the last main-phase figures are there too)."""
    samples: list[dict] = []
    counter: HistoryCounter | None = None
    start = time.monotonic()
    next_at = start
    while child.poll() is None:
        if time.monotonic() >= next_at:
            counter = counter or history_counter(store)
            samples.append(take_sample(child.pid, counter, store, time.monotonic() - start))
            print(sample_line(samples[-1]), flush=True)
            next_at += every
        time.sleep(min(1.0, max(0.0, next_at - time.monotonic())))
    return samples


def history_counter(store: Path) -> HistoryCounter | None:
    try:
        return HistoryCounter(find_run_dir(store) / "history.jsonl")
    except FileNotFoundError:
        return None


def take_sample(pid: int, counter: HistoryCounter | None, store: Path, elapsed: float) -> dict:
    sample = {"minute": round(elapsed / 60, 2), "phase": current_phase(store), "load": load_average(),
              **sample_tree(pid)}
    if counter is not None:
        sample.update(counter.read())
    return sample


def current_phase(store: Path) -> str | None:
    try:
        return json.loads((find_run_dir(store) / "test.json").read_text()).get("phase")
    except (FileNotFoundError, json.JSONDecodeError):
        return None


def find_run_dir(store: Path) -> Path:
    """The run's directory: the store holds this soak's run only."""
    runs = sorted(store.glob("*/*/history.jsonl"))
    if not runs:
        raise FileNotFoundError(f"no run under {store}")
    return runs[-1].parent


def check_and_report(run_dir: Path, run_ended: float) -> dict:
    """`logtrial check` then `logtrial report` on the run, each timed; and from the end of
    the run (the test process's exit) to the report written."""
    figures: dict = {}
    for step in ("check", "report"):
        t0 = time.monotonic()
        done = subprocess.run(logtrial(step, str(run_dir)), cwd=ROOT, env=child_env(),
                              capture_output=True, text=True)
        figures[step] = {"seconds": round(time.monotonic() - t0, 1), "exit_code": done.returncode,
                         "output_tail": done.stdout.strip().splitlines()[-3:]}
    figures["seconds_from_run_end_to_report"] = round(time.monotonic() - run_ended, 1)
    results = run_dir / "results.json"
    if results.exists():
        verdict = json.loads(results.read_text())
        figures["valid"] = verdict.get("valid")
        figures["anomaly_types"] = verdict.get("anomaly_types")
    return figures


def sample_line(s: dict) -> str:
    procs = ", ".join(f"{p['name']}:{p['pid']}" for p in s.get("processes", []))
    return (f"min {s['minute']:6.2f} [{s.get('phase')}] rss {s['rss_mib']:7.1f} MiB fds {s['fds']:4d} "
            f"threads {s['threads']:4d} history {s.get('history_mib', 0):7.1f} MiB "
            f"{s.get('history_lines', 0):9,d} lines load {s['load'][0]:.1f} ({procs})")


def print_table(result: dict) -> None:
    print("\nminute  phase     RSS MiB   fds  threads  history MiB   lines    load1")
    for s in result["samples"]:
        print(f"{s['minute']:6.1f}  {str(s.get('phase')):8s} {s['rss_mib']:8.1f} {s['fds']:5d} {s['threads']:8d} "
              f"{s.get('history_mib', 0):12.1f} {s.get('history_lines', 0):9,d} {s['load'][0]:6.1f}")
    print("\nsummary:", json.dumps(result["summary"], indent=1))
    print("completeness:", json.dumps({k: v for k, v in result["completeness"].items() if k != "open_ops"}, indent=1))
    print("after the run:", json.dumps(result["after_the_run"], indent=1))


if __name__ == "__main__":
    sys.exit(main())
