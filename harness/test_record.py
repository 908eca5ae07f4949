"""test.json as a run goes: the options, seed and versions it started with,
then its phases (on the history's clock), status, counts and what the run
learned (cluster, Kafka release, final reads), rewritten at every change so a
run that dies leaves a readable record (results/ reads it; docs/runner.md)."""
from __future__ import annotations

import time
from importlib.metadata import version
from pathlib import Path
from typing import Any

from checkers.history.writer import HistoryWriter
from harness.test_options import TestOptions
from results import store


class TestRecord:
    __test__ = False  # not a pytest test class

    def __init__(self, run_dir: Path, history: HistoryWriter, start: dict[str, Any]):
        self.run_dir = run_dir
        self.history = history
        self.phase = "setup"
        self.data: dict[str, Any] = dict(start)

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.data[key] = value

    def enter(self, phase: str) -> None:
        self.phase = phase
        # on the history's clock, so the report can mark the phases on its plots
        self.data.setdefault("phases", []).append({"phase": phase, "time_s": round(self.history.elapsed_s(), 3)})
        if phase != "teardown":  # by then the history is closed
            self.history.flush()
        self.write()

    def write(self, **updates: Any) -> None:
        """Updates (None ones skipped, but for `valid`) and writes test.json."""
        data = self.data
        data.update({k: v for k, v in updates.items() if v is not None or k == "valid"})
        data["phase"] = self.phase
        data["counts"] = dict(self.history.counts)
        if data.get("status") in ("complete", "incomplete"):
            data.setdefault("end_time", now_iso())
        store.write_test_json(self.run_dir, data)


def start_record(name: str, options: TestOptions, seed: int, run_id: str, history: HistoryWriter) -> dict[str, Any]:
    """What test.json says from the first write on."""
    return {
        "name": name,
        "workload": options.workload.name,
        "nemesis": options.nemesis.active_kinds,
        "seed": seed,
        "run_id": run_id,
        "options": options.record(),
        "check": options.check.record(),
        "versions": versions(),
        "status": "running",
        "start_time": now_iso(),
        "history_start_monotonic_ns": history.start_ns,
    }


def versions() -> dict[str, str]:
    import confluent_kafka  # loads confluent_kafka: only when needed
    try:
        logtrial = version("logtrial")
    except Exception:
        logtrial = "unknown"
    # "kafka" is the cluster's version, known once it is open (unknown behind --bootstrap-servers)
    return {"logtrial": logtrial, "kafka": "unknown", "confluent_kafka": _first(confluent_kafka.version()),
            "librdkafka": _first(confluent_kafka.libversion())}


def _first(version: str | tuple) -> str:
    """The version string: confluent-kafka's version() is a string in some
    releases and a (string, int) pair in others; [0] of the string took "2"."""
    return version if isinstance(version, str) else version[0]


def now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")
