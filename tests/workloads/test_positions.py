"""workloads/positions.py on its own: which keys a transaction commits."""
from __future__ import annotations

from confluent_kafka import TopicPartition

from workloads.positions import Positions


def tp(key: int, offset: int = -1001) -> TopicPartition:
    return TopicPartition("t", key, offset)


def test_only_held_keys_with_a_known_position_are_committable() -> None:
    positions = Positions()
    positions.assigned([0, 1, 2], {"0": 4, "1": 0})  # key 2 started where librdkafka puts it
    assert positions.committable() == {0: 4, 1: 0}
    positions.polled({"0": [[4, 10], [5, 11]], "2": [[7, 12]]})
    assert positions.committable() == {0: 6, 1: 0, 2: 8}


def test_a_revoked_key_keeps_its_position_for_when_it_comes_back_but_is_not_committed() -> None:
    positions = Positions()
    positions.assigned([0, 1], {"0": 4, "1": 0})
    positions.polled({"1": [[0, 1], [1, 2]]})
    positions.revoked([1])
    assert positions.committable() == {0: 4}
    _, starts = positions.starts([0, 1], tp, lambda new: [tp(k, 0) for k in new])
    assert starts == {"0": 4, "1": 2}


def test_after_librdkafka_assigned_on_its_own_a_key_is_committable_once_polled() -> None:
    positions = Positions()
    positions.assigned([0], {"0": 4})
    positions.forget([0, 1])
    assert positions.committable() == {}
    positions.polled({"1": [[3, 9]]})
    assert positions.committable() == {1: 4}
