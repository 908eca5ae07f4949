"""Where the queue workload's consumers start after an assign op or a
rebalance, on the shared cluster: a key the consumer keeps where it was; a new
one at the group's committed offset, at the beginning where the group has
none, and never at the beginning because another process's transaction holds
its offsets open (librdkafka's own lookup could do that: docs/findings.md).
The completions record those starts. And what a transaction commits for the
group: one past the last offset it polled, from the workload's own positions,
never from the consumer's assignment() or position() (docs/benchmarks.md, "Soak")."""
from __future__ import annotations

import dataclasses
import uuid
from typing import Iterator

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from workloads.base import Op
from workloads.clients import lookup_config
from workloads.queue import QueueClient, QueueWorkload
from workloads.registry import workload_kind
from workloads.settings import WorkloadSettings

pytestmark = pytest.mark.cluster

KEY_WITH_COMMIT, KEY_WITHOUT = 0, 1
RECORDS = 6
UNREACHABLE = "127.0.0.1:1"  # nothing listens there: every lookup times out
COMMITTED = 4


@pytest.fixture
def workload(cluster) -> Iterator[QueueWorkload]:
    settings = WorkloadSettings(txn=True, op_timeout=2.0, poll_timeout=0.5)
    made = workload_kind("queue").make(cluster.db.bootstrap_servers(), settings, f"lt-assign-{uuid.uuid4().hex[:8]}", 1)
    made.setup()
    for key in (KEY_WITH_COMMIT, KEY_WITHOUT):
        made.topics.ensure(key)
        produce(made, key, RECORDS)
    yield made
    made.close()


def produce(workload: QueueWorkload, key: int, count: int) -> None:
    producer = Producer({"bootstrap.servers": workload.bootstrap})
    for value in range(count):
        tp = workload.keys.topic_partition(key)
        producer.produce(tp.topic, partition=tp.partition, value=str(value).encode())
    assert producer.flush(10) == 0


def group(workload: QueueWorkload) -> str:
    return f"{workload.run_id}-group"


def commit(workload: QueueWorkload, key: int, offset: int) -> None:
    consumer = Consumer({"bootstrap.servers": workload.bootstrap, "group.id": group(workload)})
    tp = workload.keys.topic_partition(key)
    consumer.commit(offsets=[TopicPartition(tp.topic, tp.partition, offset)], asynchronous=False)
    consumer.close()


def open_transaction_holding_offsets(workload: QueueWorkload, key: int, offset: int) -> Producer:
    """A transaction that has sent offsets for the group and is neither
    committed nor aborted: the group's offset for key is unstable until it ends."""
    producer = Producer({"bootstrap.servers": workload.bootstrap, "transactional.id": f"{workload.run_id}-holder"})
    producer.init_transactions(10)
    producer.begin_transaction()
    tp = workload.keys.topic_partition(key)
    metadata = Consumer({"bootstrap.servers": workload.bootstrap, "group.id": group(workload)})
    producer.send_offsets_to_transaction([TopicPartition(tp.topic, tp.partition, offset)],
                                         metadata.consumer_group_metadata(), 10)
    metadata.close()
    return producer


def client_whose_lookup_fails(workload: QueueWorkload) -> QueueClient:
    """A client whose committed-offsets lookup asks an address where nothing
    listens, as a pinned client does when the group's coordinator is another node."""
    client = QueueClient(workload, process=0)
    client.pair._lookup = Consumer(lookup_config(UNREACHABLE, "lt-o-unreachable", workload.group_id))
    return client


def first_offsets_polled(client: QueueClient, keys: list[int]) -> dict[int, int]:
    first: dict[int, int] = {}
    for _ in range(20):
        completion = client.invoke(Op("poll", [["poll"]]))
        assert completion.type == "ok", completion
        for key, pairs in completion.value[0][1].items():
            first.setdefault(int(key), pairs[0][0])
        if set(first) == set(keys):
            return first
    raise AssertionError(f"polled only keys {sorted(first)} of {keys}")


def test_assign_starts_at_the_committed_offset_or_the_beginning(workload):
    commit(workload, KEY_WITH_COMMIT, COMMITTED)
    client = QueueClient(workload, process=0)
    try:
        assert client.invoke(Op("assign", [KEY_WITH_COMMIT, KEY_WITHOUT])).type == "ok"
        assert first_offsets_polled(client, [KEY_WITH_COMMIT, KEY_WITHOUT]) == {KEY_WITH_COMMIT: COMMITTED,
                                                                                KEY_WITHOUT: 0}
    finally:
        client.close()


