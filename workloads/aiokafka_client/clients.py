"""aiokafka's producer and consumer for one logical process, as
workloads/kafka_python/clients.py has kafka-python's: made on first use on the
process's own event loop (loop.py), every call bounded by the op timeout,
produce-and-wait with the error table's verdicts, one poll, and transactions.
The pinned package is loaded when this module is imported (install.py): the
factory imports it only when a run asks for aiokafka."""
from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, TypeVar

from confluent_kafka import OFFSET_BEGINNING, OFFSET_END  # the start constants Positions deals in

from workloads.aiokafka_client import config
from workloads.aiokafka_client.errors import classify_aiokafka
from workloads.aiokafka_client.install import PINNED
from workloads.aiokafka_client.loop import LoopThread, LoopTimeout
from workloads.clients import Delivery, Indefinite
from workloads.errors import Classified, harness_error
from workloads.python_queue_ops import polled_by_key
from workloads.kafka_common import KeySpace, encode
from workloads.settings import WorkloadSettings

log = logging.getLogger(__name__)
aiokafka = PINNED.load()
Errors = aiokafka.errors
TxnState = aiokafka.producer.transaction_manager.TransactionState
# the states a failed commit leaves a transaction in when its EndTxn was never sent
NOT_ENDED = (TxnState.IN_TRANSACTION, TxnState.ABORTABLE_ERROR)
T = TypeVar("T")


@dataclass
class AiokafkaPair:
    """A logical process's event loop, producer, consumer and committed-offsets
    lookup, made on first use. aiokafka connects in start(): a constructor or a
    start that fails sent nothing that writes (definite); a transactional
    producer's start (InitProducerId) goes by the table."""
    bootstrap: str
    settings: WorkloadSettings
    process: int
    transactional_id: str | None
    group_id: str
    auto_offset_reset: str | None = None

    def __post_init__(self) -> None:
        self.loop = LoopThread(f"aiokafka-p{self.process}")
        self.producer_client_id = f"lt-p{self.process}"  # a probe names its own
        self._producer: Any = None
        self._consumer: Any = None
        self._lookup: Any = None

    def run(self, make: Callable[[], Awaitable[T]], definite: bool = False, timeout: float | None = None) -> T:
        """Runs an aiokafka coroutine on the loop within `timeout` (the op timeout),
        turning its error into a classified verdict; one not done in time is
        cancelled and `info` (OP_TIMEOUT): it may have been sent."""
        try:
            return self.loop.run(make, self.settings.op_timeout if timeout is None else timeout)
        except Errors.KafkaError as e:
            raise Indefinite(classify_aiokafka(e, definite=definite))
        except LoopTimeout as e:
            raise Indefinite(harness_error("OP_TIMEOUT", str(e)))

    def call(self, fn: Callable[[], T]) -> T:
        """A plain call on the loop's thread, its errors classified as run's."""
        async def call() -> T:
            return fn()
        return self.run(call)

    def _started(self, make: Callable[[], Any], definite: bool) -> Any:
        async def start() -> Any:
            client = make()
            try:
                await client.start()
            except BaseException:
                await client.stop()
                raise
            return client
        return self.run(start, definite=definite)

    def _made(self, slot: str, make: Callable[[], Any], definite: bool = True) -> Any:
        """The client kept in `slot`, made and started first if there is none."""
        if getattr(self, slot) is None:
            setattr(self, slot, self._started(make, definite))
        return getattr(self, slot)

    @property
    def producer(self) -> Any:
        return self._made("_producer", lambda: aiokafka.AIOKafkaProducer(**config.producer_config(
            self.bootstrap, self.settings, self.producer_client_id, self.transactional_id)),
            definite=self.transactional_id is None)

    @property
    def consumer(self) -> Any:
        return self._made("_consumer", lambda: aiokafka.AIOKafkaConsumer(**config.consumer_config(
            self.bootstrap, self.settings, f"lt-c{self.process}", self.group_id, self.auto_offset_reset)))

    @property
    def lookup(self) -> Any:
        """The process's own committed-offsets lookup, reading uncommitted (config.lookup_config)."""
        return self._made("_lookup", lambda: aiokafka.AIOKafkaConsumer(**config.lookup_config(
            self.bootstrap, self.settings, f"lt-o{self.process}", self.group_id)))

    def close(self) -> None:
        """Stops the producer without sending what it still holds, closes the
        consumers without committing, then the loop; each is closed even if
        another's close raised."""
        closers = [(close_producer, self._producer), (close_consumer, self._consumer), (close_consumer, self._lookup)]
        self._producer = self._consumer = self._lookup = None
        self.loop.close(lambda: close_each(closers, self.process))


async def close_each(closers: list[tuple[Callable[[Any], Awaitable[None]], Any]], process: int) -> None:
    """Each `close(client)` in turn, even if another raised or was cancelled. Not
    past GeneratorExit: a close still pending when its loop is stopped (the loop
    thread's bound) is closed by the garbage collector, and a coroutine that awaits
    again then prints "coroutine ignored GeneratorExit" for every such client."""
    for close, client in closers:
        if client is not None:
            try:
                await close(client)
            except (Exception, asyncio.CancelledError) as e:
                log.info("process %s: closing %s: %s %s", process, type(client).__name__, type(e).__name__, e)


