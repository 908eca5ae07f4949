"""Every anomaly type logtrial reports, declared once, as data.

Each `AnomalyType` says which workload reports it, what it means in plain
words (the report shows these), what Jepsen or Elle call it, and what makes
it bad:

- `forbidden_by`: the weakest consistency models that forbid it (list-append,
  judged against the model the user checks for: a model forbids what every
  model it implies forbids, see checkers/verdict/consistency.py);
- `bad`: for types no model orders (the queue's), whether it makes a run
  invalid by default. `when_subscribed_ok` marks the types a consumer group's
  rebalances excuse;
- `data_loss`: the types whose evidence is only that records known to exist
  (acknowledged, or read before) are missing from reads, so a deleted record
  accounts for them. A fault that deletes records on purpose may excuse these
  and nothing else (checkers/verdict/faults.py). Not the types that need a
  record to be present where it should not be (a duplicate, one offset with two
  values, a read going back, an aborted read, a cycle): deleting records makes
  none of those. Nor any list-append type: Elle reads a list that lost
  elements as incompatible orders or dependency cycles, evidence that an
  isolation failure gives as well.
- `tail_cut`: the types whose evidence a log whose acknowledged tail was cut
  accounts for (a power loss recovers a log to what was fsynced): the next
  records take the lost ones' offsets, and a consumer whose position is left
  past the log's new end is reset (`auto.offset.reset`) to its start. A fault
  that may do that says so (`rewrites_offsets` in its start events) and may
  excuse these too: one offset with two values, a producer's later send at an
  offset it had been given before, a poll that skipped an offset known to hold
  a value only from the other incarnation of the log, and a consumer going
  back (after an assign, a rebalance, or between two polls).

The `-process` / `-realtime` variants of the cycle types are derived, not
written out: a cycle that needs process order is forbidden by the session
variant of the model that forbids its base (strong-session-read-committed for
G1c-process), one that needs real-time order by the real-time ("strong")
variant (ORDER_VARIANTS).

To add an anomaly type: one entry here, one detector that returns findings
of that name. `verdict()` (checkers/verdict/verdict.py) and the report need nothing
else.
"""
from __future__ import annotations

from dataclasses import dataclass

DEFAULT_EXAMPLES = 20   # examples results.json keeps per anomaly type
QUEUE, LIST_APPEND, BOTH = ("queue",), ("list-append",), ("queue", "list-append")
CYCLE_BASES = ("G0", "G1c", "G-single", "G-nonadjacent", "G2-item")
ORDER_SUFFIXES = {"-process": "process order", "-realtime": "real-time order"}
# the weakest model forbidding each base's cycle when it needs process order,
# and when it needs real-time order
ORDER_VARIANTS = {
    "G0": ("strong-session-read-uncommitted", "strong-read-uncommitted"),
    "G1c": ("strong-session-read-committed", "strong-read-committed"),
    "G-single": ("strong-session-snapshot-isolation", "strong-snapshot-isolation"),
    "G-nonadjacent": ("strong-session-snapshot-isolation", "strong-snapshot-isolation"),
    "G2-item": ("strong-session-serializable", "strict-serializable"),
}


@dataclass(frozen=True)
class AnomalyType:
    name: str
    workloads: tuple[str, ...]
    words: str
    jepsen_name: str = ""                 # Jepsen's / Elle's name, when it differs
    forbidden_by: tuple[str, ...] = ()    # list-append: weakest models forbidding it
    bad: bool = True                      # queue: invalid by default
    when_subscribed_ok: bool = False      # queue: excused once a consumer subscribes
    data_loss: bool = False               # queue: a deleted record accounts for it
    tail_cut: bool = False                # queue: a cut log tail accounts for it


