"""What the queue clients of the pure-Python libraries (kafka-python's and
aiokafka's, in the worker processes) share beyond workloads/queue_ops.py: keys
to topic-partitions and back, the committed-offset starts with the reset
fallback, subscribe, the rewind, and the offset commits that fail after their
poll returned, reported with the next poll. Each client supplies its library's
calls through the hooks at the end."""
from __future__ import annotations

from typing import Any, Iterable

from confluent_kafka import OFFSET_INVALID, TopicPartition

from workloads.base import Completion, Op
from workloads.clients import RESET_STARTS, ensure_topic, first_offsets
from workloads.kafka_common import KeySpace, decode
from workloads.queue_ops import QueueOps
from workloads.warm import opened


def polled_by_key(keys: KeySpace, batches: dict[Any, list]) -> dict[str, list[list[int]]]:
    """A poll's {topic-partition: [record, ...]} as {key: [[offset, value], ...]}, in offset order."""
    polled: dict[str, list[list[int]]] = {}
    for tp, records in batches.items():
        polled.setdefault(str(keys.key_of(tp.topic, tp.partition)), []).extend(
            [r.offset, decode(r.value)] for r in records)
    return polled


def pair_args(workload, process: int, final: bool) -> tuple:
    """What a Python client's pair of producer and consumer is made from:
    (bootstrap, settings, process, transactional id or None, group id, the
    consumer's auto offset reset: earliest for final reads, else the settings')."""
    txn_id = f"{workload.run_id}-q-p{process}" if workload.settings.txn else None
    return (workload.bootstrap, workload.settings, process, txn_id, workload.group_id,
            "earliest" if final else None)


class PythonQueueOps(QueueOps):
    def __init__(self, workload, process: int, final: bool = False):
        super().__init__(workload, process, final)
        self._commit_errors: list[str] = []  # failed offset commits after their poll, for the next poll

    def _ensure_topic(self, key: int) -> None:
        ensure_topic(self.w.topics, key)

    def warm(self, keys: list[int]) -> None:
        """The producer, consumer and lookup made (these libraries connect as they are made)
        and the group's coordinator found, before the run's clock (harness/client_open.py)."""
        def steps() -> None:
            _ = (self.pair.producer, self.pair.consumer)  # each made (and connected) on first access
            self._committed_starts(keys)
        opened(steps)

    def _keys_of(self, tps: Iterable) -> list[int]:
        """The keys of the library's topic-partitions."""
        return sorted(self.w.keys.key_of(tp.topic, tp.partition) for tp in tps)

    def _committed_starts(self, keys: list[int]) -> list[TopicPartition]:
        """Each key at the group's committed offset, or where auto.offset.reset puts
        a key with none. A failed lookup is definite: nothing was assigned."""
        fallback = RESET_STARTS.get(self.w.settings.auto_offset_reset, OFFSET_INVALID)
        starts = []
        for key in keys:
            offset = self._committed(key)
            starts.append(self.w.keys.topic_partition(key, offset if offset is not None and offset >= 0
                                                      else fallback))
        return starts

    def _subscribe(self, op: Op) -> Completion:
        for key in op.value:
            self._ensure_topic(key)
        self._subscribe_topics(sorted({self.w.keys.topic(k) for k in op.value}))
        return Completion.ok(op.value)

    def _rewind(self, polled: list[dict]) -> dict[int, int]:
        first = first_offsets(polled)
        for key, offset in first.items():
            self._seek(key, offset)
        return first

    def _commit_failed(self, name: str) -> None:
        """An offset commit failed after its poll returned (the library's callback)."""
        self._commit_errors.append(name)

    def _drain_commit_errors(self) -> list[str]:
        errors, self._commit_errors = self._commit_errors, []
        return errors

    # -- hooks: the library's calls ------------------------------------------------------------
    def _committed(self, key: int) -> int | None:
        """The group's committed offset of `key` (None: none); raises Indefinite (definite)."""
        raise NotImplementedError

    def _subscribe_topics(self, topics: list[str]) -> None:
        """Subscribes the consumer to `topics`, with the client's rebalance callbacks."""
        raise NotImplementedError

    def _seek(self, key: int, offset: int) -> None:
        raise NotImplementedError
