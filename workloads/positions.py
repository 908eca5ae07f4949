"""Where a consumer stands on each key it holds, kept across assigns as Kafka's
Java client keeps them: librdkafka's assign() replaces the whole assignment,
and a partition given without an offset starts wherever the group's committed
offset lies, so a key the process keeps would jump to another process's
commit (docs/checkers.md, "Compared with Jepsen's checker"). The queue client
assigns every partition at an explicit offset: a kept key where this consumer
was, a new one where `committed_starts` puts it. Those offsets are what an
assign records as its `starts` (docs/history-format.md).

They are also the offsets a transaction commits for the group (`committable`),
with assign and with subscribe: asking the consumer instead (assignment(),
position()) means calls that confluent-kafka makes holding the GIL, and a
librdkafka deadlock inside the consumer then stops every thread of the process
(docs/benchmarks.md, "Soak").
"""
from __future__ import annotations

from typing import Callable

from confluent_kafka import OFFSET_BEGINNING, TopicPartition

# a start the history can name: an offset, or the beginning (offset 0, or the
# first offset that still exists after it)
_NAMED = {OFFSET_BEGINNING: 0}


class Positions:
    """key -> the offset the consumer reads next, for the keys whose position
    is known; and the keys the consumer holds now (`held`). A key a rebalance
    revoked keeps its position until the next assignment, which starts it
    there again if it comes back (an eager rebalance revokes every key before
    it assigns), as an assign op does with a key it keeps; it is not
    committed while the consumer does not hold it."""

    def __init__(self) -> None:
        self.next: dict[int, int] = {}
        self.held: set[int] = set()

    def polled(self, result: dict[str, list[list[int]]]) -> None:
        """A poll returned these records ({key: [[offset, value], ...]})."""
        for key, pairs in result.items():
            if pairs:
                self.next[int(key)] = pairs[-1][0] + 1

    def rewound(self, key: int, offset: int) -> None:
        self.next[key] = offset

    def starts(self, keys: list[int], topic_partition: Callable[[int, int], TopicPartition],
               look_up: Callable[[list[int]], list[TopicPartition]]) -> tuple[list[TopicPartition], dict[str, int]]:
        """Explicit start offsets for assigning `keys` (every one of them, as
        assign() replaces the assignment): a kept key at its position, the
        others by `look_up` (which raises when it fails). Returns them and
        the starts to record ({"key": offset}); `assigned` takes those once
        the assignment is made."""
        new = [k for k in keys if k not in self.next]
        looked_up = dict(zip(new, look_up(new))) if new else {}
        partitions = [topic_partition(k, self.next[k]) if k in self.next else looked_up[k] for k in keys]
        named = ((k, tp.offset if tp.offset >= 0 else _NAMED.get(tp.offset)) for k, tp in zip(keys, partitions))
        return partitions, {str(k): start for k, start in named if start is not None}

    def assigned(self, keys: list[int], starts: dict[str, int]) -> None:
        """The consumer now holds exactly `keys`: these starts are their
        positions (a key without a start is not known until a poll returns it)."""
        self.next = {int(k): v for k, v in starts.items()}
        self.held = set(keys)

    def forget(self, keys: list[int]) -> None:
        """The consumer holds `keys` at positions unknown (librdkafka assigned
        them on its own, at offsets it looked up itself)."""
        self.next = {}
        self.held = set(keys)

    def revoked(self, keys: list[int]) -> None:
        """A rebalance took `keys` away."""
        self.held.difference_update(keys)

    def committable(self) -> dict[int, int]:
        """key -> the offset to commit for the group: each held key whose
        position is known. An unknown one is left out, as librdkafka's own
        position() leaves out a partition nothing was consumed from yet."""
        return {k: v for k, v in sorted(self.next.items()) if k in self.held}