_DECLARED = (
    # ---- both workloads: cycles of the dependency graph (Adya, as named by Elle)
    AnomalyType("G0", BOTH, "Write cycle: transactions whose writes each came after another's, "
                "in a circle (write-write edges only).",
                forbidden_by=("read-uncommitted",), bad=False),
    AnomalyType("G1c", BOTH, "Circular information flow: a cycle of write-write and write-read "
                "dependencies, at least one of them a read of another's write.",
                forbidden_by=("read-committed",)),
    AnomalyType("G-single", LIST_APPEND, "Read skew: a dependency cycle with exactly one "
                "anti-dependency (a read that missed a write which, by the other edges, came "
                "before it).", jepsen_name="G-single-item", forbidden_by=("consistent-view", "repeatable-read")),
    AnomalyType("G-nonadjacent", LIST_APPEND, "A dependency cycle with two or more "
                "anti-dependencies, no two of them in a row: snapshot isolation forbids it.",
                jepsen_name="G-nonadjacent-item",
                forbidden_by=("repeatable-read", "snapshot-isolation")),
    AnomalyType("G2-item", LIST_APPEND, "Write skew: a dependency cycle with two or more "
                "anti-dependencies, two of them in a row (each transaction missed the "
                "other's write).", forbidden_by=("repeatable-read",)),
    # ---- both workloads: aborted and intermediate reads
    AnomalyType("G1a", BOTH, "Aborted read: a value written by a transaction that failed "
                "(aborted) was read.", forbidden_by=("read-committed",)),
    AnomalyType("G1b", LIST_APPEND, "Intermediate read: a read saw a state that its writer "
                "later overwrote within the same transaction.", forbidden_by=("read-committed",)),
    # ---- list-append, within one transaction or one key
    AnomalyType("internal", LIST_APPEND, "A transaction's read disagreed with its own earlier "
                "reads and appends of the key.", forbidden_by=("read-atomic",)),
    AnomalyType("future-read", LIST_APPEND, "A transaction read an element that it appends only "
                "later, itself.", forbidden_by=("read-committed",)),
    AnomalyType("duplicate-elements", LIST_APPEND, "A read saw the same appended element more "
                "than once.", forbidden_by=("read-uncommitted",)),
    AnomalyType("incompatible-order", LIST_APPEND, "Two reads of a key saw orders of appends "
                "that cannot both be prefixes of one list (Elle: implies G1a).", forbidden_by=("read-committed",)),
    AnomalyType("dirty-update", LIST_APPEND, "A committed append came right after, and so built "
                "on, an append of a transaction that failed.", forbidden_by=("read-committed",)),
    AnomalyType("lost-update", LIST_APPEND, "Two or more committed transactions read the same "
                "state of a key and each appended to it: one's update was built on a state "
                "the other had already replaced.", forbidden_by=("cursor-stability", "update-atomic")),
    # ---- queue
    AnomalyType("duplicate", QUEUE, "The same value appears at more than one offset of a key."),
    AnomalyType("inconsistent-offsets", QUEUE, "One offset of a key holds two different values, "
                "as sends and polls saw it.", tail_cut=True),
    AnomalyType("lost-write", QUEUE, "An acknowledged send that no poll ever returned, although "
                "polls read past its offset.", data_loss=True),
    AnomalyType("unseen", QUEUE, "An acknowledged send that no poll returned by the end of the "
                "test, above the highest offset polled on its key.", data_loss=True),
    AnomalyType("precommitted-read", QUEUE, "A transaction polled its own send before it "
                "committed."),
    # the skips: a consumer whose position fell below a log start that a deletion moved
    # resumes at the new log start, past the deleted records
    AnomalyType("poll-skip", QUEUE, "A consumer's next poll of a key began past offsets it had "
                "not yet seen.", when_subscribed_ok=True, data_loss=True),
    AnomalyType("nonmonotonic-poll", QUEUE, "A consumer's next poll of a key went back to or "
                "before offsets it had already seen.", when_subscribed_ok=True, tail_cut=True),
    AnomalyType("assign-skip", QUEUE, "A consumer's first poll of a key after an assign began "
                "past the offset the assign started it at, skipping offsets known to hold values "
                "(the start is the assign's recorded `starts`).", data_loss=True),
    AnomalyType("assign-rewind", QUEUE, "A consumer's first poll of a key after an assign began "
                "before the offset the assign started it at: the consumer went back on its own.",
                tail_cut=True),
    # not excused by subscribing: the evidence is the start the rebalance recorded, not the
    # position the consumer had before the rebalance moved the partition
    AnomalyType("rebalance-skip", QUEUE, "A consumer's first poll of a key after a consumer-group "
                "rebalance gave it the key began past the offset the rebalance started it at, "
                "skipping offsets known to hold values (the start is the rebalance's recorded "
                "start in `rebalance_log`).", data_loss=True),
    AnomalyType("rebalance-rewind", QUEUE, "A consumer's first poll of a key after a consumer-group "
                "rebalance gave it the key began before the offset the rebalance started it at: "
                "the consumer went back on its own.", tail_cut=True),
    AnomalyType("partial-txn-read", QUEUE, "A consumer saw one part of a committed transaction's "
                "sends and read a partition past another part without ever seeing it: the "
                "transaction was visible only in part (a fractured read).", when_subscribed_ok=True,
                data_loss=True),   # the part never seen may have been deleted
    AnomalyType("int-poll-skip", QUEUE, "Within one poll, consecutive records of a key skipped "
                "offsets known to hold values.", tail_cut=True),
    AnomalyType("int-nonmonotonic-poll", QUEUE, "Within one poll, records of a key went "
                "backwards in offset order."),
    AnomalyType("int-send-skip", QUEUE, "Within one transaction, sends to one key landed at "
                "non-consecutive offsets (normal in Kafka: transactions interleave).", bad=False),
    AnomalyType("nonmonotonic-send", QUEUE, "A producer's later send to a key landed at a lower "
                "offset than its earlier one.", tail_cut=True),
    AnomalyType("int-nonmonotonic-send", QUEUE, "Within one operation, sends to a key landed at "
                "decreasing offsets."),
    # ---- queue, producer state (KIP-360)
    AnomalyType("spurious-out-of-order-sequence", QUEUE, "A send failed with "
                "OUT_OF_ORDER_SEQUENCE_NUMBER although no earlier send of its producer was lost: "
                "the broker forgot the producer's state. No data was harmed.", bad=False),
    AnomalyType("idempotent-duplicate", QUEUE, "A duplicate on a key written only by idempotent "
                "producers: what idempotence exists to prevent."),
)


def _variants(base: AnomalyType) -> list[AnomalyType]:
    return [AnomalyType(base.name + suffix, base.workloads, f"{base.words} The cycle needs {order} edges too.",
                        forbidden_by=(model,), bad=base.bad)
            for (suffix, order), model in zip(ORDER_SUFFIXES.items(), ORDER_VARIANTS[base.name])]


TYPES: dict[str, AnomalyType] = {t.name: t for t in _DECLARED}
TYPES.update({v.name: v for base in CYCLE_BASES for v in _variants(TYPES[base])})


def lookup(name: str) -> AnomalyType | None:
    return TYPES.get(name)


def words_for(name: str) -> str | None:
    """The plain-words sentence for a type (None for a type we do not know)."""
    known = TYPES.get(name)
    return known.words if known else None


def of_workload(workload: str) -> list[AnomalyType]:
    return [t for t in TYPES.values() if workload in t.workloads]
