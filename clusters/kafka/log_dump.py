"""What a partition's log holds, batch by batch, as Kafka's DumpLogSegments prints
it on a node: enough to see each transaction's producer id and epoch, and its
commit or abort marker (KIP-890's transaction.version 2 bumps the epoch at every
transaction's end; version 1 keeps it for the producer's life)."""
from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from clusters.kafka.admin import run_tool

DUMP_LOG_CLASS = "kafka.tools.DumpLogSegments"
BATCH_LINE = re.compile(r"baseOffset: (\d+) .*?producerId: (-?\d+) producerEpoch: (-?\d+) .*?"
                        r"isTransactional: (\w+) isControl: (\w+)")


@dataclass(frozen=True)
class Batch:
    base_offset: int
    producer_id: int
    producer_epoch: int
    transactional: bool
    control: bool   # a transaction marker (commit or abort)


def parse_batches(text: str) -> list[Batch]:
    return [Batch(int(m[1]), int(m[2]), int(m[3]), m[4] == "true", m[5] == "true")
            for m in BATCH_LINE.finditer(text)]


@dataclass(frozen=True)
class Record:
    """One record of a segment, with its batch: a value, or a transaction marker."""
    offset: int
    batch: Batch
    sequence: int
    value: str | None      # the payload, as DumpLogSegments prints it
    marker: str | None     # COMMIT or ABORT for a control record


RECORD_LINE = re.compile(r"\| offset: (\d+) .*?sequence: (-?\d+) .*?"
                         r"(?:endTxnMarker: (\w+).*|payload: (.*))$")


def parse_records(text: str) -> list[Record]:
    """The records of a `--deep-iteration --print-data-log` dump, each under its batch."""
    records, batch = [], None
    for line in text.splitlines():
        found = parse_batches(line)
        if found:
            batch = found[0]
            continue
        match = RECORD_LINE.search(line.strip())
        if match and batch is not None:
            records.append(Record(int(match[1]), batch, int(match[2]), match[4], match[3]))
    return records


def _dump(cluster, node: str, topic: str, partition: int, options: str) -> str:
    segment = f"{cluster.db.data_dir(node)}/{topic}-{partition}/{0:020d}.log"
    return run_tool(cluster, node, f"{DUMP_LOG_CLASS} {options} --files {shlex.quote(segment)}",
                    f"dumping {segment}")


def first_segment_batches(cluster, node: str, topic: str, partition: int = 0) -> list[Batch]:
    """The batches of the partition's first segment on `node` (a replica of it)."""
    return parse_batches(_dump(cluster, node, topic, partition, ""))


def first_segment_records(cluster, node: str, topic: str, partition: int = 0) -> list[Record]:
    """The records of the partition's first segment on `node`, values and markers."""
    return parse_records(_dump(cluster, node, topic, partition, "--deep-iteration --print-data-log"))
