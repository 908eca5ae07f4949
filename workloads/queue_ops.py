"""The queue workload's ops as every in-process client runs them (librdkafka's
QueueClient in workloads/queue.py, kafka-python's in workloads/kafka_python/):
the dispatch, where assigned keys start, a transaction's control flow (abort on
purpose or on error, the rewind after an abort, the commit that turns into an
abort), the starts a rebalance gives, and the extras of a poll's completion.
A client supplies its library's calls through the hooks at the end; values and
outcomes are those of docs/history-format.md, whichever library runs them."""
from __future__ import annotations

import logging
from typing import Any, Callable

from confluent_kafka import OFFSET_BEGINNING, TopicPartition

from workloads.base import Completion, Op
from workloads.clients import Delivery, Indefinite, first_error
from workloads.errors import harness_error
from workloads.positions import Positions

log = logging.getLogger(__name__)


class QueueOps:
    """Base of the in-process queue clients: one per logical process. Beside the
    hooks below, a client has `_ensure_topic(key)`, `_subscribe(op)` and `close()`."""

    def __init__(self, workload, process: int, final: bool = False):
        self.w = workload
        self.process = process
        self.final = final  # final reads: assign from the beginning of each partition
        self.positions = Positions()
        self._rebalance_log: list = []
        self.rng = workload.process_rng(process)

    def invoke(self, op: Op) -> Completion:
        try:
            return getattr(self, "_" + op.f)(op)
        except Indefinite as e:
            return Completion.failed(e.classified, op.value)

    def _crash(self, op: Op) -> Completion:
        self.close()
        return Completion("info", None)

    # -- assign, send and poll -----------------------------------------------------------------
    def _assign(self, op: Op) -> Completion:
        for key in op.value:
            self._ensure_topic(key)
        partitions, starts = self._starts(op.value)
        self._place_assigned(partitions)
        self.positions.assigned(op.value, starts)
        return Completion.ok(op.value, starts=starts)

    def _send(self, op: Op) -> Completion:
        for _, key, _ in op.value:
            self._ensure_topic(key)
        deliveries = self._produce([(k, v) for _, k, v in op.value], in_txn=False)
        problem = first_error(deliveries)
        if problem is not None:
            return Completion.failed(problem, op.value)
        for d in deliveries:
            self.w.acks.acked(d.key, d.offset, d.value)
        return Completion.ok([["send", d.key, [d.offset, d.value]] for d in deliveries])

    def _poll(self, op: Op) -> Completion:
        try:
            polled, errors = self._poll_once()
        except Indefinite as e:  # nothing was returned, so nothing was consumed: definite
            return Completion("fail", op.value, e.classified.error)
        self.positions.polled(polled)
        if polled and not self.w.settings.enable_auto_commit:
            errors = errors + self._commit_polled()  # a poll that read is still a poll that read
        return Completion.ok([["poll", polled]], **self._poll_extra(errors))

    # -- where keys start ----------------------------------------------------------------------
    def _starts(self, keys: list[int]) -> tuple[list[TopicPartition], dict[str, int]]:
        """Where each of `keys` starts (workloads/positions.py); final reads
        start every key at the beginning."""
        if self.final:
            return self.positions.starts(keys, self.w.keys.topic_partition, lambda new: [
                self.w.keys.topic_partition(k, OFFSET_BEGINNING) for k in new])
        return self.positions.starts(keys, self.w.keys.topic_partition, self._committed_starts)

    def _rebalance_assigned(self, keys: list[int], place: Callable[[list[TopicPartition]], None]) -> None:
        """The group gave this consumer `keys`: they start as an assign op starts
        them (`place` puts the consumer there), unless the lookup fails; then the
        library looks the offsets up itself."""
        try:
            partitions, starts = self._starts(keys)
        except Indefinite as e:
            failed = e.classified.error
        else:
            failed = None
        if failed is not None:
            log.info("process %s: committed offsets of rebalanced keys %s not found (%s); the client looks "
                     "them up itself", self.process, keys, failed[0])
            self.positions.forget(keys)
            self._rebalance_log.append(["assigned", keys])
            return
        place(partitions)
        self.positions.assigned(keys, starts)
        self._rebalance_log.append(["assigned", keys, starts])

    def _rebalance_revoked(self, keys: list[int]) -> None:
        self.positions.revoked(keys)
        self._rebalance_log.append(["revoked", keys])

    def _poll_extra(self, errors: list[str]) -> dict:
        extra: dict = {}
        if errors:
            extra["poll_errors"] = errors
        if self._rebalance_log:
            extra["rebalance_log"], self._rebalance_log = self._rebalance_log, []
        return extra

    # -- transactions ----------------------------------------------------------------------------
    def _txn(self, op: Op) -> Completion:
        for mop in op.value:
            if mop[0] == "send":
                self._ensure_topic(mop[1])
        txn = self._begin_transaction()
        polled: list[dict] = []  # what this txn's polls returned, to rewind if it aborts
        # the abort and the rewind come after the except blocks, never inside them
        # (workloads/clients.py, "Calls into librdkafka stay out of except blocks")
        try:
            results, errors = self._run_micro_ops(op.value, polled)
        except Indefinite as e:
            failed = e.classified.error
        else:
            failed = None
        if failed is None and self.rng.random() < self.w.settings.abort_p:
            failed = harness_error("ABORTED_ON_PURPOSE", "aborted on purpose (--abort-p)").error
        if failed is not None:
            txn.abort()  # raises Indefinite (info) when the abort itself fails
            return self._rewound(polled, failed, op)
        try:
            self._commit_transaction(txn)
        except Indefinite as e:
            if e.classified.outcome != "fail":
                raise
            aborted = e.classified.error  # the commit turned into an abort
        else:
            aborted = None
        if aborted is not None:
            return self._rewound(polled, aborted, op)
        for mop in results:
            if mop[0] == "send":
                self.w.acks.acked(mop[1], mop[2][0], mop[2][1])
        return Completion.ok(results, **self._poll_extra(errors))

    def _run_micro_ops(self, micro_ops: list, polled_so_far: list[dict]) -> tuple[list, list[str]]:
        """Runs a txn's polls in order, then its sends, awaited before the commit;
        the completed micro-ops and the poll errors seen. Polls' results go into
        `polled_so_far` as they come. Raises Indefinite on an error."""
        results: list = []
        errors: list[str] = []
        pending = []
        for mop in micro_ops:
            if mop[0] == "send":
                pending.append((len(results), mop[1], mop[2]))
                results.append(None)
            else:
                polled, poll_errors = self._txn_poll()
                errors += poll_errors
                results.append(["poll", polled])
                polled_so_far.append(polled)
                self.positions.polled(polled)
        if pending:
            deliveries = self._produce([(k, v) for _, k, v in pending], in_txn=True)
            problem = first_error(deliveries)
            if problem is not None:
                raise Indefinite(problem)
            for (i, _, _), d in zip(pending, deliveries):
                results[i] = ["send", d.key, [d.offset, d.value]]
        return results, errors

    def _rewound(self, polled: list[dict], error: list[str], op: Op) -> Completion:
        """A definite failure (the transaction aborted); the consumer goes back to
        re-read what it polled. A rewind that fails retires the process: its
        consumer is where nobody knows."""
        try:
            first = self._rewind(polled)
        except Exception as e:  # noqa: BLE001 - whatever stopped the rewind
            log.info("process %s: rewind after abort failed (%s); retiring it", self.process, e)
            return Completion("fail", op.value, error, retire=True)
        for key, offset in first.items():
            self.positions.rewound(key, offset)
        return Completion("fail", op.value, error)

    # -- hooks: the library's calls ------------------------------------------------------------
    def _committed_starts(self, keys: list[int]) -> list[TopicPartition]:
        """Each key at the group's committed offset (raises Indefinite when the lookup fails)."""
        raise NotImplementedError

    def _begin_transaction(self) -> Any:
        """A begun transaction, with abort() (raising Indefinite when it fails)."""
        raise NotImplementedError

    def _place_assigned(self, partitions: list[TopicPartition]) -> None:
        """Assigns the consumer `partitions`, each at its offset (raises Indefinite)."""
        raise NotImplementedError

    def _produce(self, items: list[tuple[int, int]], in_txn: bool) -> list[Delivery]:
        """Sends (key, value) pairs and waits for them at most the op timeout."""
        raise NotImplementedError

    def _poll_once(self) -> tuple[dict[str, list[list[int]]], list[str]]:
        """One poll: {key: [[offset, value], ...]} and its non-fatal error names
        (raises Indefinite when it fails: nothing was returned)."""
        raise NotImplementedError

    def _txn_poll(self) -> tuple[dict[str, list[list[int]]], list[str]]:
        """A poll inside a transaction: the same as any other unless a client says otherwise."""
        return self._poll_once()

    def _commit_polled(self) -> list[str]:
        """Commits the consumer's positions without waiting; the errors it raised at once."""
        raise NotImplementedError

    def _commit_transaction(self, txn: Any) -> None:
        """Commits with the consumer's positions; Indefinite "fail" when it aborted instead."""
        raise NotImplementedError

    def _rewind(self, polled: list[dict]) -> dict[int, int]:
        """Seeks back to the first offset `polled` read on each key; those offsets."""
        raise NotImplementedError
