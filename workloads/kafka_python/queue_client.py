"""The queue workload's client on kafka-python: the same ops, values and error
shape as workloads/queue.py's QueueClient (docs/history-format.md), in the worker
process. Keys become topic-partitions here, and back. As QueueClient, it assigns
every key at an explicit start (workloads/positions.py) and commits its own
positions with a transaction."""
from __future__ import annotations

import logging
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, OFFSET_INVALID, TopicPartition

from workloads.base import Completion, Op
from workloads.clients import RESET_STARTS, Indefinite, ensure_topic, first_error, first_offsets
from workloads.errors import harness_error
from workloads.kafka_python.clients import (Errors, KafkaPythonPair, Transaction, guarded, kafka, poll_records,
                                            produce_all, seek, topic_partition)
from workloads.kafka_python.errors import classify_kafka_python
from workloads.positions import Positions

log = logging.getLogger(__name__)


class _Rebalances(kafka.ConsumerRebalanceListener):
    """The group's rebalance callbacks (run inside the consumer's poll), to the client."""

    def __init__(self, client: "KafkaPythonQueueClient"):
        self.client = client

    def on_partitions_revoked(self, revoked) -> None:
        self.client._on_revoke(revoked)

    def on_partitions_assigned(self, assigned) -> None:
        self.client._on_assign(assigned)


