"""Queue workload (Jepsen's kafka queue test): sends and polls on keys, each key
one topic-partition, optionally inside Kafka transactions.

Ops (values as in docs/history-format.md):
  send       [["send", k, v]]            -> [["send", k, [offset, v]]]
  poll       [["poll"]]                  -> [["poll", {"k": [[offset, v], ...]}]]
  txn        1-4 mixed sends/polls in one Kafka transaction (--txn)
  assign     [k, ...]  consumer.assign(): kept keys where the consumer was, new ones at
                       the group's committed offset; the completion's `starts` says where
  subscribe  [k, ...]  consumer.subscribe() to those keys' topics (its rebalances start
                       partitions the same way, logged with their starts)
  crash      null      close both clients; completes info, the process is replaced
"""
from __future__ import annotations

import random
import threading
import time

from confluent_kafka import KafkaException, TopicPartition

from workloads.base import Client, Completion, KeyRotation, Op, Recorder, ValueSource
from workloads.clients import (Indefinite, ProcessClient, Transaction, committed_starts, guarded, poll_messages,
                               produce_all, rewind)
from workloads.errors import classify
from workloads.kafka_common import KafkaWorkloadBase, KeySpace
from workloads.queue_ops import QueueOps
from workloads.warm import opened, warm_process_client
from workloads.settings import WorkloadSettings

CRASH_P = 0.02


class Acks:
    """What the cluster acknowledged: key -> {value: offset} (committed sends only).
    By value, which is unique: an acknowledgement may carry no offset (librdkafka's
    delivery report of a retried idempotent batch, seen on tansu)."""

    def __init__(self) -> None:
        self.by_key: dict[int, dict[int, int | None]] = {}
        self.keys_written: set[int] = set()  # every key a send was invoked on
        self._lock = threading.Lock()

    def invoked(self, keys: list[int]) -> None:
        with self._lock:
            self.keys_written.update(keys)

    def acked(self, key: int, offset: int | None, value: int) -> None:
        with self._lock:
            self.by_key.setdefault(key, {})[value] = offset

    def snapshot(self) -> dict[int, dict[int, int | None]]:
        with self._lock:
            return {k: dict(v) for k, v in self.by_key.items()}

    def awaited(self) -> set[tuple]:
        """What the final reads wait for: each acknowledged offset, read whatever it
        holds (a lost write's offset holds another value, and waiting for the lost
        value would only wait out the deadline), or the value where no offset came."""
        return {("offset", k, o) if o is not None else ("value", k, v)
                for k, values in self.snapshot().items() for v, o in values.items()}


class QueueGenerator:
    def __init__(self, settings: WorkloadSettings, keys: KeySpace, rotation: KeyRotation,
                 values: ValueSource, acks: Acks, rng: random.Random):
        self.settings = settings
        self.keys = keys
        self.rotation = rotation
        self.values = values
        self.acks = acks
        self.rng = rng
        self._lock = threading.Lock()
        self._has_subscription: set[int] = set()

    def next_op(self, process: int) -> Op:
        with self._lock:
            if process not in self._has_subscription:
                self._has_subscription.add(process)
                return self._subscription()
            r = self.rng.random()
            if self.settings.crash_clients and r < CRASH_P:
                return Op("crash", None)
            if r < CRASH_P + self.settings.assign_p:
                return self._subscription()
            if self.settings.txn:
                return Op("txn", [self._send() if self.rng.random() < 0.5 else ["poll"]
                                  for _ in range(self.rng.randint(1, 4))])
            return Op("send", [self._send()]) if self.rng.random() < 0.5 else Op("poll", [["poll"]])

    def _send(self) -> list:
        key = self.rotation.take_write(self.rng)
        self.acks.invoked([key])
        return ["send", key, self.values.next()]

    def _subscription(self) -> Op:
        active = self.rotation.active
        chosen = [k for k in active if self.rng.random() < 0.75] or [self.rng.choice(active)]
        if self.settings.sub_via == "subscribe":
            topics = {self.keys.topic(k) for k in chosen}
            return Op("subscribe", sorted(k for t in topics for k in self.keys.keys_of_topic(t)))
        return Op("assign", sorted(chosen))


