"""The runner's own cost per op: the full worker loop (rate scheduling,
generator, history invoke + completion, process bookkeeping) around a client
that does nothing.

    .venv/bin/python -m benchmarks.runner_overhead [--seconds 5] [--concurrency 10]
"""
from __future__ import annotations

import argparse
import tempfile
import threading

from harness.runner import Run, TestOptions
from workloads.base import Completion, Op
from workloads.settings import WorkloadSettings


class NoopClient:
    """Acknowledges every send at a made-up offset (the history stays well-formed)."""

    def invoke(self, op: Op) -> Completion:
        return Completion.ok([["send", k, [v, v]] for _, k, v in op.value])

    def close(self) -> None:
        pass


class NoopGenerator:
    """Same shape of work as the real generators: a lock and a fresh value."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._next = 0

    def next_op(self, process: int) -> Op:
        with self._lock:
            self._next += 1
            return Op("send", [["send", self._next % 4, self._next]])


class NoopWorkload:
    name = "noop"
    settings = WorkloadSettings()

    def setup(self) -> None:
        pass

    def first_keys(self) -> list[int]:
        return []

    def generator(self) -> NoopGenerator:
        return NoopGenerator()

    def new_client(self, process: int) -> NoopClient:
        return NoopClient()

    def final_reads(self, process, record, deadline, new_process) -> dict:
        return {}

    def close(self) -> None:
        pass


class NoopRun(Run):
    def _setup(self) -> None:
        self.workload = NoopWorkload()


def measure(seconds: float, concurrency: int, store: str) -> dict:
    options = TestOptions.from_flat(bootstrap_servers="none", store=store, time_limit=seconds, rate=1e9,
                                    concurrency=concurrency, recovery_time=0, check=False, report=False)
    result = NoopRun(options).execute()
    ops = result.counts.get("ok", 0)
    return {"ops": ops, "ops_per_s": ops / seconds, "us_per_op": seconds * 1e6 / ops if ops else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--concurrency", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as store:
        r = measure(args.seconds, args.concurrency, store)
    print(f"no-op client, concurrency {args.concurrency}: {r['ops_per_s']:,.0f} ops/s, "
          f"{r['us_per_op']:.1f} µs of runner time per op (invoke + completion written)")


if __name__ == "__main__":
    main()
