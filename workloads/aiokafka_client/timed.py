"""aiokafka's side of the late-batch probe (harness/probes/late_batch_python.py): one
transactional producer on its own event loop thread, made as the workload makes it
(clients.AiokafkaPair), and the calls a round's timed transaction makes of it, as
the Java server's and the Go program's `timed_txn` make them of their clients."""
from __future__ import annotations

import time

from workloads.aiokafka_client.clients import AiokafkaPair
from workloads.clients import Indefinite
from workloads.settings import WorkloadSettings


class TimedProducer:
    """A transactional AIOKafkaProducer for one round (client id lt-p`process`, or `client_id`)."""

    def __init__(self, bootstrap: str, settings: WorkloadSettings, process: int, txn_id: str,
                 client_id: str | None = None):
        self.pair = AiokafkaPair(bootstrap, settings, process, txn_id, txn_id)
        self.pair.producer_client_id = client_id or self.pair.producer_client_id
        self.producer = self.pair.producer  # start(): InitProducerId

    def begin(self) -> None:
        self.pair.run(self.producer.begin_transaction)

    def send(self, topic: str, value: str, seen: dict) -> None:
        """Hands `value` for partition 0 of `topic` to the producer; `seen` gets
        {"at", "offset"} or {"at", "error"} once it is answered (on the loop)."""
        def answered(future) -> None:  # noqa: ANN001 - an asyncio future of aiokafka's
            if future.cancelled() or future.exception() is not None:
                error = "cancelled" if future.cancelled() else type(future.exception()).__name__
                seen.update(at=time.time(), error=error)
            else:
                seen.update(at=time.time(), offset=future.result().offset)
        delivery = self.pair.run(lambda: self.producer.send(topic, value=value.encode(), key=b"k", partition=0))
        self.pair.call(lambda: delivery.add_done_callback(answered))

    def end(self, commit: bool, bound: float) -> str:
        """Commits or aborts, waiting at most `bound` s: "ok" or the error's name.
        aiokafka's sender sends EndTxn only once every batch handed to it is
        answered (Sender._do_txn_commit awaits flush_for_commit)."""
        end = self.producer.commit_transaction if commit else self.producer.abort_transaction
        try:
            self.pair.run(end, timeout=bound)
        except Indefinite as e:
            return e.classified.name
        return "ok"

    def close(self) -> None:
        self.pair.close()
