"""The queue workload's client on aiokafka: the same ops, values and error shape
as workloads/queue.py's QueueClient (docs/history-format.md), in the worker
process; the ops' control flow is workloads/queue_ops.py's and
workloads/python_queue_ops.py's, shared with the other clients, and this module
makes aiokafka's calls, each on the process's event loop (loop.py). Keys become
topic-partitions here, and back."""
from __future__ import annotations

import asyncio
import threading
from typing import Any, Callable

from confluent_kafka import TopicPartition

from workloads.aiokafka_client.clients import (AiokafkaPair, Transaction, aiokafka, poll_records, produce_all, seek,
                                               topic_partition)
from workloads.base import Completion, Op
from workloads.python_queue_ops import PythonQueueOps, pair_args


class _Rebalances(aiokafka.ConsumerRebalanceListener):
    """The group's rebalance callbacks, which aiokafka awaits on the loop, in its
    group coordinator's task (AiokafkaQueueClient.rebalanced)."""

    def __init__(self, client: "AiokafkaQueueClient"):
        self.client = client

    async def on_partitions_revoked(self, revoked) -> None:
        await self.client.rebalanced(revoked, self.client._rebalance_revoked)

    async def on_partitions_assigned(self, assigned) -> None:
        await self.client.rebalanced(assigned, self.client._rebalance_assigned,
                                     lambda partitions: self.client._place(partitions, assign=False))


class AiokafkaQueueClient(PythonQueueOps):
    """One producer and one consumer for one logical process."""

    def __init__(self, workload, process: int, final: bool = False):
        super().__init__(workload, process, final)
        self.pair = AiokafkaPair(*pair_args(workload, process, final))
        # held by an op, and by a rebalance's handling, never by both (rebalanced())
        self._lock = threading.Lock()

    def invoke(self, op: Op) -> Completion:
        return self.locked(super().invoke, op)

    def locked(self, fn: Callable, *args: Any) -> Any:
        with self._lock:
            return fn(*args)

    def close(self) -> None:
        self.pair.close()

    async def rebalanced(self, tps, handle: Callable, *args: Any) -> None:
        """A rebalance gave or took `tps`. aiokafka runs its callbacks on the loop,
        not inside a poll: the handling (which asks the loop for committed offsets,
        so it cannot run on the loop) runs on another thread, under the client's
        lock, so that it never interleaves with an op."""
        await asyncio.to_thread(self.locked, handle, self._keys_of(tps), *args)

    def _place(self, partitions: list[TopicPartition], assign: bool) -> None:
        """Assigns `partitions` (when asked) and puts the consumer at each one's start."""
        consumer = self.pair.consumer
        tps = [aiokafka.TopicPartition(tp.topic, tp.partition) for tp in partitions]

        async def place() -> None:
            if assign:
                consumer.assign(tps)
            for tp, start in zip(tps, partitions):
                await seek(consumer, tp, start.offset)
        self.pair.run(place)

    # -- assign and subscribe ----------------------------------------------------------------
    def _place_assigned(self, partitions: list[TopicPartition]) -> None:
        self._place(partitions, assign=True)

    def _committed(self, key: int) -> int | None:
        lookup, tp = self.pair.lookup, topic_partition(self.w.keys, key)
        return self.pair.run(lambda: lookup.committed(tp), definite=True)

    def _subscribe_topics(self, topics: list[str]) -> None:
        consumer = self.pair.consumer
        self.pair.call(lambda: consumer.subscribe(topics=topics, listener=_Rebalances(self)))

    # -- send and poll -----------------------------------------------------------------------
    def _produce(self, items: list[tuple[int, int]], in_txn: bool) -> list:
        producer, keys, timeout = self.pair.producer, self.w.keys, self.w.settings.op_timeout
        # the loop's own bound is a little longer: produce_all leaves what is late undone
        return self.pair.run(lambda: produce_all(producer, keys, items, timeout), timeout=timeout + 1)

    def _poll_once(self) -> tuple[dict, list[str]]:
        """A poll lets a rebalance's handling in while it waits (the lock is let go),
        as kafka-python runs its callbacks inside poll(): aiokafka's getmany may wait
        for a rebalance whose callback waits for the lock."""
        consumer, keys, timeout = self.pair.consumer, self.w.keys, self.w.settings.poll_timeout
        self._lock.release()
        try:
            polled = self.pair.run(lambda: poll_records(consumer, keys, timeout))
        finally:
            self._lock.acquire()
        return polled, self._drain_commit_errors()

    def _commit_polled(self) -> list[str]:
        """Commits the consumer's positions in a task of its own, as kafka-python's
        commit_async does: a failure shows in the next poll's poll_errors."""
        consumer = self.pair.consumer

        def commit() -> None:
            asyncio.ensure_future(consumer.commit()).add_done_callback(self._commit_done)
        self.pair.call(commit)
        return []

    def _commit_done(self, task: Any) -> None:
        if not task.cancelled() and task.exception() is not None:
            self._commit_failed(type(task.exception()).__name__)

    # -- transactions (QueueOps._txn runs them) ----------------------------------------------
    def _begin_transaction(self) -> Transaction:
        self.pair.consumer  # made now, so a consumer that cannot be made fails the txn before it begins
        txn = Transaction(self.pair)
        txn.begin()
        return txn

    def _commit_transaction(self, txn: Transaction) -> None:
        """Commits with the client's own positions of the keys it holds, as
        QueueClient._txn_positions does."""
        offsets = {topic_partition(self.w.keys, key): aiokafka.structs.OffsetAndMetadata(offset, "")
                   for key, offset in self.positions.committable().items()}
        txn.commit(offsets, self.w.group_id)

    def _seek(self, key: int, offset: int) -> None:
        consumer, tp = self.pair.consumer, topic_partition(self.w.keys, key)
        self.pair.call(lambda: consumer.seek(tp, offset))
