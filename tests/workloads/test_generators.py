"""The generators alone (no cluster): what ops they hand out."""
import random

from workloads.base import KeyRotation, ValueSource
from workloads.kafka_common import KeySpace
from workloads.list_append import ListAppendGenerator
from workloads.queue import Acks, QueueGenerator
from workloads.settings import WorkloadSettings


def queue_generator(**settings):
    s = WorkloadSettings(**settings)
    new_keys = []
    rotation = KeyRotation(s.key_count, s.max_writes_per_key, on_new_key=new_keys.append)
    return QueueGenerator(s, KeySpace("t"), rotation, ValueSource(), Acks(), random.Random(1)), new_keys


def written_values(ops):
    return [m[2] for op in ops if op.f in ("send", "txn") for m in op.value if m[0] == "send"]


def test_each_process_starts_with_an_assignment_and_values_are_unique():
    generator, _ = queue_generator()
    ops = {p: [generator.next_op(p) for _ in range(200)] for p in range(3)}
    assert {ops[p][0].f for p in ops} == {"assign"}
    values = written_values([op for p in ops for op in ops[p]])
    assert len(values) > 100 and len(values) == len(set(values))
    assert {op.f for p in ops for op in ops[p]} == {"assign", "send", "poll"}


def test_keys_rotate_after_max_writes_and_new_keys_are_announced():
    generator, new_keys = queue_generator(key_count=2, max_writes_per_key=5)
    sends = [m for op in (generator.next_op(0) for _ in range(300)) if op.f == "send" for m in op.value]
    per_key = {}
    for _, key, _ in sends:
        per_key[key] = per_key.get(key, 0) + 1
    assert max(per_key.values()) == 5
    ever_active = set(per_key) | set(generator.rotation.active)
    assert len(per_key) > 2 and sorted(new_keys) == sorted(ever_active - {0, 1})


def test_subscribe_mode_subscribes_whole_topics_and_txn_mode_mixes_micro_ops():
    generator, _ = queue_generator(sub_via="subscribe", txn=True, crash_clients=True)
    ops = [generator.next_op(0) for _ in range(500)]
    subscriptions = [op.value for op in ops if op.f == "subscribe"]
    assert subscriptions and all(len(keys) % 2 == 0 for keys in subscriptions)
    txns = [op.value for op in ops if op.f == "txn"]
    assert any({m[0] for m in t} == {"send", "poll"} for t in txns)
    assert all(1 <= len(t) <= 4 for t in txns)
    assert any(op.f == "crash" and op.value is None for op in ops)


def test_list_append_txns_never_read_a_key_after_appending_to_it():
    s = WorkloadSettings(txn=True)
    generator = ListAppendGenerator(s, KeyRotation(s.key_count, 10), ValueSource(), set(), random.Random(3))
    ops = [generator.next_op(0) for _ in range(500)]
    for op in ops:
        appended = set()
        for kind, key, _ in op.value:
            assert not (kind == "r" and key in appended), op
            if kind == "append":
                appended.add(key)
    values = [m[2] for op in ops for m in op.value if m[0] == "append"]
    assert len(values) == len(set(values))
    assert any(len(op.value) > 1 for op in ops)


def test_final_reads_await_acknowledged_offsets_or_the_value_where_no_offset_came():
    acks = Acks()
    acks.acked(0, 5, 100)      # read back at offset 5 whatever it holds (a lost write holds another)
    acks.acked(0, None, 101)   # a delivery report without an offset: only the value can be found
    acks.acked(1, 0, 102)
    assert acks.awaited() == {("offset", 0, 5), ("value", 0, 101), ("offset", 1, 0)}
