"""kafka-python's side of the late-batch probe (harness/probes/late_batch_python.py):
one transactional producer made as the workload makes it (clients.KafkaPythonPair),
and the calls a round's timed transaction makes of it, as the Java server's and the
Go program's `timed_txn` make them of their clients. Each end is bounded as the
workload's (clients.Transaction), by the bound the round gives it."""
from __future__ import annotations

import time

from workloads.clients import Indefinite
from workloads.kafka_python.clients import KafkaPythonPair, Transaction
from workloads.settings import WorkloadSettings


class TimedProducer:
    """A transactional KafkaProducer for one round (client id lt-p`process`, or `client_id`)."""

    def __init__(self, bootstrap: str, settings: WorkloadSettings, process: int, txn_id: str,
                 client_id: str | None = None):
        self.pair = KafkaPythonPair(bootstrap, settings, process, txn_id, txn_id)
        self.pair.producer_client_id = client_id or self.pair.producer_client_id
        self.producer = self.pair.producer  # init_transactions

    def begin(self) -> None:
        Transaction(self.producer, 0).begin()

    def send(self, topic: str, value: str, seen: dict) -> None:
        """Sends `value` to partition 0 of `topic`; `seen` gets {"at", "offset"} or
        {"at", "error"} once it is answered (on the sender's thread)."""
        future = self.producer.send(topic, value=value.encode(), key=b"k", partition=0)
        future.add_callback(lambda meta: seen.update(at=time.time(), offset=meta.offset))
        future.add_errback(lambda e: seen.update(at=time.time(), error=type(e).__name__))

    def end(self, commit: bool, bound: float) -> str:
        """Commits or aborts, waiting at most `bound` s: "ok" or the error's name.
        abort_transaction() itself holds EndTxn back while a batch is incomplete
        (TransactionManager.next_request_handler)."""
        txn = Transaction(self.producer, bound)
        try:
            txn.commit({}, None) if commit else txn.abort()
        except Indefinite as e:
            return e.classified.name
        return "ok"

    def close(self) -> None:
        self.pair.close()
