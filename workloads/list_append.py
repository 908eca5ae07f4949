"""List-append workload (Elle): each key is one topic-partition whose log is
the key's list.

  append  ["append", k, v]  produce v to k's partition
  r       ["r", k, null]    assign k's partition from the beginning, read the
                            end offset, poll until the position reaches it;
                            completes as ["r", k, [v1, v2, ...]] in offset order

Without --txn every op holds one micro-op. With --txn an op holds 1-4 and its
appends go in one Kafka transaction; Kafka transactions do not read their own
writes, so a txn never reads a key after appending to it.
"""
from __future__ import annotations

import random
import threading
import time

from confluent_kafka import OFFSET_BEGINNING

from workloads.base import Completion, KeyRotation, Op, Recorder, ValueSource
from workloads.clients import (Indefinite, ProcessClient, Transaction, fetch, first_error, guarded, produce_all,
                              )
from workloads.errors import classify, harness_error
from workloads.kafka_common import KafkaWorkloadBase, decode
from workloads.settings import WorkloadSettings
from workloads.warm import warm_process_client

READ_P = 0.5


class ListAppendGenerator:
    def __init__(self, settings: WorkloadSettings, rotation: KeyRotation, values: ValueSource,
                 written: set[int], rng: random.Random):
        self.settings = settings
        self.rotation = rotation
        self.values = values
        self.written = written
        self.rng = rng
        self._lock = threading.Lock()

    def next_op(self, process: int) -> Op:
        with self._lock:
            size = self.rng.randint(1, 4) if self.settings.txn else 1
            micro_ops: list = []
            appended: set[int] = set()
            for _ in range(size):
                if self.rng.random() < READ_P:
                    readable = [k for k in self.rotation.active if k not in appended]
                    if readable:
                        micro_ops.append(["r", self.rng.choice(readable), None])
                        continue
                key = self.rotation.take_write(self.rng)
                appended.add(key)
                self.written.add(key)
                micro_ops.append(["append", key, self.values.next()])
            return Op("txn", micro_ops)


class ListAppendClient(ProcessClient):
    def __init__(self, workload: "ListAppendWorkload", process: int):
        # each process its own group: reads assign partitions, they never share them
        super().__init__(workload, process, f"{workload.run_id}-la-p{process}", f"{workload.run_id}-la-p{process}",
                         "earliest")
        self.rng = workload.process_rng(process)

    def warm(self, keys: list[int]) -> None:
        """The pair made and connected for the first keys (the runner's open, before its clock)."""
        warm_process_client(self, keys)

    def invoke(self, op: Op) -> Completion:
        try:
            for mop in op.value:
                self._ensure_topic(mop[1])
            return self._txn(op) if self.w.settings.txn else self._single(op)
        except Indefinite as e:
            return Completion.failed(e.classified, op.value)

    def _single(self, op: Op) -> Completion:
        (mop,) = op.value
        if mop[0] == "r":
            try:
                return Completion.ok([self.read(mop[1])])
            except Indefinite as e:  # a read changes nothing: a failed read is definitely a failure
                return Completion("fail", op.value, e.classified.error)
        return Completion.ok([self._append([mop])[0]])

    def _txn(self, op: Op) -> Completion:
        """Reads come first in generation order and see committed data only;
        the appends are produced, awaited and committed together."""
        txn = Transaction(self.producer, self.w.settings.op_timeout)
        guarded(txn.begin)
        try:
            results = [self.read(m[1]) if m[0] == "r" else None for m in op.value]
            appends = [m for m in op.value if m[0] == "append"]
            done = iter(self._append(appends, in_txn=True))
            results = [r if r is not None else next(done) for r in results]
        except Indefinite as e:
            failed = e.classified.error  # aborted below: workloads/clients.py, "Calls into librdkafka ..."
        else:
            failed = None
        if failed is None and self.rng.random() < self.w.settings.abort_p:
            failed = harness_error("ABORTED_ON_PURPOSE", "aborted on purpose").error
        if failed is not None:
            txn.abort()
            return Completion("fail", op.value, failed)
        txn.commit()
        return Completion.ok(results)

    def _append(self, micro_ops: list, in_txn: bool = False) -> list:
        deliveries = produce_all(self.producer, self.w.keys, [(k, v) for _, k, v in micro_ops],
                                 self.w.settings.op_timeout, in_txn=in_txn)
        problem = first_error(deliveries)
        if problem is not None:
            raise Indefinite(problem)
        return [["append", d.key, d.value] for d in deliveries]

    def read(self, key: int) -> list:
        """The whole list of `key`, up to the end offset seen when the read began."""
        tp = self.w.keys.topic_partition(key)
        consumer = self.consumer
        deadline = time.monotonic() + self.w.settings.op_timeout
        _, end = guarded(lambda: consumer.get_watermark_offsets(tp, timeout=self.w.settings.op_timeout))
        guarded(lambda: consumer.assign([self.w.keys.topic_partition(key, OFFSET_BEGINNING)]))
        values: list[int] = []
        position = 0
        while position < end:
            if time.monotonic() > deadline:
                raise Indefinite(harness_error("OP_TIMEOUT", f"read of key {key} reached offset {position} of {end}"))
            for msg in guarded(lambda: fetch(consumer, self.w.settings.poll_timeout)):
                if msg.error() is not None:
                    if msg.error().fatal():
                        raise Indefinite(classify(msg.error()))
                    continue
                if msg.offset() < end:
                    values.append(decode(msg.value()))
            position = guarded(lambda: consumer.position([tp]))[0].offset
        return ["r", key, values]



class ListAppendWorkload(KafkaWorkloadBase):
    topic_tag = "la"
    name = "list-append"

    def __init__(self, bootstrap: str, settings: WorkloadSettings, run_id: str, seed: int, clients):
        super().__init__(bootstrap, settings, run_id, seed, clients)
        self.written: set[int] = set()

    def generator(self) -> ListAppendGenerator:
        return ListAppendGenerator(self.settings, self.rotation, self.values, self.written, random.Random(self.seed))

    def new_client(self, process: int) -> ListAppendClient:
        return ListAppendClient(self, process)

    def final_reads(self, process: int, record: Recorder, deadline: float, new_process) -> dict:
        """A fresh client reads every key ever appended to, one read per op,
        retrying a key (with a new process) until it reads or the deadline passes."""
        keys = sorted(self.written)
        client = ListAppendClient(self, process)
        read = 0
        for key in keys:
            while time.monotonic() < deadline:
                completion = record(process, client, Op("txn", [["r", key, None]]))
                if completion.type == "ok":
                    read += 1
                    break
                if completion.type == "info":
                    client.close()
                    process = new_process()
                    client = ListAppendClient(self, process)
                time.sleep(0.2)
        client.close()
        return {"keys": len(keys), "read": read, "complete": read == len(keys)}
