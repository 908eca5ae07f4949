"""The queue workload's client on kafka-python: the same ops, values and error
shape as workloads/queue.py's QueueClient (docs/history-format.md), in the worker
process; the ops' control flow is workloads/queue_ops.py's, shared with it, and
this module makes kafka-python's calls. Keys become topic-partitions here, and
back."""
from __future__ import annotations

from typing import Any

from confluent_kafka import OFFSET_INVALID, TopicPartition

from workloads.base import Completion, Op
from workloads.clients import RESET_STARTS, Indefinite, ensure_topic, first_error, first_offsets
from workloads.kafka_python.clients import (Errors, KafkaPythonPair, Transaction, guarded, kafka, poll_records,
                                            produce_all, seek, topic_partition)
from workloads.kafka_python.errors import classify_kafka_python
from workloads.queue_ops import QueueOps


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


class KafkaPythonQueueClient(QueueOps):
    """One producer and one consumer for one logical process."""

    def __init__(self, workload, process: int, final: bool = False):
        super().__init__(workload, process, final)
        txn_id = f"{workload.run_id}-q-p{process}" if workload.settings.txn else None
        self.pair = KafkaPythonPair(workload.bootstrap, workload.settings, process, txn_id, workload.group_id,
                                    "earliest" if final else None)
        self._commit_errors: list[str] = []  # failed asynchronous offset commits, for the next poll

    def close(self) -> None:
        self.pair.close()

    def _ensure_topic(self, key: int) -> None:
        ensure_topic(self.w.topics, key)

    def _keys_of(self, tps) -> list[int]:
        return sorted(self.w.keys.key_of(tp.topic, tp.partition) for tp in tps)

    # -- assign and subscribe ----------------------------------------------------------------
    def _assign(self, op: Op) -> Completion:
        for key in op.value:
            self._ensure_topic(key)
        consumer = self.pair.consumer
        partitions, starts = self._starts(op.value)
        guarded(lambda: _place(consumer, partitions, assign=True))
        self.positions.assigned(op.value, starts)
        return Completion.ok(op.value, starts=starts)

    def _committed_starts(self, keys: list[int]) -> list[TopicPartition]:
        """Each key at the group's committed offset, or where auto.offset.reset puts
        a key with none. A failed lookup is definite: nothing was assigned."""
        lookup = self.pair.lookup
        fallback = RESET_STARTS.get(self.w.settings.auto_offset_reset, OFFSET_INVALID)
        timeout_ms = int(self.w.settings.op_timeout * 1000)
        starts = []
        for key in keys:
            tp = topic_partition(self.w.keys, key)
            offset = guarded(lambda: lookup.committed(tp, timeout_ms=timeout_ms), definite=True)
            starts.append(self.w.keys.topic_partition(key, offset if offset is not None and offset >= 0
                                                      else fallback))
        return starts

    def _subscribe(self, op: Op) -> Completion:
        for key in op.value:
            self._ensure_topic(key)
        consumer = self.pair.consumer
        topics = sorted({self.w.keys.topic(k) for k in op.value})
        guarded(lambda: consumer.subscribe(topics=topics, listener=_Rebalances(self)))
        return Completion.ok(op.value)

    # -- send and poll -----------------------------------------------------------------------
    def _send(self, op: Op) -> Completion:
        for _, key, _ in op.value:
            self._ensure_topic(key)
        deliveries = produce_all(self.pair.producer, self.w.keys, [(k, v) for _, k, v in op.value],
                                 self.w.settings.op_timeout)
        problem = first_error(deliveries)
        if problem is not None:
            return Completion.failed(problem, op.value)
        for d in deliveries:
            self.w.acks.acked(d.key, d.offset, d.value)
        return Completion.ok([["send", d.key, [d.offset, d.value]] for d in deliveries])

    def _poll(self, op: Op) -> Completion:
        consumer = self.pair.consumer
        try:
            polled = guarded(lambda: poll_records(consumer, self.w.keys, self.w.settings.poll_timeout))
        except Indefinite as e:  # nothing was returned, so nothing was consumed: definite
            return Completion("fail", op.value, e.classified.error)
        self.positions.polled(polled)
        errors: list[str] = []
        if polled and not self.w.settings.enable_auto_commit:
            try:
                consumer.commit_async(callback=self._commit_done)
            except Errors.KafkaError as e:  # a poll that read is still a poll that read
                errors.append(classify_kafka_python(e).name)
        return Completion.ok([["poll", polled]], **self._poll_extra(errors + self._drain_commit_errors()))

    def _commit_done(self, offsets, response) -> None:
        if isinstance(response, BaseException):
            self._commit_errors.append(type(response).__name__)

    def _drain_commit_errors(self) -> list[str]:
        errors, self._commit_errors = self._commit_errors, []
        return errors

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

    def _run_micro_ops(self, micro_ops: list, polled_so_far: list[dict]) -> tuple[list, list[str]]:
        """Runs a txn's polls in order, then its sends, awaited before the commit."""
        consumer = self.pair.consumer
        results: list = []
        pending = []
        for mop in micro_ops:
            if mop[0] == "send":
                pending.append((len(results), mop[1], mop[2]))
                results.append(None)
            else:
                polled = guarded(lambda: poll_records(consumer, self.w.keys, self.w.settings.poll_timeout))
                results.append(["poll", polled])
                polled_so_far.append(polled)
                self.positions.polled(polled)
        if pending:
            deliveries = produce_all(self.pair.producer, self.w.keys, [(k, v) for _, k, v in pending],
                                     self.w.settings.op_timeout)
            problem = first_error(deliveries)
            if problem is not None:
                raise Indefinite(problem)
            for (i, _, _), d in zip(pending, deliveries):
                results[i] = ["send", d.key, [d.offset, d.value]]
        return results, self._drain_commit_errors()

    def _rewind(self, polled: list[dict]) -> dict[int, int]:
        first = first_offsets(polled)
        for key, offset in first.items():
            self.pair.consumer.seek(topic_partition(self.w.keys, key), offset)
        return first
