"""Forensics of a queue run's lost writes: for each acknowledged send that no read
returned (results.json's `lost-write` examples), what the partition's log holds at
the offset the send was acknowledged at, and where the value itself is, as Kafka's
DumpLogSegments prints it on a node. Written beside the run as forensics.json (the
data) and forensics.txt (the words), for `test-all --forensics`.

The dump reads segment files, so the brokers may be stopped; the nodes must still
be reachable (a local cluster left up). Only Kafka has DumpLogSegments."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from clusters.cluster import Cluster
from clusters.kafka.log_dump import Record, first_segment_records
from workloads.kafka_common import KeySpace
from workloads.queue import QueueWorkload

FORENSICS_JSON = "forensics.json"
FORENSICS_TXT = "forensics.txt"


@dataclass(frozen=True)
class LoggedRecord:
    """One record of the dump, as the forensics report it."""
    offset: int
    value: str | None
    producer_id: int
    producer_epoch: int
    sequence: int
    fate: str   # COMMIT, ABORT (the producer's next marker), or "no marker yet"

    def words(self) -> str:
        return (f"offset {self.offset}: value {self.value} producer {self.producer_id} epoch "
                f"{self.producer_epoch} seq {self.sequence}, {self.fate}")


@dataclass(frozen=True)
class LostWriteTrace:
    key: int
    value: str
    acknowledged_at: int
    at_offset: LoggedRecord | None        # what the log holds where the send was acknowledged
    value_found_at: list[LoggedRecord]    # where the value itself is in the log

    def words(self) -> str:
        held = self.at_offset.words() if self.at_offset else f"offset {self.acknowledged_at}: not in the first segment"
        found = ", ".join(r.words() for r in self.value_found_at) or "no offset (never written)"
        return (f"key {self.key}: {self.value} acknowledged at {self.acknowledged_at}; "
                f"the log holds {held}; {self.value} itself is at {found}")


def fate(records: list[Record], at: int) -> str:
    """COMMIT or ABORT: the first marker of the record's producer after it."""
    record = next(r for r in records if r.offset == at)
    for later in records:
        if later.offset > at and later.marker and later.batch.producer_id == record.batch.producer_id:
            return later.marker
    return "no marker yet"


def logged(records: list[Record], record: Record) -> LoggedRecord:
    return LoggedRecord(record.offset, record.value, record.batch.producer_id, record.batch.producer_epoch,
                        record.sequence, fate(records, record.offset))


def trace(records: list[Record], key: int, offset: int, value: str) -> LostWriteTrace:
    at = next((r for r in records if r.offset == offset), None)
    found = [logged(records, r) for r in records if r.value == value]
    return LostWriteTrace(key, value, offset, logged(records, at) if at else None, found)


def lost_writes(results: dict) -> list[tuple[int, int, str]]:
    """(key, acknowledged offset, value) of each lost-write example in results.json."""
    examples = results.get("anomalies", {}).get("lost-write", {}).get("examples", [])
    return [(e["key"], e["offsets"][0], str(e["values"][0])) for e in examples]


def trace_run(cluster: Cluster, run_dir: Path) -> list[LostWriteTrace]:
    """The traces of a checked queue run's lost writes, each partition dumped once
    from the cluster's first node."""
    results = json.loads((run_dir / "results.json").read_text())
    run_id = json.loads((run_dir / "test.json").read_text())["run_id"]
    keys = KeySpace(f"{run_id}-{QueueWorkload.topic_tag}")
    dumps: dict[int, list[Record]] = {}
    traces = []
    for key, offset, value in lost_writes(results):
        if key not in dumps:
            dumps[key] = first_segment_records(cluster, cluster.inventory.node_names[0],
                                               keys.topic(key), keys.partition(key))
        traces.append(trace(dumps[key], key, offset, value))
    return traces


def write_forensics(cluster: Cluster, run_dir: Path) -> list[LostWriteTrace]:
    """Traces the run's lost writes and writes them beside it (nothing when none was lost)."""
    traces = trace_run(cluster, run_dir)
    if traces:
        (run_dir / FORENSICS_JSON).write_text(json.dumps([asdict(t) for t in traces], indent=2) + "\n")
        (run_dir / FORENSICS_TXT).write_text("".join(t.words() + "\n" for t in traces))
    return traces


def read_forensics(run_dir: Path) -> list[dict]:
    """forensics.json of a run, [] where there is none."""
    path = run_dir / FORENSICS_JSON
    return json.loads(path.read_text()) if path.exists() else []
