"""The late-batch round's steps with librdkafka (confluent-kafka): plain calls, as an
application would make them."""
from __future__ import annotations

import time
from typing import Callable

from confluent_kafka import KafkaException, Producer

from clusters.cluster import Cluster
from harness.probes.late_batch_setup import NOT_TRIED, RoundSetup, Steps, hold_leader
from harness.probes.late_batch_timing import OP_TIMEOUT, RELEASE_AFTER_S
from workloads.clients import producer_config
from workloads.settings import WorkloadSettings


def produce(producer: Producer, topic: str, value: bytes) -> dict:
    """Sends `value` to partition 0; the dict fills with its delivery report."""
    report: dict = {}
    producer.produce(topic, value=value, partition=0,
                     on_delivery=lambda err, msg: report.update(
                         error=err and err.name(), offset=msg.offset()))
    return report


def wait_for(producer: Producer, report: dict, wait: float) -> dict:
    """`report`, once its delivery report came or `wait` seconds passed."""
    deadline = time.monotonic() + wait
    while "offset" not in report and time.monotonic() < deadline:
        producer.poll(0.1)
    return report


def send(producer: Producer, topic: str, value: bytes, wait: float) -> dict:
    return wait_for(producer, produce(producer, topic, value), wait)


def ended(action: Callable[[float], None], timeout: float) -> str:
    """How a blocking transactional call ended, and how long it took."""
    started = time.monotonic()
    try:
        action(timeout)
        outcome = "ok"
    except KafkaException as e:
        outcome = e.args[0].name()
    return f"{outcome} in {time.monotonic() - started:.1f} s"


def ended_retrying(action: Callable[[float], None], timeout: float,
                   bound: float = 6 * OP_TIMEOUT) -> tuple[bool, str]:
    """`action` called again while it fails, for up to `bound` seconds: a librdkafka
    abort that timed out goes on in the background, and only another call finishes
    it; a begin_transaction before that fails with _CONFLICT."""
    tries = [ended(action, timeout)]
    deadline = time.monotonic() + bound
    while not tries[-1].startswith("ok") and time.monotonic() <= deadline:
        tries.append(ended(action, timeout))
    return tries[-1].startswith("ok"), ", then ".join(tries)


def librdkafka_steps(cluster: Cluster, setup: RoundSetup, round_no: int, debug: bool = False) -> Steps:
    """The round's steps with librdkafka; `debug` turns on its eos, msg and protocol log."""
    settings = WorkloadSettings(txn=True, op_timeout=OP_TIMEOUT)
    config = producer_config(setup.bootstrap, settings, f"probe-{round_no}", setup.txn_id)
    producer = Producer({**config, "debug": "eos,msg,protocol"} if debug else config)
    producer.init_transactions(30)
    producer.begin_transaction()
    warm = send(producer, setup.topic, b"warm-up", 10)
    producer.commit_transaction(30)

    fault, held = hold_leader(cluster, setup)
    try:
        producer.begin_transaction()
        a = send(producer, setup.topic, b"A", OP_TIMEOUT)
        aborted, abort = ended_retrying(producer.abort_transaction, OP_TIMEOUT)
        if not aborted:
            return Steps(held, {}, NOT_TRIED, f"warm-up {warm}; A {a}, abort {abort}; B not sent")
        producer.begin_transaction()
        b = produce(producer, setup.topic, b"B")
        producer.poll(RELEASE_AFTER_S)  # B's AddPartitionsToTxn goes to the coordinator
    finally:
        fault.stop(cluster)  # what the leader was holding (A's request) arrives now
    wait_for(producer, b, 3 * OP_TIMEOUT)
    commit = ended(producer.commit_transaction, 3 * OP_TIMEOUT) if "offset" in b else NOT_TRIED
    producer.flush(5)
    return Steps(held, b, commit, f"warm-up {warm}; A {a}, abort {abort}; B {b}, commit {commit}")
