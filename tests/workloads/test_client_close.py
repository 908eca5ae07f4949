"""Closing a process's clients ends their librdkafka instances before close returns,
and a producer whose init failed ends at once, even when garbage still holds them: the hour-long soak found closed producers
kept alive by reference cycles left by the ops that failed on them (docs/benchmarks.md,
"Soak"), each with its threads and pipes, until Python's oldest generation was
collected, which a run of slow, failing ops seldom does."""
from __future__ import annotations

import gc
import logging
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

from confluent_kafka import Producer

from tests.fixtures.log_lines import LogLines
from workloads.clients import ClientPair, Indefinite, purge
from workloads.settings import WorkloadSettings

ROOT = Path(__file__).resolve().parents[2]
UNREACHABLE = "127.0.0.1:1"  # nothing listens there; the instances start all the same


def rdk_main_threads() -> int:
    count = 0
    for task in os.listdir("/proc/self/task"):
        try:
            count += Path(f"/proc/self/task/{task}/comm").read_text().strip() == "rdk:main"
        except OSError:  # a thread that ended meanwhile
            pass
    return count


def instances(samples: int = 20, gap_s: float = 0.005) -> int:
    """librdkafka instances in this process: each has one thread named rdk:main. A
    thread that a main thread starts (a broker thread, again and again while the broker
    is unreachable) carries the name rdk:main until it names itself, so one look may
    count an instance twice; the fewest over a few looks is the count."""
    fewest = rdk_main_threads()
    for _ in range(samples - 1):
        time.sleep(gap_s)
        fewest = min(fewest, rdk_main_threads())
    return fewest


def run_alone(case: Callable[[], None]) -> None:
    """Runs `case` in a new interpreter. It counts the process's librdkafka instances,
    and in a pytest worker the tests before it may still be ending theirs in the
    background, or starting new ones (a fresh-clone CI run saw 4 where 3 were made)."""
    code = f"from {case.__module__} import {case.__name__} as case; case()"
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                            timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]


class Frame:
    """Stands in for a failed op's frame: it holds the producer, and a traceback that
    holds the frame holds it in turn."""

    def __init__(self, producer) -> None:
        self.producer = producer
        self.traceback = [self]


def test_close_ends_a_producer_that_garbage_still_holds() -> None:
    run_alone(close_ends_a_producer_that_garbage_still_holds)


def close_ends_a_producer_that_garbage_still_holds() -> None:
    gc.collect()
    gc.disable()  # as in a long run, no collection comes along by chance
    try:
        pair = ClientPair(UNREACHABLE, WorkloadSettings(txn=True), 7, None, "lt-close-test")
        before = instances()
        Frame(pair.producer)  # now garbage in a cycle, holding the producer
        pair.consumer, pair.lookup
        assert instances() == before + 3
        pair.close()
        # rd_kafka_destroy joins the instance's threads before it returns: no waiting
        assert instances() == before, "a closed client's instance is still running"
    finally:
        gc.enable()


def test_close_leaves_no_instance_when_nothing_else_holds_the_producer() -> None:
    run_alone(close_leaves_no_instance_when_nothing_else_holds_the_producer)


def close_leaves_no_instance_when_nothing_else_holds_the_producer() -> None:
    pair = ClientPair(UNREACHABLE, WorkloadSettings(), 8, None, "lt-close-test")
    before = instances()
    pair.producer, pair.consumer, pair.lookup
    pair.close()
    assert instances() == before


def test_close_closes_the_consumers_when_the_producer_fails_to() -> None:
    run_alone(close_closes_the_consumers_when_the_producer_fails_to)


def close_closes_the_consumers_when_the_producer_fails_to() -> None:
    pair = ClientPair(UNREACHABLE, WorkloadSettings(), 9, None, "lt-close-test")
    before = instances()
    producer = pair.producer
    pair.consumer, pair.lookup

    class Refused(Exception):
        pass

    def purge(**_: object) -> None:
        raise Refused("purge refused")

    pair._producer = _Failing(producer, purge)
    try:
        pair.close()
    except Refused:
        pass
    else:
        raise AssertionError("the producer's error was not raised")
    assert instances() == before + 1  # only the producer, which this test still holds
    del producer, pair
    assert instances() == before


class _Failing:
    """A producer whose purge raises: everything else goes to the real one."""

    def __init__(self, producer, purge) -> None:
        self._producer, self.purge = producer, purge

    def __getattr__(self, name: str):
        return getattr(self._producer, name)


def test_a_producer_whose_init_failed_ends_while_its_error_is_held() -> None:
    run_alone(a_producer_whose_init_failed_ends_while_its_error_is_held)


def a_producer_whose_init_failed_ends_while_its_error_is_held() -> None:
    pair = ClientPair(UNREACHABLE, WorkloadSettings(txn=True, op_timeout=0.3), 10, "lt-close-test-txn",
                      "lt-close-test")
    before = instances()
    try:
        pair.producer
    except Indefinite as e:
        held = e  # as the garbage of a failed op holds its error, traceback and frames
    else:
        raise AssertionError("init_transactions succeeded against an unreachable broker")
    assert instances() == before, "the producer whose init failed is still running"
    del held



def test_purge_does_not_wait_for_the_broker_threads() -> None:
    """librdkafka's own log of the purge names its flags: `non-blocking`, so the
    purge does not wait, GIL held, for the producer's broker threads."""
    lines = LogLines()
    logger = logging.getLogger("lt-purge-test")
    logger.addHandler(lines)
    logger.setLevel(logging.DEBUG)
    producer = Producer({"bootstrap.servers": UNREACHABLE, "debug": "broker,queue", "logger": logger})
    producer.produce("lt-purge-test", b"x")
    for in_flight, flags in ((False, "queue,non-blocking"), (True, "queue,inflight,non-blocking")):
        lines.lines.clear()
        purge(producer, in_flight=in_flight)
        deadline = time.monotonic() + 10
        while not any("Purging queues with flags" in line for line in lines.lines) and time.monotonic() < deadline:
            producer.poll(0.1)  # serves the log lines
        assert any(line.endswith(f"Purging queues with flags {flags}") for line in lines.lines), lines.lines