class KafkaPythonQueueClient:
    """One producer and one consumer for one logical process."""

    def __init__(self, workload, process: int, final: bool = False):
        self.w = workload
        self.process = process
        self.final = final  # final reads: assign from the beginning of each partition
        txn_id = f"{workload.run_id}-q-p{process}" if workload.settings.txn else None
        self.pair = KafkaPythonPair(workload.bootstrap, workload.settings, process, txn_id, workload.group_id,
                                    "earliest" if final else None)
        self.positions = Positions()
        self._rebalance_log: list = []
        self._commit_errors: list[str] = []  # failed asynchronous offset commits, for the next poll

    def invoke(self, op: Op) -> Completion:
        try:
            return getattr(self, "_" + op.f)(op)
        except Indefinite as e:
            return Completion.failed(e.classified, op.value)

    def close(self) -> None:
        self.pair.close()

    # -- assign and subscribe ----------------------------------------------------------------
    def _crash(self, op: Op) -> Completion:
        self.close()
        return Completion("info", None)

    def _assign(self, op: Op) -> Completion:
        for key in op.value:
            ensure_topic(self.w.topics, key)
        consumer = self.pair.consumer
        partitions, starts = self._starts(op.value)
        guarded(lambda: self._place(consumer, partitions, assign=True))
        self.positions.assigned(op.value, starts)
        return Completion.ok(op.value, starts=starts)

    def _place(self, consumer: Any, partitions: list[TopicPartition], assign: bool) -> None:
        """Assigns `partitions` (when asked) and puts each at its start."""
        tps = [kafka.TopicPartition(tp.topic, tp.partition) for tp in partitions]
        if assign:
            consumer.assign(tps)
        for tp, start in zip(tps, partitions):
            seek(consumer, tp, start.offset)

    def _starts(self, keys: list[int]) -> tuple[list[TopicPartition], dict[str, int]]:
        """Where each of `keys` starts (workloads/positions.py); final reads
        start every key at the beginning."""
        if self.final:
            return self.positions.starts(keys, self.w.keys.topic_partition, lambda new: [
                self.w.keys.topic_partition(k, OFFSET_BEGINNING) for k in new])
        return self.positions.starts(keys, self.w.keys.topic_partition, self._committed_starts)

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
            ensure_topic(self.w.topics, key)
        consumer = self.pair.consumer
        topics = sorted({self.w.keys.topic(k) for k in op.value})
        guarded(lambda: consumer.subscribe(topics=topics, listener=_Rebalances(self)))
        return Completion.ok(op.value)

    def _on_assign(self, assigned) -> None:
        """The group gave this consumer partitions: it starts them as an assign op
        does, unless the lookup fails; then the consumer looks them up itself."""
        keys = sorted(self.w.keys.key_of(tp.topic, tp.partition) for tp in assigned)
        try:
            partitions, starts = self._starts(keys)
        except Indefinite as e:
            failed = e.classified.error
        else:
            failed = None
        if failed is not None:
            log.info("process %s: committed offsets of rebalanced keys %s not found (%s); kafka-python looks "
                     "them up itself", self.process, keys, failed[0])
            self.positions.forget(keys)
            self._rebalance_log.append(["assigned", keys])
            return
        self._place(self.pair.consumer, partitions, assign=False)
        self.positions.assigned(keys, starts)
        self._rebalance_log.append(["assigned", keys, starts])

    def _on_revoke(self, revoked) -> None:
        keys = sorted(self.w.keys.key_of(tp.topic, tp.partition) for tp in revoked)
        self.positions.revoked(keys)
        self._rebalance_log.append(["revoked", keys])

    # -- send and poll -----------------------------------------------------------------------
    def _send(self, op: Op) -> Completion:
        for _, key, _ in op.value:
            ensure_topic(self.w.topics, key)
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
        return Completion.ok([["poll", polled]], **self._poll_extra(errors))

    def _commit_done(self, offsets, response) -> None:
        if isinstance(response, BaseException):
            self._commit_errors.append(type(response).__name__)

    def _poll_extra(self, errors: list[str]) -> dict:
        extra: dict = {}
        errors = errors + self._commit_errors
        self._commit_errors = []
        if errors:
            extra["poll_errors"] = errors
        if self._rebalance_log:
            extra["rebalance_log"], self._rebalance_log = self._rebalance_log, []
        return extra

    # -- transactions ------------------------------------------------------------------------
    def _txn(self, op: Op) -> Completion:
        settings = self.w.settings
        for mop in op.value:
            if mop[0] == "send":
                ensure_topic(self.w.topics, mop[1])
        producer, consumer = self.pair.producer, self.pair.consumer
        txn = Transaction(producer, settings.op_timeout)
        polled: list[dict] = []  # what this txn's polls returned, to rewind if it aborts
        txn.begin()
        # the abort and the rewind come after the except blocks, never inside them
        # (workloads/clients.py, "Calls into librdkafka stay out of except blocks")
        try:
            results = self._run_micro_ops(producer, consumer, op.value, polled)
        except Indefinite as e:
            failed = e.classified.error
        else:
            failed = None
        if failed is None and self.w.rng_for(self.process).random() < settings.abort_p:
            failed = harness_error("ABORTED_ON_PURPOSE", "aborted on purpose (--abort-p)").error
        if failed is not None:
            txn.abort()  # raises Indefinite (info) when the abort itself fails
            return self._rewound(consumer, polled, failed, op)
        try:
            txn.commit(self._txn_offsets(), consumer.group_metadata())
        except Indefinite as e:
            if e.classified.outcome != "fail":
                raise
            aborted = e.classified.error  # the commit turned into an abort
        else:
            aborted = None
        if aborted is not None:
            return self._rewound(consumer, polled, aborted, op)
        for mop in results:
            if mop[0] == "send":
                self.w.acks.acked(mop[1], mop[2][0], mop[2][1])
        return Completion.ok(results, **self._poll_extra([]))

    def _txn_offsets(self) -> dict:
        """The offsets a transaction commits for the group: the client's own
        positions of the keys it holds, as QueueClient._txn_positions."""
        return {topic_partition(self.w.keys, key): kafka.OffsetAndMetadata(offset)
                for key, offset in self.positions.committable().items()}

    def _run_micro_ops(self, producer: Any, consumer: Any, micro_ops: list,
                       polled_so_far: list[dict]) -> list:
        """Runs a txn's polls in order, then its sends, awaited before the commit."""
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
            deliveries = produce_all(producer, self.w.keys, [(k, v) for _, k, v in pending],
                                     self.w.settings.op_timeout)
            problem = first_error(deliveries)
            if problem is not None:
                raise Indefinite(problem)
            for (i, _, _), d in zip(pending, deliveries):
                results[i] = ["send", d.key, [d.offset, d.value]]
        return results

    def _rewound(self, consumer: Any, polled: list[dict], error: list[str], op: Op) -> Completion:
        """A definite failure; the consumer goes back to re-read what the aborted txn
        polled. A rewind that fails (a rebalance took the partition) retires the process."""
        first = first_offsets(polled)
        try:
            for key, offset in first.items():
                consumer.seek(topic_partition(self.w.keys, key), offset)
        except (Errors.KafkaError, ValueError) as e:
            log.info("process %s: rewind after abort failed (%s); retiring it", self.process, e)
            return Completion("fail", op.value, error, retire=True)
        for key, offset in first.items():
            self.positions.rewound(key, offset)
        return Completion("fail", op.value, error)
