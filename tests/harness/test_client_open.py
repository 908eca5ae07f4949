"""The run's clients opened before its clock (harness/client_open.py): in parallel,
warmed for the first keys, and a client that cannot open fails the run naming its
client and process, within the bound."""
from __future__ import annotations

import threading
import time

import pytest

from harness.client_open import open_clients
from workloads.base import ClientOpenError


class FakeClient:
    def __init__(self, process: int, warm_s: float = 0.0, fails: bool = False):
        self.process = process
        self.warm_s = warm_s
        self.fails = fails
        self.warmed_for: list[int] | None = None
        self.closed = threading.Event()

    def warm(self, keys: list[int]) -> None:
        time.sleep(self.warm_s)
        if self.fails:
            raise ClientOpenError("NoBrokersAvailable: nothing answered")
        self.warmed_for = keys

    def invoke(self, op):
        raise AssertionError("no op before the clock")

    def close(self) -> None:
        self.closed.set()


class Unwarmed:
    """A client without a warm hook opens as it is made."""

    def invoke(self, op):
        raise AssertionError("no op before the clock")

    def close(self) -> None:
        pass


def test_clients_open_in_parallel_warmed_for_the_first_keys():
    made: dict[int, FakeClient] = {}

    def new_client(process: int) -> FakeClient:
        made[process] = FakeClient(process, warm_s=0.5)
        return made[process]

    opened = open_clients([0, 1, 2, 3], new_client, [5, 6], "java", bound_s=30)
    assert [p for p, _ in opened.clients] == [0, 1, 2, 3]
    assert all(c.warmed_for == [5, 6] for c in made.values())
    assert opened.seconds < 1.5  # four half-second warm-ups at once, not one after another
    assert set(opened.per_process_s) == {0, 1, 2, 3} and min(opened.per_process_s.values()) >= 0.5
    record = opened.record("java")
    assert record["client"] == "java" and record["clients"] == 4 and record["seconds"] < 1.5


def test_a_client_without_a_warm_hook_opens_as_it_is_made():
    opened = open_clients([7], lambda p: Unwarmed(), [0], "librdkafka", bound_s=5)
    assert [p for p, _ in opened.clients] == [7]


def test_with_no_keys_the_clients_are_made_and_not_warmed():
    """A pinned run's clients (harness/runner.py): each reaches its own node only, so a
    warm-up could wait on leaders and a coordinator out of its reach (seen in the suite:
    66 s, then the run failed)."""
    made: dict[int, FakeClient] = {}

    def new_client(process: int) -> FakeClient:
        made[process] = FakeClient(process, fails=True)
        return made[process]

    opened = open_clients([0, 1], new_client, None, "librdkafka", bound_s=5)
    assert [p for p, _ in opened.clients] == [0, 1]
    assert all(c.warmed_for is None for c in made.values())


def test_a_client_that_cannot_open_fails_the_run_naming_client_and_process_and_the_others_close():
    made: dict[int, FakeClient] = {}

    def new_client(process: int) -> FakeClient:
        made[process] = FakeClient(process, fails=process == 2)
        return made[process]

    began = time.monotonic()
    with pytest.raises(ClientOpenError, match=r"client franz-go, process 2: could not open: NoBrokersAvailable"):
        open_clients([0, 1, 2], new_client, [0], "franz-go", bound_s=2)
    assert time.monotonic() - began < 5  # tried again until the bound, then given up
    assert made[0].closed.wait(5) and made[1].closed.wait(5)


def test_a_warm_up_that_fails_is_tried_again_within_the_bound():
    """A fresh cluster answers NOT_COORDINATOR while it makes __consumer_offsets."""
    class Transient(FakeClient):
        attempts = 0

        def warm(self, keys):
            Transient.attempts += 1
            if Transient.attempts < 3:
                raise ClientOpenError("NOT_COORDINATOR: Broker: Not coordinator")
            super().warm(keys)

    opened = open_clients([0], Transient, [1], "librdkafka", bound_s=10)
    assert Transient.attempts == 3 and opened.clients[0][1].warmed_for == [1]


def test_a_client_that_does_not_open_within_the_bound_fails_the_run():
    began = time.monotonic()
    with pytest.raises(ClientOpenError, match=r"client kafkajs, process 1: not open after 1 s"):
        open_clients([0, 1], lambda p: FakeClient(p, warm_s=30 if p == 1 else 0), [0], "kafkajs", bound_s=1)
    assert time.monotonic() - began < 5