def test_assign_while_a_transaction_holds_the_offsets_starts_at_the_offset_committed_so_far(workload):
    """The sequence that makes librdkafka's own lookup start at offset 0
    (`logtrial probe stale-offset-fetch`): assign while the offsets are
    unstable, assign again, the transaction commits."""
    keys = [KEY_WITH_COMMIT, KEY_WITHOUT]
    commit(workload, KEY_WITH_COMMIT, COMMITTED)
    holder = open_transaction_holding_offsets(workload, KEY_WITH_COMMIT, COMMITTED + 1)
    client = QueueClient(workload, process=0)
    try:
        for assigned in ([KEY_WITH_COMMIT], keys):
            assert client.invoke(Op("assign", assigned)).type == "ok"
        holder.commit_transaction(10)
        assert first_offsets_polled(client, keys) == {KEY_WITH_COMMIT: COMMITTED, KEY_WITHOUT: 0}
    finally:
        client.close()


def subscribe_and_check_first_offsets(workload: QueueWorkload, client: QueueClient) -> None:
    """Subscribes client to both keys' topic: each starts at the group's
    committed offset, or at the beginning."""
    keys = sorted(workload.keys.keys_of_topic(workload.keys.topic(KEY_WITH_COMMIT)))
    assert keys == [KEY_WITH_COMMIT, KEY_WITHOUT]  # one topic, so one subscription covers both
    try:
        assert client.invoke(Op("subscribe", keys)).type == "ok"
        assert first_offsets_polled(client, keys) == {KEY_WITH_COMMIT: COMMITTED, KEY_WITHOUT: 0}
    finally:
        client.close()


def test_subscribe_starts_rebalanced_partitions_at_the_committed_offset_or_the_beginning(workload):
    commit(workload, KEY_WITH_COMMIT, COMMITTED)
    subscribe_and_check_first_offsets(workload, QueueClient(workload, process=0))


def test_subscribe_whose_lookup_fails_leaves_the_lookup_to_librdkafka(workload):
    commit(workload, KEY_WITH_COMMIT, COMMITTED)
    subscribe_and_check_first_offsets(workload, client_whose_lookup_fails(workload))


def test_an_assign_whose_lookup_fails_fails_and_assigns_nothing(workload):
    client = client_whose_lookup_fails(workload)
    try:
        failed = client.invoke(Op("assign", [KEY_WITH_COMMIT]))
        assert (failed.type, failed.error[0]) == ("fail", "_TIMED_OUT")
        assert client.consumer.assignment() == []
    finally:
        client.close()


def polled_until(client: QueueClient, key: int) -> int:
    """Polls until `key` returns records; the offset after the last one."""
    for _ in range(20):
        completion = client.invoke(Op("poll", [["poll"]]))
        assert completion.type == "ok", completion
        pairs = completion.value[0][1].get(str(key))
        if pairs:
            return pairs[-1][0] + 1
    raise AssertionError(f"key {key} returned nothing")


def test_a_kept_key_continues_where_the_consumer_was_across_an_assign(workload):
    """As Kafka's Java client keeps it: not at the group's committed offset,
    which another consumer moved back meanwhile."""
    commit(workload, KEY_WITH_COMMIT, COMMITTED)
    client = QueueClient(workload, process=0)
    try:
        first = client.invoke(Op("assign", [KEY_WITH_COMMIT]))
        assert (first.type, first.extra["starts"]) == ("ok", {str(KEY_WITH_COMMIT): COMMITTED})
        position = polled_until(client, KEY_WITH_COMMIT)
        commit(workload, KEY_WITH_COMMIT, 1)
        produce(workload, KEY_WITH_COMMIT, 2)
        again = client.invoke(Op("assign", [KEY_WITH_COMMIT, KEY_WITHOUT]))
        assert (again.type, again.extra["starts"]) == ("ok", {str(KEY_WITH_COMMIT): position, str(KEY_WITHOUT): 0})
        assert first_offsets_polled(client, [KEY_WITH_COMMIT, KEY_WITHOUT]) == {KEY_WITH_COMMIT: position,
                                                                                KEY_WITHOUT: 0}
    finally:
        client.close()


def test_a_rebalance_logs_the_starts_it_gave(workload):
    commit(workload, KEY_WITH_COMMIT, COMMITTED)
    client = QueueClient(workload, process=0)
    keys = [KEY_WITH_COMMIT, KEY_WITHOUT]
    try:
        assert client.invoke(Op("subscribe", keys)).type == "ok"
        logged = []
        for _ in range(20):
            logged += client.invoke(Op("poll", [["poll"]])).extra.get("rebalance_log", [])
            if any(entry[0] == "assigned" for entry in logged):
                break
        assigned = [entry for entry in logged if entry[0] == "assigned"]
        assert assigned[0] == ["assigned", keys, {str(KEY_WITH_COMMIT): COMMITTED, str(KEY_WITHOUT): 0}]
    finally:
        client.close()


