"""Reliability: real runs with faults, interrupted at random points by SIGINT
and SIGKILL, then recovered with the commands a user would type, naming
nothing: `logtrial cluster heal`, then `logtrial cluster down`.

The cluster lives in a state root of its own (LOGTRIAL_STATE_DIR), so "every
local cluster" means this one only, and no other cluster on the machine is
touched. `make test` makes 2 runs per signal, `make test-deep` (the nightly
profile) 5 (tests/fixtures/depth.py). The interrupt points come from a seeded RNG; each run is printed
(pytest -s) and the counts are in docs/benchmarks.md, "Interrupted runs".
The runs have no watchdog (`--hang-timeout 0`), which would heal a SIGKILLed
run itself (tests/harness/test_watchdog.py): this is the path left when the
control node's whole process tree is gone.
"""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from clusters.cluster import Cluster
from clusters.nodes.local import LocalCluster, link_exists, list_netns
from nemesis import partition
from results.runs import read_run
from tests.fixtures.cluster import shared_cluster_name
from tests.fixtures.depth import repetitions
from tests.fixtures.processes import running_from, still_running
from nemesis.heal import verify_healed

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
RUNS_PER_SIGNAL = repetitions(5)   # 2 per commit, 5 nightly (tests/fixtures/depth.py)
SIGNALS = [signal.SIGINT] * RUNS_PER_SIGNAL + [signal.SIGKILL] * RUNS_PER_SIGNAL
SEED = 20261124
HISTORY_APPEARS_S = 60.0   # a run's history file exists by then, however loaded the machine


@pytest.fixture(scope="module")
def isolated(tmp_path_factory):
    """A 3-node local cluster alone in its own state root, and the environment
    that makes the CLI see that root."""
    root = tmp_path_factory.mktemp("state-root")
    local = LocalCluster(f"{shared_cluster_name()}-int", root)
    local.up(nodes=3)
    yield local, {**os.environ, "LOGTRIAL_STATE_DIR": str(root)}
    local.down()  # if the test failed before its own `cluster down`


def logtrial(env: dict, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness.cli", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


def interrupted_run(local: LocalCluster, env: dict, store: Path, sig: signal.Signals, after_s: float,
                    seed: int) -> int:
    """Starts a faulty run, sends `sig` `after_s` seconds after its history file
    appears; returns the exit code. Counted from the history rather than the
    process's start: before it there is nothing a run could keep, and on a
    loaded machine the interpreter's start alone once took the whole delay."""
    command = [sys.executable, "-m", "harness.cli", "test", "--nodes-file", str(local.inventory_path),
               "--store", str(store), "--time-limit", "30", "--rate", "40", "--concurrency", "4",
               "--nemesis", "partition,pause,clock", "--nemesis-interval", "1.5", "--seed", str(seed),
               "--leave-db-running", "--no-check", "--no-report",
               "--hang-timeout", "0"]  # no watchdog: what a user does when nothing else could heal
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    begun = time.monotonic() + HISTORY_APPEARS_S
    while not any(store.glob("*/*/history.jsonl")) and proc.poll() is None and time.monotonic() < begun:
        time.sleep(0.05)
    try:
        proc.wait(timeout=after_s)
    except subprocess.TimeoutExpired:
        proc.send_signal(sig)
    try:
        return proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()


def assert_history_parses(history: Path) -> int:
    """Every line is a JSON object, the last one included; returns how many."""
    lines = history.read_text(encoding="utf-8").splitlines(keepends=True)
    for number, line in enumerate(lines, start=1):
        assert line.endswith("\n"), f"{history}:{number}: torn line"
        assert isinstance(json.loads(line), dict), f"{history}:{number}"
    return len(lines)


def unhealed_faults(local: LocalCluster) -> list[str]:
    """What the harness's own verification finds, plus logtrial's iptables rules
    as seen from inside each node's namespace (not through the harness)."""
    found = []
    with Cluster.open(local.inventory_path, start=False) as cluster:
        try:
            verify_healed(cluster)
        except Exception as e:  # ClusterNotHealed names node and fault
            found.append(str(e))
    for node in ("n1", "n2", "n3"):
        rules = subprocess.run(["ip", "netns", "exec", local.netns(node), "iptables", "-S"],
                               capture_output=True, text=True, check=True).stdout
        found += [f"{node}: {line}" for line in rules.splitlines() if partition.CHAIN in line]
    return found


def run_log_tail(run_dir: Path, lines: int = 40) -> str:
    """The end of the run's own log: where it was when the signal came, and what it did next."""
    log = run_dir / "logtrial.log"
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:]) if log.exists() else "(no logtrial.log)"


def node_processes(local: LocalCluster) -> set[tuple[int, str]]:
    pid_files = [pf for node in ("n1", "n2", "n3") for pf in local.home(node).glob("**/*.pid")]
    return running_from(pid_files + [local.sshd_dir(node) / "sshd.pid" for node in ("n1", "n2", "n3")])


def test_interrupted_runs_keep_their_history_and_heal_then_down_leave_nothing(isolated, tmp_path):
    local, env = isolated
    rng = random.Random(SEED)
    plan = list(SIGNALS)
    rng.shuffle(plan)
    tally = {"SIGINT": 0, "SIGKILL": 0, "with faults in force": 0, "heal actions": 0}
    for i, sig in enumerate(plan):
        after_s = rng.uniform(1.0, 9.0)  # from the history's creation: setup, or main with faults
        store = tmp_path / f"store-{i}"
        code = interrupted_run(local, env, store, sig, after_s, seed=i)
        (run_dir,) = [p.parent for p in store.glob("*/*/history.jsonl")]
        events = assert_history_parses(run_dir / "history.jsonl")
        summary = read_run(run_dir)
        assert summary.verdict == "incomplete", (sig.name, after_s, summary, run_log_tail(run_dir))
        healed = logtrial(env, "cluster", "heal")
        assert healed.returncode == 0, healed.stdout + healed.stderr
        assert f"local clusters in {env['LOGTRIAL_STATE_DIR']}: {local.name}" in healed.stdout
        assert f"cluster {local.name}: healed" in healed.stdout
        actions = [line for line in healed.stdout.splitlines() if line.startswith("  ")]
        assert unhealed_faults(local) == [], (sig.name, after_s, healed.stdout)
        tally[sig.name] += 1
        tally["with faults in force"] += bool(actions)
        tally["heal actions"] += len(actions)
        print(f"run {i}: {sig.name} after {after_s:.1f} s, exit {code}, {events} history lines, "
              f"heal: {actions or 'nothing to undo'}")
    assert tally["SIGINT"] == RUNS_PER_SIGNAL and tally["SIGKILL"] == RUNS_PER_SIGNAL
    # SIGINT heals on its way out; SIGKILL leaves the faults it had started
    assert tally["with faults in force"] >= 1, tally
    print(f"tally: {tally}")

    processes = node_processes(local)
    assert processes, "brokers and sshds were running"
    down = logtrial(env, "cluster", "down")
    assert down.returncode == 0, down.stdout + down.stderr
    assert f"cluster {local.name}: removed" in down.stdout
    assert not [ns for ns in list_netns() if ns.startswith(f"lt-{local.name}-")]
    assert not link_exists(local.bridge) and not any(link_exists(local.veth(n)) for n in ("n1", "n2", "n3"))
    assert still_running(processes) == []
    assert not local.dir.exists()
