"""End-to-end runs of `logtrial test` against the shared local cluster: the
histories are well-formed and the final reads see every acknowledged write;
transactions both commit and abort; Ctrl-C leaves a partial history, an
incomplete test.json and a healed cluster."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from checkers.history.stream import raw_events
from checkers.history.wellformed import wellformedness_problems
from common import exit_codes
from harness import interrupts
from harness.runner import TestOptions, run_test
from nemesis.heal import verify_healed

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]


def run(cluster, tmp_path, **overrides):
    options = TestOptions.from_flat(**{"nodes_file": str(cluster.inventory.path), "store": str(tmp_path / "store"),
                                       "leave_db_running": True, "recovery_time": 2, "final_time_limit": 30,
                                       "rate": 100, "concurrency": 5, "check": False, "report": False,
                                       **overrides})
    result = run_test(options)
    events = list(raw_events(result.run_dir / "history.jsonl"))
    test_json = json.loads((result.run_dir / "test.json").read_text())
    return result, events, test_json


def completed_ops(events):
    """(invoke, completion) pairs of client ops."""
    open_ops, pairs = {}, []
    for e in events:
        if e["process"] == "nemesis":
            continue
        if e["type"] == "invoke":
            open_ops[e["process"]] = e
        else:
            pairs.append((open_ops.pop(e["process"]), e))
    return pairs


def test_queue_run_is_well_formed_and_final_reads_see_every_ack(cluster, tmp_path):
    result, events, test_json = run(cluster, tmp_path, workload="queue", time_limit=8)
    assert result.status == "complete" and test_json["status"] == "complete"
    assert wellformedness_problems(events, "queue") == []
    pairs = completed_ops(events)
    acked = {(m[1], m[2][0]): m[2][1] for _, c in pairs if c["type"] == "ok" and c["f"] in ("send", "txn")
             for m in c["value"] if m[0] == "send"}
    assert len(acked) > 100
    start = test_json["final"]["first_index"]
    final_seen = {(int(k), offset): value for _, c in pairs if c["index"] >= start and c["type"] == "ok"
                  and c["f"] == "poll" for m in c["value"] for k, pairs_ in m[1].items() for offset, value in pairs_}
    missing = {kv: v for kv, v in acked.items() if final_seen.get(kv) != v}
    assert missing == {}
    assert test_json["final"]["complete"] is True
    assert test_json["versions"]["librdkafka"]
    assert test_json["cluster"] == {"inventory": str(Path(cluster.inventory.path).resolve())}
    phases = [p["phase"] for p in test_json["phases"]]
    assert phases == ["open", "main", "heal", "recover", "final", "teardown", "check"]
    assert [p["time_s"] for p in test_json["phases"]] == sorted(p["time_s"] for p in test_json["phases"])
    # every client opened (and warmed) before the clock: no op before "main"
    assert test_json["client_open"]["client"] == "librdkafka" and test_json["client_open"]["clients"] == 5
    main_ns = test_json["phases"][1]["time_s"] * 1e9
    assert min(e["time"] for e in events if e["process"] != "nemesis") >= main_ns - 1e6  # time_s: to the ms
    # the shared cluster is the default release; tests/clusters/test_kafka_versions.py runs 3.0.0 (ZooKeeper)
    assert test_json["kafka"] == {"version": "4.1.1", "mode": "kraft"} and test_json["versions"]["kafka"] == "4.1.1"
    for node in cluster.nodes:  # teardown collected every broker's log
        assert (result.run_dir / "nodes" / node / "server.log").stat().st_size > 0


def test_list_append_run_is_well_formed_and_final_reads_see_every_append(cluster, tmp_path):
    result, events, test_json = run(cluster, tmp_path, workload="list-append", time_limit=8)
    assert result.status == "complete"
    assert wellformedness_problems(events, "list-append") == []
    pairs = completed_ops(events)
    appended = {(m[1], m[2]) for _, c in pairs if c["type"] == "ok" for m in c["value"] if m[0] == "append"}
    assert len(appended) > 100
    start = test_json["final"]["first_index"]
    final_reads = {m[1]: m[2] for _, c in pairs if c["index"] >= start and c["type"] == "ok"
                   for m in c["value"] if m[0] == "r"}
    assert {(k, v) for k, v in appended if v not in final_reads.get(k, [])} == set()
    for values in final_reads.values():
        assert len(values) == len(set(values))


def test_txn_run_commits_and_aborts(cluster, tmp_path):
    result, events, _ = run(cluster, tmp_path, workload="queue", time_limit=6, txn=True, abort_p=0.3)
    assert wellformedness_problems(events, "queue") == []
    txns = [c for _, c in completed_ops(events) if c["f"] == "txn"]
    committed = [c for c in txns if c["type"] == "ok"]
    aborted = [c for c in txns if c["type"] == "fail" and c["error"][0] == "ABORTED_ON_PURPOSE"]
    assert committed and aborted
    # an aborted txn's sends are never read back; committed ones are
    aborted_values = {m[2] for c in aborted for m in c["value"] if m[0] == "send"}
    polled = {v for _, c in completed_ops(events) if c["type"] == "ok" and c["f"] in ("poll", "txn")
              for m in c["value"] if m[0] == "poll" for pairs in m[1].values() for _, v in pairs}
    assert aborted_values and not (aborted_values & polled)
    assert {m[2][1] for c in committed for m in c["value"] if m[0] == "send"} <= polled


def test_check_options_go_from_logtrial_test_into_test_json_and_results(cluster, tmp_path):
    store = tmp_path / "store"
    command = [sys.executable, "-m", "harness.cli", "test", "--nodes-file", str(cluster.inventory.path),
               "--store", str(store), "--workload", "list-append", "--time-limit", "4", "--rate", "50",
               "--concurrency", "3", "--recovery-time", "1", "--final-time-limit", "30", "--leave-db-running",
               "--no-report", "--consistency-model", "serializable", "--forbid", "G0", "--engine", "local"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode in (exit_codes.VALID, exit_codes.INVALID), done.stdout + done.stderr
    run_dir = next(store.glob("*/*/history.jsonl")).parent
    recorded = json.loads((run_dir / "test.json").read_text())["check"]
    assert (recorded["consistency_model"], recorded["forbid"], recorded["engine"]) == ("serializable", ["G0"], "local")

    def checker() -> dict:
        results = json.loads((run_dir / "results.json").read_text())
        assert set(results["anomaly_types"]) & {"G0"} <= set(results["bad_anomaly_types"])
        return results["checker"]
    found = checker()
    assert (found["consistency_model"], found["forbid"], found["engine"]) == ("serializable", ["G0"], "local")
    # checked again, the run's recorded options are the defaults; the command line's win
    recheck = [sys.executable, "-m", "harness.cli", "check", str(run_dir), "--allow", "G1c"]
    done = subprocess.run(recheck, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode in (exit_codes.VALID, exit_codes.INVALID), done.stdout + done.stderr
    found = checker()
    assert (found["consistency_model"], found["forbid"], found["allow"]) == ("serializable", ["G0"], ["G1c"])


def test_ctrl_c_leaves_partial_history_incomplete_status_and_healed_cluster(cluster, tmp_path):
    store = tmp_path / "store"
    command = [sys.executable, "-m", "harness.cli", "test", "--nodes-file", str(cluster.inventory.path),
               "--store", str(store), "--time-limit", "120", "--rate", "50", "--concurrency", "4",
               "--leave-db-running", "--no-check", "--no-report", *PARTITION_EVERY_2_S]
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    history = None
    try:
        deadline = time.monotonic() + 180  # setup alone can take a minute on a loaded machine
        while time.monotonic() < deadline:
            runs = list(store.glob("*/*/history.jsonl"))
            events = list(raw_events(runs[0])) if runs else []
            struck = any(e["process"] == "nemesis" for e in events)
            if len(events) > 50 and struck:  # interrupt with a fault in force
                history = runs[0]
                break
            assert proc.poll() is None, proc.stdout.read()
            time.sleep(0.5)
        assert history is not None, "the run never got going"
        proc.send_signal(signal.SIGINT)
        output, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == exit_codes.INTERRUPTED, output
    events = list(raw_events(history))
    assert len(events) > 50
    assert wellformedness_problems(events, "queue") == []
    test_json = json.loads((history.parent / "test.json").read_text())
    assert test_json["status"] == "incomplete"
    assert test_json["error"] == "interrupted"
    verify_healed(cluster)


PARTITION_EVERY_2_S = ["--nemesis", "partition", "--nemesis-interval", "2"]  # something to heal


def test_subscribe_txn_run_commits_offsets_and_checks_valid(cluster, tmp_path):
    """`--sub-via subscribe --txn`: the transactions commit the group's offsets from
    the workload's own positions (no consumer.assignment()/position(): docs/benchmarks.md,
    "Soak"), and the consumers that rebalances start at those offsets read on
    without a skip or a rewind the checker would flag."""
    result, events, _ = run(cluster, tmp_path, workload="queue", time_limit=10, txn=True, sub_via="subscribe",
                            check=True)
    assert wellformedness_problems(events, "queue") == []
    pairs = completed_ops(events)
    assert any(c["f"] == "subscribe" and c["type"] == "ok" for _, c in pairs)
    assert any(c.get("rebalance_log") for _, c in pairs)
    assert any(c["f"] == "txn" and c["type"] == "ok" and any(m[0] == "poll" and m[1] for m in c["value"])
               for _, c in pairs)
    results = json.loads((result.run_dir / "results.json").read_text())
    assert result.valid is True, results["bad_anomaly_types"]


def test_a_ctrl_c_that_something_swallowed_still_ends_the_run_as_interrupted(cluster, tmp_path):
    """The signal handler remembers the request: a KeyboardInterrupt lost on its way
    (a library's `except BaseException`) still stops the run at its next wait."""
    timer = threading.Timer(3.0, interrupts.request, args=("SIGINT",))
    timer.start()
    try:
        result, events, test_json = run(cluster, tmp_path, time_limit=120, **PARTITION_NEMESIS)
    finally:
        timer.cancel()
        interrupts.clear()
    assert result.exit_code == exit_codes.INTERRUPTED
    assert (test_json["status"], test_json["error"]) == ("incomplete", "interrupted")
    assert wellformedness_problems(events, "queue") == []
    verify_healed(cluster)


PARTITION_NEMESIS = {"nemesis": ("partition",), "nemesis_interval": 2}