class QueueClient(ProcessClient, QueueOps):
    """One producer and one consumer for one logical process, on librdkafka
    (the ops' control flow is workloads/queue_ops.py's)."""

    def __init__(self, workload: "QueueWorkload", process: int, final: bool = False):
        ProcessClient.__init__(self, workload, process, f"{workload.run_id}-q-p{process}", workload.group_id,
                               "earliest" if final else None)
        QueueOps.__init__(self, workload, process, final)

    def warm(self, keys: list[int]) -> None:
        """The pair made and connected for the first keys, and the lookup with the group's
        coordinator found, as a first assign would (the runner's open, before its clock)."""
        warm_process_client(self, keys)
        opened(lambda: self._committed_starts(keys))

    # -- ops ------------------------------------------------------------------------------
    def _place_assigned(self, partitions: list[TopicPartition]) -> None:
        guarded(lambda: self.consumer.assign(partitions))

    def _committed_starts(self, keys: list[int]) -> list:
        """Where each key's partition starts: the group's committed offset. A
        failed lookup is definite: nothing was assigned."""
        try:
            return committed_starts(self.pair.lookup, [self.w.keys.topic_partition(k) for k in keys],
                                    self.w.settings.auto_offset_reset, self.w.settings.op_timeout)
        except KafkaException as e:
            raise Indefinite(classify(e, definite=True))

    def _subscribe(self, op: Op) -> Completion:
        for key in op.value:
            self._ensure_topic(key)
        topics = sorted({self.w.keys.topic(k) for k in op.value})
        guarded(lambda: self.consumer.subscribe(topics, on_assign=self._on_assign, on_revoke=self._on_revoke))
        return Completion.ok(op.value)

    def _on_assign(self, consumer, partitions) -> None:
        """The group gave this consumer partitions: it starts them at explicit
        offsets, as an assign op does, unless the lookup fails; then librdkafka
        assigns them itself, looking the offsets up on its own."""
        keys = sorted(self.w.keys.key_of(p.topic, p.partition) for p in partitions)
        self.pair.rebalanced()
        self._rebalance_assigned(keys, consumer.assign)

    def _on_revoke(self, consumer, partitions) -> None:
        keys = sorted(self.w.keys.key_of(p.topic, p.partition) for p in partitions)
        self.pair.rebalanced()
        self._rebalance_revoked(keys)

    def _produce(self, items: list[tuple[int, int]], in_txn: bool) -> list:
        return produce_all(self.producer, self.w.keys, items, self.w.settings.op_timeout, in_txn=in_txn)

    def _poll_once(self) -> tuple[dict, list[str]]:
        polled, errors, _ = guarded(lambda: poll_messages(self.consumer, self.w.keys, self.w.settings.poll_timeout))
        return polled, errors

    def _txn_poll(self) -> tuple[dict, list[str]]:
        """Not guarded: a consumer error inside a transaction ends the op as the
        runner ends any exception (info, CLIENT_CRASH), as it always has."""
        polled, errors, _ = poll_messages(self.consumer, self.w.keys, self.w.settings.poll_timeout)
        return polled, errors

    def _commit_polled(self) -> list[str]:
        try:
            self.consumer.commit(asynchronous=True)
        except Exception as e:
            return [classify(e).name]
        return []

    # -- transactions (QueueOps._txn runs them) --------------------------------------------
    def _begin_transaction(self) -> Transaction:
        txn = Transaction(self.producer, self.w.settings.op_timeout)
        guarded(txn.begin)
        return txn

    def _commit_transaction(self, txn: Transaction) -> None:
        txn.commit(self._txn_positions(), self.pair.group_metadata)

    def _txn_positions(self) -> list[TopicPartition]:
        """The offsets a transaction commits for the group: the workload's own
        positions of the keys it holds (assign ops and rebalances set them, polls
        and rewinds move them; workloads/positions.py), so no consumer call that
        holds the GIL is needed, with assign or subscribe."""
        return [self.w.keys.topic_partition(key, offset) for key, offset in self.positions.committable().items()]

    def _rewind(self, polled: list[dict]) -> dict[int, int]:
        return rewind(self.consumer, self.w.keys, polled)


class QueueWorkload(KafkaWorkloadBase):
    topic_tag = "q"
    name = "queue"

    def __init__(self, bootstrap: str, settings: WorkloadSettings, run_id: str, seed: int, clients):
        super().__init__(bootstrap, settings, run_id, seed, clients)
        self.acks = Acks()
        self.group_id = f"{run_id}-group"

    def generator(self) -> QueueGenerator:
        return QueueGenerator(self.settings, self.keys, self.rotation, self.values, self.acks,
                              random.Random(self.seed))

    def new_client(self, process: int) -> Client:
        return self.clients.queue_client(self, process)

    def final_reads(self, process: int, record: Recorder, deadline: float, new_process) -> dict:
        """Fresh clients assign every key ever written from the beginning and poll
        until every acknowledged send has been seen (`Acks.awaited`) or the
        deadline passes."""
        missing = self.acks.awaited()
        keys = sorted(self.acks.keys_written | {key for _, key, _ in missing})
        total = len(missing)
        client = None
        while keys and missing and time.monotonic() < deadline:
            if client is None:
                client = self.clients.queue_client(self, process, final=True)
                if record(process, client, Op("assign", keys)).type != "ok":
                    client.close(); client = None; process = new_process(); time.sleep(0.5)
                    continue
            completion = record(process, client, Op("poll", [["poll"]]))
            if completion.type == "info":
                client.close(); client = None; process = new_process()
                continue
            if completion.type != "ok":
                continue
            for key, pairs in completion.value[0][1].items():
                for offset, value in pairs:
                    missing.difference_update({("offset", int(key), offset), ("value", int(key), value)})
        if client is not None:
            client.close()
        return {"acknowledged": total, "unseen_at_end": len(missing), "complete": not missing}
