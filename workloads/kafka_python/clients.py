"""kafka-python's producer and consumer for one logical process, as
workloads/clients.py has librdkafka's: made on first use, produce-and-wait with
the error table's verdicts, one poll, and transactions whose every step is
bounded by the op timeout. The pinned package is loaded when this module is
imported (install.py): the factory imports it only when a run asks for
kafka-python."""
from __future__ import annotations

import logging
import time
from typing import Any, Callable

from confluent_kafka import OFFSET_BEGINNING, OFFSET_END  # the start constants Positions deals in

from workloads.clients import Delivery, Indefinite, PairIdentity
from workloads.errors import Classified
from workloads.kafka_common import KeySpace, encode
from workloads.kafka_python import config
from workloads.kafka_python.errors import classify_kafka_python
from workloads.kafka_python.install import load
from workloads.python_queue_ops import polled_by_key
from workloads.settings import WorkloadSettings

log = logging.getLogger(__name__)
kafka = load()
Errors = kafka.errors
CONSUMER_CLOSE_MS = 5000


def guarded(fn: Callable[[], Any], definite: bool = False) -> Any:
    """Runs fn, turning a kafka-python error into a classified verdict."""
    try:
        return fn()
    except Errors.KafkaError as e:
        raise Indefinite(classify_kafka_python(e, definite=definite))


class KafkaPythonPair(PairIdentity):
    """A logical process's producer, consumer and committed-offsets lookup, made on
    first use. kafka-python connects in its constructors: a constructor that
    fails sent nothing (definite); a failed init_transactions goes by the table."""

    def __init__(self, bootstrap: str, settings: WorkloadSettings, process: int, transactional_id: str | None,
                 group_id: str, auto_offset_reset: str | None = None):
        super().__init__(bootstrap, settings, process, transactional_id, group_id, auto_offset_reset)
        self._producer: Any = None
        self._consumer: Any = None
        self._lookup: Any = None

    @property
    def producer(self) -> Any:
        if self._producer is None:
            producer = guarded(lambda: kafka.KafkaProducer(**config.producer_config(
                self.bootstrap, self.settings, self.producer_client_id, self.transactional_id)), definite=True)
            if self.transactional_id is not None:
                try:
                    guarded(producer.init_transactions)
                except Indefinite:
                    close_producer(producer)
                    raise
            self._producer = producer
        return self._producer

    @property
    def consumer(self) -> Any:
        if self._consumer is None:
            self._consumer = guarded(lambda: kafka.KafkaConsumer(**config.consumer_config(
                self.bootstrap, self.settings, f"lt-c{self.process}", self.group_id, self.auto_offset_reset)),
                definite=True)
        return self._consumer

    @property
    def lookup(self) -> Any:
        """The process's own committed-offsets lookup, reading uncommitted (config.lookup_config)."""
        if self._lookup is None:
            self._lookup = guarded(lambda: kafka.KafkaConsumer(**config.lookup_config(
                self.bootstrap, self.settings, f"lt-o{self.process}", self.group_id)), definite=True)
        return self._lookup

    def close(self) -> None:
        """Stops the producer without sending what it still holds, and closes the
        consumers without committing; each is closed even if another's close raised."""
        producer, consumer, lookup = self._producer, self._consumer, self._lookup
        self._producer = self._consumer = self._lookup = None
        for close, client in ((close_producer, producer), (close_consumer, consumer), (close_consumer, lookup)):
            if client is not None:
                try:
                    close(client)
                except Exception as e:  # noqa: BLE001 - closing anyway
                    log.info("process %s: closing %s: %s", self.process, type(client).__name__, e)


def close_producer(producer: Any) -> None:
    """KafkaProducer.close(0) flushes first and raises while a batch is in flight,
    before it stops its sender thread (3.0.12): the sender, which would go on
    sending behind the history's back, is then stopped without sending."""
    try:
        producer.close(timeout=0)
        return
    except Errors.KafkaError:
        pass
    producer._sender.force_close()


def close_consumer(consumer: Any) -> None:
    consumer.close(autocommit=False, timeout_ms=CONSUMER_CLOSE_MS)