class Recording:
    """A real Consumer whose calls are recorded by method name; each call goes to it
    unchanged. (confluent-kafka's Consumer takes no attributes, so it is wrapped.)"""

    def __init__(self, consumer: Consumer):
        self._consumer = consumer
        self.calls: list[str] = []

    def __getattr__(self, name: str):
        attr = getattr(self._consumer, name)
        if not callable(attr):
            return attr

        def recorded(*args, **kwargs):
            self.calls.append(name)
            return attr(*args, **kwargs)
        return recorded


def recorded_client(workload: QueueWorkload, process: int = 0) -> tuple[QueueClient, Recording]:
    client = QueueClient(workload, process=process)
    consumer = Recording(client.pair.consumer)
    client.pair._consumer = consumer
    return client, consumer


def committed_offsets(workload: QueueWorkload, keys: list[int]) -> dict[int, int]:
    """The group's committed offsets, read back by a consumer of its own."""
    reader = Consumer({"bootstrap.servers": workload.bootstrap, "group.id": group(workload)})
    try:
        found = reader.committed([workload.keys.topic_partition(k) for k in keys], timeout=10)
    finally:
        reader.close()
    return {workload.keys.key_of(tp.topic, tp.partition): tp.offset for tp in found}


def txn_poll(client: QueueClient, after_last: dict[int, int]) -> str:
    """One one-poll transaction; a committed one's reads move `after_last` (by key,
    one past the last offset polled). Its completion's type."""
    completion = client.invoke(Op("txn", [["poll"]]))
    if completion.type == "ok":
        for key, pairs in completion.value[0][1].items():
            after_last[int(key)] = pairs[-1][0] + 1
    return completion.type


def polled_in_transactions(client: QueueClient, keys: list[int], ends: dict[int, int]) -> dict[int, int]:
    """Runs one-poll transactions until each of `keys` has been read up to its end:
    by key, one past the last offset a committed transaction polled."""
    after_last: dict[int, int] = {}
    for _ in range(40):
        assert txn_poll(client, after_last) == "ok"
        if all(after_last.get(k) == ends[k] for k in keys):
            return after_last
    raise AssertionError(f"transactions read only up to {after_last} of {ends}")


@pytest.mark.parametrize("sub_via", ["assign", "subscribe"])
def test_a_transaction_commits_one_past_what_it_polled_without_asking_the_consumer(workload, sub_via):
    """The offsets come from the workload's positions, so no consumer call that holds
    the GIL waiting on librdkafka's threads is made per transaction: neither
    assignment() nor position(), and the group metadata once per rebalance."""
    workload.settings = dataclasses.replace(workload.settings, sub_via=sub_via)  # as `--sub-via` sets it
    commit(workload, KEY_WITH_COMMIT, COMMITTED)
    keys = [KEY_WITH_COMMIT, KEY_WITHOUT]
    client, consumer = recorded_client(workload)
    try:
        assert client.invoke(Op(sub_via, keys)).type == "ok"
        polled = polled_in_transactions(client, keys, {k: RECORDS for k in keys})
        assert committed_offsets(workload, keys) == polled == {k: RECORDS for k in keys}
        assert not {"assignment", "position"} & set(consumer.calls), consumer.calls
        assert consumer.calls.count("consumer_group_metadata") == 1, consumer.calls
    finally:
        client.close()


def test_a_key_a_rebalance_took_away_is_no_longer_committed(workload):
    """Two members share the topic's two partitions: once the second has joined,
    each commits only the key it holds, so the first never puts its old position
    back over the second's commit of the key that moved."""
    workload.settings = dataclasses.replace(workload.settings, sub_via="subscribe")
    keys = [KEY_WITH_COMMIT, KEY_WITHOUT]
    first, _ = recorded_client(workload, process=0)
    second, _ = recorded_client(workload, process=1)
    try:
        assert first.invoke(Op("subscribe", keys)).type == "ok"
        assert polled_in_transactions(first, keys, {k: RECORDS for k in keys}) == {k: RECORDS for k in keys}
        assert second.invoke(Op("subscribe", keys)).type == "ok"
        read: tuple[dict[int, int], dict[int, int]] = ({}, {})
        for _ in range(40):  # both rejoin and each ends up holding one key
            for client, after_last in zip((first, second), read):
                assert txn_poll(client, after_last) in ("ok", "fail")  # fail: fenced by the rebalance
            held = first.positions.held, second.positions.held
            if all(len(h) == 1 for h in held) and not held[0] & held[1]:
                break
        else:
            raise AssertionError(f"held: {held}")
        assert first.positions.committable().keys() == first.positions.held
        for key in keys:
            produce(workload, key, 2)
        for _ in range(40):  # each reads its key to the new end; the first commits last
            for client, after_last in zip((second, first), read[::-1]):
                assert txn_poll(client, after_last) == "ok"
            if all(r.get(k) == RECORDS + 2 for r, (k,) in zip(read, held)):
                break
        else:
            raise AssertionError(f"read: {read}")
        assert committed_offsets(workload, keys) == {k: RECORDS + 2 for k in keys}
    finally:
        first.close()
        second.close()
