"""Closing a process's clients ends their librdkafka instances at once, whoever still
holds the Python objects: the hour-long soak found closed producers kept alive by
the tracebacks of the ops that failed on them (docs/benchmarks.md, "Soak"), each
with its threads and pipes, until Python's oldest generation was collected."""
from __future__ import annotations

import os
from pathlib import Path

from workloads.clients import ClientPair
from workloads.settings import WorkloadSettings

UNREACHABLE = "127.0.0.1:1"  # nothing listens there; the instances start all the same


def instances() -> int:
    """librdkafka instances in this process: each has one thread named rdk:main."""
    count = 0
    for task in os.listdir("/proc/self/task"):
        try:
            count += Path(f"/proc/self/task/{task}/comm").read_text().strip() == "rdk:main"
        except OSError:  # a thread that ended meanwhile
            pass
    return count


def test_close_ends_every_instance_while_references_remain() -> None:
    for txn in (False, True):
        pair = ClientPair(UNREACHABLE, WorkloadSettings(txn=txn), 7, None, "lt-close-test")
        before = instances()
        held = [pair.producer, pair.consumer, pair.lookup]  # as a failed op's traceback holds them
        assert instances() == before + 3
        pair.close()
        # rd_kafka_destroy joins the instance's threads before close returns: no waiting
        assert instances() == before, f"txn={txn}: a closed client's instance is still running"
        del held


def test_close_closes_the_consumers_when_the_producer_fails_to() -> None:
    pair = ClientPair(UNREACHABLE, WorkloadSettings(), 8, None, "lt-close-test")
    before = instances()
    held = [pair.producer, pair.consumer, pair.lookup]

    class Refused(Exception):
        pass

    def purge(**_: object) -> None:
        raise Refused("purge refused")

    producer = held[0]
    pair._producer = _Failing(producer, purge)
    try:
        pair.close()
    except Refused:
        pass
    else:
        raise AssertionError("the producer's error was not raised")
    assert instances() == before + 1  # only the producer whose close failed is left
    producer.close()
    assert instances() == before
    del held


class _Failing:
    """A producer whose purge raises: everything else goes to the real one."""

    def __init__(self, producer, purge) -> None:
        self._producer, self.purge = producer, purge

    def __getattr__(self, name: str):
        return getattr(self._producer, name)
