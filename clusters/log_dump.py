"""What a partition's log holds, batch by batch, as Kafka's DumpLogSegments prints
it on a node: enough to see each transaction's producer id and epoch, and its
commit or abort marker (KIP-890's transaction.version 2 bumps the epoch at every
transaction's end; version 1 keeps it for the producer's life)."""
from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from clusters.kafka_admin import run_tool

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


def first_segment_batches(cluster, node: str, topic: str, partition: int = 0) -> list[Batch]:
    """The batches of the partition's first segment on `node` (a replica of it)."""
    segment = f"{cluster.db.data_dir(node)}/{topic}-{partition}/{0:020d}.log"
    text = run_tool(cluster, node, f"{DUMP_LOG_CLASS} --files {shlex.quote(segment)}", f"dumping {segment}")
    return parse_batches(text)
