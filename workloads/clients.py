"""confluent-kafka producer/consumer handling shared by the workloads:
configuration from the settings, produce-and-wait with error classification,
transaction commit/abort with the error table's verdict, and polls."""
from __future__ import annotations

import functools
import gc
import logging
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable

from confluent_kafka import (OFFSET_BEGINNING, OFFSET_END, OFFSET_INVALID, Consumer, KafkaError, KafkaException,
                             Producer, TopicPartition)

from common.client_logging import librdkafka_logging
from workloads.consumer_config import shared_consumer_config
from workloads.errors import Classified, classify, harness_error
from workloads import producer_knobs
from workloads.kafka_common import KeySpace, decode, encode
from workloads.settings import WorkloadSettings

log = logging.getLogger(__name__)


def producer_config(bootstrap: str, settings: WorkloadSettings, client_id: str,
                    transactional_id: str | None) -> dict:
    timeout_ms = int(settings.op_timeout * 1000)
    config: dict[str, Any] = {
        "bootstrap.servers": bootstrap,
        "client.id": client_id,
        "acks": settings.acks,
        "enable.idempotence": settings.idempotence,
        "linger.ms": 0,
        # longer than the harness's own wait, so a message still queued when the
        # op times out is purged (definitely not sent) rather than timed out
        "message.timeout.ms": timeout_ms * 2,
        "request.timeout.ms": max(1000, timeout_ms // 2),
        "socket.timeout.ms": max(1000, timeout_ms // 2),
        "reconnect.backoff.max.ms": 1000,
        **librdkafka_logging(),
    }
    if settings.retries is not None:
        config["retries"] = settings.retries
    config.update(producer_knobs.producer_config(settings))
    if transactional_id is not None:
        config["transactional.id"] = transactional_id
        config["transaction.timeout.ms"] = timeout_ms * 4
    return config


def lookup_config(bootstrap: str, client_id: str, group_id: str) -> dict:
    """A consumer that only looks up the group's committed offsets. Reading
    uncommitted, it does not wait for offsets an open transaction is about to
    commit (up to a transaction timeout when that transaction's producer was
    killed); a consumer starting at the offsets committed so far may read
    again what such a transaction read, which no checker counts against Kafka."""
    return {"bootstrap.servers": bootstrap, "client.id": client_id, "group.id": group_id,
            "isolation.level": "read_uncommitted", "enable.auto.commit": False, **librdkafka_logging()}


def consumer_config(bootstrap: str, settings: WorkloadSettings, client_id: str, group_id: str,
                    auto_offset_reset: str | None = None) -> dict:
    return {
        **shared_consumer_config(bootstrap, settings, client_id, group_id, auto_offset_reset),
        "fetch.wait.max.ms": 50,
        "socket.timeout.ms": 5000,
        "enable.partition.eof": False,
        **librdkafka_logging(),
    }


class Indefinite(Exception):
    """An op ended with a classified error; carries the verdict up to invoke()."""

    def __init__(self, classified: Classified):
        super().__init__(classified.message)
        self.classified = classified


@dataclass
class Delivery:
    key: int
    value: int
    offset: int | None = None
    error: Classified | None = None
    done: bool = False


def produce_all(producer: Producer, keys: KeySpace, items: list[tuple[int, int]], timeout: float,
                in_txn: bool) -> list[Delivery]:
    """Produces (key, value) pairs and waits for every delivery report.

    When the wait times out outside a transaction, messages still in the local
    queue are purged, so they are not sent later behind the history's back. Their
    _PURGE_QUEUE reports stay indefinite (a queued message may be a retry of an
    attempt that was written); anything in flight stays undelivered (indefinite).
    """
    deliveries = [Delivery(k, v) for k, v in items]

    def report(delivery: Delivery, err: KafkaError | None, msg) -> None:
        delivery.done = True
        if err is None:
            delivery.offset = msg.offset()
        else:
            delivery.error = classify(err)

    for delivery in deliveries:
        try:
            producer.produce(keys.topic(delivery.key), value=encode(delivery.value), key=encode(delivery.key),
                             partition=keys.partition(delivery.key),
                             on_delivery=functools.partial(report, delivery))
        except (BufferError, KafkaException) as e:  # refused by produce(): never left the client
            delivery.done = True
            delivery.error = classify(e, definite=True)
    producer.flush(timeout)
    if not all(d.done for d in deliveries) and not in_txn:
        purge(producer, in_flight=False)
        producer.flush(1.0)
    return deliveries


def purge(producer: Producer, in_flight: bool) -> None:
    """Purges the producer's queued messages (and those in flight, if asked) without
    waiting for its broker threads to do their part: the flush after it waits for the
    reports, with the GIL released. confluent-kafka (2.16.1, as since purge() came)
    asks librdkafka for a non-blocking purge when `blocking` is True, so
    blocking=False is the one that waits, holding the GIL (docs/benchmarks.md, "Soak";
    tests/workloads/test_client_close.py checks the flags librdkafka was given)."""
    producer.purge(in_queue=True, in_flight=in_flight, blocking=True)


def first_error(deliveries: list[Delivery]) -> Classified | None:
    """The most serious problem among deliveries: indefinite beats definite."""
    errors = [d.error for d in deliveries if d.error is not None]
    errors += [harness_error("OP_TIMEOUT", "no delivery report in time") for d in deliveries if not d.done]
    if not errors:
        return None
    indefinite = [e for e in errors if e.outcome == "info"]
    return (indefinite or errors)[0]


def fetch(consumer: Consumer, timeout: float, max_messages: int = 500) -> list:
    """What the consumer has queued, or else the first message to arrive within
    `timeout` plus whatever came with it. (consume(n, timeout) alone would wait
    the whole timeout for n messages.)"""
    messages = consumer.consume(num_messages=max_messages, timeout=0)
    if messages:
        return messages
    first = consumer.poll(timeout)
    if first is None:
        return []
    return [first] + consumer.consume(num_messages=max_messages - 1, timeout=0)


def poll_messages(consumer: Consumer, keys: KeySpace, timeout: float,
                  max_messages: int = 500) -> tuple[dict[str, list[list[int]]], list[str], list]:
    """One consume() call: {key: [[offset, value], ...]}, non-fatal error names, raw messages."""
    messages = fetch(consumer, timeout, max_messages)
    polled: dict[str, list[list[int]]] = {}
    errors: list[str] = []
    good = []
    for msg in messages:
        err = msg.error()
        if err is not None:
            if err.fatal():
                raise Indefinite(classify(err))
            errors.append(err.name())
            continue
        key = keys.key_of(msg.topic(), msg.partition())
        polled.setdefault(str(key), []).append([msg.offset(), decode(msg.value())])
        good.append(msg)
    return polled, errors, good


# Calls into librdkafka stay out of except blocks. When confluent-kafka (2.16.1)
# raises a KafkaException while another exception is being handled, Python sets
# that exception as the __context__ of the KafkaError inside it, and KafkaError
# neither releases nor reports (to the garbage collector) that reference: the
# handled exception, its traceback, every frame on it and every object those
# frames hold are kept for good. A failed `txn` op aborted inside its handler
# kept its Transaction, producer and consumer that way: the librdkafka instances
# the soak saw climb (docs/benchmarks.md, "Soak"). So a handler only takes what it
# needs from the exception, and the abort, seek or commit comes after the block.
# tests/workloads/test_handled_exceptions.py shows the leak and checks the code.


class Transaction:
    """One Kafka transaction on a transactional producer (lazily initialised)."""

    def __init__(self, producer: Producer, timeout: float):
        self.producer = producer
        self.timeout = timeout

    def begin(self) -> None:
        self.producer.begin_transaction()

    def commit(self, offsets: list[TopicPartition] | None = None,
               group_metadata: Callable[[], Any] | None = None) -> None:
        """Sends `offsets` for the consumer group `group_metadata()` names, if any, and
        commits; raises Indefinite/definite verdicts. The offsets are the caller's own
        (QueueClient._txn_positions), never asked of the consumer: assignment() and
        position() are calls confluent-kafka makes holding the GIL, and a librdkafka
        deadlock inside the consumer then stops every thread of the process
        (docs/benchmarks.md, "Soak").

        Retriable commit errors are retried until the op timeout; an abortable
        error leads to abort(), and only an abort that succeeds is definite.
        """
        deadline = time.monotonic() + self.timeout
        failure: KafkaError | None = None
        try:
            offsets = [tp for tp in offsets or [] if tp.offset >= 0]
            if offsets and group_metadata is not None:
                self.producer.send_offsets_to_transaction(offsets, group_metadata(), self.timeout)
            while True:
                try:
                    self.producer.commit_transaction(max(0.1, deadline - time.monotonic()))
                    return
                except KafkaException as e:
                    err = e.args[0]
                    if err.retriable() and not err.txn_requires_abort() and time.monotonic() < deadline:
                        continue
                    raise
        except KafkaException as e:
            failure = e.args[0]  # handled below, outside the except block (see above)
        if failure is not None:
            self._after_failed_commit(failure)

    def _after_failed_commit(self, err: KafkaError) -> None:
        if err.txn_requires_abort():
            self.abort()  # raises Indefinite if the abort itself fails
            raise Indefinite(Classified("fail", err.name(), f"{err.str()} (transaction aborted)"))
        # anything else: the coordinator may have logged the commit
        raise Indefinite(Classified("info", err.name(), f"{err.str()} (during commit)"))

    def abort(self) -> None:
        try:
            self.producer.abort_transaction(self.timeout)
        except KafkaException as e:
            raise Indefinite(Classified("info", e.args[0].name(), f"{e.args[0].str()} (during abort)"))


def rewind(consumer: Consumer, keys: KeySpace, polled: list[dict[str, list[list[int]]]]) -> dict[int, int]:
    """Puts the consumer back so its next poll re-reads what an aborted
    transaction polled: each partition it read from goes back to the first
    offset it read there (returned, by key). Partitions it did not read from
    are left alone."""
    first = first_offsets(polled)
    for key, offset in first.items():
        consumer.seek(keys.topic_partition(key, offset))
    return first


def first_offsets(polled: list[dict[str, list[list[int]]]]) -> dict[int, int]:
    """key -> the first offset these poll results read there (where a rewind goes)."""
    first: dict[int, int] = {}
    for result in polled:
        for key, pairs in result.items():
            first[int(key)] = min([first.get(int(key), pairs[0][0]), pairs[0][0]])
    return first


# where a partition with no committed offset starts, by auto.offset.reset
RESET_STARTS = {"earliest": OFFSET_BEGINNING, "smallest": OFFSET_BEGINNING, "beginning": OFFSET_BEGINNING,
                "latest": OFFSET_END, "largest": OFFSET_END, "end": OFFSET_END}


def committed_starts(lookup: Consumer, partitions: list[TopicPartition], auto_offset_reset: str,
                     timeout: float) -> list[TopicPartition]:
    """The group's committed offsets as explicit start offsets for assign():
    each partition at its committed offset, or where auto.offset.reset puts a
    partition with none. Raises KafkaException when the lookup fails.

    Left to look them up itself, librdkafka can apply a stale OffsetFetch answer
    to a later assignment, and a partition that answer found blocked by another
    process's open transaction then starts at auto.offset.reset: offset 0, a
    rewind nobody asked for (docs/findings.md). Assigning explicit offsets
    leaves it nothing to look up. `lookup` reads uncommitted (lookup_config),
    so it answers at once with the offsets committed so far instead of waiting
    for those an open transaction is about to commit.
    """
    fallback = RESET_STARTS.get(auto_offset_reset, OFFSET_INVALID)
    starts = []
    for tp in lookup.committed(partitions, timeout=timeout):
        if tp.error is not None:
            raise KafkaException(tp.error)
        epoch = {} if tp.leader_epoch is None else {"leader_epoch": tp.leader_epoch}
        starts.append(TopicPartition(tp.topic, tp.partition, tp.offset, **epoch) if tp.offset >= 0
                      else TopicPartition(tp.topic, tp.partition, fallback))
    return starts


def guarded(fn: Callable[[], Any]) -> Any:
    """Runs fn, turning any KafkaException into a classified verdict."""
    try:
        return fn()
    except KafkaException as e:
        raise Indefinite(classify(e))


class PairIdentity:
    """What every in-process client pair is made from: the cluster, the settings and
    the logical process's own ids. Its clients are made on first use, by the subclass."""

    def __init__(self, bootstrap: str, settings: WorkloadSettings, process: int, transactional_id: str | None,
                 group_id: str, auto_offset_reset: str | None = None):
        self.bootstrap = bootstrap
        self.settings = settings
        self.process = process
        self.transactional_id = transactional_id
        self.group_id = group_id
        self.auto_offset_reset = auto_offset_reset
        self.producer_client_id = f"lt-p{process}"  # a probe names its own


class ClientPair(PairIdentity):
    """A logical process's producer and consumer, made on first use (creation
    never blocks on the cluster; transactional producers init on first use)."""

    def __init__(self, bootstrap: str, settings: WorkloadSettings, process: int, transactional_id: str | None,
                 group_id: str, auto_offset_reset: str | None = None):
        super().__init__(bootstrap, settings, process, transactional_id, group_id, auto_offset_reset)
        self._producer: Producer | None = None
        self._consumer: Consumer | None = None
        self._lookup: Consumer | None = None
        self._group_metadata: Any = None

    @property
    def producer(self) -> Producer:
        if self._producer is None:
            producer = Producer(producer_config(self.bootstrap, self.settings, self.producer_client_id,
                                                self.transactional_id))
            if self.transactional_id is not None:
                try:
                    guarded(lambda: producer.init_transactions(self.settings.op_timeout))
                except Indefinite:
                    # the error's traceback holds this frame and the lambda's cell, which
                    # hold the producer: emptied, it ends now (rd_kafka_destroy is quick
                    # after a failed init), not when that traceback is collected (close)
                    del producer
                    raise
            self._producer = producer
        return self._producer

    @property
    def consumer(self) -> Consumer:
        if self._consumer is None:
            self._consumer = Consumer(consumer_config(self.bootstrap, self.settings, f"lt-c{self.process}",
                                                      self.group_id, self.auto_offset_reset))
        return self._consumer

    def group_metadata(self) -> Any:
        """The consumer's group metadata for send_offsets_to_transaction, asked of
        it once per consumer and rebalance, not once per transaction:
        consumer_group_metadata() waits for the consumer's rdk:main thread while
        holding the GIL (docs/benchmarks.md, "Soak"). It only changes when the
        consumer joins the group anew (a new generation): never with assign ops,
        which join no group; with subscribe, `rebalanced` drops it."""
        if self._group_metadata is None:
            self._group_metadata = self.consumer.consumer_group_metadata()
        return self._group_metadata

    def rebalanced(self) -> None:
        """A rebalance assigned or revoked partitions: the group's generation may
        have changed, so the next transaction asks for the metadata again."""
        self._group_metadata = None

    @property
    def lookup(self) -> Consumer:
        """The process's own committed-offsets lookup (lookup_config): its own,
        so one process's lookup never waits behind another's."""
        if self._lookup is None:
            self._lookup = Consumer(lookup_config(self.bootstrap, f"lt-o{self.process}", self.group_id))
        return self._lookup

    def close(self) -> None:
        """Drops queued work, leaves the group and ends every client's librdkafka instance
        (may block: call it off the hot path). Each client is closed even if another's
        close raised; the first error is raised after."""
        producer, consumer, lookup = self._producer, self._consumer, self._lookup
        self._producer = self._consumer = self._lookup = self._group_metadata = None
        errors = [e for e in (_try(purge_producer, producer), _try(close_consumer, consumer),
                              _try(close_consumer, lookup)) if e is not None]
        # the producer's instance ends when the Python object goes: here, unless garbage
        # holds it too (see release_producer)
        held_by_others = producer is not None and sys.getrefcount(producer) > OWN_REFERENCES
        del producer
        if held_by_others and not errors:
            release_producer()
        if errors:
            first = errors[0]
            del errors
            try:
                raise first
            finally:
                del first  # a frame holding its own exception would be a cycle of the kind above


# references to the producer inside ClientPair.close when nothing else holds it: its
# local name and getrefcount's argument
OWN_REFERENCES = 2


def purge_producer(producer: Producer) -> None:
    """Drops what is queued or in flight, so nothing is sent after the op that owned it
    was recorded."""
    purge(producer, in_flight=True)
    producer.flush(0)


def release_producer() -> None:
    """Frees a closed producer that garbage still holds: a full collection.

    A producer ends (rd_kafka_destroy: its threads, pipes and buffers) only when its
    Python object is freed. A `txn` op that failed leaves its Transaction, and so the
    producer, in the frames of the failure's traceback, in a reference cycle that only
    a collection of Python's oldest generation frees, and a run of slow, failing ops
    seldom triggers one: the hour-long soak (docs/benchmarks.md, "Soak") had 130
    closed producers alive after an hour. Producer.close() would end it at once, but
    it first aborts an open transaction with no time limit, and blocked for minutes
    while the coordinator was down (the soak's fixed run, same section)."""
    gc.collect()


def close_consumer(consumer: Consumer) -> None:
    consumer.close()


def _try(close: Callable[[Any], Any], client: Any) -> BaseException | None:
    if client is None:
        return None
    try:
        close(client)
    except Exception as e:  # noqa: BLE001 - raised by ClientPair.close once all are closed
        return e
    return None


def ensure_topic(topics, key: int) -> None:
    """Creates key's topic if needed; a failure is definite (nothing was sent yet)."""
    try:
        topics.ensure(key)
    except Exception as e:
        raise Indefinite(classify(e, definite=True))


class ProcessClient:
    """Base of the workload clients: one ClientPair per logical process."""

    def __init__(self, workload, process: int, transactional_id: str | None, group_id: str,
                 auto_offset_reset: str | None = None):
        self.w = workload
        self.process = process
        self.pair = ClientPair(workload.bootstrap, workload.settings, process,
                               transactional_id if workload.settings.txn else None, group_id, auto_offset_reset)

    @property
    def producer(self) -> Producer:
        return self.pair.producer

    @property
    def consumer(self) -> Consumer:
        return self.pair.consumer

    def _ensure_topic(self, key: int) -> None:
        ensure_topic(self.w.topics, key)

    def close(self) -> None:
        self.pair.close()
