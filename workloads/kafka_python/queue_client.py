"""The queue workload's client on kafka-python: the same ops, values and error
shape as workloads/queue.py's QueueClient (docs/history-format.md), in the worker
process; the ops' control flow is workloads/queue_ops.py's and
workloads/python_queue_ops.py's, shared with the other clients, and this module
makes kafka-python's calls. Keys become topic-partitions here, and back."""
from __future__ import annotations

from typing import Any

from confluent_kafka import TopicPartition

from workloads.kafka_python.clients import (Errors, KafkaPythonPair, Transaction, guarded, kafka, poll_records,
                                            produce_all, seek, topic_partition)
from workloads.kafka_python.errors import classify_kafka_python
from workloads.python_queue_ops import PythonQueueOps, pair_args


class _Rebalances(kafka.ConsumerRebalanceListener):
    """The group's rebalance callbacks (run inside the consumer's poll), to the client."""

    def __init__(self, client: "KafkaPythonQueueClient"):
        self.client = client

    def on_partitions_revoked(self, revoked) -> None:
        self.client._rebalance_revoked(self.client._keys_of(revoked))

    def on_partitions_assigned(self, assigned) -> None:
        consumer = self.client.pair.consumer
        self.client._rebalance_assigned(self.client._keys_of(assigned),
                                        lambda partitions: _place(consumer, partitions, assign=False))


def _place(consumer: Any, partitions: list[TopicPartition], assign: bool) -> None:
    """Assigns `partitions` (when asked) and puts the consumer at each one's start."""
    tps = [kafka.TopicPartition(tp.topic, tp.partition) for tp in partitions]
    if assign:
        consumer.assign(tps)
    for tp, start in zip(tps, partitions):
        seek(consumer, tp, start.offset)


class KafkaPythonQueueClient(PythonQueueOps):
    """One producer and one consumer for one logical process."""

    def __init__(self, workload, process: int, final: bool = False):
        super().__init__(workload, process, final)
        self.pair = KafkaPythonPair(*pair_args(workload, process, final))

    def close(self) -> None:
        self.pair.close()

    # -- assign and subscribe ----------------------------------------------------------------
    def _place_assigned(self, partitions: list[TopicPartition]) -> None:
        consumer = self.pair.consumer
        guarded(lambda: _place(consumer, partitions, assign=True))

    def _committed(self, key: int) -> int | None:
        lookup = self.pair.lookup
        tp = topic_partition(self.w.keys, key)
        timeout_ms = int(self.w.settings.op_timeout * 1000)
        return guarded(lambda: lookup.committed(tp, timeout_ms=timeout_ms), definite=True)

    def _subscribe_topics(self, topics: list[str]) -> None:
        consumer = self.pair.consumer
        guarded(lambda: consumer.subscribe(topics=topics, listener=_Rebalances(self)))

    # -- send and poll -----------------------------------------------------------------------
    def _produce(self, items: list[tuple[int, int]], in_txn: bool) -> list:
        return produce_all(self.pair.producer, self.w.keys, items, self.w.settings.op_timeout)

    def _poll_once(self) -> tuple[dict, list[str]]:
        consumer = self.pair.consumer
        polled = guarded(lambda: poll_records(consumer, self.w.keys, self.w.settings.poll_timeout))
        return polled, self._drain_commit_errors()

    def _commit_polled(self) -> list[str]:
        try:
            self.pair.consumer.commit_async(callback=self._commit_done)
        except Errors.KafkaError as e:
            return [classify_kafka_python(e).name]
        return []

    def _commit_done(self, offsets, response) -> None:
        if isinstance(response, BaseException):
            self._commit_failed(type(response).__name__)

    # -- transactions (QueueOps._txn runs them) ----------------------------------------------
    def _begin_transaction(self) -> Transaction:
        self.pair.consumer  # made now, so a consumer that cannot be made fails the txn before it begins
        txn = Transaction(self.pair.producer, self.w.settings.op_timeout)
        txn.begin()
        return txn

    def _commit_transaction(self, txn: Transaction) -> None:
        """Commits with the client's own positions of the keys it holds, as
        QueueClient._txn_positions does."""
        offsets = {topic_partition(self.w.keys, key): kafka.OffsetAndMetadata(offset)
                   for key, offset in self.positions.committable().items()}
        txn.commit(offsets, self.pair.consumer.group_metadata())

    def _seek(self, key: int, offset: int) -> None:
        self.pair.consumer.seek(topic_partition(self.w.keys, key), offset)
