"""The late-batch round's steps with a Python client under test that runs in the
harness's own process (kafka-python, aiokafka): its module's TimedProducer
(workloads/<client>/timed.py) makes the calls, and the round goes as the Java
client's (late_batch_java.timed_steps): A, then B, on a thread while the hold is
lifted. Each transaction is timed as the bridge's `timed_txn` times it."""
from __future__ import annotations

import importlib
import time
from typing import Any

from clusters.cluster import Cluster
from harness.probes.late_batch_java import timed_steps
from harness.probes.late_batch_setup import RoundSetup, Steps
from harness.probes.late_batch_timing import OP_TIMEOUT
from workloads.clients import Indefinite
from workloads.settings import WorkloadSettings

def timed_txn(producer: Any, topic: str, value: str, wait: float, commit: bool, retry: float = 0.0) -> dict:
    """One transaction of one send: begun, the send awaited at most `wait` s, then
    committed or aborted, the end bounded by the op timeout or `retry`, whichever is
    longer (one try: a Python client's end goes on after its bound, and a second call
    would be refused by its state machine). Times in epoch seconds, as
    late_batch_java.timed_txn returns them; {"error": ...} if it could not begin."""
    begun = time.time()
    try:
        producer.begin()
    except Indefinite as e:
        return {"error": f"{e.classified.name}: {e.classified.message}"}
    seen: dict = {}
    producer.send(topic, value, seen)
    deadline = time.monotonic() + wait
    while "at" not in seen and time.monotonic() < deadline:
        time.sleep(0.02)
    waited = time.time()
    started = time.time()
    outcome = producer.end(commit, max(OP_TIMEOUT, retry))
    return {"begun": begun, "waited": waited, "send": dict(seen), "ends": [(outcome, started, time.time())]}


def timed_producer(timed: str, bootstrap: str, settings: WorkloadSettings, process: int, txn_id: str,
                   client_id: str | None = None) -> Any:
    """The TimedProducer of module `timed` (a client's registry entry names it,
    workloads/client_kinds.py), imported only now: it loads its client."""
    return importlib.import_module(timed).TimedProducer(bootstrap, settings, process, txn_id, client_id=client_id)


def python_steps(cluster: Cluster, setup: RoundSetup, round_no: int, timed: str, lift_after: float) -> Steps:
    """The round's steps with the client whose TimedProducer is in module `timed`."""
    settings = WorkloadSettings(txn=True, op_timeout=OP_TIMEOUT)
    producer = timed_producer(timed, setup.bootstrap, settings, round_no, setup.txn_id)
    try:
        return timed_steps(cluster, setup, lift_after,
                           lambda *step: timed_txn(producer, setup.topic, *step))
    finally:
        producer.close()