async def close_producer(producer: Any) -> None:
    """AIOKafkaProducer.stop() first flushes what the producer holds, which would go
    on sending behind the history's back: this stops its sender task (private in
    0.14.0) and fails what is left in its accumulator unsent, then closes."""
    await producer._sender.close()
    producer._message_accumulator.fail_all(Errors.ProducerClosed())
    await producer.stop()


async def close_consumer(consumer: Any) -> None:
    await consumer.stop()


async def produce_all(producer: Any, keys: KeySpace, items: list[tuple[int, int]], timeout: float) -> list[Delivery]:
    """Sends (key, value) pairs and waits for their acknowledgements until `timeout`.
    A send() that raised never left the client (definite); one not acknowledged
    in time stays undone (workloads.clients.first_error makes it OP_TIMEOUT)."""
    deadline = time.monotonic() + timeout
    deliveries = [Delivery(k, v) for k, v in items]
    futures = []
    for delivery in deliveries:
        try:
            futures.append((delivery, await asyncio.wait_for(producer.send(
                keys.topic(delivery.key), value=encode(delivery.value), key=encode(delivery.key),
                partition=keys.partition(delivery.key)), max(0.0, deadline - time.monotonic()))))
        except (Errors.KafkaError, Errors.IllegalOperation, ValueError, TypeError) as e:
            delivery.done = True
            delivery.error = classify_aiokafka(e, definite=True)
        except asyncio.TimeoutError:
            break  # this and the rest stay undone: indefinite
    if futures:
        await asyncio.wait([f for _, f in futures], timeout=max(0.0, deadline - time.monotonic()))
    for delivery, future in futures:
        if not future.done():
            continue
        delivery.done = True
        if future.exception() is not None:
            delivery.error = classify_aiokafka(future.exception())
        else:
            delivery.offset = future.result().offset
    return deliveries


async def poll_records(consumer: Any, keys: KeySpace, timeout: float) -> dict[str, list[list[int]]]:
    """One getmany(): {key: [[offset, value], ...]}, each key's records in offset order."""
    return polled_by_key(keys, await consumer.getmany(timeout_ms=int(timeout * 1000),
                                                      max_records=config.MAX_POLL_RECORDS))


def topic_partition(keys: KeySpace, key: int) -> Any:
    return aiokafka.TopicPartition(keys.topic(key), keys.partition(key))


async def seek(consumer: Any, tp: Any, offset: int) -> None:
    """Puts the consumer at `offset` of `tp`: an offset, or librdkafka's
    OFFSET_BEGINNING/OFFSET_END (the starts workloads/positions.py deals in)."""
    if offset >= 0:
        consumer.seek(tp, offset)
    elif offset == OFFSET_BEGINNING:
        await consumer.seek_to_beginning(tp)
    elif offset == OFFSET_END:
        await consumer.seek_to_end(tp)


class Transaction:
    """One transaction on a transactional AIOKafkaProducer, each step bounded by the
    op timeout (aiokafka's own calls wait for their answer without a bound, and
    retry a coordinator they cannot reach for ever; they shield the wait, so a
    bound that expires leaves the request going on, which `info` allows)."""

    def __init__(self, pair: AiokafkaPair):
        self.pair = pair
        self.producer = pair.producer
        self.manager = self.producer._txn_manager  # private in 0.14.0: its state says if EndTxn went out

    def begin(self) -> None:
        self.pair.run(self.producer.begin_transaction)

    def commit(self, offsets: dict, group_id: str) -> None:
        """Sends the consumer's `offsets` for the group (aiokafka sends the group id
        alone: TxnOffsetCommit v0, no generation) and commits. A commit whose EndTxn
        was never sent (an error before it, or the producer in an abortable error
        state, which aiokafka raises before committing) is aborted, and only an
        abort that succeeds is definite; any other failure leaves the outcome unknown."""
        try:
            if offsets:
                self.pair.run(lambda: self.producer.send_offsets_to_transaction(offsets, group_id))
            self.pair.run(self.producer.commit_transaction)
            return
        except Indefinite as e:
            failure: Classified = e.classified  # handled below, outside the except block
        if self.manager.state not in NOT_ENDED:  # EndTxn may have gone out
            raise Indefinite(Classified("info", failure.name, f"{failure.message} (during commit)"))
        self.abort()  # raises Indefinite if the abort itself fails
        raise Indefinite(Classified("fail", failure.name, f"{failure.message} (transaction aborted)"))

    def abort(self) -> None:
        try:
            self.pair.run(self.producer.abort_transaction)
        except Indefinite as e:
            raise Indefinite(Classified("info", e.classified.name, f"{e.classified.message} (during abort)"))
        except AssertionError as e:  # aiokafka's state machine: no abort from a fatal error
            raise Indefinite(Classified("info", "AssertionError", f"{e} (during abort)"))