def produce_all(producer: Any, keys: KeySpace, items: list[tuple[int, int]], timeout: float) -> list[Delivery]:
    """Sends (key, value) pairs and waits for their acknowledgements until `timeout`.
    A send() that raised never left the client (definite); one not acknowledged
    in time stays undone (workloads.clients.first_error makes it OP_TIMEOUT)."""
    deliveries = [Delivery(k, v) for k, v in items]
    futures = []
    for delivery in deliveries:
        try:
            futures.append((delivery, producer.send(keys.topic(delivery.key), value=encode(delivery.value),
                                                    key=encode(delivery.key),
                                                    partition=keys.partition(delivery.key))))
        except (Errors.KafkaError, ValueError, TypeError) as e:
            delivery.done = True
            delivery.error = classify_kafka_python(e, definite=True)
    deadline = time.monotonic() + timeout
    for delivery, future in futures:
        try:
            delivery.offset = future.get(timeout=max(0.0, deadline - time.monotonic())).offset
            delivery.done = True
        except Exception as e:  # noqa: BLE001 - whatever failed the future is the delivery's error
            if future.is_done:
                delivery.done = True
                delivery.error = classify_kafka_python(e)
    return deliveries


def poll_records(consumer: Any, keys: KeySpace, timeout: float) -> dict[str, list[list[int]]]:
    """One poll(): {key: [[offset, value], ...]}, each key's records in offset order."""
    return polled_by_key(keys, consumer.poll(timeout_ms=int(timeout * 1000), max_records=config.MAX_POLL_RECORDS))


def topic_partition(keys: KeySpace, key: int) -> Any:
    return kafka.TopicPartition(keys.topic(key), keys.partition(key))


def seek(consumer: Any, tp: Any, offset: int) -> None:
    """Puts the consumer at `offset` of `tp`: an offset, or librdkafka's
    OFFSET_BEGINNING/OFFSET_END (the starts workloads/positions.py deals in)."""
    if offset >= 0:
        consumer.seek(tp, offset)
    elif offset == OFFSET_BEGINNING:
        consumer.seek_to_beginning(tp)
    elif offset == OFFSET_END:
        consumer.seek_to_end(tp)


class Transaction:
    """One transaction on a transactional KafkaProducer, each step bounded by the op
    timeout. kafka-python 3.0.12's send_offsets_to_transaction, commit_transaction
    and abort_transaction wait for their answer without a bound, and retry a
    coordinator they cannot reach for ever: under a partition an op would outlive
    the harness's deadline. So this asks the transaction manager as those methods do
    and waits at most the op timeout (private attributes of the pinned version)."""

    def __init__(self, producer: Any, timeout: float):
        self.producer = producer
        self.timeout = timeout
        self.manager = producer._transaction_manager

    def begin(self) -> None:
        guarded(self.producer.begin_transaction)

    def _await(self, result: Any) -> None:
        """Waits for a transactional request's answer; raises its error, or
        KafkaTimeoutError when none came in time."""
        self.producer._sender.wakeup()
        if not result.wait(timeout_ms=self.timeout * 1000):
            raise Errors.KafkaTimeoutError(f"no answer from the coordinator in {self.timeout:.0f} s")

    def commit(self, offsets: dict, group_metadata: Any) -> None:
        """Sends the consumer's `offsets` for the group and commits. A commit that
        never reached the coordinator (its EndTxn not sent: an error before it, or
        the producer in an abortable error state, which ends queued requests
        unsent) is aborted, and only an abort that succeeds is definite; any other
        failure leaves the outcome unknown."""
        began = False
        failure: BaseException | None = None
        try:
            if offsets:
                self._await(self.manager.send_offsets_to_transaction(offsets, group_metadata))
            result = self.manager.begin_commit()
            began = True
            self._await(result)
        except Errors.KafkaError as e:
            failure = e  # handled below, outside the except block (workloads/clients.py says why)
        if failure is None:
            return
        name, message = type(failure).__name__, str(failure)
        if began and not self.manager.has_abortable_error():
            raise Indefinite(Classified("info", name, f"{message} (during commit)"))
        self.abort()  # raises Indefinite if the abort itself fails
        raise Indefinite(Classified("fail", name, f"{message} (transaction aborted)"))

    def abort(self) -> None:
        try:
            self._await(self.manager.begin_abort())
        except Errors.KafkaError as e:
            raise Indefinite(Classified("info", type(e).__name__, f"{e} (during abort)"))
