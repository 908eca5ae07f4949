"""What the segfault probes share (docs/findings.md, "A crash of the client process"): a
child process of librdkafka consumers (harness/probes/fetch_loop.py) fetches a topic, a
trigger strikes once they fetch, and the child's fate is the verdict.

The child runs apart from the probe so that a segfault in librdkafka ends it, not the
probe. Its verdict starts with SEGFAULT (the finding), ok (it lived) or INCONCLUSIVE.
"""
from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

from confluent_kafka import libversion

CRASH_WAIT_S = 20.0    # the crash came within a second of the trigger when it came
FAKE_CRASH_WAIT_S = 5.0  # against the fake broker it comes with the first answer
FETCHING_WAIT_S = 60.0


def consumers_through(bootstrap: str, topic: str, partitions: int, trigger: Callable[[], None],
                      debug_log: str | None, after: str, crash_wait_s: float = CRASH_WAIT_S) -> str:
    """Starts the child's consumers, strikes `trigger` once they fetch, and says how the child fared."""
    stderr = open(debug_log, "a") if debug_log else subprocess.DEVNULL
    child = subprocess.Popen([sys.executable, "-m", "harness.probes.fetch_loop", bootstrap, topic, str(partitions)],
                             stdout=subprocess.PIPE, stderr=stderr, text=True, cwd=Path(__file__).resolve().parents[2])
    try:
        if wait_fetching(child):
            trigger()
            try:
                child.wait(timeout=crash_wait_s)
            except subprocess.TimeoutExpired:
                return f"ok: the consumers lived {crash_wait_s:g} s"
        code = child.poll()
        if code == -signal.SIGSEGV:
            return f"SEGFAULT: the consumers' process died of SIGSEGV after {after}"
        if code is None:
            return "INCONCLUSIVE: the consumers never fetched"
        return f"INCONCLUSIVE: the consumers' process exited {code}"
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        if stderr is not subprocess.DEVNULL:
            stderr.close()


def wait_fetching(child: subprocess.Popen) -> bool:
    deadline = time.monotonic() + FETCHING_WAIT_S
    while time.monotonic() < deadline and child.poll() is None:
        if child.stdout.readline().strip() == "fetching":
            time.sleep(2.0)  # fetch sessions established on every broker
            return True
    return False


def rounds_until_segfault(rounds: int, one_round: Callable[[], str]) -> int:
    """Runs up to `rounds` rounds, printing each verdict: 1 at the first SEGFAULT, else 0."""
    for number in range(1, rounds + 1):
        outcome = one_round()
        print(f"round {number}: {outcome}")
        if outcome.startswith("SEGFAULT"):
            return 1
    return 0


def run_fake(answer: str, debug_log: str | None) -> int:
    """The same consumers against a fake broker on loopback that answers every Fetch as
    `answer` says (harness/probes/fake_fetch_broker.py): no tansu, no PostgreSQL, no
    network namespace. 1 if they died of SIGSEGV."""
    from harness.probes.fake_fetch_broker import FakeFetchBroker
    broker = FakeFetchBroker("lt-fake", answer)
    try:
        print(f"librdkafka {libversion()[0]}; a fake broker at {broker.bootstrap} answers every Fetch as {answer!r}")
        outcome = consumers_through(broker.bootstrap, "lt-fake", 1, lambda: None, debug_log,
                                    after="the fake broker's answers to its fetches", crash_wait_s=FAKE_CRASH_WAIT_S)
    finally:
        broker.close()
    print(outcome)
    return 1 if outcome.startswith("SEGFAULT") else 0
