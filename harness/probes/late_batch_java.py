"""The late-batch round's steps with Kafka's Java client of the cluster's version,
through the JVM bridge (its `timed_txn` request), or with Sarama or franz-go through
the Go program's (the same request: src/sarama_timed.go, src/franz_timed.go), or
kafkajs through the Node program's; and the steps themselves (`timed_steps`), which
the Python clients' rounds share (late_batch_python.py). abortTransaction() (AbortTxn,
End) blocks, so A and then B run in a thread while this one lifts the hold; each
step's time is told relative to that lift."""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from types import ModuleType
from typing import Callable

from clusters.cluster import Cluster
from harness.probes.java_session import open_session
from harness.probes.late_batch_setup import NOT_TRIED, RoundSetup, Steps, hold_leader
from harness.probes.late_batch_timing import HOLD_FACTOR, OP_TIMEOUT
from workloads.bridge.pool import ProcessPool
from workloads.bridge.process import BridgeProcess
from workloads.java_client import config as java_config
from workloads.settings import WorkloadSettings


def timed_txn(jvm: BridgeProcess, session: int, topic: str, value: str, wait: float, commit: bool,
              retry: float = 0.0) -> dict:
    """One transaction of one send through the JVM bridge (Session.timedTxn): the reply's
    step times are epoch seconds here; {"error": ...} if it could not begin."""
    reply = jvm.call(session, "timed_txn", wait + retry + 2 * OP_TIMEOUT + 30,
                     records=[[topic, 0, "k", value]], wait_ms=int(wait * 1000), commit=commit,
                     retry_ms=int(retry * 1000))
    if "error" in reply:
        return {"error": ": ".join(reply["error"])}
    ok = reply["ok"]
    return {"begun": ok["begun"] / 1000, "waited": ok["waited"] / 1000,
            "send": {k: v / 1000 if k == "at" else v for k, v in ok["sends"][0].items()},
            "ends": [(outcome, started / 1000, ended_ / 1000) for outcome, started, ended_ in ok["ends"]]}


def describe_txn(txn: dict, lifted: float) -> str:
    """A timed transaction's steps in seconds relative to the lift of the hold."""
    if "error" in txn:
        return f"could not begin ({txn['error']})"
    send_ = txn["send"]
    got = (f"offset {send_['offset']}" if "offset" in send_ else send_.get("error", "unresolved"))
    at = f" at lift{send_['at'] - lifted:+.1f} s" if "at" in send_ else ""
    ends = ", ".join(f"{outcome} lift{started - lifted:+.1f} s -> lift{end - lifted:+.1f} s "
                     f"(took {end - started:.1f} s)"
                     for outcome, started, end in txn["ends"])
    return f"begun lift{txn['begun'] - lifted:+.1f} s, send {got}{at}; end {ends}"


def java_steps(cluster: Cluster, setup: RoundSetup, round_no: int, pool: ProcessPool,
               lift_after: float, config: ModuleType = java_config) -> Steps:
    """The round's steps with Kafka's Java client (or, with the Go program's or the Node
    program's pool and `config`, Sarama, franz-go or kafkajs), through its `timed_txn`."""
    settings = WorkloadSettings(txn=True, op_timeout=OP_TIMEOUT)
    jvm, session = open_session(pool, setup.bootstrap, settings, f"probe-{round_no}", setup.txn_id,
                                setup.txn_id, OP_TIMEOUT, config)
    try:
        return timed_steps(cluster, setup, lift_after,
                           lambda *step: timed_txn(jvm, session, setup.topic, *step))
    finally:
        jvm.call(session, "close", 30)


# (value, wait, commit, retry) -> one timed transaction, as timed_txn returns it
TimedTxn = Callable[..., dict]


def timed_steps(cluster: Cluster, setup: RoundSetup, lift_after: float, txn: TimedTxn) -> Steps:
    """The round's steps with a client whose abort blocks (`txn` runs one of its timed
    transactions): A (then B) runs in a thread while this one lifts the hold `lift_after`
    s after A began."""
    warm = txn("warm-up", 10, True)
    fault, held = hold_leader(cluster, setup)
    a_began = time.time()

    def a_then_b() -> tuple[dict, dict]:
        # the abort may block up to max.block.ms (the op timeout) per try; retried as
        # KafkaProducer allows, for as long as the hold could last
        a = txn("A", OP_TIMEOUT, False, HOLD_FACTOR * OP_TIMEOUT + lift_after)
        return a, txn("B", 3 * OP_TIMEOUT, True)

    with ThreadPoolExecutor(1) as worker:
        steps = worker.submit(a_then_b)
        try:
            time.sleep(max(0.0, a_began + lift_after - time.time()))
        finally:
            lifted = time.time()  # the times below are relative to this
            fault.stop(cluster)  # what the leader was holding (A's request) arrives now
            lift_took = time.time() - lifted
        a, b_txn = steps.result()
    b = {"offset": b_txn["send"]["offset"]} if "offset" in b_txn.get("send", {}) else {
        "error": b_txn.get("error") or b_txn.get("send", {}).get("error", "unresolved")}
    commit = NOT_TRIED
    if "offset" in b:
        outcome, started, end = b_txn["ends"][-1]
        commit = f"{outcome} in {end - started:.1f} s"
    warm_seen = warm.get("send", {}).get("offset", warm)
    return Steps(held, b, commit, (f"warm-up offset {warm_seen}; hold lifted {lifted - a_began:.1f} s "
                                   f"after A began (the lift took {lift_took:.1f} s); "
                                   f"A {describe_txn(a, lifted)}; B {describe_txn(b_txn, lifted)}, "
                                   f"commit {commit}"))
